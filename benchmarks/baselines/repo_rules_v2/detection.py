"""FROZEN copy of ``veranda_dagster/domain/intake/repo_detection.py`` before issue 33
(commit f8be8b4),
with ``--no-model`` behaviour. Do not edit the logic."""

from __future__ import annotations

from typing import Final

from benchmarks.baselines.repo_rules_v2.evidence import Evidence, gather_evidence
from veranda_dagster.domain.core.bounds import MAX_REPO_CANDIDATES, MAX_REPO_EVIDENCE
from veranda_dagster.domain.core.models import RepoEvidence, RepoGuess, RepoSignal, Ticket
from veranda_dagster.domain.intake.catalog import Catalog, CatalogRepo

PROCEED_MIN: Final = 0.2
"""Least total weight that can proceed: one name in prose (0.35) does, a lone path (0.1) not."""
LEAD_RATIO: Final = 2.0
"""The leader needs twice the runner-up's weight: a title mention (0.6) beats a passing one
(0.35) only with more behind it, a repo label (0.8) beats one prose mention (0.35)."""
LEAD_MARGIN: Final = 0.25
"""...and this much more in absolute terms, so two weak hints never decide between themselves."""

_STRONG: Final = frozenset({"url_code", "url_ref", "label_repo"})
_SIGNAL: Final[dict[str, RepoSignal]] = {
    "url_code": "url",
    "url_ref": "url",
    "url_comment": "url",
    "fork_url": "fork",
    "label_repo": "label",
    "label_service": "service",
    "misspelling": "misspelling",
}
_KIND_WORDS: Final[dict[str, str]] = {
    "declaration": "declared in the ticket",
    "url_code": "a link to its code",
    "url_ref": "a link to its issues or pull requests",
    "url_comment": "a link to a comment in its threads",
    "fork_url": "a link into a fork of it",
    "label_repo": "a repo label",
    "label_service": "a service or team label",
    "owner": "the text says the fix goes there",
    "title": "its name in the title",
    "prose": "its name in the description",
    "docs_link": "a link to its docs or package page",
    "env": "a version line naming it",
    "path": "a file path through it",
    "misspelling": "a close misspelling of its name",
}


_PRIORITY: Final = (
    "declaration",
    "url_code",
    "url_ref",
    "former_name:url_code",
    "former_name:url_ref",
    "fork_url",
    "label_repo",
    "label_service",
    "url_comment",
    "former_name:url_comment",
    "owner",
    "title",
    "prose",
    "docs_link",
    "env",
    "path",
    "misspelling",
)
"""Which of a repository's evidence names the decision: links, then labels, then the text."""


def _deciding(ev: Evidence, repos: list[str]) -> RepoEvidence:
    items = [i for i in ev.items() if i.repo in repos]
    return min(items, key=lambda i: (_PRIORITY.index(i.kind), -i.weight))


def _signal(kind: str) -> RepoSignal:
    if kind.startswith("former_name:"):
        return "former_name"
    return _SIGNAL.get(kind, "prose")


def _describe(item: RepoEvidence) -> str:
    kind = item.kind
    words = _KIND_WORDS.get(kind.split(":")[-1], kind)
    if kind.startswith("former_name:"):
        words += " under a former name"
    return f"{item.repo}: {words} ({item.weight:.2f}) — {item.text}"


def _guess(ticket: Ticket, ev: Evidence, **fields: object) -> RepoGuess:
    items = ev.items()[:MAX_REPO_EVIDENCE]
    return RepoGuess(ticket_id=ticket.id, notes=ev.notes, evidence=items, **fields)  # type: ignore[arg-type]


def _proceed(
    ticket: Ticket, ev: Evidence, repo: str, signal: RepoSignal, confidence: str, score: float
) -> RepoGuess:
    return _guess(
        ticket,
        ev,
        repo=repo,
        confidence=confidence,
        signal=signal,
        decision="proceed",
        candidates=[repo],
        score=score,
    )


def _question(
    catalog: Catalog, candidates: list[str], reason: str, ev: Evidence, settle: str
) -> str:
    lines = [f"Which repository is this ticket about? I did not start because {reason}."]
    shown = [i for i in ev.items() if i.repo in candidates][:MAX_REPO_EVIDENCE]
    if shown:
        lines.append("What I found:\n" + "\n".join(f"- {_describe(i)}" for i in shown))
    if candidates:
        lines.append("Candidates:\n" + "\n".join(f"- {c}" for c in candidates))
    else:
        examples = ", ".join(catalog.names()[:MAX_REPO_CANDIDATES])
        lines.append(f"The {catalog.title} catalog has, for example: {examples}.")
    lines.append(settle)
    return "\n".join(lines)


_SETTLE = "Reply with `repo: <org>/<name>` (or add a `repo:<name>` label) and I will pick it up."


def _ask(
    ticket: Ticket,
    catalog: Catalog,
    ev: Evidence,
    candidates: list[str],
    reason: str,
    signal: RepoSignal | None,
    settle: str = _SETTLE,
    score: float | None = None,
) -> RepoGuess:
    candidates = list(dict.fromkeys(candidates))[:MAX_REPO_CANDIDATES]
    return _guess(
        ticket,
        ev,
        repo=candidates[0] if len(candidates) == 1 else None,
        confidence="low" if candidates else "none",
        signal=signal,
        decision="ask",
        candidates=candidates,
        question=_question(catalog, candidates, reason, ev, settle),
        score=score,
    )


def _from_declaration(ticket: Ticket, catalog: Catalog, ev: Evidence) -> RepoGuess:
    if len(ev.declared) == 1 and not ev.declared_unknown:
        repo = ev.declared[0]
        others = sorted({i.repo for i in ev.items() if i.repo != repo})
        if others:
            ev.notes.append(f"declared {repo}; kept it over other evidence for {', '.join(others)}")
        return _proceed(ticket, ev, repo, "declaration", "high", 1.0)
    if len(ev.declared) > 1:
        return _ask(ticket, catalog, ev, ev.declared, "it declares two repositories", "declaration")
    near = [r.full_name for v in ev.declared_unknown for r in _near(catalog, v)]
    names = ", ".join(repr(v) for v in ev.declared_unknown)
    reason = f"the declared repository {names} is not in the {catalog.title} catalog"
    settle = (
        "Check the name (or add the repository to the catalog) and reply with `repo: <org>/<name>`."
    )
    return _ask(ticket, catalog, ev, ev.declared + near, reason, "declaration", settle)


def _near(catalog: Catalog, value: str) -> list[CatalogRepo]:
    import difflib

    name = value.strip().split("/")[-1].lower()
    names = {r.name.lower(): r for r in catalog.repositories}
    return [names[n] for n in difflib.get_close_matches(name, list(names), n=2, cutoff=0.75)]


def detect_repo(ticket: Ticket, catalog: Catalog) -> RepoGuess:
    """Declaration first; otherwise the clear leader of the weighed evidence, or a question."""
    ev = gather_evidence(ticket, catalog)
    if ev.declared or ev.declared_unknown:
        return _from_declaration(ticket, catalog, ev)
    scores = ev.scores()
    ranked = sorted(scores, key=lambda r: (-scores[r], r))
    if ev.labels_unknown:
        near = [r.full_name for v in ev.labels_unknown for r in _near(catalog, v)]
        reason = "its repo label names no repository in the catalog"
        return _ask(ticket, catalog, ev, ranked + near, reason, "label")
    if not ranked or scores[ranked[0]] < PROCEED_MIN:
        return _ask_without_evidence(ticket, catalog, ev, ranked)
    top = ranked[0]
    best = _deciding(ev, [top])
    second = scores[ranked[1]] if len(ranked) > 1 else 0.0
    if second and (scores[top] < LEAD_RATIO * second or scores[top] - second < LEAD_MARGIN):
        contenders = [r for r in ranked if scores[r] * LEAD_RATIO >= scores[top]]
        reason = "the ticket points at more than one repository with comparable weight"
        signal = _signal(_deciding(ev, contenders).kind)
        return _ask(ticket, catalog, ev, contenders, reason, signal, score=scores[top])
    strong = best.kind in _STRONG and not second
    return _proceed(
        ticket, ev, top, _signal(best.kind), "high" if strong else "medium", scores[top]
    )


def _ask_without_evidence(
    ticket: Ticket, catalog: Catalog, ev: Evidence, ranked: list[str]
) -> RepoGuess:
    hints = ranked + ev.weak
    foreign = [n for n in ev.notes if n.startswith("ignored foreign URL")]
    if foreign and not hints:
        reason = "its only link points outside the org at a repository the catalog does not have"
        settle = "Reply with the catalog repository the change belongs in (`repo: <org>/<name>`)."
        return _ask(ticket, catalog, ev, [], reason, "url", settle)
    if hints:
        reason = "the only hints are weak (a common word, a path or a misspelt name)"
        return _ask(ticket, catalog, ev, hints, reason, "prose")
    return _ask(ticket, catalog, ev, [], "the ticket names no repository", None)
