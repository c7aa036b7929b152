"""What a ticket says about its repository: declarations, links, labels and names in the text,
each weighed as evidence for one catalog repository.

The weights encode what a colleague would act on. A link into the code or a ``repo:`` label is
nearly decisive; a name in the title is good evidence; the same name in a version line, a file
path or a pip log is barely any, because tickets paste environments that list every package
installed (a report template's own version field, ``- X version:``, is the form naming its
product: a mention). Names that are also ordinary words (``build``, ``rich``, ``click``) count
only when written as a name: capitalised mid-sentence, in backticks, imported, qualified with
the org, or followed by a version. Nothing here decides; ``repo_detection`` does.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from veranda_dagster.domain.core.bounds import MAX_DETECT_TEXT_CHARS, MAX_GROUP_DEPTH
from veranda_dagster.domain.core.models import RepoEvidence, Ticket
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.domain.intake.catalog import Catalog, CatalogRepo, normalise
from veranda_dagster.domain.intake.repo_kind_names import gather_kind_names
from veranda_dagster.domain.intake.repo_settings import (
    extends,
    gather_setting_uses,
    gather_subcommand_uses,
    settings_index,
    subcommand_index,
)
from veranda_dagster.domain.intake.repo_usage import (
    CONTEXT,
    command_starts,
    gather_definition_uses,
    gather_usage,
    vocabulary_index,
)

WEIGHTS: Final[dict[str, float]] = {
    "declaration": 1.0,  # repo: <name>, or the ticket's repo field: decides on its own
    "url_code": 0.9,  # a link to code, a commit or the repository itself
    "url_ref": 0.6,  # a link to an issue, pull request, release or discussion
    "url_comment": 0.15,  # a link to one comment in a thread: a citation, not a location
    "fork_url": 0.6,  # a link into someone's fork of a catalog repository, and the text says fork
    "label_repo": 0.8,  # repo:<name> or a label that is exactly a repository name
    "label_service": 0.7,  # service:<name>, svc/<name>, or a team's label naming a service/alias
    "owner": 0.9,  # "the fix belongs in X": the text says where the change goes
    "title": 0.6,  # the name in the title
    "prose": 0.35,  # the name in the description
    "docs_link": 0.25,  # a docs or PyPI link named after it (rich.readthedocs.io)
    "env": 0.2,  # the name followed by a version: environment tables, pins, pip logs
    "path": 0.1,  # the name as a directory in a file path or traceback frame
    "misspelling": 0.25,  # one close match; counts only with a second signal
    "action_ref": 0.9,  # uses: owner/name@v3 names the action repository exactly
    "ref": 0.6,  # a bare owner/name (or owner/name#12) of the org, written without a link
    "url_docs": 0.3,  # a link to its README or docs: what the reporter read, not the subject
    "import": 0.55,  # from x import / import x of its import name
    "trace": 0.5,  # the innermost site-packages/<its package>/ frame of a traceback
    "install": 0.4,  # pip install / npm install / poetry add of its distribution
    "command": 0.45,  # its command run at a prompt or quoted at the start of a code span
    "hook": 0.45,  # its hook id in a config or in backticks
    "api": 0.3,  # a public name only it defines, written as code
    "usage": 0.45,  # its package used by name: @click.option(, httpx.AsyncClient(
    "image": 0.5,  # its container image built from, run or named with a tag
    "chart": 0.45,  # its Helm chart's name in a ticket about Helm or charts
    "subcommand": 0.45,  # `<command> <sub>` of a subcommand it declares: as strong as a command
    "setting": 0.3,  # a configuration key only it documents, set or read: as a public name
}
WEIGHTS.update(
    {f"former_name:{k}": WEIGHTS[k] for k in ("url_code", "url_ref", "url_comment", "url_docs")}
)
"""A link through a former name: the same kinds, weighed by ``FORMER_NAME_FACTOR``."""
REPEAT_BONUS: Final = 0.1
"""Each further occurrence of the same kind adds this much, up to the kind's cap."""
CAPS: Final[dict[str, float]] = {
    "title": 0.7,
    "prose": 0.55,
    "env": 0.25,
    "path": 0.15,
    "import": 0.65,
    "trace": 0.6,
    "install": 0.5,
    "command": 0.55,
    "hook": 0.55,
    "api": 0.45,
    "usage": 0.55,
    "ref": 0.7,
    "image": 0.6,
    "chart": 0.55,
    "subcommand": 0.55,
    "setting": 0.45,
}
UMBRELLA_FACTOR: Final = 0.25
"""An umbrella's name evidence (``celery``, ``flake8``, ``attrs``) counts this much when a
repository whose name contains it (``django-celery-beat``, ``flake8-bugbear``, ``cattrs``) has
evidence of its own: the specific sibling is the subject, the umbrella the context."""
SECOND_SIGNAL_KINDS: Final = frozenset(
    {
        "declaration",
        "url_code",
        "url_ref",
        "label_repo",
        "label_service",
        "owner",
        "action_ref",
        "ref",
        "import",
        "trace",
        "install",
        "command",
        "hook",
        "api",
        "usage",
        "image",
        "chart",
        "fork_url",
        "subcommand",
        "setting",
    }
)
"""What confirms a common-word name (``docs``, ``relay``, ``security``): evidence that is not
the word itself."""
FORMER_NAME_FACTOR: Final = 0.9
"""A link through a former name is a little weaker than a live one: renames can be reused."""

COMMON_WORDS: Final = frozenset(
    [
        "api",
        "app",
        "backend",
        "bootstrap",
        "build",
        "click",
        "client",
        "common",
        "core",
        "demo",
        "docs",
        "frontend",
        "infra",
        "installer",
        "mobile",
        "packaging",
        "rich",
        "sample",
        "search",
        "server",
        "tools",
        "utils",
        "videos",
        "web",
        "website",
        "wheel",
        # generic words that name repositories and appear in tickets in passing
        "abacus",
        "action",
        "actions",
        "benchmarks",
        "cache",
        "cli",
        "community",
        "config",
        "craft",
        "databases",
        "documentation",
        "examples",
        "identify",
        "integration",
        "integrations",
        "launchpad",
        "library",
        "meta",
        "orm",
        "outpost",
        "plugin",
        "plugins",
        "relay",
        "release",
        "releases",
        "repro",
        "sandbox",
        "security",
        "seer",
        "service",
        "shared",
        "spec",
        "specification",
        "spotlight",
        "streams",
        "symbolic",
        "synapse",
        "template",
        "templates",
        "test",
        "tests",
        "toolkit",
        "vanguard",
        "versions",
        "warden",
        "weaver",
        "wizard",
    ]
)
"""Repository names that are also words a ticket uses in passing; see the module docstring."""

FUZZY_CUTOFF: Final = 0.85
"""difflib ratio for a misspelt name: 'notifer'~'notifier' is 0.93, 'aoihttp'~'aiohttp' 0.86."""
FUZZY_MIN_LEN: Final = 6

_DECLARATION = re.compile(
    r"(?im)(?:^|[\s\[(])repo(?:sitory)?[ \t]*[:=][ \t]*`?"
    rf"([A-Za-z0-9][\w.-]*(?:/[\w.-]+){{0,{MAX_GROUP_DEPTH + 1}}})`?"
)
"""``repo: name``, ``repo: org/name`` or, on a forge with subgroups, ``repo: org/group/name``."""
_ANY_URL = re.compile(r"https?://[^\s<>()\[\]\"'`]+")
_REPO_LABEL = re.compile(r"^repo(?:sitory)?[ \t]*[:/=][ \t]*", re.I)
_SERVICE_LABEL = re.compile(r"^(?:service|svc)[ \t]*[:/=][ \t]*", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_FILE_AFTER = re.compile(r"\.(?:py|pyi|pyx|toml|cfg|txt|json|ya?ml|md|rst|ini|lock|sh|js|ts)\b")
_VERSION_AFTER = re.compile(r"(?:[ \t|:=<>!~,(\"'^-]{0,8}v?\d+\.\d|[ \t]+version\b)", re.I)
"""A version after a name: a pin, a table row, a ``package.json`` dependency (``": "^1.2``)."""
_OWNER_BEFORE = re.compile(
    r"(?:(?:fix|change|patch|bug|problem)[ \t]+(?:belongs|goes|lives|is|should[ \t]+go)"
    r"[ \t]+(?:in|into|to)|(?:bug|regression)[ \t]+in)[ \t]+(?:the[ \t]+)?$",
    re.I,
)


@dataclass
class Evidence:
    declared: list[str] = field(default_factory=list)
    declared_unknown: list[str] = field(default_factory=list)
    labels_unknown: list[str] = field(default_factory=list)
    hits: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    """(repo, kind) -> excerpts, one per occurrence."""
    misspelt: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    weak: list[str] = field(default_factory=list)
    """Repositories hinted at too weakly to count (a bare common word, an unconfirmed typo)."""
    notes: list[str] = field(default_factory=list)
    scale: dict[tuple[str, str], float] = field(default_factory=dict)
    """(repo, kind) -> a factor under 1 for evidence that is context, not subject (an
    umbrella beside its sibling, a term several repositories share)."""
    family_word: set[str] = field(default_factory=set)
    """Repositories named like the org's product whose evidence is only that name written down
    (``NAME_ONLY_KINDS``): the org's word, context in every one of its tickets."""
    terms: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    """(repo, kind) -> the distinct terms a usage matched (``AsyncClient``, ``make_region``):
    two uses of one name are one piece of evidence, two names are two."""

    def add(self, repo: str, kind: str, excerpt: str, term: str = "") -> None:
        self.hits[(repo, kind)].append(excerpt)
        if term:
            self.terms[(repo, kind)].add(term.lower())

    def discount(self, repo: str, kind: str, factor: float) -> None:
        key = (repo, kind)
        self.scale[key] = min(self.scale.get(key, 1.0), factor)

    def kinds(self, repo: str) -> set[str]:
        return {kind for r, kind in self.hits if r == repo}

    def drop(self, repo: str) -> None:
        for key in [k for k in self.hits if k[0] == repo]:
            del self.hits[key]

    def items(self) -> list[RepoEvidence]:
        out = []
        for (repo, kind), excerpts in self.hits.items():
            weight = WEIGHTS[kind] + REPEAT_BONUS * (len(excerpts) - 1)
            weight = min(weight, CAPS.get(kind, WEIGHTS[kind]))
            if kind.startswith("former_name:"):
                weight = WEIGHTS[kind.split(":", 1)[1]] * FORMER_NAME_FACTOR
            weight *= self.scale.get((repo, kind), 1.0)
            times = f" (x{len(excerpts)})" if len(excerpts) > 1 else ""
            out.append(
                RepoEvidence(
                    repo=repo, kind=kind, weight=round(weight, 3), text=excerpts[0] + times
                )
            )
        return sorted(out, key=lambda e: (-e.weight, e.repo, e.kind))

    def scores(self) -> dict[str, float]:
        totals: dict[str, float] = defaultdict(float)
        for item in self.items():
            totals[item.repo] += item.weight
        return {repo: round(total, 3) for repo, total in totals.items()}


def _excerpt(text: str, start: int, end: int) -> str:
    return scrub(" ".join(text[max(0, start - 30) : end + 30].split()))[:100]


@functools.lru_cache(maxsize=2048)
def _term_pattern(term: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in re.split(r"[\s_-]+", term.strip()) if p]
    # a hyphen may follow only as a version ("rich-4.1.0"), not as a longer name ("rich-cli")
    return re.compile(r"(?<![\w.-])" + r"[\s_-]+".join(parts) + r"(?!\w)(?!-[A-Za-z_])", re.I)


NAME_KINDS: Final = ("distributions", "imports", "hooks", "commands")
"""Vocabulary kinds a ticket also writes as a plain name (``djangorestframework``,
``rest_framework``, ``trailing-whitespace``, ``sentry-cli``)."""
MIN_NAME_TERM_CHARS: Final = 4


def _terms(catalog: Catalog) -> dict[str, list[str]]:
    """Normalised name/alias/service -> the repositories it names; then the vocabulary's
    distinctive names (not another repository's name, not a common word, long enough)."""
    terms: dict[str, list[str]] = defaultdict(list)
    for repo in catalog.repositories:
        for term in dict.fromkeys([repo.name, *repo.aliases, *repo.service]):
            if repo.full_name not in terms[normalise(term)]:
                terms[normalise(term)].append(repo.full_name)
    names = set(terms)
    orgs = {re.sub(r"[^a-z0-9]", "", org.lower()) for org in catalog.orgs}
    for repo in catalog.repositories:
        for kind, term in repo.vocabulary.terms():
            key = normalise(term)
            if (
                kind not in NAME_KINDS
                or re.sub(r"[^a-z0-9]", "", key) in orgs
                or key in names
                or key in COMMON_WORDS
                or len(key) < MIN_NAME_TERM_CHARS
                or (kind in ("hooks", "commands") and "-" not in key)
            ):
                continue
            if repo.full_name not in terms[key]:
                terms[key].append(repo.full_name)
    return terms


_FENCE = re.compile(r"```.*?(?:```|$)", re.S)


def declaration_values(text: str) -> list[str]:
    """``repo: x`` declarations a person wrote: not inside a fenced code block, not a YAML list
    item (``- repo: https://...`` of a pre-commit config), not code (``repo = args.repo``),
    not a URL (a link is weighed as a link)."""
    prose = _FENCE.sub(lambda m: " " * len(m.group()), text)
    values = []
    for m in _DECLARATION.finditer(prose):
        line_start = prose.rfind("\n", 0, m.start()) + 1
        before = prose[line_start : m.start() + 1].strip()
        value, after = m.group(1), prose[m.end() : m.end() + 2]
        if before[:1] == "-":
            continue
        if value.lower() in ("http", "https") or after.startswith("//"):
            continue
        if "=" in prose[m.start() : m.start(1)] and (
            after[:1] in (".", "(", "[") or value.split(".")[0] in ("args", "self", "os", "config")
        ):
            continue
        values.append(value)
    return values


def _declarations(ticket: Ticket, text: str, catalog: Catalog, ev: Evidence) -> None:
    values = ([ticket.repo] if ticket.repo else []) + declaration_values(text)
    for value in values:
        hits = catalog.resolve(value)
        if len(hits) == 1:
            ev.declared.append(hits[0].full_name)
            ev.add(hits[0].full_name, "declaration", scrub(f"repo: {value}")[:100])
        else:
            ev.declared_unknown.append(value)
            ev.notes.append(f"declared repository {value!r} is not in the {catalog.title} catalog")


@dataclass(frozen=True)
class RepoLink:
    """What a forge URL says: the repository's owner (a group path on forges with subgroups),
    its name, and what the link points at (``url_code``, ``url_ref`` or ``url_comment``)."""

    owner: str
    name: str
    kind: str


RepoLinkReader = Callable[[str], "RepoLink | None"]
"""Reads one forge's URL grammar; ``None`` for a URL that is not that forge's repository link.
Each forge's reader lives beside its client and is registered from outside the domain."""

_LINK_READERS: list[Callable[[], Sequence[RepoLinkReader]]] = []


def register_link_readers(source: Callable[[], Sequence[RepoLinkReader]]) -> None:
    """Add the forges' URL readers (called late, at the first ticket read).
    ``plugins.load_plugins`` registers them where the Definitions are built and the CLI starts."""
    if source not in _LINK_READERS:
        _LINK_READERS.append(source)


def link_readers() -> list[RepoLinkReader]:
    return [reader for source in _LINK_READERS for reader in source()]


_IN_REPO_PATH = re.compile(r"/(?:-/)?(?:blob|tree|raw)/[^/]+/(.+)$")
"""The file path inside the repository of a code link (after ``blob/<ref>/``)."""
_README_OR_DOCS = re.compile(r"(?i)/(?:readme[^/]*|docs?/.*|examples?/.*|[^/]+\.(?:md|rst))$")
"""A code link to a README, docs or example page: what the reporter followed, not the code."""


def _forge_link(
    url: str,
    text: str,
    catalog: Catalog,
    ev: Evidence,
    context: bool = False,
    citation: bool = False,
) -> None:
    """``context``: the link sits in a fenced code block (a config, a log): what was read or
    run, not the subject. ``citation``: an issue or pull request link written as a pointer
    (``[this issue](...)``) weighs as a citation (``url_comment``)."""
    link = next((r for r in (read(url) for read in link_readers()) if r), None)
    if link is None:
        return
    owner, name, kind = link.owner, link.name, link.kind
    if citation and kind == "url_ref":
        kind = "url_comment"
    shown = scrub(url)[:120]
    live = catalog.by_full_name(f"{owner}/{name}") or (
        catalog.by_name(name) if catalog.is_org(owner) else None
    )
    if live:
        inner = _IN_REPO_PATH.search(urlsplit(url).path or "")
        docs = kind == "url_code" and inner and _README_OR_DOCS.search("/" + inner.group(1))
        ev.add(live.full_name, "url_docs" if docs or context else kind, shown)
        return
    renamed = catalog.by_former_name(owner, name)
    if renamed:
        for repo in renamed:
            ev.add(repo.full_name, f"former_name:{'url_docs' if context else kind}", shown)
        return
    same_name = catalog.by_name(name)
    if catalog.in_org(owner):
        ev.notes.append(f"ignored stale URL to {owner}/{name} (not in the catalog)")
    elif same_name and re.search(r"\bfork", text, re.I):
        ev.add(same_name.full_name, "fork_url", shown)
    elif same_name:
        ev.notes.append(
            f"ignored foreign URL to {owner}/{name}: {same_name.full_name} has that name, "
            "but nothing says it is a fork"
        )
    else:
        ev.notes.append(f"ignored foreign URL to {owner}/{name} (not in org {catalog.title})")


def _docs_link(
    url: str, terms: dict[str, list[str]], ev: Evidence, orgs: Sequence[str] = ()
) -> None:
    """``rich.readthedocs.io``, ``flask.palletsprojects.com``, ``pypi.org/project/Werkzeug``."""
    parts = urlsplit(url)
    host = parts.netloc.lower()
    segments = [s for s in parts.path.split("/") if s]
    if (
        host in ("pypi.org", "pypi.python.org")
        and len(segments) >= 2
        and segments[0]
        in (
            "project",
            "pypi",
        )
    ):
        label = segments[1]
    elif segments and host.count(".") >= 2 and host.split(".", 1)[0] in {o.lower() for o in orgs}:
        label = segments[0]  # the org's project pages: <org>.<pages host>/<repository>/
    elif host.count(".") >= 2:
        label = host.removeprefix("www.").split(".", 1)[0]
    else:
        return
    for repo in terms.get(normalise(label), []):
        ev.add(repo, "docs_link", scrub(url)[:120])


_CITATION = re.compile(
    r"(?i)\[[ \t]*(?:(?:this|that|the|an?|another|related|similar|linked|upstream)[ \t]+"
    r"(?:issue|ticket|bug|pr|pull[ \t]+request|discussion|thread|report)s?|here|this"
    r"|(?:[\w.-]{1,100}/)?[\w.-]{0,100}#\d+)"
    r"[ \t]*\]\((https?://[^)\s]+)\)"
)
"""``[this issue](https://...)``, ``[here](...)``, ``[#90](...)``, ``[flake8#247](...)``: a
link that cites another thread, written as a pointer ("similar to flake8#247"), not the thing
the ticket changes."""


def _links(ticket: Ticket, text: str, catalog: Catalog, ev: Evidence) -> None:
    terms = _terms(catalog)
    fences = [m.span() for m in _FENCE.finditer(text)]  # sorted and disjoint
    starts = [a for a, _ in fences]

    def in_code(pos: int) -> bool:
        i = bisect.bisect_right(starts, pos) - 1
        return i >= 0 and pos < fences[i][1]

    cited = {m.start(1) for m in _CITATION.finditer(text)}
    found = [(m.group(), in_code(m.start()), m.start() in cited) for m in _ANY_URL.finditer(text)]
    for url, code, citation in found + [(a.url, False, False) for a in ticket.attachments]:
        url = url.rstrip(".,;:")
        _forge_link(url, text, catalog, ev, code, citation)
        _docs_link(url, terms, ev, catalog.orgs)


def _labels(ticket: Ticket, catalog: Catalog, ev: Evidence) -> None:
    for label in ticket.labels:
        if label.lower().startswith("model:"):
            continue
        repo_prefixed = bool(_REPO_LABEL.match(label))
        service_prefixed = bool(_SERVICE_LABEL.match(label))
        value = _SERVICE_LABEL.sub("", _REPO_LABEL.sub("", label)).strip()
        if not value:
            continue
        exact = catalog.resolve(value) if not service_prefixed else []
        by_name = [r for r in exact if normalise(r.name) == normalise(value.split("/")[-1])]
        if by_name:
            ev.add(by_name[0].full_name, "label_repo", label)
            continue
        services = catalog.by_service(value) or exact
        if services and not repo_prefixed:
            for repo in services:
                ev.add(repo.full_name, "label_service", label)
        elif len(exact) == 1:
            ev.add(exact[0].full_name, "label_repo", label)
        elif repo_prefixed or service_prefixed:
            ev.labels_unknown.append(value)
            ev.notes.append(f"label {label!r} names no repository in the catalog")


def _is_name_like(text: str, start: int, end: int) -> bool:
    """Whether an occurrence of a common-word name is written as a name."""
    word = text[start:end]
    before = text[max(0, start - 7) : start]
    after = text[end : end + 2]
    if before.endswith("`") or after.startswith("`") or before.endswith(("import ", "from ")):
        return True
    if len(after) == 2 and after[0] == "." and after[1].isalpha():
        return True
    if word[0].isupper() and not word.isupper():
        previous = text[:start].rstrip()[-1:]
        return previous not in ("", ".", "!", "?", "\n", "#", "*", "-")
    return False


_OPTION_BEFORE = re.compile(r"(?:^|[ \t])--?[A-Za-z][\w-]*(?:[ \t]+|=)$", re.M)
"""An option right before a name (``--namespace prefect``, ``-n=celery``): the name is a value
the command was given (a namespace, a queue, a profile), not the package."""


_ISSUE_NUMBER_AFTER = re.compile(r"#\d")
"""A name right before an issue number (``flake8#247``): a forge's short reference to one of its
threads, which a ticket writes to cite a similar report; the link, if any, weighs as a citation
(``_CITATION``). ``PyCQA/flake8#247`` written out is an exact reference (``_bare_refs``)."""


_FIELD_MARKERS = re.compile(r"[ \t>*#-]*")
"""What may open a report template's field line before its label: indentation, a list marker,
a quote or heading mark, the bold of ``**Bicep version**``."""
_FIELD_VERSION_AFTER = re.compile(
    r"[ \t]{1,4}version\**[ \t]{0,4}(?::|\*\*[ \t]{0,4}$|$)", re.I | re.M
)
"""`` version:`` or `` version**`` closing the label: ``- Flask version: 2.1``, ``**Bicep
version**`` (its value on the next line). The spaces are bounded: a form puts one or two there,
and an unbounded run would be read again from every position of a long blank run."""


def _is_version_field(text: str, start: int, end: int) -> bool:
    """The name opens a report template's version field (``- google-cloud-node version:``,
    ``**Bicep version**``): the tracker's own form asks which version of its product the
    reporter runs, so the field names the product the form is for, unlike a version line in a
    pasted environment table or pin list (``rich 13.1``), which lists what is installed."""
    line_start = text.rfind("\n", 0, start) + 1
    return bool(
        _FIELD_MARKERS.fullmatch(text, line_start, start) and _FIELD_VERSION_AFTER.match(text, end)
    )


_LIST_ITEM_END = re.compile(r"[ \t]*(?:,|\]|$)", re.M)


def _is_list_entry(text: str, start: int, end: int) -> bool:
    """A name written as a quoted list item (``"textual-dev",``, ``'flake8']``, a PEP 723
    ``dependencies`` block): an entry of what is installed, like a version line; not the
    reporter naming it."""
    quote = text[start - 1 : start] if start else ""
    return (
        quote in ('"', "'")
        and text.startswith(quote, end)
        and bool(_LIST_ITEM_END.match(text, end + 1))
    )


def _is_acronym(word: str) -> bool:
    """A name written in capitals only (``AMQP``): repository names are not written so; the
    protocol or standard they are named after is."""
    letters = [c for c in word if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def _classify(
    text: str, title_len: int, start: int, end: int, orgs: list[str], common: bool
) -> str:
    if _FILE_AFTER.match(text, end) or text.startswith("://", end):
        return ""  # a file name, or a URL scheme (``amqp://``, ``redis://``): a protocol
    if _OPTION_BEFORE.search(text, max(0, start - 40), start):
        return ""  # ``--namespace prefect``: a value given to some program's option
    if _ISSUE_NUMBER_AFTER.match(text, end):
        return ""  # ``flake8#247``: another thread cited ("similar to"), not the subject
    if _is_acronym(text[start:end]):
        return "weak"  # AMQP, API: the standard it is named after; a candidate at most
    qualified = any(
        text[max(0, start - len(org) - 1) : start].lower() == f"{org.lower()}/" for org in orgs
    )
    if start and text[start - 1] == "/" and not qualified:
        return "path"
    if start >= title_len and _is_version_field(text, start, end):
        return "prose"  # the template's field for its product's version: the form is its own
    if start >= title_len and _VERSION_AFTER.match(text, end):
        return "env"  # in the title, "X 1.2 breaks" still names what the ticket is about
    if start >= title_len and _is_list_entry(text, start, end):
        return "env"  # ``"textual-dev",`` in a dependency list: what is installed, a pin
    if common and not (qualified or _is_name_like(text, start, end)):
        return "weak"
    return "title" if start < title_len else "prose"


def _longest_matches(text: str, terms: dict[str, list[str]]) -> list[tuple[int, int, str]]:
    """Every term occurrence not inside a longer one ("Textual demo" is textual-demo only)."""
    lowered = text.lower()
    found = [
        (m.start(), m.end(), term)
        for term in terms
        if re.split(r"[\s_-]+", term, maxsplit=1)[0] in lowered  # cheap test before the regex
        for m in _term_pattern(term).finditer(text)
    ]
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    kept: list[tuple[int, int, str]] = []
    reach = -1
    for start, end, term in found:
        if end <= reach:
            continue
        kept.append((start, end, term))
        reach = end
    return kept


def _spaced_phrase(written: str, term: str) -> bool:
    """A repository name of several words (``prefect-cloud``) written as separate words of a
    sentence (``Prefect Cloud``): the product or the phrase, not the repository's name. An
    alias the catalog keeps with spaces (``iOS app``) is written as it is known."""
    return bool(re.search(r"[-_]", term)) and not re.search(r"[-_]", written)


def _mentions(
    text: str,
    title_len: int,
    catalog: Catalog,
    ev: Evidence,
    used: dict[str, list[tuple[int, int]]] | None = None,
) -> set[str]:
    """Names written in the text; an occurrence already weighed as a usage of the same
    repository (``pip list`` as its command) is not counted again as a mention."""
    matched: set[str] = set()
    terms = _terms(catalog)
    used = used or {}
    aliases = {normalise(a) for r in catalog.repositories for a in [*r.aliases, *r.service]}
    spaced = {normalise(r.name) for r in catalog.repositories} - aliases  # names, not aliases
    for start, end, term in _longest_matches(text, terms):
        repos = terms[term]
        common = term in COMMON_WORDS
        kind = _classify(text, title_len, start, end, catalog.orgs, common)
        if kind in ("title", "prose") and term in spaced and _spaced_phrase(text[start:end], term):
            kind = "weak"  # "Prefect Cloud", "sentry cli": words in a sentence, not the name
        if not kind:
            continue
        matched.add(term)
        if any(a <= start < b for a, b in used.get(CONTEXT, [])):
            continue  # the installer or runner of something else: how, not what
        for repo in repos:
            if kind != "title" and any(a <= start < b for a, b in used.get(repo, [])):
                continue
            if kind == "weak":
                ev.weak.append(repo)
                continue
            ev.add(repo, kind, _excerpt(text, start, end))
            if _OWNER_BEFORE.search(text[max(0, start - 40) : start]):
                ev.add(repo, "owner", _excerpt(text, start, end))
    return matched


def _misspellings(text: str, catalog: Catalog, matched: set[str], ev: Evidence) -> None:
    targets = {t: r for t, r in _terms(catalog).items() if t not in COMMON_WORDS}
    grams = [w.lower() for w in _WORD.findall(text)]  # as written: two words are not one name
    orgs = {re.sub(r"[^a-z0-9]", "", org.lower()) for org in catalog.orgs}
    for gram in dict.fromkeys(grams):
        if len(gram) < FUZZY_MIN_LEN or normalise(gram) in targets or normalise(gram) in matched:
            continue
        if re.sub(r"[^a-z0-9]", "", gram) in orgs:
            continue
        if inflected := _inflected(normalise(gram), targets):
            ev.weak += inflected  # a plural or singular of a name: a hint, not a typo
            continue
        for hit in difflib.get_close_matches(
            normalise(gram), list(targets), n=2, cutoff=FUZZY_CUTOFF
        ):
            for repo in targets[hit]:
                ev.misspelt[repo].append(gram)


def _inflected(gram: str, targets: dict[str, list[str]]) -> list[str]:
    """The repositories ``gram`` names in the plural or singular (``notifiers``, ``moneybag``
    of ``moneybags``): not a typo of their name."""
    stems = (gram[:-1], gram[:-2]) if gram.endswith("s") else ()
    forms = [f for f in (*stems, gram + "s", gram + "es") if f in targets]
    return [repo for form in forms for repo in targets[form]]


def _confirm_misspellings(text: str, catalog: Catalog, ev: Evidence) -> None:
    """A typo counts when a second signal (other evidence, or one of its topics) backs it."""
    lowered = text.lower()
    scored = {repo for repo, _ in ev.hits}
    for full_name, grams in ev.misspelt.items():
        repo: CatalogRepo | None = catalog.by_full_name(full_name)
        topics = [
            t
            for t in (repo.topics if repo else [])
            if re.search(r"(?<![\w-])" + re.escape(t.lower()) + r"(?![\w-])", lowered)
        ]
        if full_name in scored or topics:
            for gram in grams:
                ev.add(full_name, "misspelling", gram + (f" + topic {topics[0]}" if topics else ""))
        else:
            ev.weak.append(full_name)


_BARE_REF = re.compile(
    r"(?<![\w/.@-])([A-Za-z0-9][\w-]*)/([A-Za-z0-9][\w.-]*?)(?:#\d+)?(?![\w/@-])"
)


def _bare_refs(text: str, catalog: Catalog, ev: Evidence) -> None:
    """``celery/kombu`` or ``celery/kombu#123`` written without a link: the org's repository
    named exactly (an action's ``owner/name@v3`` is weighed by ``repo_usage``)."""
    for m in _BARE_REF.finditer(text):
        if not catalog.is_org(m.group(1)):
            continue
        repo = catalog.by_full_name(f"{m.group(1)}/{m.group(2).rstrip('.')}")
        if repo is not None:
            ev.add(repo.full_name, "ref", _excerpt(text, m.start(), m.end()))


DECISIVE_KINDS: Final = frozenset(
    {
        "declaration",
        "url_code",
        "url_ref",
        "label_repo",
        "label_service",
        "owner",
        "action_ref",
        "ref",
        "fork_url",
        "former_name:url_code",
        "former_name:url_ref",
    }
)
"""Evidence a person points with: a declaration, a link, a label, an exact reference."""


def umbrella_of(umbrella: str, sibling: str) -> bool:
    """``celery`` of ``django-celery-beat``, ``attrs`` of ``cattrs``, ``sentry`` of
    ``sentry-python``: the sibling's name contains the umbrella's."""
    a, b = normalise(umbrella), normalise(sibling)
    return a != b and len(a) >= 4 and a in b


BRAND_AFFIXES: Final = (("get", "python"), ("hq", "dev", "io", "labs", "project", "org"))
"""What an org's name adds around its product's (``getsentry``, ``PrefectHQ``, ``tox-dev``,
``python-poetry``): without them it is the product (``sentry``, ``prefect``, ``tox``)."""
NAME_ONLY_KINDS: Final = frozenset({"title", "prose", "env", "docs_link", "misspelling"})
"""The product's name written down: the whole family's word in the org's tickets."""


def _squashed(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def org_brand(org: str) -> str:
    """The product an org is named after: ``PrefectHQ`` -> ``prefect``, ``getsentry`` ->
    ``sentry``, ``celery`` -> ``celery``."""
    brand = _squashed(org)
    prefixes, suffixes = BRAND_AFFIXES
    for prefix in prefixes:
        if brand.startswith(prefix) and len(brand) > len(prefix) + 2:
            brand = brand.removeprefix(prefix)
    for suffix in suffixes:
        if brand.endswith(suffix) and len(brand) > len(suffix) + 2:
            brand = brand.removesuffix(suffix)
    return brand


def _weigh_context(catalog: Catalog, ev: Evidence) -> None:
    """Context is not subject: an umbrella's evidence beside its sibling's is discounted, a
    common-word name without a second signal does not count, and the repository named like the
    org's product (``celery/celery``, ``PrefectHQ/prefect``, ``getsentry/sentry``) is not
    named by its name alone: every ticket of the org says it, whichever repository it is for,
    so without a use, a link or a label it is context. (Measured on the development sets
    before this rule: proceeds on that name alone were right 4 times in 8.)"""
    repos = {repo for repo, _ in ev.hits}
    names = {r.full_name: r.name for r in catalog.repositories if r.full_name in repos}
    for umbrella in repos:
        if ev.kinds(umbrella) & DECISIVE_KINDS or umbrella not in names:
            continue
        siblings = [
            s
            for s in repos
            if s in names
            and umbrella_of(names[umbrella], names[s])
            and ev.kinds(s) - {"env", "path", "misspelling"}
        ]
        if siblings:
            for kind in ev.kinds(umbrella):
                ev.discount(umbrella, kind, UMBRELLA_FACTOR)
            ev.notes.append(
                f"{umbrella} is the umbrella of {', '.join(sorted(siblings))}; "
                "its evidence counted as context"
            )
    brands = {org_brand(org) for org in catalog.orgs}
    for repo in repos:
        name = names.get(repo, "")
        kinds = ev.kinds(repo)
        renamed = any(k.startswith("former_name:") for k in kinds)
        if normalise(name) in COMMON_WORDS and not (kinds & SECOND_SIGNAL_KINDS or renamed):
            ev.drop(repo)
            ev.weak.append(repo)
            ev.notes.append(f"{repo} is named by a common word and nothing else supports it")
        elif _squashed(name) in brands and not kinds & (SECOND_SIGNAL_KINDS - {"owner"}):
            for kind in kinds & NAME_ONLY_KINDS:
                ev.discount(repo, kind, UMBRELLA_FACTOR)
            if kinds <= NAME_ONLY_KINDS | {"path"}:
                ev.family_word.add(repo)
            ev.notes.append(
                f"{repo} is named like the org's product: its name alone counted as context"
            )


_FENCE_INFO = re.compile(r"```[ \t]*([\w][\w+.#-]*)")
"""The language of a fenced block (```` ```hcl ````, ```` ```python3 ````): a syntax, no mention."""
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_CHECKLIST_ITEM = re.compile(r"^[ \t]*[-*+][ \t]+\[[ xX]\]")
_NEW_ITEM = re.compile(r"^[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|#)")


def template_spans(text: str) -> list[tuple[int, int]]:
    """The issue template's boilerplate: HTML comments and checklist items (``- [x] I have
    checked the [issues list](...) of Celery``, with their indented continuation lines).
    The template's words are the tracker's, not the reporter's: a name in them (``pytest-celery``
    in Celery's checklist) is no mention of a repository, and a command in them (``celery -A
    proj report``) was not run. Its links still say which tracker the form is from and are
    weighed as links."""
    spans = [m.span() for m in _HTML_COMMENT.finditer(text)]
    pos, open_item = 0, -1
    for line in text.splitlines(keepends=True):
        end = pos + len(line)
        if _CHECKLIST_ITEM.match(line):
            if open_item >= 0:
                spans.append((open_item, pos))
            open_item = pos
        elif open_item >= 0 and (
            not (line[:1] in (" ", "\t") and line.strip()) or _NEW_ITEM.match(line)
        ):
            spans.append((open_item, pos))  # an item runs on while its lines are indented
            open_item = -1
        pos = end
    if open_item >= 0:
        spans.append((open_item, pos))
    return sorted(spans)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces (newlines kept), so offsets do not move."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, min(end, len(chars))):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _commands_and_settings(
    text: str,
    catalog: Catalog,
    ev: Evidence,
    index: dict[str, dict[str, list[str]]],
    used: dict[str, list[tuple[int, int]]],
) -> None:
    """A subcommand run after a known command and a key only one repository documents, set
    (``repo_settings``); their spans are uses, not mentions of a name."""

    def add(repo: str, kind: str, start: int, end: int) -> None:
        ev.add(repo, kind, _excerpt(text, start, end), text[start:end])
        used[repo].append((start, end))

    starts = command_starts(text)
    subcommands = subcommand_index(catalog)
    related = functools.partial(extends, catalog)
    commands = index["commands"]
    gather_subcommand_uses(text, starts, commands, subcommands, add, related)

    def seconded(repo: str) -> bool:
        return bool(ev.kinds(repo) & (SECOND_SIGNAL_KINDS - {"setting"}))

    gather_setting_uses(text, settings_index(catalog), add, seconded)


def _kind_names(
    text: str,
    title_len: int,
    catalog: Catalog,
    ev: Evidence,
    used: dict[str, list[tuple[int, int]]],
) -> None:
    """A repository written as the end of its name and its kind ("the Prefect provider" for
    ``terraform-provider-prefect``, ``repo_kind_names``): its name in the title or the
    description. The phrase's words are no mention of another repository: "Prefect" in it names
    what the provider plugs into, not the subject."""
    taken = [span for spans in used.values() for span in spans]

    def add(repo: str, start: int, end: int) -> None:
        ev.add(repo, "title" if start < title_len else "prose", _excerpt(text, start, end))
        used[CONTEXT].append((start, end))

    gather_kind_names(text, catalog, taken, add)


def gather_evidence(ticket: Ticket, catalog: Catalog) -> Evidence:
    title = ticket.title[:MAX_DETECT_TEXT_CHARS]
    text = f"{title}\n{ticket.description}"[:MAX_DETECT_TEXT_CHARS]
    ev = Evidence()
    boilerplate = template_spans(text)
    _declarations(ticket, text, catalog, ev)
    _links(ticket, text, catalog, ev)
    _labels(ticket, catalog, ev)
    blanked = _DECLARATION.sub(
        lambda m: " " * len(m.group()), _ANY_URL.sub(lambda m: " " * len(m.group()), text)
    )  # links first: ``- repo: https://...`` must not leave the link's tail behind
    blanked = _blank(blanked, boilerplate + [m.span(1) for m in _FENCE_INFO.finditer(text)])
    index = vocabulary_index(catalog)
    used = gather_usage(blanked, catalog, ev.add, index)
    _commands_and_settings(blanked, catalog, ev, index, used)
    _kind_names(blanked, len(title), catalog, ev, used)
    matched = _mentions(blanked, len(title), catalog, ev, used)
    _bare_refs(blanked, catalog, ev)
    _misspellings(blanked, catalog, matched, ev)
    _confirm_misspellings(blanked, catalog, ev)
    if not ev.hits:  # names no repository: a class or function it writes may place it
        gather_definition_uses(blanked, catalog, ev.add, index)
    _weigh_context(catalog, ev)
    ev.declared = list(dict.fromkeys(ev.declared))
    ev.weak = [w for w in dict.fromkeys(ev.weak) if w not in {r for r, _ in ev.hits}]
    return ev
