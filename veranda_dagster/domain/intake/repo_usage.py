"""What a ticket *does* with a repository's vocabulary: imports it, installs it, runs its
command, lists its hook, ``uses:`` its action, calls its public names, or crashes inside it.

A name in passing ("we also use celery") says little; ``from rest_framework import ...``, a
traceback whose innermost library frame is ``site-packages/kombu/``, ``$ sentry-cli upload`` or
``uses: pre-commit/action@v3`` say where the code runs. Each is weighed here as evidence for the
repository whose catalog vocabulary defines the term (``CatalogRepo.vocabulary``); a term several
repositories define is split between them, and a term shorter than ``MIN_TERM_CHARS`` is never
matched. Nothing here decides; ``repo_detection`` does.
"""

from __future__ import annotations

import copy
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from itertools import islice
from typing import Final

from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.domain.intake.catalog import Catalog, normalise

MIN_TERM_CHARS: Final = 3
"""Shorter vocabulary terms (flake8's ``F``, ``E``) are codes, not names a ticket uses."""

MIN_SYMBOL_CHARS: Final = 6
"""A public name counts only from this length and when it reads as an identifier (CamelCase or
snake_case): ``AsyncClient`` and ``make_region`` do, ``Task`` and ``setup`` do not."""

MAX_TRACE_FRAMES: Final = 400
"""Library frames read from one ticket's tracebacks, in the order written (each costs a catalog
lookup): a deep recursion prints a few hundred; past it is a pasted log."""

_IMPORT = re.compile(r"(?m)^[ \t>]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w., \t]+))")
_FRAME = re.compile(r"(?:site|dist)-packages/([A-Za-z_][\w.-]*(?:/[A-Za-z_]\w*){0,3})/")
"""A library frame's folder path, its package and up to three sub-packages."""
MAX_MODULE_DEPTH: Final = 4
"""Dotted parts of an import or a frame's folder path looked up, most specific first: a
namespace member (``poetry.core``) is two deep, past four a path names modules no catalog
lists."""
_INSTALL = re.compile(
    r"(?i)\b(?:pip3?|uv[ \t]+pip|pipx|poetry|npm|yarn|pnpm)[ \t]+(?:install|add|i)\b"
    r"[ \t]+((?:[-\w@/.\[\]=<>~!,\"'^]+[ \t]*){1,8})"
)
_RUNNER = re.compile(
    r"(?i)\b(?:pipx[ \t]+run(?:[ \t]+--spec)?|npx|uvx|python3?[ \t]+-m)[ \t]+([\w@./-]+)"
)
"""A runner and what it runs (``pipx run --spec build``, ``python -m pip``, ``npx eslint``):
the program run is the subject, the runner is how it was started."""
_COMMAND_LINE = re.compile(r"(?m)^[ \t]*(?:<\w{1,20}>[ \t]*){0,4}[$>%][ \t]*((?:\./)?[\w@./-]+)")
"""A prompt at the start of a line, also after the HTML tags a form wraps it in
(``<details><summary>$ pipenv --support</summary>``)."""
_FENCED = re.compile(r"```[^\n`]*\n(.*?)(?:```|$)", re.S)  # no backtick in the info string
_CODE_LINE = re.compile(r"(?m)^[ \t]*((?:\./)?[\w@./-]+)")
_SHELL_LINE = re.compile(
    r"(?m)^[ \t]*((?:\./)?[\w@./-]+)(?=(?:[ \t]+[\w.:/=-]+){0,3}[ \t]+--?[A-Za-z])"
)
"""A prose line that reads as a shell command: a word, at most three more, then an option."""
_KEY_VALUE = re.compile(r"[\w .-]{1,60}:(?:[ \t]|$)", re.M)
"""``Server type: hosted``, ``version: 3``: a line of output or configuration, a key and its
value; a command line never starts with words and a colon."""
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_USES = re.compile(r"(?im)\buses:[ \t]*['\"]?([A-Za-z0-9][\w.-]*/[\w.-]+)(?:/[\w./-]*)?@")
_HOOK_ID = re.compile(r"(?im)\bid:[ \t]*['\"]?([\w.-]+)")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TAGGED_IMAGE = re.compile(
    r"(?<![\w./@:-])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*):([A-Za-z0-9_][\w.-]{0,127})(?![\w/:])"
)
"""``tiangolo/uwsgi-nginx-flask:python3.8``: an image reference with its tag."""
_RUN_IMAGE = re.compile(
    r"(?im)(?:^[ \t]*FROM[ \t]+(?:--[\w-]+=\S+[ \t]+)*|\bimage:[ \t]*['\"]?"
    r"|\bdocker[ \t]+(?:pull|run|create)[ \t]+)([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?![\w/])"
)
"""An image built from (``FROM``), run or pulled, or set as a service's ``image:``."""

Adder = Callable[[str, str, int, int], None]
"""``(repo, kind, start, end)``: one usage of a repository's term at ``text[start:end]``."""


def _excerpt(text: str, start: int, end: int) -> str:
    return scrub(" ".join(text[max(0, start - 30) : end + 30].split()))[:100]


def _squashed(name: str) -> str:
    """``open-telemetry`` and ``opentelemetry`` alike: lowercase letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _names_of_others(catalog: Catalog) -> dict[str, set[str]]:
    """Repository -> the names and aliases (``normalise``d) of the catalog's other repositories,
    less its own: never one of its terms (``celery`` is the ``celery`` repository's)."""
    own: dict[str, set[str]] = defaultdict(set)
    for repo in catalog.repositories:
        own[repo.full_name] |= {normalise(n) for n in [repo.name, *repo.aliases]}
    every = set().union(*own.values())
    return {full_name: every - names for full_name, names in own.items()}


def vocabulary_index(catalog: Catalog) -> dict[str, dict[str, list[str]]]:
    """kind -> term -> the repositories defining it. A term that is another repository's name
    or alias is that repository's, not a vocabulary term of the others (``celery`` is the
    ``celery`` repository even if ``pytest-celery`` registers a plugin by that name)."""
    foreign = _names_of_others(catalog)
    orgs = {_squashed(org) for org in catalog.orgs}
    index: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for repo in catalog.repositories:
        own_squashed = {_squashed(n) for n in [repo.name, *repo.aliases]}
        # a repository is imported, installed and run by its own name too (``aiohttp``)
        implicit = [
            (kind, n.replace("-", "_").lower() if kind == "imports" else n)
            for n in [repo.name, *repo.aliases]
            for kind in ("imports", "distributions", "commands")
        ]
        implicit += [
            ("images", f"{org}/{stem}")
            for org in catalog.orgs
            for n in [repo.name, *repo.aliases]
            for stem in image_names(n)
        ]
        for kind, term in [*implicit, *repo.vocabulary.terms()]:
            key = term.lower()
            if len(term) < MIN_TERM_CHARS or normalise(term) in foreign[repo.full_name]:
                continue
            if _squashed(term) in orgs and _squashed(term) not in own_squashed:
                continue  # ``opentelemetry`` is the org, not one repository; but the org's
                # namesake repository (``celery/celery``, ``sqlalchemy/sqlalchemy``) is imported,
                # run and crashed in under its own name

            if repo.full_name not in index[kind][key]:
                index[kind][key].append(repo.full_name)
            if kind == "imports" and term not in index[SPELLINGS][key]:
                index[SPELLINGS][key].append(term)
    return index


SPELLINGS: Final = "import_spellings"
"""The index table of how each import name is spelt in the catalog (``PIL``, ``sentry``): its
keys are lower-cased like every table's, and Python's are not."""


def spelt_as_module(written: str, key: str, index: dict[str, dict[str, list[str]]]) -> bool:
    """Whether ``written`` (a module path as the ticket writes it) can be the catalog's module
    ``key``. Python's module names are case-sensitive and almost all lower-case, so a name
    written with a capital (``Sentry.init(``, ``import Sentry from '@sentry/node'``: a class or
    another language's namespace) is that module only where the catalog spells it so
    (``PIL``); one written in lower case always may be."""
    top = written.split(".", 1)[0]
    return top == top.lower() or top in index[SPELLINGS].get(key.split(".", 1)[0], [])


def image_names(repo_name: str) -> list[str]:
    """The names an image built from the repository is published under: its own name, and that
    name without a ``-docker`` / ``docker-`` affix (``uwsgi-nginx-flask-docker`` publishes
    ``uwsgi-nginx-flask``)."""
    name = repo_name.lower()
    stems = [name, name.removesuffix("-docker"), name.removeprefix("docker-")]
    return [s for s in dict.fromkeys(stems) if len(s) >= MIN_TERM_CHARS]


def _import_modules(text: str) -> list[tuple[str, int, int]]:
    """``(dotted module, start, end)`` of every import statement."""
    found = []
    for m in _IMPORT.finditer(text):
        if m.group(1):
            found.append((m.group(1), m.start(1), m.end(1)))
        else:
            for part in m.group(2).split(","):
                name = part.strip().split(" ")[0]
                if name:
                    found.append((name, m.start(2), m.end(2)))
    return found


def most_specific(module: str, imports: dict[str, list[str]]) -> str:
    """The longest leading part of ``module`` (at most ``MAX_MODULE_DEPTH`` parts) that a
    catalog repository defines: ``poetry.core.masonry`` is poetry-core's ``poetry.core``, not
    the ``poetry`` it shares with poetry; ``""`` when none does."""
    parts = module.lower().split(".")[:MAX_MODULE_DEPTH]
    for depth in range(len(parts), 0, -1):
        key = ".".join(parts[:depth])
        if imports.get(key):
            return key
    return ""


def _imports(text: str, index: dict[str, dict[str, list[str]]], add: Adder) -> None:
    for module, start, end in _import_modules(text):
        key = most_specific(module, index["imports"])
        if key and not spelt_as_module(module, key, index):
            continue
        for repo in index["imports"].get(key, []):
            add(repo, "import", start, end)


def _traces(text: str, index: dict[str, dict[str, list[str]]], add: Adder) -> None:
    """The innermost library frame of each traceback is where it failed: strong evidence for
    the repository that owns that package (the most specific definer of its folder path); the
    frames before it are paths through it."""
    frames = [
        (most_specific(m.group(1).replace("/", "."), index["imports"]), m.start(), m.end())
        for m in islice(_FRAME.finditer(text), MAX_TRACE_FRAMES)
    ]
    owned = [(f, s, e) for f, s, e in frames if f]
    if not owned:
        return
    innermost = owned[-1]
    for package, start, end in owned:
        kind = "trace" if (package, start) == innermost[:2] else "path"
        for repo in index["imports"][package]:
            add(repo, kind, start, end)


def _installs(
    text: str, index: dict[str, dict[str, list[str]]], add: Adder, context: list[tuple[int, int]]
) -> None:
    """``pip install kombu``: evidence for kombu; the installer's own name (``pip``) in that
    command is how, not what, and is kept out of the mentions (``context``)."""
    for m in _RUNNER.finditer(text):
        name = re.split(r"[\[=<>~!,;^\"']", m.group(1), maxsplit=1)[0].lower()
        repos = index["commands"].get(name, []) or index["distributions"].get(name, [])
        for repo in repos:
            add(repo, "command", m.start(1), m.end(1))
        if repos:
            context.append((m.start(), m.start(1)))
    for m in _INSTALL.finditer(text):
        for raw in m.group(1).split():
            name = re.split(r"[\[=<>~!,;^\"']", raw.strip("\"'"), maxsplit=1)[0].lower()
            if name.startswith("-"):
                continue
            repos = index["distributions"].get(name, []) or index["imports"].get(name, [])
            for repo in repos:
                add(repo, "install", m.start(1), m.end(1))
            if repos:
                context.append((m.start(), m.start(1)))


def command_starts(text: str) -> list[tuple[str, int, int]]:
    """``(word, start, end)`` of every word that starts a command: at a prompt (``$ pre-commit
    run``), at the start of a line in a code block or of a shell-like prose line, or quoted at
    the start of a backticked span of two words or more (`` `sentry-cli sourcemaps upload` ``)."""
    starts = [(m.group(1), m.start(1), m.end(1)) for m in _COMMAND_LINE.finditer(text)]
    starts += [(m.group(1), m.start(1), m.end(1)) for m in _SHELL_LINE.finditer(text)]
    for block in _FENCED.finditer(text):
        offset = block.start(1)
        starts += [
            (m.group(1), offset + m.start(1), offset + m.end(1))
            for m in _CODE_LINE.finditer(block.group(1))
            if not _KEY_VALUE.match(block.group(1), m.start(1))
        ]
    starts += [  # a quoted command line, not a quoted name: the command and an argument
        (m.group(1).split()[0], m.start(1), m.start(1) + len(m.group(1).split()[0]))
        for m in _BACKTICK.finditer(text)
        if len(m.group(1).split()) >= 2
    ]
    return starts


def _commands(text: str, index: dict[str, dict[str, list[str]]], add: Adder) -> None:
    """A command run (``command_starts``): its repository's."""
    seen: set[tuple[str, int]] = set()
    for word, start, end in command_starts(text):
        command = word.rsplit("/", 1)[-1].lower()
        if (command, start) in seen:
            continue
        seen.add((command, start))
        for repo in index["commands"].get(command, []):
            add(repo, "command", start, end)


def _image_spans(text: str) -> list[tuple[str, int, int]]:
    found = [(m.group(1), m.start(1), m.end(1)) for m in _TAGGED_IMAGE.finditer(text)]
    found += [(m.group(1), m.start(1), m.end(1)) for m in _RUN_IMAGE.finditer(text)]
    return sorted(
        {start: (ref, start, end) for ref, start, end in found}.values(), key=lambda f: f[1]
    )


def image_refs(text: str) -> list[str]:
    """``owner/name`` of every image built from (``FROM``), run, pulled, set as ``image:`` or
    written with its tag (``owner/name:tag``)."""
    return [ref for ref, _, _ in _image_spans(text)]


def _images(text: str, index: dict[str, dict[str, list[str]]], add: Adder) -> None:
    """An image the ticket builds from, runs or names with its tag: the repository that
    publishes it (``FROM tiangolo/uwsgi-nginx-flask:python3.8``)."""
    for ref, start, end in _image_spans(text):
        for repo in index["images"].get(ref.lower(), []):
            add(repo, "image", start, end)


_HELM_CONTEXT = re.compile(r"(?i)\bhelm\b|\bcharts?\b")
"""A ticket about a chart says so: ``helm install``, "the chart", ``Chart.yaml``."""


def _charts(text: str, index: dict[str, dict[str, list[str]]], add: Adder) -> None:
    """A chart's name in a ticket that talks about Helm or charts (``helm template
    prefect-worker``, "the prefect-worker chart"): the repository that publishes the chart. The
    same words without Helm are a pod, a service or a phrase."""
    if not _HELM_CONTEXT.search(text):
        return
    for chart, repos in index["charts"].items():
        for m in re.finditer(rf"(?i)(?<![\w.@/-]){re.escape(chart)}(?![\w@-])", text):
            for repo in repos:
                add(repo, "chart", m.start(), m.end())


def _hooks(text: str, index: dict[str, dict[str, list[str]]], add: Adder) -> None:
    """A hook id in a config (``id: trailing-whitespace``) or in backticks."""
    found = [(m.group(1), m.start(1), m.end(1)) for m in _HOOK_ID.finditer(text)]
    found += [(m.group(1).strip(), m.start(1), m.end(1)) for m in _BACKTICK.finditer(text)]
    for hook, start, end in found:
        for repo in index["hooks"].get(hook.lower(), []):
            add(repo, "hook", start, end)


def action_refs(text: str) -> list[tuple[str, int, int]]:
    """``owner/name`` of every ``uses: owner/name@ref`` (a sub-action path dropped)."""
    return [(m.group(1), m.start(1), m.end(1)) for m in _USES.finditer(text)]


def _actions(text: str, catalog: Catalog, add: Adder) -> None:
    """``uses: owner/name@v3`` names the action repository exactly: as strong as a link."""
    for ref, start, end in action_refs(text):
        repo = catalog.by_full_name(ref)
        if repo is not None:
            add(repo.full_name, "action_ref", start, end)


def _is_symbol(word: str) -> bool:
    if len(word) < MIN_SYMBOL_CHARS:
        return False
    camel = word[0].isupper() and any(c.isupper() for c in word[1:]) and not word.isupper()
    return camel or ("_" in word.strip("_") and word.lower() == word)


_QUALIFIER_BEFORE = re.compile(r"(\w+)\.$")


def _symbols(
    text: str, index: dict[str, dict[str, list[str]]], add: Adder, table: str = "symbols"
) -> None:
    """A public name of exactly one repository (in ``index[table]``), written as code (in
    backticks, quoted, called, or beside a dot). Shared names (``Connection``) are everybody's
    and count for nobody; a name reached through another catalog package (``cf.run_tasks``
    after ``import controlflow as cf``) is that package's."""
    aliases = import_aliases(text)
    for m in _IDENT.finditer(text):
        word = m.group()
        repos = index[table].get(word.lower(), [])
        if len(repos) != 1 or not _is_symbol(word):
            continue
        before, after = text[max(0, m.start() - 1) : m.start()], text[m.end() : m.end() + 1]
        quoted = before == after == '"'  # resource "prefect_deployment" "x", a JSON key
        if not (before in ("`", ".") or after in ("(", "`", ".") or quoted):
            continue
        qualifier = _QUALIFIER_BEFORE.search(text[max(0, m.start() - 40) : m.start()])
        owners = _qualifier_repos(qualifier.group(1), index, aliases) if qualifier else []
        if owners and repos[0] not in owners:
            continue
        if not owners and qualifier and _standard_module(qualifier.group(1), aliases):
            continue
        add(repos[0], "api", m.start(), m.end())


_QUALIFIED = re.compile(r"(?<![\w./-])([A-Za-z_][\w]*)\.([A-Za-z_]\w*)(?=[(`.\s,)\]])")
_FILE_SUFFIXES: Final = frozenset(
    {"cfg", "ini", "js", "json", "lock", "log", "md", "py", "rst", "sh", "toml", "ts", "txt"}
    | {"yaml", "yml", "xml", "html", "csv", "env", "tf", "conf"}
)
"""``values-prefect.yaml``, ``celery.log``: a file named after a package is no use of it."""
_HOST_SUFFIXES: Final = frozenset({"com", "io", "net", "org"})
"""``sentry.io``, ``prefect.io``, ``grafana.com``: a host named after a package (its product's
site, its SaaS) is no use of it, unless it is called (``x.io(``) or goes on as a module path
(``x.io.streams``). Only suffixes that are rarely a package's module (not ``app``, ``ai`` or
``dev``: ``celery.app``, ``marvin.ai.text`` are modules)."""
_MODULE_GOES_ON = re.compile(r"[(]|\.\w")
_IMPORT_ALIAS = re.compile(r"(?m)^[ \t>]*import[ \t]+([\w.]+)[ \t]+as[ \t]+(\w+)")


def _standard_module(qualifier: str, aliases: dict[str, str]) -> bool:
    """``asyncio`` in ``asyncio.wait_for(``, ``os`` in ``os.path``: a name reached through a
    module of Python's standard library (``sys.stdlib_module_names``, as the interpreter itself
    lists them) is the standard library's, whatever a catalog package also exports by it."""
    return aliases.get(qualifier, qualifier) in sys.stdlib_module_names


def import_aliases(text: str) -> dict[str, str]:
    """``import controlflow as cf`` -> ``{"cf": "controlflow"}`` (the top-level module)."""
    return {m.group(2): m.group(1).split(".")[0].lower() for m in _IMPORT_ALIAS.finditer(text)}


def _qualifier_repos(
    qualifier: str, index: dict[str, dict[str, list[str]]], aliases: dict[str, str]
) -> list[str]:
    return index["imports"].get(aliases.get(qualifier, qualifier).lower(), [])


def _qualified(text: str, index: dict[str, dict[str, list[str]]], add: Adder) -> None:
    """``@click.option(``, ``httpx.AsyncClient``, ``attr.s(``, ``cf.Task(`` after ``import
    controlflow as cf``: a name used through the one package that defines it is a use of that
    package, not a mention. A file name (``values-prefect.yaml``) or a host name
    (``sentry.io``) is none."""
    aliases = import_aliases(text)
    for m in _QUALIFIED.finditer(text):
        attribute = m.group(2)
        qualifier = aliases.get(m.group(1), m.group(1))
        key = most_specific(f"{qualifier}.{attribute}", index["imports"])
        repos = index["imports"].get(key, []) if spelt_as_module(qualifier, key, index) else []
        host = attribute.lower() in _HOST_SUFFIXES and not _MODULE_GOES_ON.match(text, m.end())
        file = attribute.isdigit() or attribute in _FILE_SUFFIXES
        if len(repos) == 1 and not file and not host:
            add(repos[0], "usage", m.start(), m.end())


PROVIDER_REPO_PREFIX: Final = "terraform-provider-"
_PROVIDER_USE = re.compile(
    r"(?m)(?:\b(?:resource|data)[ \t]+\"([a-z][a-z0-9]*)_\w+\""
    r"|\bregistry\.terraform\.io/[\w-]+/([a-z][a-z0-9-]*)\b"
    r"|^[ \t]*provider[ \t]+\"([a-z][a-z0-9-]*)\")"
)
"""A Terraform configuration using a provider: ``resource "aws_s3_bucket"``, ``data "prefect_
flow"``, ``provider "aws"`` or its registry address ``registry.terraform.io/hashicorp/aws``."""


def _providers(text: str, catalog: Catalog, add: Adder) -> None:
    """The provider a configuration uses is the catalog's ``terraform-provider-<type>``: its
    resource types all start with ``<type>_``, far more of them than a vocabulary keeps."""
    repos = {
        r.name.lower().removeprefix(PROVIDER_REPO_PREFIX): r.full_name
        for r in catalog.repositories
        if r.name.lower().startswith(PROVIDER_REPO_PREFIX)
    }
    if not repos:
        return
    for m in _PROVIDER_USE.finditer(text):
        kind = next(g for g in m.groups() if g)
        if kind in repos:
            start = m.start(m.lastindex or 0)
            add(repos[kind], "usage", start, start + len(kind))


CONTEXT: Final = "*"
"""Key of the spans no name mention is read from (an installer or runner's own name)."""


def gather_usage(
    text: str,
    catalog: Catalog,
    record: Callable[[str, str, str, str], None],
    index: dict[str, dict[str, list[str]]] | None = None,
) -> dict[str, list[tuple[int, int]]]:
    """Every kind of usage evidence in ``text`` for the catalog's repositories, recorded as
    ``(repo, kind, excerpt, term as written)``; returns each repository's used spans, so the
    same words are not counted again as a mention of its name, and under ``CONTEXT`` the spans
    of installers and runners, which are no mention of anything. ``index``: the catalog's
    ``vocabulary_index``, when the caller already built it."""
    spans: dict[str, list[tuple[int, int]]] = defaultdict(list)

    def add(repo: str, kind: str, start: int, end: int) -> None:
        record(repo, kind, _excerpt(text, start, end), text[start:end])
        spans[repo].append((start, end))

    index = vocabulary_index(catalog) if index is None else index
    _imports(text, index, add)
    _traces(text, index, add)
    _installs(text, index, add, spans[CONTEXT])
    _commands(text, index, add)
    _hooks(text, index, add)
    _charts(text, index, add)
    _images(text, index, add)
    _providers(text, catalog, add)
    _actions(text, catalog, add)
    _symbols(text, index, add)
    _qualified(text, index, add)
    return spans


def definitions_index(catalog: Catalog) -> dict[str, list[str]]:
    """name (lower-cased) -> the repositories defining it, over every repository's public
    names and its definitions (``RepoVocabulary.definitions``), so a name one repository
    exports and another defines is shared. Another repository's name is never a definition
    (as in ``vocabulary_index``)."""
    foreign = _names_of_others(catalog)
    index: dict[str, list[str]] = defaultdict(list)
    for repo in catalog.repositories:
        for term in [*repo.vocabulary.symbols, *repo.vocabulary.definitions]:
            if normalise(term) in foreign[repo.full_name] or repo.full_name in index[term.lower()]:
                continue
            index[term.lower()].append(repo.full_name)
    return index


def gather_definition_uses(
    text: str,
    catalog: Catalog,
    record: Callable[[str, str, str, str], None],
    index: dict[str, dict[str, list[str]]] | None = None,
) -> None:
    """A name from the definitions index written as code and defined by exactly one catalog
    repository, recorded as that repository's ``api`` use (``_symbols``' rules: code, not
    prose; a qualifier naming another catalog package wins). Read only for a ticket that names
    no repository (the caller's rule): beside named repositories, thousands of module-level
    names would add noise to a contest the names decide."""
    index = copy.copy(vocabulary_index(catalog) if index is None else index)  # the caller's
    index["definitions"] = definitions_index(catalog)  # stays as it was

    def add(repo: str, kind: str, start: int, end: int) -> None:
        record(repo, kind, _excerpt(text, start, end), text[start:end])

    _symbols(text, index, add, "definitions")
