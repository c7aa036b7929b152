"""Detection weighing the two vocabulary kinds of issue 33 round eight (``repo_settings``): a
subcommand counts only run after a known command, for a plugin that extends the command or the
one of several repositories run by it that declares it; a configuration key only written as
configuration, documented by exactly one repository, an environment variable only under the
repository whose name it carries, an ordinary word only beside a second signal. Each rule has
its table row and an adversarial twin."""

from __future__ import annotations

import pytest

from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.catalog import Catalog, CatalogRepo, RepoVocabulary
from veranda_dagster.domain.intake.repo_evidence import gather_evidence
from veranda_dagster.domain.intake.repo_settings import (
    MAX_OPTIONS_BEFORE_SUB,
    namespaced,
    ordinary_word,
)


def _catalog() -> Catalog:
    """A tool and its plugin (``poetry``, ``poetry-plugin-export``), an unrelated tool declaring
    a common subcommand (``pipx``), two repositories run by one command (``tox`` and its
    ``tox-dev`` helper, both run as ``tox``), and documented settings."""
    return Catalog(
        org="acme",
        repositories=[
            CatalogRepo(
                full_name="acme/poetry",
                vocabulary=RepoVocabulary(
                    subcommands=["add", "install"], settings=["installer.max-workers"]
                ),
            ),
            CatalogRepo(
                full_name="acme/poetry-plugin-export",
                vocabulary=RepoVocabulary(subcommands=["export"]),
            ),
            CatalogRepo(full_name="acme/pip"),
            CatalogRepo(
                full_name="acme/pipx",
                vocabulary=RepoVocabulary(
                    commands=["pipx"], subcommands=["list", "inject"], settings=["PIPX_HOME"]
                ),
            ),
            CatalogRepo(
                full_name="acme/tox",
                vocabulary=RepoVocabulary(
                    subcommands=["run"],
                    settings=["allowlist_externals", "skip_install", "deps", "HTTP_PROXY"],
                ),
            ),
            CatalogRepo(
                full_name="acme/tox-helper",
                vocabulary=RepoVocabulary(commands=["tox"], subcommands=["devenv"]),
            ),
            CatalogRepo(
                full_name="acme/celery",
                vocabulary=RepoVocabulary(
                    settings=["worker_prefetch_multiplier", "task_acks_late", "timeout"]
                ),
            ),
            CatalogRepo(
                full_name="acme/kombu",
                vocabulary=RepoVocabulary(settings=["worker_prefetch_multiplier"]),
            ),
        ],
    )


def _options(count: int) -> str:
    """`` --opt0 --opt1=x --opt2 ...``: ``count`` options of a command line, every other one
    with a value."""
    return "".join(f" --opt{i}=x" if i % 2 else f" --opt{i}" for i in range(count))


def _uses(description: str, kind: str) -> dict[str, set[str]]:
    ticket = Ticket(id="T", source="linear", title="It fails", description=description)
    ev = gather_evidence(ticket, _catalog())
    return {repo: terms for (repo, k), terms in ev.terms.items() if k == kind}


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        # the umbrella's command with its plugin's subcommand: the plugin's
        ("```\n$ poetry export -f requirements.txt\n```", {"acme/poetry-plugin-export"}),
        # options between the command and its subcommand
        ("Running `poetry --no-ansi export` fails", {"acme/poetry-plugin-export"}),
        # as many options as the bound, one with a value
        (f"`poetry{_options(MAX_OPTIONS_BEFORE_SUB)} export`", {"acme/poetry-plugin-export"}),
        # twin: one option more than the bound is no longer one command line
        (f"`poetry{_options(MAX_OPTIONS_BEFORE_SUB + 1)} export`", set()),
        # twin: the same word after an unrelated command is not the other tool's subcommand
        ("```\n$ pip list\n```", set()),
        # two repositories run as `tox`: the one declaring the subcommand
        ("```\n$ tox devenv\n```", {"acme/tox-helper"}),
        # twin: the command's only repository declaring it adds nothing its command did not say
        ("```\n$ pipx inject x\n```", set()),
        # twin: what a runner starts is not run at a command's start
        ("```\n$ pipx run poetry export\n```", set()),
        # twin: prose runs nothing
        ("Poetry export is slow", set()),
    ],
)
def test_a_subcommand_counts_only_run_after_a_command_it_extends(description, expected):
    assert set(_uses(description, "subcommand")) == expected


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        # written as configuration, documented by one repository
        (
            "```ini\n[testenv]\nallowlist_externals = make\n```",
            {"acme/tox": {"allowlist_externals"}},
        ),
        ("```yaml\ninstaller.max-workers: 4\n```", {"acme/poetry": {"installer.max-workers"}}),
        ("```\nexport PIPX_HOME=/opt/pipx\n```", {"acme/pipx": {"pipx_home"}}),
        ('value = os.environ["PIPX_HOME"]', {"acme/pipx": {"pipx_home"}}),
        ("```python\napp.conf.task_acks_late = True\n```", {"acme/celery": {"task_acks_late"}}),
        # twin: a key two repositories document is nobody's
        ("```python\napp.conf.worker_prefetch_multiplier = 1\n```", {}),
        # twin: a key in prose is a mention, not a setting
        ("I never set allowlist_externals anywhere", {}),
        # twin: an environment variable without the tool's name is a convention many read
        ("```\nexport HTTP_PROXY=http://proxy\n```", {}),
        # an ordinary word alone is no use; beside a compound key of the same repository it is
        ("```ini\ndeps = pytest\n```", {}),
        (
            "```ini\ndeps = pytest\nskip_install = true\n```",
            {"acme/tox": {"deps", "skip_install"}},
        ),
        # twin of the line above: the ordinary word beside a second signal of another repository
        ("```\n$ pipx list\ntimeout = 5\n```", {}),
    ],
)
def test_a_configuration_key_counts_written_as_configuration_by_its_one_documenter(
    description, expected
):
    assert _uses(description, "setting") == expected


def test_an_ordinary_word_counts_beside_a_second_signal_for_the_same_repository():
    uses = _uses("```python\nimport celery\ntimeout = 5\n```", "setting")
    assert uses == {"acme/celery": {"timeout"}}


@pytest.mark.parametrize(
    ("key", "name", "own"),
    [
        ("PIPX_HOME", "pipx", True),
        ("OTEL_DOTNET_AUTO_HOME", "opentelemetry-dotnet-instrumentation", True),
        ("OTEL_SERVICE_NAME", "opentelemetry-dotnet-instrumentation", False),
        ("PIP_INDEX_URL", "build", False),
        ("worker_prefetch_multiplier", "celery", True),
    ],
)
def test_an_environment_variable_is_a_tools_own_when_it_carries_its_name(key, name, own):
    assert namespaced(key, name) is own


@pytest.mark.parametrize(
    ("key", "ordinary"),
    [("timeout", True), ("deps", True), ("skip_install", False), ("cache-dir", False)],
)
def test_an_ordinary_word_is_one_word(key, ordinary):
    assert ordinary_word(key) is ordinary
