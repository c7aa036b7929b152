"""FROZEN copy of the repository-detection rules as they stood before issue 15 (commit a0a55f2),
kept so the benchmark measures "current rules" and the new scorer in the same process.

Do not edit the logic: it is the baseline. It reads a catalog through ``legacy_view`` (full name,
description, aliases only), which is all the old rules knew.
"""

from __future__ import annotations

import difflib
import itertools
import re
from dataclasses import dataclass, field

from veranda_dagster.domain.core.bounds import MAX_REPO_CANDIDATES
from veranda_dagster.domain.core.models import RepoGuess, Ticket
from veranda_dagster.domain.intake.catalog import Catalog, normalise


def legacy_view(catalog: Catalog) -> Catalog:
    """The catalog as the old rules saw it: name, description and aliases only."""
    return Catalog(
        org=catalog.org,
        repositories=[
            r.model_copy(update={"service": [], "former_names": [], "topics": [], "languages": []})
            for r in catalog.repositories
        ],
    )


_DECLARATION = re.compile(
    r"(?im)(?:^|[\s\[(])repo(?:sitory)?\s*[:=]\s*`?([A-Za-z0-9][\w.-]*(?:/[\w.-]+)?)`?"
)
_GITHUB_URL = re.compile(r"https?://(?:www\.)?github\.com/([A-Za-z0-9-]+)/([A-Za-z0-9_.-]+)")
_ANY_URL = re.compile(r"https?://\S+")
_NOT_OWNERS = frozenset({"orgs", "settings", "apps", "marketplace", "features", "topics", "search"})
_LABEL_PREFIX = re.compile(r"^repo\s*[:/=]\s*", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")

FUZZY_CUTOFF = 0.85
"""difflib ratio for a misspelt name in prose: 'notifer'~'notifier' is 0.93. Near-misses that
pass it ('research'~'search', 0.86) only ever add a candidate to a question, never proceed."""
FUZZY_DECLARED_CUTOFF = 0.75
"""Looser for a value that is certainly meant as a repo (a declaration or repo: label)."""
FUZZY_MIN_LEN = 6


@dataclass
class Evidence:
    declared: list[str] = field(default_factory=list)
    declared_unknown: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    labels_unknown: list[str] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)
    fuzzy: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _fuzzy(value: str, catalog: Catalog, cutoff: float) -> list[str]:
    """Repositories whose name or alias is close to ``value`` (a misspelling)."""
    terms: dict[str, str] = {}
    for repo in catalog.repositories:
        for term in [repo.name, *repo.aliases]:
            terms.setdefault(normalise(term), repo.full_name)
    hits = difflib.get_close_matches(normalise(value), list(terms), n=3, cutoff=cutoff)
    return _unique([terms[h] for h in hits])


def _term_pattern(term: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in re.split(r"[\s_-]+", term.strip()) if p]
    return re.compile(r"(?<![\w/.-])" + r"[\s_-]+".join(parts) + r"(?![\w-])", re.I)


def _declarations(ticket: Ticket, text: str, catalog: Catalog, ev: Evidence) -> None:
    values = ([ticket.repo] if ticket.repo else []) + _DECLARATION.findall(text)
    for value in values:
        hits = catalog.resolve(value)
        if len(hits) == 1:
            ev.declared.append(hits[0].full_name)
        else:
            ev.declared_unknown.append(value)
            ev.notes.append(f"declared repository {value!r} is not in the {catalog.org} catalog")


def _urls(ticket: Ticket, text: str, catalog: Catalog, ev: Evidence) -> None:
    found = _GITHUB_URL.findall(text) + [
        m for a in ticket.attachments for m in _GITHUB_URL.findall(a.url)
    ]
    for owner, name in found:
        name = name.removesuffix(".git").rstrip(".")
        if owner.lower() in _NOT_OWNERS or not name:
            continue
        full = f"{owner}/{name}"
        if owner.lower() != catalog.org.lower():
            ev.notes.append(f"ignored foreign URL to {full} (not in org {catalog.org})")
            continue
        repo = catalog.by_name(name)
        if repo:
            ev.urls.append(repo.full_name)
            continue
        ev.notes.append(f"ignored stale URL to {full} (not in the catalog)")
        ev.stale += [r.full_name for r in catalog.by_alias(name)]


def _labels(ticket: Ticket, catalog: Catalog, ev: Evidence) -> None:
    for label in ticket.labels:
        prefixed = bool(_LABEL_PREFIX.match(label))
        value = _LABEL_PREFIX.sub("", label).strip()
        hits = catalog.resolve(value) if value else []
        if len(hits) == 1:
            ev.labels.append(hits[0].full_name)
        elif prefixed:
            ev.labels_unknown.append(value)
            ev.notes.append(f"label {label!r} names no repository in the catalog")


def _prose(text: str, catalog: Catalog, ev: Evidence) -> None:
    prose = _DECLARATION.sub(" ", _ANY_URL.sub(" ", text))
    matched: set[str] = set()
    for repo in catalog.repositories:
        for term in [repo.name, *repo.aliases]:
            if _term_pattern(term).search(prose):
                ev.prose.append(repo.full_name)
                matched.add(normalise(term))
    words = [w.lower() for w in _WORD.findall(prose)]
    grams = words + [f"{a}-{b}" for a, b in itertools.pairwise(words)]
    for gram in grams:
        if len(gram) >= FUZZY_MIN_LEN and normalise(gram) not in matched:
            ev.fuzzy += _fuzzy(gram, catalog, FUZZY_CUTOFF)


def gather_evidence(ticket: Ticket, catalog: Catalog) -> Evidence:
    text = f"{ticket.title}\n{ticket.description}"
    ev = Evidence()
    _declarations(ticket, text, catalog, ev)
    _urls(ticket, text, catalog, ev)
    _labels(ticket, catalog, ev)
    _prose(text, catalog, ev)
    for name in ("declared", "urls", "labels", "prose", "fuzzy", "stale"):
        setattr(ev, name, _unique(getattr(ev, name)))
    ev.fuzzy = [f for f in ev.fuzzy if f not in ev.prose]
    return ev


def _proceed(ticket: Ticket, repo: str, signal: str, ev: Evidence) -> RepoGuess:
    return RepoGuess(
        ticket_id=ticket.id,
        repo=repo,
        confidence="high",
        signal=signal,  # type: ignore[arg-type]
        decision="proceed",
        candidates=[repo],
        notes=ev.notes,
    )


def _ask(
    ticket: Ticket,
    catalog: Catalog,
    candidates: list[str],
    signal: str | None,
    reason: str,
    ev: Evidence,
) -> RepoGuess:
    candidates = _unique(candidates)[:MAX_REPO_CANDIDATES]
    single = candidates[0] if len(candidates) == 1 else None
    if candidates:
        listed = "\n".join(f"- {c}" for c in candidates)
        question = (
            f"Which repository is this ticket about? I did not start because {reason}.\n"
            f"Candidates:\n{listed}\nReply with `repo: <org>/<name>` and I will pick it up."
        )
    else:
        examples = ", ".join(catalog.names()[:MAX_REPO_CANDIDATES])
        question = (
            f"Which repository is this ticket about? I did not start because {reason}. "
            f"Reply with `repo: <org>/<name>` (for example one of: {examples})."
        )
    return RepoGuess(
        ticket_id=ticket.id,
        repo=single,
        confidence="low" if candidates else "none",
        signal=signal,  # type: ignore[arg-type]
        decision="ask",
        candidates=candidates,
        question=question,
        notes=ev.notes,
    )


def _contradicted(repo: str, prose: list[str]) -> bool:
    """A strong signal is contradicted when the text names other repositories and not it."""
    return bool(prose) and repo not in prose


def detect_repo(ticket: Ticket, catalog: Catalog) -> RepoGuess:
    """Score declaration > URL > label > prose; proceed only on an uncontradicted strong one."""
    ev = gather_evidence(ticket, catalog)
    if ev.declared or ev.declared_unknown:
        if len(ev.declared) == 1 and not ev.declared_unknown:
            return _proceed(ticket, ev.declared[0], "declaration", ev)
        if len(ev.declared) > 1:
            return _ask(ticket, catalog, ev.declared, "declaration", "it declares two repos", ev)
        near = [c for v in ev.declared_unknown for c in _fuzzy(v, catalog, FUZZY_DECLARED_CUTOFF)]
        names = ", ".join(repr(v) for v in ev.declared_unknown)
        reason = f"the declared repository {names} is not in the {catalog.org} catalog"
        return _ask(ticket, catalog, ev.declared + near, "declaration", reason, ev)
    if ev.urls:
        agreed = [u for u in ev.urls if u in ev.labels]
        if len(agreed) == 1:
            return _proceed(ticket, agreed[0], "url", ev)
        if len(ev.urls) == 1 and not ev.labels:
            if not _contradicted(ev.urls[0], ev.prose):
                return _proceed(ticket, ev.urls[0], "url", ev)
            reason = "its GitHub link and its text name different repositories"
            return _ask(ticket, catalog, ev.urls + ev.prose, "url", reason, ev)
        reason = (
            "it links to more than one repository"
            if len(ev.urls) > 1
            else "its GitHub link and its label name different repositories"
        )
        return _ask(ticket, catalog, ev.urls + ev.labels, "url", reason, ev)
    if ev.labels or ev.labels_unknown:
        if len(ev.labels) == 1 and not ev.labels_unknown:
            label = ev.labels[0]
            if not _contradicted(label, ev.prose):
                return _proceed(ticket, label, "label", ev)
            reason = "its label and its text name different repositories"
            return _ask(ticket, catalog, [label, *ev.prose], "label", reason, ev)
        near = [c for v in ev.labels_unknown for c in _fuzzy(v, catalog, FUZZY_DECLARED_CUTOFF)]
        reason = (
            "its labels name more than one repository"
            if len(ev.labels) > 1
            else "its repo label names no repository in the catalog"
        )
        return _ask(ticket, catalog, ev.labels + near + ev.prose, "label", reason, ev)
    weak = ev.prose + ev.stale + ev.fuzzy
    if weak:
        if len(_unique(weak)) > 1:
            reason = "the text mentions more than one repository"
        elif ev.prose:
            reason = "the repository is only mentioned in passing, not declared"
        else:
            reason = "the only hint is a misspelt or outdated repository name"
        return _ask(ticket, catalog, weak, "prose", reason, ev)
    return _ask(ticket, catalog, [], None, "the ticket names no repository", ev)
