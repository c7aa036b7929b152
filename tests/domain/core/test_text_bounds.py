"""Hostile text: every extractor over ticket, comment or model text does bounded, linear work.

Each extractor gets a megabyte of each worst shape (a unit repeated: runs of identifier, path,
URL, e-mail, token and fence characters, the inputs that made the old regexes rescan a run from
every position in it). Two assertions per shape, both with wide headroom, so a loaded machine
does not fail them and a quadratic regex cannot pass them:

* **a wall bound**: ``WALL_BOUND_S`` for the megabyte. Measured here at 0.02-0.6 s per MB
  (5x-150x headroom); before this change 40 kB of the same shapes took 1-3 s in seed extraction,
  citation scraping and scrubbing, which extrapolates to 10-40 minutes for a megabyte.
* **linearity**, where the megabyte takes long enough to measure (``MEASURABLE_S``): eight times
  the text may cost at most ``MAX_GROWTH`` times the time. Linear work grows 8x; quadratic 64x.
  The time here is the thread's CPU time, the work the extractor did: wall time also counts
  whatever else the machine runs (the suite's other xdist worker and its subprocesses), which
  once made an eighth of the text look 36x cheaper than the whole.

Capped extractors are also run with their cap lifted, so the regexes themselves are shown linear,
not just fed less.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from veranda_dagster.domain.context import seeds
from veranda_dagster.domain.core.bounds import (
    MAX_DETECT_TEXT_CHARS,
    MAX_EXTRACT_TEXT_CHARS,
    MAX_LINT_MESSAGE_CHARS,
)
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.domain.deliver import citations, review
from veranda_dagster.domain.intake import repo_detection, repo_evidence, ticket_signals
from veranda_dagster.domain.intake.catalog import Catalog, CatalogRepo, RepoVocabulary
from veranda_dagster.domain.intake.repo_confirmation import parse_confirmation
from veranda_dagster.domain.work.patch import parse_coverage_total
from veranda_dagster.domain.work.static_analysis import threshold
from veranda_dagster.sources.linear.ticket import KEY_IN_TEXT as LINEAR_KEY_IN_TEXT
from veranda_dagster.sources.slack.ticket import mentions, strip_mentions

MEGABYTE = 1_000_000
WALL_BOUND_S = 3.0
MEASURABLE_S = 0.25
"""Below this the megabyte is too fast for a quadratic to hide in (40 kB already took >1 s)."""
MAX_GROWTH = 24.0

WORST_SHAPES = (
    "a", "a.", "a/", "a-", "a_", "aB", "_a", "a@", "@a.", "a.a@", "a:", "a:1", "a(", "`a",
    "```{", "{", " \t", "http://a", "a://b:", "#L1-", "[R1", "<@U|", "repo: a", "TOKEN",
    "token=a", "sk-", "xoxb-", "eyJa.", "-----BEGIN PRIVATE KEY-----", "https://h/o/r/blob/m/",
    "TOTAL 1", "cognitive complexity 1 of func ",
)  # fmt: skip

CATALOG = Catalog(
    org="acme",
    repositories=[
        CatalogRepo(
            full_name=f"acme/service-{i}",
            aliases=[f"svc {i}", f"team{i} api"],
            vocabulary=RepoVocabulary(  # so every vocabulary reader runs, not only the names
                distributions=[f"acme-svc{i}"],
                imports=[f"acme_svc{i}"],
                commands=[f"svc{i}"],
                plugins=[f"svc{i}-plugin"],
                hooks=[f"svc{i}-hook"],
                actions=[f"acme/setup-svc{i}"],
                images=[f"acme/svc{i}"],
                charts=[f"svc{i}-chart"],
                symbols=[f"Client{i}", "a"],
                ships=[f"tool{i}"],
                definitions=[f"make_client{i}", "aB"],
                subcommands=["a", f"run{i}"],
                settings=[f"a_{i}", f"service_{i}_timeout", f"SERVICE_{i}_HOME"],
            ),
        )
        for i in range(30)
    ],
)


def _ticket(text: str) -> Ticket:
    return Ticket(id="ENG-1", source="linear", title="t", description=text)


EXTRACTORS: dict[str, Callable[[str], object]] = {
    "seeds": lambda t: seeds.extract_seeds([t]),
    "seed_candidates": lambda t: seeds.seed_candidates([t, t]),
    "keywords": lambda t: seeds.extract_keywords([t], ["seed"], 12),
    "source_links": ticket_signals.source_links,
    "traceback_frames": ticket_signals.traceback_frames,
    "citations": lambda t: citations.annotate(
        t, citations.resolve(t, [], lambda path: 10 if path.endswith(".py") else None)
    ),
    "repo_detection": lambda t: repo_detection.detect_repo(_ticket(t), CATALOG),
    "scrub": lambda t: scrub(t, ["known-secret-value"], environ={}),
    "slack_mentions": lambda t: (mentions({"text": t}, "U1"), strip_mentions(t, "U1")),
    "linear_keys": LINEAR_KEY_IN_TEXT.findall,
    "review_reply": review.parse_findings,
    "confirmation_reply": parse_confirmation,
    "lint_message": threshold,
    "coverage_output": parse_coverage_total,
}


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _seconds(fn: Callable[[str], object], text: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one call; the CPU time is this thread's, so other processes do
    not inflate it."""
    wall, cpu = time.perf_counter(), time.thread_time()
    fn(text)
    return time.perf_counter() - wall, time.thread_time() - cpu


def _shape_problems(
    spent: float, cpu: float, small: float | None, unit: str, size: int
) -> list[str]:
    problems = []
    if small is not None and cpu >= MEASURABLE_S:
        growth = cpu / max(small, 1e-3)
        if growth > MAX_GROWTH:
            problems.append(f"{unit!r}: 8x the text cost {growth:.0f}x the time")
    if spent > WALL_BOUND_S:
        problems.append(f"{unit!r}: {spent:.2f}s for {size:,} characters")
    return problems


def _problems(fn: Callable[[str], object], size: int = MEGABYTE) -> list[str]:
    """Best of three for the megabyte, and the growth from the best of three eighths: the
    minimum is the run least disturbed by whatever else the machine does. The two extra
    megabyte runs are made only when the first one fails: a minimum can only be lower, so a
    first run that passes passes as the best of three would."""
    problems = []
    for unit in WORST_SHAPES:
        big = _fill(unit, size)
        spent, cpu = _seconds(fn, big)
        small = None
        if cpu >= MEASURABLE_S:
            small = min(_seconds(fn, big[: size // 8])[1] for _ in range(3))
        found = _shape_problems(spent, cpu, small, unit, size)
        if found and max(spent, cpu) >= MEASURABLE_S:
            runs = [(spent, cpu), *(_seconds(fn, big) for _ in range(2))]
            spent, cpu = min(w for w, _ in runs), min(c for _, c in runs)
            found = _shape_problems(spent, cpu, small, unit, size)
        problems += found
    return problems


@pytest.mark.parametrize("name", sorted(EXTRACTORS))
def test_a_megabyte_of_each_worst_shape_costs_bounded_linear_work(name):
    assert _problems(EXTRACTORS[name]) == []


UNCAPPED = MEGABYTE // 4
"""Text for the cap-lifted runs: four times any cap, and big enough that a quadratic regex
(1-3 s at 40 kB before) would take minutes."""


@pytest.mark.parametrize("name", ["seeds", "keywords", "citations"])
def test_the_regexes_are_linear_with_the_cap_lifted(name, monkeypatch):
    monkeypatch.setattr(seeds, "MAX_EXTRACT_TEXT_CHARS", 10 * MEGABYTE)
    monkeypatch.setattr(citations, "MAX_EXTRACT_TEXT_CHARS", 10 * MEGABYTE)
    assert _problems(EXTRACTORS[name], UNCAPPED) == []


def test_repo_detection_regexes_are_linear_with_the_cap_lifted(monkeypatch):
    """Only the regex passes, over a one-repository catalog: the fuzzy pass compares every
    distinct word with every name, and every name is a search, so that cost is the cap's job."""
    monkeypatch.setattr(repo_evidence, "MAX_DETECT_TEXT_CHARS", 10 * MEGABYTE)
    monkeypatch.setattr(repo_evidence, "_misspellings", lambda text, catalog, matched, ev: None)
    one = Catalog(org="acme", repositories=CATALOG.repositories[:1])
    assert _problems(lambda t: repo_detection.detect_repo(_ticket(t), one), UNCAPPED) == []


def test_each_cap_is_what_the_extractor_reads():
    """Past the cap nothing is read: a seed, a citation and a declaration placed after it are
    not found, the same ones before it are."""
    pad = "x " * MAX_EXTRACT_TEXT_CHARS
    assert "parse_widget_config" in seeds.extract_seeds(["`parse_widget_config` " + pad])
    assert seeds.extract_seeds([pad + " `parse_widget_config`"]) == []
    assert citations.scrape_references("see app/x.py:3 " + pad)[0].raw == "app/x.py:3"
    assert citations.scrape_references(pad + " see app/x.py:3") == []
    near = _ticket("repo: acme/service-3\n" + "y " * MAX_DETECT_TEXT_CHARS)
    far = _ticket("y " * MAX_DETECT_TEXT_CHARS + "\nrepo: acme/service-3")
    assert repo_detection.detect_repo(near, CATALOG).repo == "acme/service-3"
    assert repo_detection.detect_repo(far, CATALOG).decision == "ask"
    message = "cognitive complexity 31 of func `f` is high (> 15)"
    assert threshold(message) == "31 > 15"
    assert threshold(" " * MAX_LINT_MESSAGE_CHARS + message) is None


def test_rewritten_reply_parsers_keep_their_meaning():
    fenced = 'Here:\n```json\n{"findings": ["use `x`"]}\n```\nand ```{"findings": []}```'
    assert review.parse_findings(fenced) == ["use `x`"]
    assert review.parse_findings("```json\n{ no close") is None  # was a ValueError
    assert review.parse_findings('{"findings": ["a"]} trailing {') == ["a"]
    reply = '```json\n {"repo": null, "needs_proto": false, "needs_migration": false, '
    reply += '"needs_visual_verification": true}\n  ```'
    assert parse_confirmation(reply) == {
        "repo": None,
        "needs_proto": False,
        "needs_migration": False,
        "needs_visual_verification": True,
    }
    assert parse_confirmation("```") is None
    assert parse_coverage_total("Name Stmts Miss Cover\nTOTAL   120   6   95%\n") == 95.0
    assert parse_coverage_total("TOTAL   1.5  12.25%  \n") == 12.25
