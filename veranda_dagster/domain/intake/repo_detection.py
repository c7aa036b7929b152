"""Which repository a ticket is about, decided from weighed evidence, and a question only when a
person would also have to ask.

A pull request against the wrong service is worse than a question, so proceeding needs one
repository to lead clearly: its evidence must reach ``PROCEED_MIN`` and be at least
``LEAD_RATIO`` times (and ``LEAD_MARGIN`` above) the next one's. A declaration (``repo: x`` or
the ticket's repo field) decides outright. Asking stays mandatory where a colleague would ask
too: two repositories with comparable claims, nothing in the catalog named, a declared or
labelled repository that does not exist, a link outside the org that names no catalog repo.

Precision first. Without a model (``model=False``, the default and ``--no-model``) a clear
leader still proceeds only on *strong* evidence: something a person points with (a link, a
label, a declaration, ``uses:``, an exact ``org/name``), the name in the title, or a usage of
what only it contains (an import, the innermost traceback frame, its command, hook, install or
public name) -- at least ``STRONG_MIN`` of it; alone in the ticket, one full mention
(``UNCONTESTED_MIN``) does. A leader on passing mentions alone asks, naming the candidates and
the deciding evidence, and so does one whose only strong evidence is the title while another
repository has real evidence too (``TITLE_ALONE_KINDS``; an image or chart alone likewise,
``ONE_ORG_KINDS``), and so does a leader that a repository the ticket also uses or titles
depends on, when nothing points at the leader itself (a plugin's ticket uses the framework it
extends: ``_dependents_in_ticket``). A leader the ticket never *names* (``NAMING_KINDS``: no
name, pointer, import, install, command, frame, image or chart of it, only vocabulary it defines)
needs ``VOCABULARY_MIN_TERMS`` distinct terms only it defines. Context contests no lead: the org's
product word beside a leader with strong evidence, the leader's umbrella unless pointed at or
failed in. With a model (``model=True``) such
a leader proceeds at ``medium`` and the cheap-tier pass confirms, corrects or turns it into
a question.

A guess proceeds at ``high`` confidence on an uncontested link or repo label, and at
``medium`` otherwise.
"""

from __future__ import annotations

from typing import Final

from veranda_dagster.domain.core.bounds import MAX_REPO_CANDIDATES, MAX_REPO_EVIDENCE
from veranda_dagster.domain.core.models import RepoEvidence, RepoGuess, RepoSignal, Ticket
from veranda_dagster.domain.intake.catalog import (
    Catalog,
    CatalogRepo,
    load_catalog,
    refresh_catalog_from_forge,
)
from veranda_dagster.domain.intake.repo_confirmation import confirm_repo_guess
from veranda_dagster.domain.intake.repo_evidence import (
    DECISIVE_KINDS,
    Evidence,
    gather_evidence,
    umbrella_of,
)

__all__ = [
    "Catalog",
    "CatalogRepo",
    "confirm_repo_guess",
    "deciding_kind",
    "detect_repo",
    "gather_evidence",
    "load_catalog",
    "naming_class",
    "refresh_catalog_from_forge",
]

PROCEED_MIN: Final = 0.2
"""Least total weight that can proceed: one name in prose (0.35) does, a lone path (0.1) not."""
LEAD_RATIO: Final = 2.0
"""The leader needs twice the runner-up's weight: a title mention (0.6) beats a passing one
(0.35) only with more behind it, a repo label (0.8) beats one prose mention (0.35)."""
LEAD_MARGIN: Final = 0.25
"""...and this much more in absolute terms, so two weak hints never decide between themselves."""
STRONG_MIN: Final = 0.45
"""Least weight of strong evidence that proceeds without a model: a name in the title (0.6),
an import (0.55) or the innermost traceback frame (0.5) does; a passing mention (0.35) and a
version line (0.2) do not, however many of them there are."""

STRONG_KINDS: Final = DECISIVE_KINDS | {
    "title",
    "import",
    "trace",
    "command",
    "hook",
    "install",
    "api",
    "usage",
    "image",
    "chart",
    "subcommand",
    "setting",
}
"""Evidence a proceed without a model may rest on (``STRONG_MIN`` of it)."""
USAGE_KINDS: Final = frozenset(
    {"import", "trace", "command", "hook", "install", "usage", "api", "image", "chart"}
    | {"subcommand", "setting"}
)
"""Evidence that the ticket's code runs in the repository."""
PASSING_KINDS: Final = frozenset({"prose", "env", "path", "misspelling", "docs_link"})
"""Evidence that only says a repository was mentioned."""
LEAD_RATIO_OVER_CONTEXT: Final = 1.3
"""The lead needed over a runner-up whose evidence is all passing mentions, version lines or
paths when the leader's is usage (``STRONG_MIN`` of it): the innermost traceback frame or an
import outweighs a passing mention of another repository."""
LEAD_MARGIN_OVER_CONTEXT: Final = 0.1

NAMING_KINDS: Final = DECISIVE_KINDS | {
    "title",
    "prose",
    "env",
    "docs_link",
    "url_docs",
    "url_comment",
    "former_name:url_docs",
    "former_name:url_comment",
    "misspelling",
    "import",
    "install",
    "command",
    "trace",
    "usage",
    "image",
    "chart",
    "subcommand",
}
"""Evidence that *names* a repository by a name a colleague knows it by: a pointer (link,
label, declaration, ``uses:``, ``org/name``), its name or former name written down, or the
name its code is imported, installed, run, crashed in, pulled or charted under. What is left
(``VOCABULARY_ONLY_KINDS``) is vocabulary the repository happens to define."""
PACKAGE_NAME_KINDS: Final = frozenset(
    {"import", "install", "command", "trace", "usage", "image", "chart", "subcommand"}
)
"""The part of ``NAMING_KINDS`` that names a repository by what it publishes (its package,
command, image or chart) rather than by its own name or a pointer: the names its dependents'
users write too."""
VOCABULARY_ONLY_KINDS: Final = frozenset({"api", "hook", "setting"})
"""Terms a repository defines without being named by them: a public name of its package, a hook
id it registers, a configuration key it documents. A ticket that uses only these never says
which repository it is about; on issue 33's independent set such unnamed tickets were proceeded
on wrongly 10 times in 12."""
VOCABULARY_MIN_TERMS: Final = 2
"""Distinct terms, each defined by the leader alone and written as code, that a proceed without
a model needs when nothing names the leader: one public name can be a re-export, a copied
snippet or a sibling's namesake; two independent ones that only it defines rarely are."""
UNCONTESTED_MIN: Final = 0.35
"""Least strong weight (``UNCONTESTED_KINDS`` included) that proceeds without a model when no
other repository has any evidence at all (the org's product name written down,
``Evidence.family_word``, is no evidence here): one full mention in the description does. On the
development sets the uncontested one-mention asks were right 5 times in 5 (issue 33); a version
line (0.2) or a docs link (0.25) alone still asks."""
TITLE_ALONE_KINDS: Final = frozenset({"title"})
"""A leader whose strong evidence is only its name in the title asks without a model when
another repository has evidence that could proceed on its own (``PROCEED_MIN``): the title
often names the tool the filed repository ships or wraps (``get-pip`` beside ``pip``,
``sentry-cli`` beside self-hosted). Such proceeds were wrong 2 times in 5 on the development
sets (issue 33), far from rare. Beside nothing or a stray path the title still proceeds, and
with a model it proceeds for the cheap pass to confirm."""
ONE_ORG_KINDS: Final = frozenset({"title", "image", "chart"})
"""Strong evidence whose record comes from one organisation each (images: tiangolo, 6 of 6
proceeds and its one wrong; charts: PrefectHQ, 2 of 2; see the benchmark's evidence-kind
table): a leader resting on nothing else asks without a model when another repository has
evidence that could proceed on its own (``PROCEED_MIN``), as a title-only leader does."""
UNCONTESTED_KINDS: Final = frozenset(
    {"prose", "env", "docs_link", "url_docs", "former_name:url_docs", "url_comment"}
)
"""What else counts towards ``STRONG_MIN`` when no other repository has evidence at all."""

_STRONG: Final = frozenset({"url_code", "url_ref", "label_repo", "action_ref", "ref"})
_SIGNAL: Final[dict[str, RepoSignal]] = {
    "url_code": "url",
    "url_ref": "url",
    "url_comment": "url",
    "fork_url": "fork",
    "label_repo": "label",
    "label_service": "service",
    "misspelling": "misspelling",
    "action_ref": "action",
    "ref": "url",
    "url_docs": "url",
    "import": "vocabulary",
    "trace": "vocabulary",
    "command": "vocabulary",
    "hook": "vocabulary",
    "install": "vocabulary",
    "api": "vocabulary",
    "usage": "vocabulary",
    "image": "vocabulary",
    "chart": "vocabulary",
    "subcommand": "vocabulary",
    "setting": "vocabulary",
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
    "action_ref": "a `uses:` reference to it as a CI action",
    "ref": "its org/name written out",
    "url_docs": "a link to its README or docs",
    "import": "an import of its package",
    "trace": "the innermost traceback frame inside its package",
    "command": "its command run",
    "hook": "its hook id",
    "install": "an install of its package",
    "api": "a public name only it defines",
    "usage": "its package used by name in code",
    "image": "its container image built from or run",
    "chart": "its Helm chart",
    "subcommand": "a subcommand it declares, run",
    "setting": "a configuration key only it documents, set",
}


_PRIORITY: Final = (
    "declaration",
    "url_code",
    "url_ref",
    "action_ref",
    "ref",
    "former_name:url_code",
    "former_name:url_ref",
    "fork_url",
    "label_repo",
    "label_service",
    "owner",
    "import",
    "trace",
    "command",
    "subcommand",
    "hook",
    "install",
    "image",
    "chart",
    "title",
    "usage",
    "api",
    "setting",
    "url_comment",
    "former_name:url_comment",
    "url_docs",
    "former_name:url_docs",
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


def deciding_kind(guess: RepoGuess) -> str | None:
    """The kind of evidence a proceed rested on: the highest-priority item for its repository
    (``_PRIORITY``), with ``former_name:`` folded into the link kind; ``None`` for an ask. A
    declaration leaves no evidence item and is reported as ``declaration``."""
    if guess.decision != "proceed" or guess.repo is None:
        return None
    items = [i for i in guess.evidence if i.repo == guess.repo and i.kind in _PRIORITY]
    if not items:
        return "declaration"
    best = min(items, key=lambda i: (_PRIORITY.index(i.kind), -i.weight))
    return best.kind.split(":")[-1]


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


def detect_repo(ticket: Ticket, catalog: Catalog, *, model: bool = False) -> RepoGuess:
    """Declaration first; otherwise the clear leader of the weighed evidence, or a question.
    ``model``: a cheap-tier confirmation pass will check the guess, so a leader on weaker
    evidence may proceed at ``medium`` for it to confirm; without one it asks."""
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
    own_deps = _dependencies_in_passing(catalog, ev, top, ranked[1:])
    # the org's product word written down (``Evidence.family_word``) is context in every
    # ticket of the org: it does not contest the lead of a leader with strong evidence (a
    # pointer, a use, its title), only that of a passing mention; nor does the leader's
    # umbrella (its evidence already counted as context) unless it is pointed at or failed
    context = ev.family_word if _strong_weight(ev, top) >= STRONG_MIN else set()
    context |= {r for r in ranked[1:] if _umbrella_as_context(ev, r, top)}
    rivals = [r for r in ranked[1:] if r not in own_deps and r not in context]
    if own_deps:
        ev.notes.append(f"{', '.join(own_deps)}: what {top} depends on, named in passing")
    second = scores[rivals[0]] if rivals else 0.0
    ratio, margin = LEAD_RATIO, LEAD_MARGIN
    if second and _usage_weight(ev, top) >= STRONG_MIN and _passing_only(ev, rivals):
        ratio, margin = LEAD_RATIO_OVER_CONTEXT, LEAD_MARGIN_OVER_CONTEXT
    if second and (scores[top] < ratio * second or scores[top] - second < margin):
        contenders = [r for r in ranked if scores[r] * LEAD_RATIO >= scores[top]]
        reason = "the ticket points at more than one repository with comparable weight"
        signal = _signal(_deciding(ev, contenders).kind)
        return _ask(ticket, catalog, ev, contenders, reason, signal, score=scores[top])
    strong_weight = _strong_weight(ev, top)
    # what it depends on, named in passing, still contests this; the org's product name
    # written down (``Evidence.family_word``) does not: every ticket of the org says it
    uncontested = all(r in ev.family_word for r in ranked[1:])
    if uncontested:
        # uncontested: no other repository has any evidence; then its mentions, version lines
        # and doc links add up, and one full mention reaches UNCONTESTED_MIN
        strong_weight += sum(
            i.weight for i in ev.items() if i.repo == top and i.kind in UNCONTESTED_KINDS
        )
    ask_reason: str | None = None
    if strong_weight < (UNCONTESTED_MIN if uncontested else STRONG_MIN) and not model:
        ask_reason = (
            "the only evidence is passing mentions (no link, label, title, import, command or "
            "traceback points at it)"
        )
    elif _strong_kinds(ev, top) == TITLE_ALONE_KINDS and not model:
        shippers = shippers_of(catalog, top)
        if shippers:
            return _title_names_a_shipped_tool(ticket, catalog, ev, ranked, shippers, scores)
        if second >= PROCEED_MIN:
            ask_reason = (
                "its name in the title is the only strong evidence (no link, label, import, "
                "command or traceback points at it; a title often names a tool another "
                "repository ships)"
            )
    elif not model and second >= PROCEED_MIN and _strong_kinds(ev, top) <= ONE_ORG_KINDS:
        ask_reason = (
            "its only strong evidence is its container image, Helm chart or title, and another "
            "repository has evidence too (an image or chart is often the base another one "
            "builds on)"
        )
    if ask_reason is None and not model:
        ask_reason = _unnamed_reason(ev, top)
    if ask_reason is None and not model:
        dependents = _dependents_in_ticket(catalog, ev, top)
        if dependents:
            ask_reason = (
                f"{', '.join(dependents)} {'depends' if len(dependents) == 1 else 'depend'} on "
                f"{top} and the ticket names {'it' if len(dependents) == 1 else 'them'} too: "
                "a plugin's or wrapper's ticket uses the tool it builds on"
            )
            ranked = [top, *dependents, *[r for r in ranked if r not in dependents and r != top]]
    if ask_reason is not None:
        return _ask(
            ticket,
            catalog,
            ev,
            ranked[:MAX_REPO_CANDIDATES],
            ask_reason,
            _signal(best.kind),
            score=scores[top],
        )
    strong = best.kind in _STRONG and not second
    return _proceed(
        ticket, ev, top, _signal(best.kind), "high" if strong else "medium", scores[top]
    )


UMBRELLA_SUBJECT_KINDS: Final = DECISIVE_KINDS | {"trace"}
"""What keeps an umbrella a rival of its sibling: it is pointed at (a link, a label, ``uses:``,
``org/name``) or the innermost traceback frame is inside it (where the ticket's failure is)."""


def _umbrella_as_context(ev: Evidence, repo: str, top: str) -> bool:
    """``repo`` is the umbrella of the leader ``top`` (``fastapi`` of
    ``uvicorn-gunicorn-fastapi-docker``, ``sentry`` of ``sentry-javascript``) and nothing
    makes it the subject (``UMBRELLA_SUBJECT_KINDS``): its evidence was counted as context
    beside its sibling (``UMBRELLA_FACTOR``), and context contests no lead."""
    name = umbrella_of(repo.rsplit("/", 1)[-1], top.rsplit("/", 1)[-1])
    return name and not ev.kinds(repo) & UMBRELLA_SUBJECT_KINDS


def own_terms(ev: Evidence, repo: str) -> set[str]:
    """The distinct vocabulary terms (``VOCABULARY_ONLY_KINDS``) the ticket uses of ``repo``
    that no other repository in the ticket was credited with too."""
    mine = {t for k in VOCABULARY_ONLY_KINDS for t in ev.terms.get((repo, k), set())}
    shared = {
        t
        for (r, k), terms in ev.terms.items()
        if r != repo and k in VOCABULARY_ONLY_KINDS
        for t in terms
    }
    return mine - shared


def names_repo(ev: Evidence, repo: str) -> bool:
    """Whether the ticket names ``repo`` (``NAMING_KINDS``) rather than only using vocabulary
    it defines."""
    return bool(ev.kinds(repo) & NAMING_KINDS)


def naming_class(guess: RepoGuess) -> str | None:
    """How a proceed's ticket names the chosen repository: ``name`` (its name, a former name or
    a pointer), ``package`` (only what it publishes: ``PACKAGE_NAME_KINDS``) or ``vocabulary``
    (neither: only terms it defines); ``None`` for an ask. A declaration is a ``name``."""
    if guess.decision != "proceed" or guess.repo is None:
        return None
    kinds = {i.kind for i in guess.evidence if i.repo == guess.repo}
    if not kinds or kinds & (NAMING_KINDS - PACKAGE_NAME_KINDS):
        return "name"
    return "package" if kinds & PACKAGE_NAME_KINDS else "vocabulary"


def _unnamed_reason(ev: Evidence, top: str) -> str | None:
    """Why a leader that the ticket never names may not proceed without a model: fewer than
    ``VOCABULARY_MIN_TERMS`` distinct terms only it defines; ``None`` when it is named or has
    them."""
    if names_repo(ev, top):
        return None
    terms = sorted(own_terms(ev, top))
    if len(terms) >= VOCABULARY_MIN_TERMS:
        return None
    used = ", ".join(f"`{t}`" for t in terms) or "no term of its own"
    return (
        f"the ticket never names {top} (no link, name, import, install or command): it only "
        f"uses {used}, vocabulary it defines, and one such term is no proof of the repository"
    )


def _known_as(repo: CatalogRepo) -> set[str]:
    """The names a tool is installed or run by: the repository's name, its distributions and
    its commands, lower-cased."""
    vocabulary = repo.vocabulary
    names = [repo.name, *vocabulary.distributions, *vocabulary.commands]
    return {n.lower() for n in names}


def shippers_of(catalog: Catalog, top: str) -> list[str]:
    """The other catalog repositories that ship, wrap or bundle ``top``'s tool
    (``RepoVocabulary.ships``), in catalog order."""
    leader = next((r for r in catalog.repositories if r.full_name == top), None)
    if leader is None:
        return []
    names = _known_as(leader)
    return [
        r.full_name
        for r in catalog.repositories
        if r.full_name != top and names.intersection(r.vocabulary.ships)
    ]


DEPENDENT_KINDS: Final = STRONG_KINDS
"""Evidence that makes a repository depending on the leader a contender: it is used, pointed
at or named in the title (a passing mention, a version line or a path is the environment)."""


def _dependents_in_ticket(catalog: Catalog, ev: Evidence, top: str) -> list[str]:
    """The catalog repositories that depend on ``top`` (ship or wrap it) and that the ticket
    also names, when nothing points at ``top`` itself (no link, label, ``uses:`` or
    ``org/name``): then ``top``'s imports, commands and name are what the dependent's users
    write too (``tox`` in a ``tox-uv`` ticket, ``celery`` in a ``pytest-celery`` one)."""
    if ev.kinds(top) & DECISIVE_KINDS:
        return []
    mutual = set(shipped_by(catalog, top))
    return [
        s for s in shippers_of(catalog, top) if s not in mutual and ev.kinds(s) & DEPENDENT_KINDS
    ]


def _dependencies_in_passing(
    catalog: Catalog, ev: Evidence, top: str, others: list[str]
) -> list[str]:
    """The other repositories the ticket only mentions in passing (``PASSING_KINDS``) that
    ``top`` depends on and that do not depend on it back: what the leader is built from, as a
    version table lists it ("autoflake uses pyflakes"). They are context, not rivals."""
    deps = set(shipped_by(catalog, top)) - set(shippers_of(catalog, top))
    return [r for r in others if r in deps and _passing_only(ev, [r])]


def shipped_by(catalog: Catalog, top: str) -> list[str]:
    """The other catalog repositories ``top`` ships, wraps or depends on."""
    leader = next((r for r in catalog.repositories if r.full_name == top), None)
    if leader is None:
        return []
    ships = set(leader.vocabulary.ships)
    return [
        r.full_name
        for r in catalog.repositories
        if r.full_name != top and _known_as(r).intersection(ships)
    ]


def _title_names_a_shipped_tool(
    ticket: Ticket,
    catalog: Catalog,
    ev: Evidence,
    ranked: list[str],
    shippers: list[str],
    scores: dict[str, float],
) -> RepoGuess:
    """A title that names a tool another repository ships or wraps, with nothing else behind
    it, is contested: the ticket is often the shipper's (``auditwheel`` in manylinux's
    images). A single shipper with evidence of its own in the ticket gets it; otherwise ask,
    naming the tool, the other repositories with evidence of their own, and its shippers.
    (A shipper with as much evidence as half the title's was already asked about as a
    comparable claim.)"""
    top = ranked[0]
    backed = [s for s in shippers if scores.get(s, 0.0) > 0.0]
    if len(backed) == 1:
        return _proceed(
            ticket, ev, backed[0], _signal(_deciding(ev, backed).kind), "medium", scores[backed[0]]
        )
    reason = (
        f"its title names {top}, a tool {', '.join(shippers[: MAX_REPO_CANDIDATES - 1])} "
        "ships or wraps, and nothing else in the ticket points at either"
    )
    best = _deciding(ev, [top])
    others = [r for r in ranked[1:] if scores[r] >= PROCEED_MIN]
    return _ask(
        ticket,
        catalog,
        ev,
        [top, *others, *shippers],
        reason,
        _signal(best.kind),
        score=scores[top],
    )


def _strong_kinds(ev: Evidence, repo: str) -> set[str]:
    return {i.kind for i in ev.items() if i.repo == repo and i.kind in STRONG_KINDS}


def _strong_weight(ev: Evidence, repo: str) -> float:
    return sum(i.weight for i in ev.items() if i.repo == repo and i.kind in STRONG_KINDS)


def _usage_weight(ev: Evidence, repo: str) -> float:
    return sum(i.weight for i in ev.items() if i.repo == repo and i.kind in USAGE_KINDS)


def _passing_only(ev: Evidence, repos: list[str]) -> bool:
    """Every piece of the others' evidence is a passing mention, a version line or a path."""
    return all(i.kind in PASSING_KINDS for i in ev.items() if i.repo in repos)


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
