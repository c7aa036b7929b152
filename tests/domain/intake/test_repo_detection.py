"""Repository detection: the labelled table, the catalog loader, and the cheap-tier pass."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from veranda_dagster.domain.core.agent import AgentReply, AgentRequest
from veranda_dagster.domain.core.bounds import MAX_GROUP_DEPTH, MAX_REPO_CANDIDATES
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import ModelCall, RepoEvidence, RepoGuess, Ticket
from veranda_dagster.domain.intake.repo_detection import (
    Catalog,
    confirm_repo_guess,
    deciding_kind,
    detect_repo,
    load_catalog,
    naming_class,
    refresh_catalog_from_forge,
)
from veranda_dagster.vendors.port import VendorError

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "tests/fixtures/repo_detection/tickets.json"
CATALOG = load_catalog(TABLE.parent / "catalog.json")
ROWS = json.loads(TABLE.read_text())["rows"]


def _benchmark():
    spec = importlib.util.spec_from_file_location("bench", ROOT / "benchmarks/repo_detection.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_is_big_enough_and_covers_every_signal_and_both_decisions():
    assert len(ROWS) >= 40
    signals = {r["expect"].get("signal") for r in ROWS if r["expect"]["decision"] == "proceed"}
    assert {"declaration", "url", "label", "service", "prose", "former_name", "fork"} <= signals
    asks = [r for r in ROWS if r["expect"]["decision"] == "ask"]
    assert len(asks) >= 15 and any(r["name"].startswith("prose_") for r in asks)


@pytest.mark.parametrize("row", ROWS, ids=[r["name"] for r in ROWS])
def test_every_row_matches_its_expectation(row):
    bench = _benchmark()
    guess = detect_repo(Ticket.model_validate(row["ticket"]), CATALOG)
    got = guess.model_dump()
    assert bench.row_mismatches(row["expect"], got) == [], row["why"]
    if guess.decision == "ask":
        assert guess.question and all(c in guess.question for c in guess.candidates)
        assert len(guess.candidates) <= MAX_REPO_CANDIDATES
    else:
        assert guess.confidence in ("high", "medium") and guess.question is None
        assert guess.evidence and guess.score


def test_benchmark_precision_of_proceed_is_perfect_and_ask_rate_is_reported():
    report = _benchmark().evaluate(TABLE)
    assert report["proceed_precision"] == 1.0
    assert report["mismatches"] == {}
    assert 0.0 < report["ask_rate"] < 1.0


def test_benchmark_counts_a_wrong_proceed_against_precision(tmp_path):
    rows = [dict(r) for r in ROWS if r["name"] == "decl_full"]
    rows[0] = {**rows[0], "expect": {"decision": "proceed", "repo": "acme/ledger"}}
    table = tmp_path / "tickets.json"
    table.write_text(json.dumps({"catalog": "catalog.json", "rows": rows}))
    (tmp_path / "catalog.json").write_text((TABLE.parent / "catalog.json").read_text())
    report = _benchmark().evaluate(table)
    assert report["proceed_precision"] == 0.0 and "decl_full" in report["mismatches"]


def _proceed(repo: str, kind: str) -> RepoGuess:
    item = RepoEvidence(repo=repo, kind=kind, weight=0.5, text="x")
    return RepoGuess(
        ticket_id="T",
        repo=repo,
        confidence="medium",
        signal="vocabulary",
        decision="proceed",
        evidence=[item],
    )


def test_the_evidence_kind_table_counts_wrongs_per_kind_and_leaves_the_check_split_out():
    """``evidence_kinds``: per deciding kind, proceeds, wrongs, orgs and the precision with the
    largest org left out; a hidden split's proceeds are never counted (nor shown)."""
    cases = [
        {"id": "a", "org": "o1", "split": "dev", "label": "proceed", "filed_in": "o1/x"},
        {"id": "b", "org": "o1", "split": "dev", "label": "proceed", "filed_in": "o1/x"},
        {"id": "c", "org": "o2", "split": "dev", "label": "ask", "filed_in": "o2/y"},
        {"id": "d", "org": "o3", "split": "wide-check", "label": "proceed", "filed_in": "o3/z"},
    ]
    decisions = {
        "a": _proceed("o1/x", "import"),
        "b": _proceed("o1/x", "import"),
        "c": _proceed("o2/other", "import"),  # wrong
        "d": _proceed("o3/wrong", "title"),  # hidden split: never counted
    }
    kinds = _benchmark().evidence_kinds({"cases": cases}, decisions)
    assert [k["kind"] for k in kinds] == ["import"]
    row = kinds[0]
    assert (row["proceeds"], row["wrong"], row["orgs"], row["orgs_wrong"]) == (3, 1, 2, 1)
    assert (row["largest_org"], row["without_largest"]) == ("o1", "0 of 1")
    assert 0.0 < row["wilson_low"] < row["precision"] < 1.0


def test_the_naming_class_table_reports_the_worst_precision_with_one_org_left_out():
    """``evidence_kinds(key=naming_class)``: proceeds by how the ticket names the chosen
    repository; leaving out the org whose proceeds were all right gives the worst estimate."""
    cases = [
        {"id": "a", "org": "o1", "split": "dev", "label": "proceed", "filed_in": "o1/x"},
        {"id": "b", "org": "o2", "split": "dev", "label": "proceed", "filed_in": "o2/x"},
        {"id": "c", "org": "o2", "split": "dev", "label": "proceed", "filed_in": "o2/y"},
        {"id": "d", "org": "o3", "split": "dev", "label": "proceed", "filed_in": "o3/x"},
        {"id": "e", "org": "o4", "split": "wide-check", "label": "proceed", "filed_in": "o4/z"},
    ]
    decisions = {
        "a": _proceed("o1/x", "import"),
        "b": _proceed("o2/x", "command"),
        "c": _proceed("o2/x", "usage"),  # wrong
        "d": _proceed("o3/x", "api"),
        "e": _proceed("o4/wrong", "api"),  # hidden split: never counted
    }
    bench = _benchmark()
    rows = {
        r["kind"]: r for r in bench.evidence_kinds({"cases": cases}, decisions, key=naming_class)
    }
    assert set(rows) == {"package", "vocabulary"}
    package = rows["package"]
    assert (package["proceeds"], package["wrong"]) == (3, 1)
    assert (package["worst_one_org_out"], package["worst_org"]) == (0.5, "o1")
    assert (rows["vocabulary"]["proceeds"], rows["vocabulary"]["wrong"]) == (1, 0)


def test_the_naming_class_of_a_proceed():
    named = _proceed("o/x", "import")
    link = RepoEvidence(repo="o/x", kind="former_name:url_code", weight=0.8, text="l")
    other = RepoEvidence(repo="o/y", kind="title", weight=0.6, text="t")
    with_link = named.model_copy(update={"evidence": [*named.evidence, link, other]})
    assert naming_class(named) == "package"
    assert naming_class(with_link) == "name"
    assert naming_class(_proceed("o/x", "api")) == "vocabulary"
    assert naming_class(named.model_copy(update={"evidence": [other]})) == "name"  # declared
    assert naming_class(named.model_copy(update={"decision": "ask"})) is None


def test_the_deciding_kind_is_the_highest_priority_evidence_of_the_chosen_repository():
    guess = _proceed("o/x", "prose")
    link = RepoEvidence(repo="o/x", kind="former_name:url_code", weight=0.8, text="l")
    other = RepoEvidence(repo="o/y", kind="declaration", weight=1.0, text="d")
    both = guess.model_copy(update={"evidence": [*guess.evidence, link, other]})
    assert (deciding_kind(guess), deciding_kind(both)) == ("prose", "url_code")
    assert deciding_kind(guess.model_copy(update={"decision": "ask"})) is None


# --- catalog ---------------------------------------------------------------------------------


def test_catalog_loads_from_yaml_too(tmp_path):
    path = tmp_path / "catalog.yaml"
    path.write_text("org: acme\nrepositories:\n  - full_name: acme/api\n    aliases: [monolith]\n")
    catalog = load_catalog(path)
    assert catalog.resolve("monolith")[0].full_name == "acme/api"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{not json", "not valid JSON"),
        ('{"org": "acme"}', "repositories"),
        ('{"org": "acme", "repositories": [{"full_name": "api"}]}', "full_name"),
        ('{"org": "acme", "repositories": [{"full_name": "globex/api"}]}', "not in org"),
    ],
)
def test_bad_catalog_is_an_input_error_naming_the_problem(tmp_path, text, match):
    path = tmp_path / "catalog.json"
    path.write_text(text)
    with pytest.raises(InputError, match=match):
        load_catalog(path)
    with pytest.raises(InputError, match="cannot read"):
        load_catalog(tmp_path / "missing.json")


def test_refresh_from_the_forge_keeps_aliases_adds_new_and_drops_archived():
    listing = [
        {"full_name": "acme/billing-api", "description": "from github"},
        {"full_name": "acme/new-service", "description": "fresh"},
        {"full_name": "acme/ledger", "archived": True},
    ]
    small = Catalog.model_validate(
        {
            "org": "acme",
            "repositories": [
                {"full_name": "acme/billing-api", "description": "ours", "aliases": ["payments"]},
                {"full_name": "acme/ledger"},
            ],
        }
    )
    refreshed = refresh_catalog_from_forge(small, lambda org: listing if org == "acme" else [])
    assert refreshed.names() == ["acme/billing-api", "acme/new-service"]
    assert refreshed.repositories[0].aliases == ["payments"]
    assert refreshed.repositories[0].description == "ours"


# --- cheap-tier confirmation -----------------------------------------------------------------


class FakeAgent:
    def __init__(self, text: str | Exception) -> None:
        self.text = text
        self.requests: list[AgentRequest] = []

    def run(self, request: AgentRequest) -> AgentReply:
        self.requests.append(request)
        if isinstance(self.text, Exception):
            raise self.text
        call = ModelCall(role=request.role, vendor="fake", mode="cli", tier=request.tier, usd=0.001)
        return AgentReply(text=self.text, call=call)

    def instruction_files(self) -> list[str]:
        return []

    def mcp_formats(self) -> list[str]:
        return []


def _row_ticket(name: str) -> Ticket:
    return Ticket.model_validate(next(r["ticket"] for r in ROWS if r["name"] == name))


def _reply(repo, proto=False, migration=False, visual=False) -> str:
    return json.dumps(
        {
            "repo": repo,
            "needs_proto": proto,
            "needs_migration": migration,
            "needs_visual_verification": visual,
        }
    )


def test_model_confirms_and_returns_the_work_needs(tmp_path):
    ticket = _row_ticket("label_prefixed")
    guess = detect_repo(ticket, CATALOG)
    agent = FakeAgent("```json\n" + _reply("acme/auth-service", migration=True) + "\n```")
    out = confirm_repo_guess(guess, ticket, CATALOG, agent, str(tmp_path))
    assert out.model_verdict == "confirmed" and out.repo == "acme/auth-service"
    assert out.needs_migration and not out.needs_proto and len(out.calls) == 1
    (request,) = agent.requests
    assert request.role == "repo_confirmer" and request.tier == "cheap"
    assert "acme/auth-service" in request.prompt and ticket.title in request.prompt


def test_model_may_correct_a_label_guess_to_a_catalog_repo(tmp_path):
    ticket = _row_ticket("label_exact_name")
    guess = detect_repo(ticket, CATALOG)
    out = confirm_repo_guess(guess, ticket, CATALOG, FakeAgent(_reply("acme/infra")), str(tmp_path))
    assert out.model_verdict == "corrected" and out.repo == "acme/infra"
    assert out.decision == "proceed" and out.candidates[0] == "acme/infra"


@pytest.mark.parametrize("name", ["decl_full", "url_pr_in_text"])
def test_model_cannot_override_a_declaration_or_url(tmp_path, name):
    ticket = _row_ticket(name)
    guess = detect_repo(ticket, CATALOG)
    agent = FakeAgent(_reply("acme/ledger", visual=True))
    out = confirm_repo_guess(guess, ticket, CATALOG, agent, str(tmp_path))
    assert out.repo == guess.repo and out.model_verdict == "disputed"
    assert out.needs_visual_verification and "acme/ledger" in out.notes[-1]


@pytest.mark.parametrize(
    "text",
    [
        "sure, it's the auth service",
        '{"repo": "acme/auth-service"}',
        _reply(7),
        "[1, 2]",
        json.dumps(
            {
                "repo": "acme/auth-service",
                "needs_proto": "yes",
                "needs_migration": False,
                "needs_visual_verification": False,
            }
        ),
    ],
)
def test_garbage_reply_keeps_the_guess_and_says_so(tmp_path, text):
    ticket = _row_ticket("label_prefixed")
    guess = detect_repo(ticket, CATALOG)
    out = confirm_repo_guess(guess, ticket, CATALOG, FakeAgent(text), str(tmp_path))
    assert out.repo == guess.repo and out.model_verdict == "skipped"
    assert len(out.calls) == 1 and "not the requested JSON" in out.notes[-1]


def test_reply_naming_a_repo_outside_the_catalog_is_not_used(tmp_path):
    ticket = _row_ticket("label_prefixed")
    guess = detect_repo(ticket, CATALOG)
    out = confirm_repo_guess(guess, ticket, CATALOG, FakeAgent(_reply("globex/x")), str(tmp_path))
    assert out.repo == "acme/auth-service" and out.model_verdict == "skipped"
    assert "not a catalog repository" in out.notes[-1]


def test_vendor_failure_keeps_the_guess_and_asking_guesses_never_call_the_model(tmp_path):
    ticket = _row_ticket("label_prefixed")
    guess = detect_repo(ticket, CATALOG)
    failing = FakeAgent(VendorError("quota", "weekly limit reached"))
    out = confirm_repo_guess(guess, ticket, CATALOG, failing, str(tmp_path))
    assert out.repo == guess.repo and out.calls == [] and "unavailable" in out.notes[-1]
    asking = detect_repo(_row_ticket("prose_two"), CATALOG)
    agent = FakeAgent(_reply("acme/api-gateway"))
    assert confirm_repo_guess(asking, _row_ticket("prose_two"), CATALOG, agent, "/tmp") == asking
    assert agent.requests == []


def test_question_lists_at_most_the_bounded_number_of_candidates():
    names = "billing, dashboard, gatekeeper, mailman, atlas, terraform, moneybags"
    ticket = Ticket(id="ENG-1", source="linear", title=f"Rename the env var in {names}")
    guess = detect_repo(ticket, CATALOG)
    assert guess.decision == "ask" and len(guess.candidates) == MAX_REPO_CANDIDATES


def test_model_may_turn_a_medium_guess_into_a_question(tmp_path):
    ticket = _row_ticket("prose_name")
    guess = detect_repo(ticket, CATALOG)
    assert guess.confidence == "medium" and guess.decision == "proceed"
    agent = FakeAgent(_reply(None))
    out = confirm_repo_guess(guess, ticket, CATALOG, agent, str(tmp_path))
    assert out.decision == "ask" and out.model_verdict == "disputed"
    assert "acme/notifier" in out.question and "medium confidence" in out.question
    assert (
        "Evidence:" in agent.requests[0].prompt and "medium confidence" in agent.requests[0].prompt
    )


def test_model_may_correct_a_medium_former_name_guess_but_not_a_high_link(tmp_path):
    ticket = _row_ticket("url_stale_renamed")
    guess = detect_repo(ticket, CATALOG)
    out = confirm_repo_guess(
        guess, ticket, CATALOG, FakeAgent(_reply("acme/ledger")), str(tmp_path)
    )
    assert out.model_verdict == "corrected" and out.repo == "acme/ledger"
    high = detect_repo(_row_ticket("url_blob"), CATALOG)
    kept = confirm_repo_guess(high, ticket, CATALOG, FakeAgent(_reply(None)), str(tmp_path))
    assert kept.decision == "proceed" and kept.repo == high.repo


def test_a_catalog_holds_subgroup_paths_and_resolves_them_whole_or_inside_the_org():
    from veranda_dagster.domain.intake.catalog import parse_catalog

    catalog = parse_catalog(
        {
            "org": "acme",
            "repositories": [
                {"full_name": "acme/payments/ledger", "aliases": ["books"]},
                {"full_name": "acme/billing"},
                {"full_name": "acme/platform/infra/deploy"},
            ],
        }
    )
    ledger = catalog.by_full_name("acme/payments/ledger")
    assert ledger and ledger.name == "ledger" and ledger.namespace == "acme/payments"
    assert catalog.resolve("acme/payments/ledger") == [ledger]
    assert catalog.resolve("payments/ledger") == [ledger]  # a path inside the org
    assert catalog.resolve("ledger") == [ledger] and catalog.resolve("books") == [ledger]
    assert [r.full_name for r in catalog.resolve("platform/infra/deploy")] == [
        "acme/platform/infra/deploy"
    ]
    with pytest.raises(InputError, match="not in org"):
        parse_catalog({"org": "acme", "repositories": [{"full_name": "acmex/payments/ledger"}]})
    too_deep = "acme/" + "g/" * (MAX_GROUP_DEPTH + 1) + "name"  # one group past the bound
    with pytest.raises(InputError, match="org/group/name"):
        parse_catalog({"org": "acme", "repositories": [{"full_name": too_deep}]})
    at_bound = "acme/" + "g/" * MAX_GROUP_DEPTH + "name"
    assert parse_catalog({"org": "acme", "repositories": [{"full_name": at_bound}]})


def test_a_gitlab_link_into_a_subgroup_project_is_code_evidence_for_it():
    from veranda_dagster.domain.intake.catalog import parse_catalog

    catalog = parse_catalog(
        {
            "org": "acme",
            "repositories": [{"full_name": "acme/payments/ledger"}, {"full_name": "acme/billing"}],
        }
    )
    ticket = Ticket(
        id="ENG-1",
        source="linear",
        title="Rounding is off",
        description="See https://gitlab.com/acme/payments/ledger/-/blob/main/app/round.py#L10",
    )
    guess = detect_repo(ticket, catalog)
    assert guess.repo == "acme/payments/ledger" and guess.decision == "proceed"
