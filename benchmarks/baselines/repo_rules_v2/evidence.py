"""FROZEN copy of ``veranda_dagster/domain/intake/repo_evidence.py`` before issue 33 (commit
f8be8b4), kept so the benchmark measures the rules before and after in one process. Do not edit
the logic. It uses the live forge link readers (registered by the package), and reads only the
catalog fields it knew (name, aliases, service, former names, topics).
"""

from __future__ import annotations

import difflib
import functools
import itertools
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from veranda_dagster.domain.core.bounds import MAX_DETECT_TEXT_CHARS, MAX_GROUP_DEPTH
from veranda_dagster.domain.core.models import RepoEvidence, Ticket
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.domain.intake.catalog import Catalog, CatalogRepo, normalise
from veranda_dagster.domain.intake.repo_evidence import link_readers

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
}
WEIGHTS.update({f"former_name:{k}": WEIGHTS[k] for k in ("url_code", "url_ref", "url_comment")})
"""A link through a former name: the same kinds, weighed by ``FORMER_NAME_FACTOR``."""
REPEAT_BONUS: Final = 0.1
"""Each further occurrence of the same kind adds this much, up to the kind's cap."""
CAPS: Final[dict[str, float]] = {"title": 0.7, "prose": 0.55, "env": 0.25, "path": 0.15}
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
_VERSION_AFTER = re.compile(r"(?:[ \t|:=<>!~,(-]{0,6}v?\d+\.\d|[ \t]+version\b)", re.I)
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

    def add(self, repo: str, kind: str, excerpt: str) -> None:
        self.hits[(repo, kind)].append(excerpt)

    def items(self) -> list[RepoEvidence]:
        out = []
        for (repo, kind), excerpts in self.hits.items():
            weight = WEIGHTS[kind] + REPEAT_BONUS * (len(excerpts) - 1)
            weight = min(weight, CAPS.get(kind, WEIGHTS[kind]))
            if kind.startswith("former_name:"):
                weight = WEIGHTS[kind.split(":", 1)[1]] * FORMER_NAME_FACTOR
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


def _terms(catalog: Catalog) -> dict[str, list[str]]:
    """Normalised name/alias/service -> the repositories it names."""
    terms: dict[str, list[str]] = defaultdict(list)
    for repo in catalog.repositories:
        for term in dict.fromkeys([repo.name, *repo.aliases, *repo.service]):
            if repo.full_name not in terms[normalise(term)]:
                terms[normalise(term)].append(repo.full_name)
    return terms


def _declarations(ticket: Ticket, text: str, catalog: Catalog, ev: Evidence) -> None:
    values = ([ticket.repo] if ticket.repo else []) + _DECLARATION.findall(text)
    for value in values:
        hits = catalog.resolve(value)
        if len(hits) == 1:
            ev.declared.append(hits[0].full_name)
            ev.add(hits[0].full_name, "declaration", scrub(f"repo: {value}")[:100])
        else:
            ev.declared_unknown.append(value)
            ev.notes.append(f"declared repository {value!r} is not in the {catalog.title} catalog")


def _forge_link(url: str, text: str, catalog: Catalog, ev: Evidence) -> None:
    link = next((r for r in (read(url) for read in link_readers()) if r), None)
    if link is None:
        return
    owner, name, kind = link.owner, link.name, link.kind
    shown = scrub(url)[:120]
    live = catalog.by_full_name(f"{owner}/{name}") or (
        catalog.by_name(name) if catalog.is_org(owner) else None
    )
    if live:
        ev.add(live.full_name, kind, shown)
        return
    renamed = catalog.by_former_name(owner, name)
    if renamed:
        for repo in renamed:
            ev.add(repo.full_name, f"former_name:{kind}", shown)
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


def _docs_link(url: str, terms: dict[str, list[str]], ev: Evidence) -> None:
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
    elif host.count(".") >= 2:
        label = host.split(".", 1)[0]
    else:
        return
    for repo in terms.get(normalise(label), []):
        ev.add(repo, "docs_link", scrub(url)[:120])


def _links(ticket: Ticket, text: str, catalog: Catalog, ev: Evidence) -> None:
    terms = _terms(catalog)
    urls = [m.group() for m in _ANY_URL.finditer(text)] + [a.url for a in ticket.attachments]
    for url in urls:
        url = url.rstrip(".,;:")
        _forge_link(url, text, catalog, ev)
        _docs_link(url, terms, ev)


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


def _classify(
    text: str, title_len: int, start: int, end: int, orgs: list[str], common: bool
) -> str:
    if _FILE_AFTER.match(text, end):
        return ""
    qualified = any(
        text[max(0, start - len(org) - 1) : start].lower() == f"{org.lower()}/" for org in orgs
    )
    if start and text[start - 1] == "/" and not qualified:
        return "path"
    if start >= title_len and _VERSION_AFTER.match(text, end):
        return "env"  # in the title, "X 1.2 breaks" still names what the ticket is about
    if common and not (qualified or _is_name_like(text, start, end)):
        return "weak"
    return "title" if start < title_len else "prose"


def _longest_matches(text: str, terms: dict[str, list[str]]) -> list[tuple[int, int, str]]:
    """Every term occurrence not inside a longer one ("Textual demo" is textual-demo only)."""
    found = [
        (m.start(), m.end(), term) for term in terms for m in _term_pattern(term).finditer(text)
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


def _mentions(text: str, title_len: int, catalog: Catalog, ev: Evidence) -> set[str]:
    matched: set[str] = set()
    terms = _terms(catalog)
    for start, end, term in _longest_matches(text, terms):
        repos = terms[term]
        common = term in COMMON_WORDS
        kind = _classify(text, title_len, start, end, catalog.orgs, common)
        if not kind:
            continue
        matched.add(term)
        for repo in repos:
            if kind == "weak":
                ev.weak.append(repo)
                continue
            ev.add(repo, kind, _excerpt(text, start, end))
            if _OWNER_BEFORE.search(text[max(0, start - 40) : start]):
                ev.add(repo, "owner", _excerpt(text, start, end))
    return matched


def _misspellings(text: str, catalog: Catalog, matched: set[str], ev: Evidence) -> None:
    targets = {t: r for t, r in _terms(catalog).items() if t not in COMMON_WORDS}
    words = [w.lower() for w in _WORD.findall(text)]
    grams = words + [f"{a}-{b}" for a, b in itertools.pairwise(words)]
    for gram in dict.fromkeys(grams):
        if len(gram) < FUZZY_MIN_LEN or normalise(gram) in targets or normalise(gram) in matched:
            continue
        for hit in difflib.get_close_matches(
            normalise(gram), list(targets), n=2, cutoff=FUZZY_CUTOFF
        ):
            for repo in targets[hit]:
                ev.misspelt[repo].append(gram)


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


def gather_evidence(ticket: Ticket, catalog: Catalog) -> Evidence:
    title = ticket.title[:MAX_DETECT_TEXT_CHARS]
    text = f"{title}\n{ticket.description}"[:MAX_DETECT_TEXT_CHARS]
    ev = Evidence()
    _declarations(ticket, text, catalog, ev)
    _links(ticket, text, catalog, ev)
    _labels(ticket, catalog, ev)
    blanked = _ANY_URL.sub(
        lambda m: " " * len(m.group()), _DECLARATION.sub(lambda m: " " * len(m.group()), text)
    )
    matched = _mentions(blanked, len(title), catalog, ev)
    _misspellings(blanked, catalog, matched, ev)
    _confirm_misspellings(blanked, catalog, ev)
    ev.declared = list(dict.fromkeys(ev.declared))
    ev.weak = [w for w in dict.fromkeys(ev.weak) if w not in {r for r, _ in ev.hits}]
    return ev
