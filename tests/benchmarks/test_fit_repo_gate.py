"""``benchmarks/fit_repo_gate.py``: the fit is deterministic, the thresholds are chosen as its
docstring says, a held-out org's score never comes from its own labels, and the features read
what the evidence says."""

from __future__ import annotations

from typing import Any

from tests.benchmarks.scripts import load_script
from tests.domain.intake.small_catalogs import catalog
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.repo_evidence import gather_evidence

gate = load_script("fit_repo_gate")


def _case(
    org: str, n: int, x: float, *, right: bool, decision: str = "proceed", label: str = "proceed"
) -> Any:
    filed = f"{org}/a"
    leader = filed if right else f"{org}/b"
    return gate.Case(
        id=f"{org}#{n}",
        org=org,
        split="dev",
        label=label,
        filed_in=filed,
        leader=leader,
        decision=decision,
        decided=leader if decision == "proceed" else None,
        declared=False,
        features={"x": x, "y": float(n % 2)},
    )


def test_the_fit_is_deterministic_and_follows_the_labels() -> None:
    rows = [{"x": float(i), "y": float(i % 3)} for i in range(8)]
    labels = [i >= 4 for i in range(8)]
    first, second = gate.fit_logistic(rows, labels), gate.fit_logistic(rows, labels)
    assert first == second
    assert first.weights[first.names.index("x")] > 0
    assert first.p({"x": 7.0, "y": 1.0}) > 0.5 > first.p({"x": 0.0, "y": 0.0})
    flipped = gate.fit_logistic(rows, [not y for y in labels])  # the twin: labels reversed
    assert flipped.weights[flipped.names.index("x")] < 0


def test_stronger_regularisation_shrinks_the_weights() -> None:
    rows = [{"x": float(i)} for i in range(8)]
    labels = [i in (3, 5, 6, 7) for i in range(8)]
    loose, tight = gate.fit_logistic(rows, labels, 0.1), gate.fit_logistic(rows, labels, 100.0)
    assert abs(tight.weights[0]) < abs(loose.weights[0])


def test_a_held_out_org_is_scored_by_weights_fit_without_it() -> None:
    # in orgs a and b a high x means the leader is right; in org c the reverse. A score
    # fit with c's own labels would rank c's cases the c way; held out, they rank the a/b way.
    cases = [_case(o, i, float(i), right=i >= 3) for o in ("a", "b") for i in range(6)]
    cases += [_case("c", i, float(i), right=i < 3) for i in range(6)]
    scores = gate.looo_scores(cases, 1.0)
    assert scores["c#5"] > scores["c#0"]
    in_sample = gate.fit_cases(cases, 1.0)
    assert in_sample.p({"x": 5.0, "y": 1.0}) - in_sample.p({"x": 0.0, "y": 0.0}) < (
        scores["c#5"] - scores["c#0"]
    )


def test_the_veto_threshold_removes_wrong_proceeds_only_when_they_outnumber_right_ones() -> None:
    wrong_low = [
        (_case("a", 0, 0, right=False), 0.1),
        (_case("a", 1, 0, right=False), 0.2),
        (_case("a", 2, 0, right=True), 0.3),
        (_case("a", 3, 0, right=True), 0.9),
    ]
    assert 0.2 < gate.choose_veto(wrong_low) < 0.3
    right_low = [  # the twin: the lowest scores are right proceeds; a veto would cost more
        (_case("a", 0, 0, right=True), 0.1),
        (_case("a", 1, 0, right=False), 0.2),
        (_case("a", 2, 0, right=True), 0.3),
    ]
    assert gate.choose_veto(right_low) == 0.0


def test_the_converter_threshold_sits_above_every_ask_that_would_have_gone_wrong() -> None:
    asks = [
        (_case("a", 0, 0, right=True, decision="ask"), 0.95),
        (_case("a", 1, 0, right=False, decision="ask"), 0.8),
        (_case("a", 2, 0, right=True, decision="ask", label="ask"), 0.9),  # labelled ask
    ]
    tau = gate.choose_converter(asks)
    assert 0.9 < tau < 0.95
    assert gate.apply_gate(asks[0][0], 0.95, 0.0, tau) == ("proceed", "a/a")
    assert gate.apply_gate(asks[2][0], 0.9, 0.0, tau) == ("ask", None)


def test_the_features_read_the_leader_and_its_umbrella() -> None:
    cat = catalog(
        "acme",
        {
            "widget": {"imports": ["widget"]},
            "widget-extras": {"imports": ["widget_extras"], "ships": ["widget"]},
        },
    )
    ticket = Ticket(
        id="1",
        source="linear",
        title="crash",
        description="```\nfrom widget_extras import x\nimport widget\n```",
    )
    f = gate.gate_features(gather_evidence(ticket, cat), cat)
    assert f["lead_import"] > 0 and f["lead_passing"] == 0
    assert f["run_is_umbrella"] == 1.0 and f["lead_is_umbrella"] == 0.0
    assert f["run_is_dependency"] == 1.0 and f["run_is_dependent"] == 0.0
    twin = Ticket(id="2", source="linear", title="crash", description="import widget")
    g = gate.gate_features(gather_evidence(twin, cat), cat)
    assert g["run_is_umbrella"] == 0.0 and g["ratio"] == 0.0  # no runner-up: no relation
    empty = Ticket(id="3", source="linear", title="crash", description="nothing here")
    assert gate.gate_features(gather_evidence(empty, cat), cat) is None


def test_the_strength_is_chosen_inside_each_fold_from_the_grid() -> None:
    cases = [_case(o, i, float(i), right=i >= 3) for o in ("a", "b", "c") for i in range(6)]
    scores, taus, chosen = gate.nested_auto(cases)
    assert set(chosen) == {"a", "b", "c"} and set(chosen.values()) <= set(gate.L2_GRID)
    assert set(taus) == {"a", "b", "c"} and len(scores) == len(cases)
    assert gate.nested_auto(cases) == (scores, taus, chosen)  # deterministic


def test_the_compact_set_keeps_only_its_features() -> None:
    full = {name: 0.0 for name in (*gate.COMPACT_FEATURES, "lead_import", "lead_usage_all")}
    case = gate.Case("x#1", "x", "dev", "proceed", "x/a", "x/a", "ask", None, False, full)
    (compact,) = gate.project([case], gate.COMPACT_FEATURES)
    assert set(compact.features) == set(gate.COMPACT_FEATURES)
    (whole,) = gate.project([case], None)  # the twin: the full set splits usage by kind
    assert "lead_import" in whole.features and "lead_usage_all" not in whole.features
