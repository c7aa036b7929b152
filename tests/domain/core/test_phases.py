"""The phase registry is the one home of a phase: every table that names phases is derived
from it, every piece a phase needs is declared, and a phase missing one fails here."""

from __future__ import annotations

import importlib
import pkgutil
from typing import get_args

import pytest
from pydantic import BaseModel

from veranda_dagster.domain import deliver, work
from veranda_dagster.domain.core import phases
from veranda_dagster.domain.core.phases import PHASES, MetricHook, Stage
from veranda_dagster.domain.work.turn import phase_commits

NAMES = list(PHASES)


@pytest.mark.parametrize("name", NAMES)
def test_every_phase_declares_every_piece(name: str) -> None:
    spec = PHASES[name]
    assert spec.name == name
    assert isinstance(spec.value_type, type) and issubclass(spec.value_type, BaseModel)
    assert spec.stage in get_args(Stage)
    assert spec.timeout_s > 0 and spec.retry.max_retries >= 1 and spec.retry.delay_s > 0
    assert spec.kinds, f"{name} names no kinds"
    assert spec.metadata, f"{name} reports no phase-specific metadata"
    shared = {*phases.SHARED_METADATA, *phases.STORAGE_METADATA}
    assert not set(spec.metadata) & shared, "a shared key redeclared"
    assert spec.metric is None or spec.metric in get_args(MetricHook)


def test_model_phases_retry_once_slowly_and_api_phases_quickly() -> None:
    model = [p for p in PHASES.values() if p.calls_model]
    api = [p for p in PHASES.values() if not p.calls_model]
    assert {p.retry.max_retries for p in model} == {1}
    assert max(p.retry.delay_s for p in api) < min(p.retry.delay_s for p in model)
    # which retry a phase gets follows from whether it calls a model, for any phase added
    assert all(p.retry == phases.API_RETRY for p in api)
    assert not any(p.retry == phases.API_RETRY for p in model)


def test_context_pack_calls_no_model_so_gets_no_model_retry() -> None:
    from veranda_dagster.assets._policy import PHASES as POLICIES

    assert not PHASES["context_pack"].calls_model
    assert PHASES["context_pack"].retry == phases.API_RETRY
    assert POLICIES["context_pack"].retry.max_retries == phases.API_RETRY.max_retries
    assert POLICIES["context_pack"].tags["veranda/model"] == "false"


def test_every_table_that_names_phases_is_the_registry() -> None:
    from veranda_dagster.assets import PHASE_ASSETS
    from veranda_dagster.assets._policy import PHASES as POLICIES
    from veranda_dagster.assets._policy import PIPELINE_GROUP
    from veranda_dagster.observability import metrics
    from veranda_dagster.sim.summary import ASSETS
    from veranda_dagster.storage.types import VALUE_TYPES

    assert list(POLICIES) == NAMES
    assert {n: p.value_type for n, p in PHASES.items()} == VALUE_TYPES
    assert list(metrics.PHASES) == NAMES
    assert list(ASSETS) == NAMES
    assert [a.key.path[-1] for a in PHASE_ASSETS] == NAMES
    for asset in PHASE_ASSETS:
        policy = POLICIES[asset.key.path[-1]]
        assert asset.op.retry_policy == policy.retry
        assert asset.group_names_by_key[asset.key] == PIPELINE_GROUP  # one group: the chain
        assert (
            asset.specs_by_key[asset.key].tags["veranda/stage"] == PHASES[asset.key.path[-1]].stage
        )


def test_every_metric_hook_is_implemented_live_and_replayed_from_declared_keys() -> None:
    from veranda_dagster.observability.materializations import REPLAY_HOOKS, REPLAY_READS
    from veranda_dagster.observability.metrics import LIVE_HOOKS

    hooks = set(get_args(MetricHook))
    assert set(LIVE_HOOKS) == set(REPLAY_HOOKS) == set(REPLAY_READS) == hooks
    for spec in PHASES.values():
        if spec.metric is not None:
            missing = set(REPLAY_READS[spec.metric]) - spec.metadata_keys
            assert not missing, f"{spec.name}'s {spec.metric} replay reads undeclared {missing}"
    assert {p.metric for p in PHASES.values() if p.metric} == hooks


def _work_modules() -> list[str]:
    return [
        f"{package.__name__}.{m.name}"
        for package in (work, deliver)
        for m in pkgutil.iter_modules(package.__path__)
        if not m.name.startswith("_")
    ]


def test_every_work_module_that_commits_names_a_registered_phase() -> None:
    named = {}
    for mod in _work_modules():
        module = importlib.import_module(mod)
        if hasattr(module, "PHASE"):
            named[mod.rsplit(".", 1)[1]] = module.PHASE
    assert set(named.values()) <= set(PHASES), named
    assert named["ci"] == "ci_outcome" and named["review"] == "review_rounds"


def test_trailers_count_the_phase_name_and_its_old_names_only() -> None:
    log = (
        "fix(ENG-1): repair CI\n\nVeranda-Phase: ci\n\n"  # pushed before the names were unified
        "fix(ENG-1): repair CI\n\nVeranda-Phase: ci_outcome\n\n"
        "review(ENG-1): round 1\n\nVeranda-Phase: review\n"
    )
    assert phase_commits(log, "ci_outcome") == 2
    assert phase_commits(log, "review_rounds") == 1
    assert phase_commits(log, "patch") == 0
    assert phase_commits("Veranda-Phase: red_tests_extra\n", "red_tests") == 0
    with pytest.raises(KeyError):
        phase_commits(log, "ci")  # an old trailer is not a phase name
