"""What a colleague knows a repository by, read from the repository's own files.

A ticket often never names the repository; it imports ``rest_framework``, runs ``sentry-cli``,
lists the ``trailing-whitespace`` hook or calls ``make_region``. Those names live in the
repository's manifests and package, so ``veranda catalog`` reads them once, through the forge,
and stores them in the catalog (``CatalogRepo.vocabulary``) for detection to weigh.

Only data formats are parsed (TOML, JSON, YAML with the safe loader, ``setup.cfg`` as INI); a
``setup.py`` is scanned with bounded regular expressions, never run. Every read is bounded: at
most ``MAX_VOCABULARY_FILE_READS`` files of at most ``MAX_VOCABULARY_FILE_BYTES`` each per
repository, and at most ``MAX_VOCABULARY_TERMS_PER_KIND`` / ``MAX_VOCABULARY_TERMS`` terms kept.
"""

from __future__ import annotations

import configparser
import functools
import re
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from veranda_dagster.domain.core.bounds import (
    MAX_SHIPPED_TOOLS,
    MAX_VOCABULARY_FILE_BYTES,
    MAX_VOCABULARY_FILE_READS,
    MAX_VOCABULARY_TERMS,
    MAX_VOCABULARY_TERMS_PER_KIND,
)
from veranda_dagster.domain.core.documents import json_or_none, toml_or_none, yaml_or_none
from veranda_dagster.domain.intake.catalog import VOCABULARY_KINDS, VOCABULARY_TERM, RepoVocabulary
from veranda_dagster.domain.intake.read_budget import ReadBudget
from veranda_dagster.domain.intake.repo_config_keys import read_config_keys
from veranda_dagster.domain.intake.repo_definitions import (
    is_public_name,
    public_top_level_names,
    read_definitions,
)
from veranda_dagster.domain.intake.repo_subcommands import read_subcommands
from veranda_dagster.domain.intake.repo_usage import image_names, image_refs

MANIFESTS = (
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "package.json",
    "action.yml",
    "action.yaml",
    ".pre-commit-hooks.yaml",
    "Cargo.toml",
    "go.mod",
)
"""Root files read first, in this order: what a project publishes itself as."""

MONOREPO_FOLDERS = ("packages", "experimental/packages", "plugins", "instrumentation")
"""Folders whose members are published packages of their own (npm or Python monorepos)."""

NOT_PACKAGES = frozenset(
    {
        "bench",
        "benchmarks",
        "demo",
        "demos",
        "doc",
        "docs",
        "example",
        "examples",
        "lib",
        "scripts",
        "src",
        "tasks",
        "tools",
    }
)
"""Top-level folders that are never a repository's import name (nor are ``test*`` ones, or
names under three characters): its docs, examples and demos, and its development automation
(``scripts``, ``tools``, an invoke ``tasks`` folder)."""

_SETUP_NAME = re.compile(r"""\bname\s*=\s*["']([A-Za-z0-9][\w.-]{0,99})["']""")
_SETUP_SCRIPTS = re.compile(r"""console_scripts["']?\s*[:=]\s*[\[(]([^\])]{0,4000})[\])]""")
_SETUP_SCRIPT = re.compile(r"""["']\s*([A-Za-z0-9][\w.-]{0,60})\s*=\s*[\w.]+\s*:\s*\w+""")
_SCRIPT_TARGET = re.compile(r"""^\s*([A-Za-z_][\w.]{0,200})\s*:\s*\w""")
"""The module of a console script's target (``pre_commit.main:main``)."""
_SETUP_TARGET = re.compile(r"""["']\s*[A-Za-z0-9][\w.-]{0,60}\s*=\s*([\w.]+)\s*:\s*\w+""")
MAX_ENTRY_MODULES = 4
"""Console-script target modules read for subcommands: a tool has one or two entry points;
a repository with dozens of scripts (a hook collection) has one command per script instead."""
_TXT_FILE = re.compile(r"""["']((?:[\w.-]{1,60}/)?[\w.-]{1,60}\.txt)["']""")
MAX_REQUIREMENT_FILES_NAMED = 8
"""``.txt`` names kept from one ``setup.py``: its runtime, test and extras files."""
_SETUP_REQUIRES = re.compile(r"""install_requires\s*=\s*[\[(]([^\])]{0,4000})[\])]""")
_QUOTED_REQUIREMENT = re.compile(r"""["']([^"'\n]{1,200})["']""")
_ALL = re.compile(r"__all__\s*(?::[^=]*)?=\s*[\[(]([^\])]{0,20000})[\])]", re.S)
_QUOTED = re.compile(r"""["']([A-Za-z_][A-Za-z0-9_]{0,99})["']""")
_GO_MODULE = re.compile(r"^module\s+(\S{1,200})", re.M)


@runtime_checkable
class RepositoryFiles(Protocol):
    """What reading a repository's vocabulary needs from a forge: one file's text on the
    default branch, and one folder's entries (sub-folders end in ``/``); ``None`` when the path
    does not exist. Implemented by the forge clients and the forge fakes."""

    def read_repository_file(self, full_name: str, path: str) -> str | None: ...

    def list_repository_dir(self, full_name: str, path: str) -> list[str] | None: ...


class _Terms:
    """Collects terms per kind, in order, without duplicates."""

    def __init__(self) -> None:
        self.by_kind: dict[str, list[str]] = {kind: [] for kind in VOCABULARY_KINDS}
        self.shipped: list[str] = []
        self.requirement_files: list[str] = []
        """``.txt`` files a ``setup.py`` names (``reqs('default.txt')``)."""
        self.entry_modules: list[str] = []
        """The modules its console scripts point at (``pre_commit.main``): its command line."""

    def entry_points(self, targets: Iterable[Any]) -> None:
        """Record the modules of console-script targets (``pkg.mod:func``), each once."""
        for target in targets:
            m = _SCRIPT_TARGET.match(str(target))
            if m and m.group(1) not in self.entry_modules:
                self.entry_modules.append(m.group(1))

    def ship(self, values: Iterable[str]) -> None:
        """Record tools it ships or wraps, lower-cased, each once; twice ``MAX_SHIPPED_TOOLS``
        are collected, so its own names (dropped at the end) cannot crowd out real ones."""
        for value in values:
            tool = value.strip().lower()
            if len(self.shipped) >= 2 * MAX_SHIPPED_TOOLS:
                return
            if VOCABULARY_TERM.match(tool) and tool not in self.shipped:
                self.shipped.append(tool)

    def add(self, kind: str, values: Iterable[Any]) -> None:
        bucket = self.by_kind[kind]
        for value in values:
            term = str(value).strip()
            if VOCABULARY_TERM.match(term) and term not in bucket:
                bucket.append(term)

    def _plugins(self) -> list[str]:
        """Entry-point names, without the host's short form of its own distribution name:
        ``pytest-celery`` registers ``celery`` in pytest, ``tox-report`` registers ``report``
        in tox, ``opentelemetry-instrumentation-aio-pika`` registers ``aio-pika``. That part of
        the name is the host's key for it, not what a colleague knows it by: a sibling's name
        (``celery``), a common word (``report``) or the library it wraps; the full name is
        already among its distributions."""
        owned = [_NAME_PARTS.split(d.lower()) for d in self.by_kind["distributions"]]
        return [p for p in self.by_kind["plugins"] if not _short_form(p, owned)]

    def vocabulary(self, name: str = "") -> RepoVocabulary:
        """The terms kept within the caps; what it ships, without its own names (``name``,
        the repository's, included: a README linking its own PyPI page ships nothing)."""
        kept: dict[str, list[str]] = {}
        room = MAX_VOCABULARY_TERMS
        by_kind = {**self.by_kind, "plugins": self._plugins()}
        for kind in VOCABULARY_KINDS:
            take = min(MAX_VOCABULARY_TERMS_PER_KIND, room)
            kept[kind] = by_kind[kind][:take]
            room -= len(kept[kind])
        own = {t.lower() for kind in ("distributions", "commands") for t in kept[kind]}
        own |= {name.lower()} - {""}
        ships = [t for t in self.shipped if t not in own][:MAX_SHIPPED_TOOLS]
        return RepoVocabulary(**kept, ships=ships)


_NAME_PARTS = re.compile(r"[-_.]")
"""What separates the words of a distribution name (``pytest-celery``, ``tox_conda``)."""


def _short_form(term: str, names: list[list[str]]) -> bool:
    """``term``'s words are a run of a longer name's words (``celery`` of ``pytest-celery``)."""
    words = _NAME_PARTS.split(term.lower())
    return any(
        len(name) > len(words)
        and any(name[i : i + len(words)] == words for i in range(len(name) - len(words) + 1))
        for name in names
    )


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]{0,99})")
_PYPI_LINK = re.compile(
    r"pypi\.(?:python\.)?org/(?:p|project|pypi)/([A-Za-z0-9][A-Za-z0-9._-]{0,99})"
)
_INSTALL = re.compile(
    r"\b(?:pip3?|pipx|uv pip|apt-get|apt|apk|yum|dnf)\s+(?:-\S+\s+)*(?:install|add)\b"
    r"([^\n&;|]{0,2000})"
)


def _requirement_names(lines: Iterable[Any]) -> list[str]:
    """``aiohappyeyeballs>=2.5`` -> ``aiohappyeyeballs``; comments and options are skipped."""
    found = (
        _REQUIREMENT.match(str(line))
        for line in lines
        if not str(line).lstrip().startswith(("#", "-"))
    )
    return [m.group(1) for m in found if m]


_FILE_FLAGS = frozenset({"-r", "-c", "-e", "--requirement", "--constraint", "--editable"})


def _installed(dockerfile: str) -> list[str]:
    """What a Dockerfile's ``pip install`` / ``apt-get install`` lines install (line
    continuations joined); flags, paths, variables and ``-r`` files are skipped."""
    joined = dockerfile.replace("\\\n", " ")
    names: list[str] = []
    for block in _INSTALL.findall(joined):
        words = block.split()
        for before, word in zip(["", *words], words, strict=False):
            if before not in _FILE_FLAGS and not word.startswith(("-", ".", "/", "$", "'", '"')):
                names.append(word)
    return _requirement_names(names)


def _import_name(distribution: str) -> str:
    """``django-celery-beat`` -> ``django_celery_beat``; ``dogpile.cache`` -> ``dogpile``."""
    return re.sub(r"[-.]", "_", distribution.split(".")[0]).lower()


def _table(data: Any, key: str) -> dict[str, Any]:
    """``data[key]`` when both are TOML tables, else an empty one."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _pyproject(text: str, terms: _Terms) -> list[str]:
    data = toml_or_none(text)
    if data is None:
        return []
    project, tool = _table(data, "project"), _table(data, "tool")
    poetry = _table(tool, "poetry")
    names = [n for n in (project.get("name"), poetry.get("name")) if isinstance(n, str)]
    terms.add("distributions", names)
    requires = project.get("dependencies")
    terms.ship(_requirement_names(requires if isinstance(requires, list) else []))
    terms.ship(k for k in _table(poetry, "dependencies") if k.lower() != "python")
    for table in (project.get("scripts"), project.get("gui-scripts"), poetry.get("scripts")):
        if isinstance(table, dict):
            terms.add("commands", table)
            terms.entry_points(table.values())
    for table in (project.get("entry-points"), poetry.get("plugins")):
        if isinstance(table, dict):
            for group in table.values():
                if isinstance(group, dict):
                    terms.add("plugins", group)
    packages: list[str] = []
    setuptools = _table(tool, "setuptools")
    if isinstance(setuptools.get("packages"), list):
        packages += [p for p in setuptools["packages"] if isinstance(p, str) and "." not in p]
    for item in poetry.get("packages") or []:
        if isinstance(item, dict) and isinstance(item.get("include"), str):
            packages.append(item["include"].split("/")[0])
    terms.add("imports", [p for p in packages if not _is_test_suite(p)])
    return names


def _setup_cfg(text: str, terms: _Terms) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    name = parser.get("metadata", "name", fallback="").strip()
    requires = parser.get("options", "install_requires", fallback="")
    terms.ship(_requirement_names(requires.splitlines()))
    scripts = parser.get("options.entry_points", "console_scripts", fallback="")
    terms.add("commands", [line.split("=")[0] for line in scripts.splitlines() if "=" in line])
    terms.entry_points(line.split("=", 1)[1] for line in scripts.splitlines() if "=" in line)
    for group in (
        parser.options("options.entry_points") if parser.has_section("options.entry_points") else []
    ):
        if group not in ("console_scripts", "gui_scripts"):
            lines = parser.get("options.entry_points", group).splitlines()
            terms.add("plugins", [line.split("=")[0] for line in lines if "=" in line])
    terms.add("distributions", [name] if name else [])
    return [name] if name else []


def _setup_py(text: str, terms: _Terms, named: bool) -> list[str]:
    """Read, never run: the first ``name="..."`` (unless another manifest ``named`` it), a
    literal ``install_requires=[...]`` or the requirement files it reads, and any ``"cmd =
    pkg.mod:func"`` entry."""
    match = None if named else _SETUP_NAME.search(text)
    names = [match.group(1)] if match else []
    terms.add("distributions", names)
    for block in _SETUP_REQUIRES.findall(text)[:1]:
        terms.ship(_requirement_names(_QUOTED_REQUIREMENT.findall(block)))
    terms.requirement_files += _TXT_FILE.findall(text)[:MAX_REQUIREMENT_FILES_NAMED]
    for block in _SETUP_SCRIPTS.findall(text):
        terms.add("commands", _SETUP_SCRIPT.findall(block))
        terms.entry_points(f"{t}:_" for t in _SETUP_TARGET.findall(block))
    return names


def _package_json(text: str, terms: _Terms) -> None:
    data = json_or_none(text)
    if not isinstance(data, dict):
        return
    if isinstance(data.get("name"), str) and data.get("private") is not True:
        terms.add("distributions", [data["name"]])  # a private root is a workspace, not a package
    bins = data.get("bin")
    if isinstance(bins, dict):
        terms.add("commands", bins)
    elif isinstance(bins, str) and isinstance(data.get("name"), str):
        terms.add("commands", [data["name"].split("/")[-1]])


def _symbols(text: str) -> list[str]:
    """A package's public top-level names: its ``__all__``, else its public classes and
    functions. Only names a colleague could search for (four characters or more)."""
    listed = _ALL.search(text)
    if listed is None:
        return public_top_level_names(text)
    return [name for name in _QUOTED.findall(listed.group(1)) if is_public_name(name)]


def _manifests(
    read: ReadBudget,
    prefix: str,
    terms: _Terms,
    full_name: str,
    member_manifests: tuple[str, ...] = (),
) -> list[str]:
    """The manifests at the root (``prefix`` ``""``), or ``member_manifests`` under a monorepo
    member (``packages/core/``); returns the Python distribution names found."""
    names: list[str] = []
    for manifest in MANIFESTS if not prefix else member_manifests:
        text = read.read(prefix + manifest)
        if text is None:
            continue
        if manifest == "pyproject.toml":
            names += _pyproject(text, terms)
        elif manifest == "setup.cfg":
            names += _setup_cfg(text, terms)
        elif manifest == "setup.py" and (not names or not terms.shipped):
            names += _setup_py(text, terms, named=bool(names))
        elif manifest == "package.json":
            _package_json(text, terms)
        elif manifest in ("action.yml", "action.yaml"):
            terms.add("actions", [full_name])
        elif manifest == ".pre-commit-hooks.yaml":
            hooks = yaml_or_none(text)
            if isinstance(hooks, list):
                terms.add("hooks", [h["id"] for h in hooks if isinstance(h, dict) and "id" in h])
        elif manifest == "Cargo.toml":
            cargo = toml_or_none(text)
            if cargo is None:
                continue
            package = _table(cargo, "package")
            terms.add("distributions", [package.get("name")] if package.get("name") else [])
        elif manifest == "go.mod":
            terms.add("imports", _GO_MODULE.findall(text)[:1])
    return names


def _published_images(full_name: str, readme: str) -> list[str]:
    """Images the README builds from, runs or tags under the repository's own name (any
    registry owner): ``tiangolo/uwsgi-nginx-flask`` of ``uwsgi-nginx-flask-docker``. Images of
    other names in it are its bases or examples, not what it publishes."""
    stems = set(image_names(full_name.rsplit("/", 1)[-1]))
    found = [ref.lower() for ref in image_refs(readme)]
    return list(dict.fromkeys(r for r in found if r.rsplit("/", 1)[-1] in stems))


PROVIDER_PREFIX = "terraform-provider-"
PROVIDER_DOC_FOLDERS = ("docs/resources", "docs/data-sources")
"""Where a Terraform provider documents its resource and data source types, one page each."""


def _provider_types(read: ReadBudget, full_name: str) -> list[str]:
    """``prefect_deployment`` of ``terraform-provider-prefect``'s ``docs/resources/
    deployment.md``: the names a configuration writes (``resource "prefect_deployment"``)."""
    name = full_name.rsplit("/", 1)[-1].lower()
    if not name.startswith(PROVIDER_PREFIX):
        return []
    provider = name.removeprefix(PROVIDER_PREFIX)
    pages = [page for folder in PROVIDER_DOC_FOLDERS for page in read.listdir(folder)]
    stems = [p.rsplit(".", 1)[0] for p in pages if p.endswith((".md", ".markdown"))]
    return list(dict.fromkeys(f"{provider}_{stem}" for stem in stems if stem.isidentifier()))


CHART_FOLDERS = ("charts", "helm", "deploy/helm")
"""Where a repository keeps the Helm charts it publishes, one folder per chart."""
MAX_CHART_READS = 12
"""``Chart.yaml`` files read per repository: a charts repository publishes a handful; more
would spend the reads its packages need."""


def _charts(read: ReadBudget, folders: list[str], root: list[str]) -> list[str]:
    """``name:`` of the root ``Chart.yaml`` and of ``charts/<chart>/Chart.yaml`` (at most
    ``MAX_CHART_READS``): what ``helm install`` and a values file name it by."""
    paths = ["Chart.yaml"] if "Chart.yaml" in root else []
    for folder in CHART_FOLDERS:
        if folder.split("/")[0] in folders:
            paths += [f"{folder}/{e}Chart.yaml" for e in read.listdir(folder) if e.endswith("/")]
    names: list[str] = []
    for path in paths[:MAX_CHART_READS]:
        chart = yaml_or_none(read.read(path) or "")
        if isinstance(chart, dict) and isinstance(chart.get("name"), str):
            names.append(chart["name"])
    return names


PACKAGE_PATHS = ("{}/__init__.py", "src/{}/__init__.py", "lib/{}/__init__.py", "{}.py")
"""Where a Python import name lives: a package at the root, under ``src/`` or ``lib/``, or a
single module (``pycodestyle.py``)."""


TEST_SUFFIXES = ("tests", "_test", "_testing")
"""A folder named so holds a suite (``funtests``, ``integration_tests``, ``unit_test``), not the
package a ticket imports (``pytest`` and ``latest`` are not test folders)."""


def _is_test_suite(name: str) -> bool:
    """``tests``, ``testing``, ``funtests``, ``unit_test``: a suite a manifest may list for
    its sdist (poetry's ``{ include = "tests", format = "sdist" }``), never what is imported."""
    return name.lower().startswith("test") or name.lower().endswith(TEST_SUFFIXES)


def _may_be_package(folder: str) -> bool:
    return (
        folder.isidentifier()
        and len(folder) >= 3
        and folder not in NOT_PACKAGES
        and not folder.startswith(("_", "."))
        and not _is_test_suite(folder)
    )


MAX_NAMESPACE_MEMBERS = 24
"""Sub-packages kept of one namespace package (``poetry/`` without an ``__init__.py``): poetry
has 18; past it a namespace is a whole ecosystem and its members cannot all fit the imports
kind (``MAX_VOCABULARY_TERMS_PER_KIND``) anyway."""


def _namespace_members(read: ReadBudget, folder: str) -> list[str]:
    """The sub-packages of a namespace package (PEP 420: a folder without ``__init__.py``, as
    poetry and poetry-core share ``poetry/``), at most ``MAX_NAMESPACE_MEMBERS``; none for a
    folder that is no namespace."""
    entries = read.listdir(folder)
    if not entries or "__init__.py" in entries:
        return []
    subs = [e.rstrip("/") for e in entries if e.endswith("/")]
    return [s for s in subs if _may_be_package(s)][:MAX_NAMESPACE_MEMBERS]


def read_vocabulary(full_name: str, files: RepositoryFiles) -> tuple[RepoVocabulary, list[str]]:
    """The repository's vocabulary and notes on what was skipped, within the read bounds."""
    notes: list[str] = []
    read_file = functools.partial(files.read_repository_file, full_name)
    list_dir = functools.partial(files.list_repository_dir, full_name)
    read = ReadBudget(
        full_name,
        read_file,
        list_dir,
        notes,
        limit=MAX_VOCABULARY_FILE_READS,
        max_bytes=MAX_VOCABULARY_FILE_BYTES,
        what="vocabulary",
    )
    terms = _Terms()
    names = _manifests(read, "", terms, full_name)
    root = read.listdir("")
    folders = [e.rstrip("/") for e in root if e.endswith("/")]
    # one manifest per member, of the kind the root has: a read each, not three
    member = ("package.json",) if "package.json" in root else ("pyproject.toml",)
    prefix = re.split(r"[-_.]", full_name.rsplit("/", 1)[-1].lower(), maxsplit=1)[0]
    for folder in [f for f in folders if f.lower().startswith(prefix + "-")]:
        _manifests(read, f"{folder}/", terms, full_name, member)  # opentelemetry-sdk/ at root
    for folder in MONOREPO_FOLDERS:
        if folder.split("/")[0] not in folders:
            continue
        for entry in [e for e in read.listdir(folder) if e.endswith("/")]:
            _manifests(read, f"{folder}/{entry}", terms, full_name, member)
    if "README.md" in root:
        terms.add("images", _published_images(full_name, read.read("README.md") or ""))
    if "docs" in folders:
        terms.add("symbols", _provider_types(read, full_name))
    candidates = list(dict.fromkeys([_import_name(n) for n in names] + terms.by_kind["imports"]))
    declared = set(candidates)  # what its manifests name: only these may be a namespace
    candidates += [f for f in folders if _may_be_package(f) and f not in candidates]
    inner: list[str] = []
    if "src" in folders:  # a src layout holds its packages one level down
        inner = [e.rstrip("/") for e in read.listdir("src") if e.endswith("/")]
        candidates += [f for f in inner if _may_be_package(f) and f not in candidates]
    namespaces: set[str] = set()
    packages: list[str] = []  # the package folders found, for the definitions index
    for candidate in candidates:
        for path in PACKAGE_PATHS:
            text = read.read(path.format(candidate))
            if text is not None:
                terms.add("imports", [candidate])
                terms.add("symbols", _symbols(text))
                if path.endswith("/__init__.py"):
                    packages.append(path.format(candidate).removesuffix("/__init__.py"))
                break
        else:
            where = next(
                (f"{p}{candidate}" for p, f in (("", folders), ("src/", inner)) if candidate in f),
                None,
            )
            members = _namespace_members(read, where) if where and candidate in declared else []
            if members:
                namespaces.add(candidate)
                terms.add("imports", [f"{candidate}.{m}" for m in members])
        if read.left <= 0:
            break
    # a namespace (``poetry`` of poetry-core's ``poetry/core/``) is every sharer's: its members'
    # paths are what this repository defines
    terms.by_kind["imports"] = [i for i in terms.by_kind["imports"] if i not in namespaces]
    # charts last: a `charts/` folder of a charting library would otherwise spend the reads its
    # package needs; a Helm charts repository has no package to read first
    terms.add("charts", _charts(read, folders, root))
    # what it ships last of all: the names it is known by come first in the read budget
    _shipped(read, full_name, root, folders, terms)
    vocabulary = terms.vocabulary(full_name.rsplit("/", 1)[-1])
    # its own read budget (``MAX_DEFINITION_FILE_READS``): the names it is known by come first
    definitions = read_definitions(
        full_name,
        read_file,
        list_dir,
        packages,
        notes,
    )
    # the command line and the documented configuration: reads of their own, after the rest
    subcommands = read_subcommands(
        full_name,
        read_file,
        list_dir,
        packages,
        terms.entry_modules[:MAX_ENTRY_MODULES],
        root,
        notes,
    )
    settings = read_config_keys(
        full_name,
        read_file,
        list_dir,
        packages,
        root,
        notes,
    )
    update = {"definitions": definitions, "subcommands": subcommands, "settings": settings}
    return vocabulary.model_copy(update=update), notes


DOCKERFILES = ("Dockerfile", "docker/Dockerfile")
"""Where a repository keeps the image it builds: what those install, its images ship."""
PACKAGE_MANIFESTS = ("pyproject.toml", "setup.cfg", "setup.py", "package.json", "Cargo.toml")
"""Root manifests of a package the repository publishes. Beside one, a Dockerfile is the
development or CI container (``apt-get install build-essential``, ``pip install -U pip
setuptools wheel``) and the README's links are neighbours: what the package ships is what its
manifest requires. Without one, the image is the product (manylinux, an action's container)
and what it installs or links is shipped."""
READMES = ("README.md", "README.rst")
REQUIREMENT_FILES = ("requirements/default.txt", "requirements.txt")
"""Where a package whose manifest lists no literal dependencies keeps them, read only when its
``setup.py`` names the file (kombu's ``reqs('default.txt')``): a ``requirements.txt`` nothing
reads at build is a development pin list (pytest, black, twine), not what it ships."""
TOOL_WRAPPED_BY_PREFIX = {PROVIDER_PREFIX: "terraform"}
"""A repository named ``terraform-provider-aws`` wraps ``terraform`` by the tool's own naming
rule, snapshot or not."""


def _shipped(
    read: ReadBudget, full_name: str, root: list[str], folders: list[str], terms: _Terms
) -> None:
    """Tools it ships or wraps, beside the dependencies its manifests declared. A repository
    that publishes no package (``PACKAGE_MANIFESTS``) ships what its Dockerfiles install and
    the PyPI projects its README links (manylinux lists ``auditwheel`` so); a package's README
    links what it works with or recommends instead (celery's ``pyramid_celery``, a flake8
    plugin's ``black``), not what it ships, unless the linked project is built in a folder of
    the repository (toml-fmt's ``pyproject-fmt/``)."""
    name = full_name.rsplit("/", 1)[-1].lower()
    terms.ship(tool for prefix, tool in TOOL_WRAPPED_BY_PREFIX.items() if name.startswith(prefix))
    publishes_package = any(m in root for m in PACKAGE_MANIFESTS)
    named = {f.rsplit("/", 1)[-1] for f in terms.requirement_files}
    if publishes_package and not terms.shipped:  # setup.py reads them from a file at build
        for path in REQUIREMENT_FILES:
            present = path.split("/")[0] in (root if "/" not in path else folders)
            if present and path.rsplit("/", 1)[-1] in named:
                terms.ship(_requirement_names((read.read(path) or "").splitlines()))
                break
    for path in () if publishes_package else DOCKERFILES:
        if path.split("/")[0] in (root if "/" not in path else folders):
            terms.ship(_installed(read.read(path) or ""))
    members = {_NAME_PARTS.sub("-", f.lower()) for f in folders}
    for path in READMES:
        if path in root:
            links = _PYPI_LINK.findall(read.read(path) or "")
            # beside a package, only a linked project it builds in a folder of its own
            # (toml-fmt's pyproject-fmt/) is shipped; the rest are its neighbours
            terms.ship(
                link
                for link in links
                if not publishes_package or _NAME_PARTS.sub("-", link.lower()) in members
            )
            break
