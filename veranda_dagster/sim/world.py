"""A whole simulated world: the fakes running, the sample org on disk, the product configured.

``SimWorld`` starts the Linear, Slack, Jira, GitHub and GitLab fakes and the scripted model
server on 127.0.0.1, creates the sample organisation, writes a temporary ``DAGSTER_HOME`` (embedded
SQLite, the shipped ``dagster.yaml`` settings) and the vendors file, and produces the
environment the product reads (``env``). ``agent`` picks the CLI that does the turns: the
``veranda-sim-agent`` stand-in (``sim``, the default) or a real vendor CLI (``claude``,
``codex``, ``gemini``, ``kimi``, ``grok``, ``glm``), which the vendors file names with a home
of its own, answered by the same server in its own wire format. The product is pointed at the
fakes only through that configuration — base URLs, dummy tokens and the vendors file — never
through a code path of its own. ``secrets`` lists every fake credential, so tests can scan
every output for them.

``tickets`` picks where the ticket is filed (``linear``, ``slack`` or ``jira``: Jira Cloud, its
source enabled through ``VERANDA_SOURCES``) and ``forge`` where the code lives (``github``, the
bare repositories as a local git base; ``gitlab``, the same repositories served over smart HTTP
with a token, selected by ``VERANDA_FORGE``). ``file_ticket``, ``sensor``, ``bot_comments`` and
``pull_requests`` answer for the chosen pair, so a test or the demo reads the same either way.
``code_quality`` adds the forge CI's Code Quality job (``fake_ci.CODE_QUALITY_JOB``), which the
first push of the sample fix fails with findings half of which were on ``main`` already.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml

from veranda_dagster.concurrency import POOL_DEFAULT_LIMIT
from veranda_dagster.forges.registry import forge_provider
from veranda_dagster.instance_config import shipped_instance
from veranda_dagster.sandbox.policy import READONLY_ENV
from veranda_dagster.sim.choices import FORGES, SENSORS, TICKET_SOURCES
from veranda_dagster.sim.fake_ci import CiMode, FakeCI
from veranda_dagster.sim.github_fake import GitHubFake
from veranda_dagster.sim.gitlab_fake import GitLabFake
from veranda_dagster.sim.jira_fake import BOT_ACCOUNT_ID as JIRA_BOT
from veranda_dagster.sim.jira_fake import JiraFake
from veranda_dagster.sim.linear_fake import BOT_USER_ID as LINEAR_BOT
from veranda_dagster.sim.linear_fake import LinearFake
from veranda_dagster.sim.model_server import ScriptedModelServer
from veranda_dagster.sim.sample_org import SampleOrg, create_sample_org
from veranda_dagster.sim.sim_vendors import (
    SIM_KEYS,
    agent_vendors_config,
    browser_env,
    cli_install_roots,
    model_credentials,
    require_binary,
)
from veranda_dagster.sim.slack_fake import BOT_USER_ID as SLACK_BOT
from veranda_dagster.sim.slack_fake import SlackFake
from veranda_dagster.sim.two_orgs import add_data_org

SLACK_CHANNEL = "C0SIMBILL"
LINEAR_LABEL = "veranda"
JIRA_LABEL = "veranda"
JIRA_PROJECT = "PAY"
CODE_SEARCH_PER_MINUTE = 120
"""The fake forge's code-search rate (GitHub.com allows 10/min; a pack's 12 searches would
otherwise spend a minute of the demo waiting on a limit the fake does not have)."""

FAKE_TOKENS = {
    "LINEAR_API_KEY": "lin_api_SIMULATED_linear_key_5b1e",
    "SLACK_BOT_TOKEN": "xoxb-SIMULATED-slack-bot-token-2c7d",
    "GITHUB_TOKEN": "ghs_SIMULATED_github_token_8a4f",
    "GITLAB_TOKEN": "glpat-SIMULATED-gitlab-token-3e9c",
    "JIRA_API_TOKEN": "ATATT3xSIMULATED-jira-token-6d2a",
}

_Fake = TypeVar("_Fake")


class SimForgeFake(Protocol):
    """What the world needs of a fake forge, whichever it is."""

    ci: FakeCI

    @property
    def base_url(self) -> str: ...

    @property
    def clone_base(self) -> str: ...

    def pull_request_rows(self) -> list[dict[str, str]]: ...


FORGE_FAKES: dict[str, type[GitHubFake] | type[GitLabFake]] = {
    "github": GitHubFake,
    "gitlab": GitLabFake,
}
"""The fake of each forge the simulation stands up (``choices.FORGES``, import-light for the
CLI, names the same ones), each configured from its own forge row: ``<PREFIX>_API_URL``,
``<PREFIX>_GIT_BASE`` and the row's token variable."""


def dagster_yaml(pool_limit: int = POOL_DEFAULT_LIMIT) -> str:
    """The simulation's instance: the shipped ``dagster.yaml`` values (``instance_config``:
    the queue's 1 s dequeue, 10 runs, 4 ticket runs, 4 backfill runs, one run per ticket, pools,
    run monitoring and retries), storage left to embedded SQLite under its home. Only the pools'
    default limit may differ (a test narrows it); ``veranda dev`` prints any difference."""
    head = "# Written by the veranda simulation: the shipped dagster.yaml values, SQLite here.\n"
    return head + yaml.safe_dump(shipped_instance(pool_limit), sort_keys=False)


class SimWorld:
    """``with SimWorld() as world:`` then ``world.env`` (apply with ``world.apply_env()``)."""

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        ci_mode: CiMode = "run",
        ci_command_timeout_s: float | None = None,
        with_glm: bool = True,
        agent_timeout_s: float = 300.0,
        agent: str = "sim",
        pool_limit: int = POOL_DEFAULT_LIMIT,
        tickets: str = "linear",
        forge: str = "github",
        code_quality: bool = False,
        two_orgs: bool = False,
    ) -> None:
        if tickets not in TICKET_SOURCES:
            raise ValueError(f"tickets={tickets!r}: choose one of {', '.join(TICKET_SOURCES)}")
        if forge not in FORGES:
            raise ValueError(f"forge={forge!r}: choose one of {', '.join(FORGES)}")
        self.tickets = tickets
        self.forge = forge
        self.code_quality = code_quality
        self.two_orgs = two_orgs
        """A second org, ``acme-data`` on the GitLab fake taking Jira tickets, configured per
        org through an orgs file (``sim/two_orgs.py``)."""
        self._own_root = root is None
        self.root = Path(root or tempfile.mkdtemp(prefix="veranda-sim-"))
        self.ci_mode: CiMode = ci_mode
        self.ci_command_timeout_s = ci_command_timeout_s
        self.with_glm = with_glm
        self.agent_timeout_s = agent_timeout_s
        self.agent = agent
        self.pool_limit = pool_limit
        """Slots of each concurrency pool (``veranda/model``, ``veranda/forge``)."""
        """``sim`` (the stand-in) or a real CLI's name (``sim.sim_vendors.AGENTS``)."""
        self.agent_path = None if agent == "sim" else require_binary(agent)
        self._stack = ExitStack()
        self._saved_env: dict[str, str | None] = {}
        self.org: SampleOrg
        self.linear: LinearFake
        self.slack: SlackFake
        self.forges: dict[str, SimForgeFake] = {}
        """Every forge's fake, by forge row name; ``forge`` is the one the product uses."""
        self.jira: JiraFake
        self.model: ScriptedModelServer
        self.env: dict[str, str] = {}

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster_home"

    @property
    def secrets(self) -> list[str]:
        return [*FAKE_TOKENS.values(), *SIM_KEYS.values()]

    def start(self) -> SimWorld:
        self.org = create_sample_org(self.root / "org")
        self.linear = self._stack.enter_context(LinearFake(token=FAKE_TOKENS["LINEAR_API_KEY"]))
        self.slack = self._stack.enter_context(
            SlackFake(token=FAKE_TOKENS["SLACK_BOT_TOKEN"], channels=(SLACK_CHANNEL,))
        )
        for name, fake_type in FORGE_FAKES.items():
            fake = fake_type(
                self.org.git_base,
                token=FAKE_TOKENS[forge_provider(name).token_env],
                ci_mode=self.ci_mode,
                ci_command_timeout_s=self.ci_command_timeout_s,
            )
            self._stack.enter_context(fake)
            if self.code_quality:
                fake.ci = FakeCI(fake.ci.mode, fake.ci.command_timeout_s, code_quality=True)
            self.forges[name] = fake
        self.jira = self._stack.enter_context(JiraFake(FAKE_TOKENS["JIRA_API_TOKEN"]))
        keys, tokens = model_credentials()
        self.model = self._stack.enter_context(ScriptedModelServer(keys, tokens))
        self.dagster_home.mkdir(parents=True)
        (self.dagster_home / "dagster.yaml").write_text(dagster_yaml(self.pool_limit))
        vendors = self.root / "vendors.json"
        doc = agent_vendors_config(
            self.agent,
            self.model.base_url,
            self.root,
            with_glm=self.with_glm,
            timeout_s=self.agent_timeout_s,
        )
        vendors.write_text(json.dumps(doc, indent=2))
        self.env = self._product_env(vendors)
        return self

    def _product_env(self, vendors: Path) -> dict[str, str]:
        env = {**self._base_env(vendors), **self._choice_env()}
        if not self.two_orgs:
            return env
        return env | add_data_org(self.root, self.org, self.github.base_url, self.gitlab.base_url)

    def _choice_env(self) -> dict[str, str]:
        """The forge row and the ticket sources the product is configured with."""
        env = {"VERANDA_FORGE": self.forge}
        for name, fake in self.forges.items():
            prefix = forge_provider(name).env_prefix
            env |= {f"{prefix}_API_URL": fake.base_url, f"{prefix}_GIT_BASE": fake.clone_base}
        if self.tickets == "jira":
            env |= {
                "VERANDA_SOURCES": "linear,slack,jira",
                "VERANDA_JIRA_INTAKE": "1",
                "JIRA_BASE_URL": self.jira.base_url,
                "JIRA_EMAIL": self.jira.email,
                "JIRA_API_VERSION": self.jira.version,
                "JIRA_LABEL": JIRA_LABEL,
                "JIRA_PROJECT": JIRA_PROJECT,
            }
        return env

    def _base_env(self, vendors: Path) -> dict[str, str]:
        return {
            "DAGSTER_HOME": str(self.dagster_home),
            "LINEAR_API_URL": self.linear.graphql_url,
            "LINEAR_BOT_USER_ID": LINEAR_BOT,
            "LINEAR_LABEL": LINEAR_LABEL,
            "SLACK_API_URL": self.slack.api_url,
            "SLACK_CHANNELS": SLACK_CHANNEL,
            "SLACK_BOT_USER_ID": SLACK_BOT,
            "VERANDA_CATALOG": str(self.org.catalog_path),
            "VERANDA_RUNBOOKS_DIR": str(self.org.runbooks_dir),
            "VERANDA_HINTS_DIR": str(self.org.hints_dir),
            "VERANDA_VENDORS_FILE": str(vendors),
            "VERANDA_VENDORS_CONFIG": str(vendors),
            "VERANDA_WORKSPACES": str(self.dagster_home / "workspaces"),
            "VERANDA_VALUES_DIR": str(self.dagster_home / "veranda_values"),
            # the fake forge is a GitHub Enterprise Server-like install with its own search rate
            "VERANDA_CODE_SEARCH_PER_MINUTE": str(CODE_SEARCH_PER_MINUTE),
            # the pinned CLIs live in .veranda/ (npm, pip, node 22), which their wrappers exec
            READONLY_ENV: os.pathsep.join(str(d) for d in cli_install_roots()),
            # the browser a frontend ticket's CLI drives: the installed MCP server and chromium
            **browser_env(),
            **FAKE_TOKENS,
            **SIM_KEYS,
        }

    # --- the chosen ticket source and forge --------------------------------------------------

    @property
    def sensor(self) -> str:
        """The intake sensor of the chosen source."""
        return SENSORS[self.tickets]

    @property
    def github(self) -> GitHubFake:
        return self._fake("github", GitHubFake)

    @property
    def gitlab(self) -> GitLabFake:
        return self._fake("gitlab", GitLabFake)

    def _fake(self, name: str, kind: type[_Fake]) -> _Fake:
        """The fake of forge ``name``, typed: a test reaches a forge's own API through it."""
        fake = self.forges[name]
        if not isinstance(fake, kind):
            raise TypeError(f"the {name} fake is a {type(fake).__name__}, not a {kind.__name__}")
        return fake

    @property
    def forge_fake(self) -> SimForgeFake:
        return self.forges[self.forge]

    @property
    def forge_ci(self) -> FakeCI:
        return self.forge_fake.ci

    def file_ticket(self, title: str, body: str, labels: list[str] | None = None) -> str:
        """File a ticket in the chosen source; returns the partition key its sensor asks for."""
        if self.tickets == "jira":
            key = f"{JIRA_PROJECT}-{101 + len(self.jira.issues)}"
            self.jira.file_issue(key, title, body, labels=labels or [JIRA_LABEL])
            return f"jira-{key}"
        if self.tickets == "slack":
            ts = self.slack.post_user_message(SLACK_CHANNEL, f"{title}\n\n{body}", mention_bot=True)
            return f"slack-{SLACK_CHANNEL}-{ts}"
        return str(
            self.linear.file_ticket(title, body, labels=labels or [LINEAR_LABEL])["identifier"]
        )

    def bot_comments(self, key: str) -> list[str]:
        """What the product said on the ticket, in order."""
        if self.tickets == "jira":
            issue = key.removeprefix("jira-")
            return [
                text
                for text, c in zip(
                    self.jira.comment_texts(issue), self.jira.comments[issue], strict=True
                )
                if c["author"] == JIRA_BOT
            ]
        if self.tickets == "slack":
            return self.slack.bot_replies(SLACK_CHANNEL)
        return self.linear.bot_comments(key)

    def pull_requests(self, forge: str | None = None) -> list[dict[str, str]]:
        """Every pull/merge request on ``forge`` (default: the chosen one): ``repo``, ``url``,
        ``title``, ``body``, ``branch``."""
        return self.forges[forge or self.forge].pull_request_rows()

    def apply_env(self) -> None:
        """Put ``env`` into this process's environment (restored by ``stop``), so the product's
        definitions, sensors and every step subprocess read it."""
        for key, value in self.env.items():
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def stop(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()
        self._stack.close()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> SimWorld:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
