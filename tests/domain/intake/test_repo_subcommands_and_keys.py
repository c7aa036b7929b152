"""The two vocabulary kinds issue 33 names beside the others: the subcommands a repository's
command line declares (``repo_subcommands``) and the configuration keys it documents
(``repo_config_keys``). Read from a dict of files, through the GitHub and GitLab fakes with the
real clients, at every bound (reads, file size, names kept), against hostile input; an old
catalog without them still loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.domain.intake.repo_tree import Tree
from veranda_dagster.domain.core.bounds import (
    MAX_CONFIG_FILE_READS,
    MAX_CONFIG_KEYS,
    MAX_SUBCOMMAND_FILE_READS,
    MAX_SUBCOMMANDS,
    MAX_VOCABULARY_FILE_BYTES,
)
from veranda_dagster.domain.intake.catalog import RepoVocabulary, load_catalog
from veranda_dagster.domain.intake.catalog_builder import build_catalog_from_forge
from veranda_dagster.domain.intake.repo_config_keys import (
    MAX_SCHEMA_DEPTH,
    page_keys,
    read_config_keys,
    schema_keys,
)
from veranda_dagster.domain.intake.repo_subcommands import (
    MAX_DECORATOR_LINES,
    MAX_SEARCH_DEPTH,
    declared_subcommands,
    read_subcommands,
)
from veranda_dagster.domain.intake.repo_vocabulary import MAX_ENTRY_MODULES, read_vocabulary
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.forges.gitlab.client import GitLabClient
from veranda_dagster.sim.github_fake import GitHubFake
from veranda_dagster.sim.gitlab_fake import GitLabFake
from veranda_dagster.sim.sample_org import create_bare_repo


def _subcommands(
    files: dict[str, str], packages: list[str], entry: list[str] | None = None
) -> tuple[list[str], list[str], Tree]:
    tree, notes = Tree(files), list[str]()
    root = tree.root()
    found = read_subcommands(
        "acme/tool", tree.read, tree.listdir, packages, entry or [], root, notes
    )
    return found, notes, tree


CLICK = """
@cli.command()
@click.option("--loglevel")
def purge_all(loglevel): ...

@cli.command("run-parallel")
def parallel(): ...

@cli.group(name="queues")
def queues(): ...
"""


@pytest.mark.parametrize(
    ("path", "text", "names"),
    [
        ("cli.py", CLICK, ["run-parallel", "queues", "purge-all"]),
        (
            "main.py",
            "sub = parser.add_subparsers()\nsub.add_parser('autoupdate')\n",
            ["autoupdate"],
        ),
        ("main.py", 'state.add_command("devenv", ["d"], "dev env", devenv)\n', ["devenv"]),
        ("root.go", 'var serveCmd = &cobra.Command{\n\tUse:   "serve [flags]",\n}\n', ["serve"]),
        ("main.rs", 'Command::new("releases").about("x")\n', ["releases"]),
        ("cli.js", "program.command('build').action(run)\n", ["build"]),
        ("command.py", "def revision(config): ...\ndef _helper(): ...\n", ["revision"]),
        ("command.py", 'class ExportCommand(Command):\n    name = "export"\n', ["export"]),
        (
            "application.py",
            'COMMANDS = [\n    "about",\n    "env activate",\n]\n',
            ["about", "env"],
        ),
    ],
)
def test_a_cli_file_declares_its_subcommands(path, text, names):
    assert declared_subcommands(text, path) == names


@pytest.mark.parametrize(
    ("path", "text"),
    [
        # a class's ``name`` outside a command module is anything (click's Path type)
        ("types.py", 'class Path(ParamType):\n    name = "path"\n'),
        # the top-level functions of a module not named for commands are no subcommands
        ("helpers.py", "def revision(config): ...\n"),
        # a decorator that is not a group's command
        ("cli.py", "@app.route('/x')\ndef index(): ...\n"),
    ],
)
def test_what_is_not_a_subcommand_declaration_declares_none(path, text):
    assert declared_subcommands(text, path) == []


def test_a_console_script_module_and_a_commands_folder_give_the_subcommands():
    files = {
        "pyproject.toml": '[project]\nname = "pre-commit"\n'
        '[project.scripts]\npre-commit = "pre_commit.main:main"\n',
        "pre_commit/__init__.py": "",
        "pre_commit/main.py": "subparsers.add_parser('hook-impl')\n",
        "pre_commit/commands/__init__.py": "",
        "pre_commit/commands/autoupdate.py": "",
        "pre_commit/commands/migrate_config.py": "",
        "pre_commit/commands/_private.py": "",
        "pre_commit/commands/base.py": "",
    }
    vocab, _ = read_vocabulary("acme/pre-commit", _dict_files(files))
    assert vocab.subcommands == ["hook-impl", "autoupdate", "migrate-config"]
    assert ("subcommands", "autoupdate") not in vocab.terms()  # a word alone names nothing


def _dict_files(files: dict[str, str]) -> object:
    """``RepositoryFiles`` over a dict (the builder's own seam)."""

    class Files:
        def read_repository_file(self, full_name: str, path: str) -> str | None:
            return files.get(path)

        def list_repository_dir(self, full_name: str, path: str) -> list[str] | None:
            return Tree(files).listdir(path)

    return Files()


def test_a_commands_folder_two_levels_down_and_a_source_tree_outside_a_package():
    tox = {
        "src/tox/__init__.py": "",
        "src/tox/config/loader.py": "",
        "src/tox/session/cmd/devenv.py": "",
        "src/tox/session/cmd/exec_.py": "",
        "src/tox/session/cmd/test_x.py": "",
    }
    found, _, _ = _subcommands(tox, ["src/tox"])
    assert found == ["devenv", "exec"]
    rust = {"src/main.rs": "", "src/commands/releases/mod.rs": "", "src/commands/info.rs": ""}
    found, _, _ = _subcommands(rust, [])
    assert found == ["info", "releases"]


def test_a_root_bin_folder_holds_scripts_but_a_package_bin_folder_holds_subcommands():
    found, _, _ = _subcommands({"bin/release.sh": "", "bin/deploy.py": ""}, [])
    assert found == []
    found, _, _ = _subcommands({"celery/__init__.py": "", "celery/bin/worker.py": ""}, ["celery"])
    assert found == ["worker"]


def test_subcommands_past_the_cap_are_not_kept_and_non_names_are_dropped():
    many = {f"pkg/commands/cmd{i:03}.py": "" for i in range(MAX_SUBCOMMANDS + 20)}
    found, _, _ = _subcommands({"pkg/__init__.py": "", **many}, ["pkg"])
    assert len(found) == MAX_SUBCOMMANDS
    hostile = 'add_parser("rm -rf /")\nadd_parser("Upper")\nadd_parser("ok-name")\n'
    found, _, _ = _subcommands({"pkg/cli.py": hostile}, ["pkg"])
    assert found == ["ok-name"]
    with pytest.raises(ValidationError, match="more than"):
        RepoVocabulary(subcommands=[f"c{i}" for i in range(MAX_SUBCOMMANDS + 1)])
    with pytest.raises(ValidationError, match="is not a name"):
        RepoVocabulary(subcommands=["rm -rf /"])


def test_the_subcommand_read_bound_stops_a_deep_search_with_a_note_and_a_huge_file_is_skipped():
    deep = {f"pkg/area{i:02}/module.py": "" for i in range(40)}
    found, notes, tree = _subcommands({"pkg/__init__.py": "", **deep}, ["pkg"])
    assert found == [] and tree.reads <= MAX_SUBCOMMAND_FILE_READS + 1  # + the root listing
    assert any("stopped reading subcommands after" in n for n in notes)
    huge = "add_parser('hidden')\n" + "#" * (MAX_VOCABULARY_FILE_BYTES + 1)
    found, _, _ = _subcommands({"pkg/cli.py": huge}, ["pkg"])
    assert found == []


def _keys(files: dict[str, str], packages: list[str]) -> tuple[list[str], list[str], Tree]:
    tree, notes = Tree(files), list[str]()
    root = tree.root()
    return (
        read_config_keys("acme/tool", tree.read, tree.listdir, packages, root, notes),
        notes,
        tree,
    )


SPHINX = """
Old name table: ``CELERY_OLD_NAME``

.. setting:: worker_prefetch_multiplier

.. confval:: broker_connection_retry

.. conf::
    :keys: allowlist_externals, whitelist_externals
    :default: <empty list>

.. envvar:: OTEL_SDK_DISABLED
"""
MARKDOWN = """
| Setting | Meaning |
| --- | --- |
| `installer.max-workers` | parallel jobs |

### `cache-dir`

Set `HTTPS_PROXY` to go through a proxy; `timeout` is prose.
"""


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        (
            SPHINX,
            [
                "worker_prefetch_multiplier",
                "broker_connection_retry",
                "allowlist_externals",
                "whitelist_externals",
                "OTEL_SDK_DISABLED",
                "CELERY_OLD_NAME",  # directives first, a backticked variable after
            ],
        ),
        (MARKDOWN, ["installer.max-workers", "cache-dir", "HTTPS_PROXY"]),
        ("Plain prose about `timeout` and `name` documents nothing.\n", []),
    ],
)
def test_a_configuration_page_documents_its_keys(text, keys):
    assert page_keys(text) == keys


def test_keys_come_from_config_pages_settings_modules_and_schemas_not_other_pages():
    files = {
        "docs/index.rst": ".. setting:: not_a_config_page\n",
        "docs/userguide/configuration.rst": SPHINX,
        "docs/tutorials/settings.rst": ".. setting:: tutorial_folder_is_no_guide\n",
        "pkg/__init__.py": "",
        "pkg/environment_variables/__init__.py": 'OTEL_EXPORTER_OTLP_ENDPOINT = "x"\nlower = 1\n',
        "pkg/tox.schema.json": json.dumps(
            {"properties": {"skip_install": {}, "env": {"properties": {"deps": {}}}}}
        ),
        "pkg/settings.py": "DEBUG = True\nif True:\n    NESTED_NAME = 1\n",
    }
    keys, notes, _ = _keys(files, ["pkg"])
    assert keys[:4] == [
        "worker_prefetch_multiplier",
        "broker_connection_retry",
        "allowlist_externals",
        "whitelist_externals",
    ]
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in keys and "skip_install" in keys and "deps" in keys
    # not a config page, not a guide folder, not top level, no underscore (an ordinary word)
    for absent in ("not_a_config_page", "tutorial_folder_is_no_guide", "NESTED_NAME", "DEBUG"):
        assert absent not in keys
    assert notes == []


def test_config_keys_past_the_cap_and_the_read_bound_and_hostile_input():
    page = "".join(f".. setting:: key_{i:04}\n" for i in range(MAX_CONFIG_KEYS + 50))
    keys, _, _ = _keys({"docs/config.rst": page}, [])
    assert len(keys) == MAX_CONFIG_KEYS
    guides = {f"docs/guide{i:02}/settings.md": "### `a_key`\n" for i in range(30)}
    keys, _, tree = _keys(guides, [])
    assert tree.reads <= MAX_CONFIG_FILE_READS + 1  # + the root listing
    assert keys == ["a_key"]
    huge = ".. setting:: hidden_key\n" + "x" * (MAX_VOCABULARY_FILE_BYTES + 1)
    keys, _, _ = _keys({"docs/config.rst": huge}, [])
    assert keys == []
    hostile = ".. setting:: rm -rf /\n.. setting:: None\n.. setting:: $(evil)\n"
    keys, _, _ = _keys({"docs/config.rst": hostile, "pkg/x.schema.json": "{not json"}, ["pkg"])
    assert keys == ["rm"]  # the first word of the directive only; no keyword, no shell
    with pytest.raises(ValidationError, match="more than"):
        RepoVocabulary(settings=[f"k{i}" for i in range(MAX_CONFIG_KEYS + 1)])


def test_the_config_read_bound_notes_when_it_stops():
    pages = {f"docs/config{i:02}.md": f"### `key_{i}`\n" for i in range(40)}
    keys, notes, _ = _keys(pages, [])
    assert 0 < len(keys) < 40
    assert any("stopped reading configuration keys after" in n for n in notes)


def test_an_old_catalog_without_the_new_kinds_still_loads(tmp_path):
    path = tmp_path / "old.json"
    old = {"full_name": "o/a", "vocabulary": {"commands": ["tool"], "definitions": ["Thing"]}}
    path.write_text(json.dumps({"org": "o", "repositories": [old]}))
    vocab = load_catalog(path).repositories[0].vocabulary
    assert vocab.subcommands == [] and vocab.settings == [] and vocab.commands == ["tool"]


def _bare(tmp_path: Path, root: str) -> Path:
    git, scratch = tmp_path / "git", tmp_path / "scratch"
    scratch.mkdir()
    create_bare_repo(
        git,
        f"{root}/worker",
        {
            "pyproject.toml": '[project]\nname = "worker"\n[project.scripts]\n'
            'worker = "worker.main:main"\n',
            "worker/__init__.py": "",
            "worker/main.py": "@cli.command()\ndef purge(): ...\n",
            "worker/commands/beat.py": "",
            "docs/configuration.rst": ".. setting:: worker_prefetch_multiplier\n",
        },
        scratch,
    )
    return git


def _assert_built(worker: object) -> None:
    assert worker is not None
    vocabulary = worker.vocabulary  # type: ignore[attr-defined]
    assert vocabulary.subcommands == ["purge", "beat"]
    assert vocabulary.settings == ["worker_prefetch_multiplier"]


def test_the_github_client_reads_subcommands_and_keys_from_the_fake_forge(tmp_path):
    git = _bare(tmp_path, "acme")
    with GitHubFake(git, token="ghp_vocabtesttoken00000000000000000000000") as fake:
        client = GitHubClient(fake.base_url, fake.token)
        try:
            catalog, _ = build_catalog_from_forge("acme", client)
        finally:
            client.close()
    _assert_built(catalog.by_full_name("acme/worker"))


def test_the_gitlab_client_reads_subcommands_and_keys_from_the_fake_forge(tmp_path):
    git = _bare(tmp_path, "data/platform")
    token = "glpat-vocab-test-token-0001"
    with GitLabFake(git, token=token) as fake:
        client = GitLabClient(fake.base_url, token)
        try:
            catalog, _ = build_catalog_from_forge("data", client)
        finally:
            client.close()
    _assert_built(catalog.by_full_name("data/platform/worker"))


def test_a_commands_folder_past_the_search_depth_is_not_looked_for():
    found, _, _ = _subcommands({"pkg/a/b/commands/deploy.py": ""}, ["pkg"])
    assert MAX_SEARCH_DEPTH == 2 and found == []  # pkg/a/b/commands is three levels down
    found, _, _ = _subcommands({"pkg/a/commands/deploy.py": ""}, ["pkg"])
    assert found == ["deploy"]


def test_a_decorator_further_from_its_def_than_the_bound_names_nothing():
    near = (
        "@cli.command()\n"
        + "@click.option('-x')\n" * (MAX_DECORATOR_LINES - 1)
        + "def near(): ...\n"
    )
    far = "@cli.command()\n" + "@click.option('-x')\n" * MAX_DECORATOR_LINES + "def far(): ...\n"
    assert declared_subcommands(near, "cli.py") == ["near"]
    assert declared_subcommands(far, "cli.py") == []


def test_at_most_the_bound_of_console_script_modules_is_read():
    scripts = "".join(f'tool{i} = "tool.m{i}:main"\n' for i in range(MAX_ENTRY_MODULES + 2))
    modules = {f"tool/m{i}.py": f"add_parser('sub{i}')\n" for i in range(MAX_ENTRY_MODULES + 2)}
    files = {"pyproject.toml": f'[project]\nname = "tool"\n[project.scripts]\n{scripts}', **modules}
    vocab, _ = read_vocabulary("acme/tool", _dict_files(files))
    assert vocab.subcommands == [f"sub{i}" for i in range(MAX_ENTRY_MODULES)]


def test_schema_properties_past_the_depth_bound_are_not_keys():
    node: dict[str, object] = {"properties": {"leaf_key": {}}}
    for level in range(MAX_SCHEMA_DEPTH):
        node = {"properties": {f"level_{level}": node}}
    keys = schema_keys(json.dumps(node))
    assert keys[:MAX_SCHEMA_DEPTH] == [f"level_{i}" for i in reversed(range(MAX_SCHEMA_DEPTH))]
    assert "leaf_key" not in keys
    assert schema_keys("[1, 2]") == [] and schema_keys("{not json") == []
