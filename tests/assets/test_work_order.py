"""The work order rides in the values: each phase reads its predecessor only, and a value
stored before orders were carried still loads and still works (re-execution of an old run)."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.assets import recon
from tests.assets.fakes import read_calls, resources
from veranda_dagster.assets import PHASE_ASSETS
from veranda_dagster.domain.core.errors import InputError, StoredValueError
from veranda_dagster.domain.core.models import (
    CarriesOrder,
    CIOutcome,
    CommandResult,
    ContextPack,
    Feedback,
    Patch,
    RedTests,
    RepoGuess,
    Ticket,
    WorkOrder,
)
from veranda_dagster.domain.core.work_order import order_from, packed
from veranda_dagster.storage import ValueStore

KEY = "ENG-12"
CARRIED = ("repo_guess", "context_pack", "red_tests", "patch", "pull_request", "review_rounds")
"""The values a later phase reads its order from (and ``ci_outcome``, which hands it on too)."""


@pytest.fixture
def job_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    paths = recon.job_env(tmp_path, monkeypatch)
    monkeypatch.setenv(recon.FAIL_ONCE_ENV, "patch")
    return paths


def _instance(home: Path) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home)))


def _strip_orders(store: ValueStore, assets: tuple[str, ...]) -> None:
    """Rewrite stored values as code before the work order wrote them: no ``order`` key."""
    for asset in assets:
        data = json.loads(store.load(asset, KEY).model_dump_json())
        assert data.pop("order") is not None, asset
        store.values().write(asset, KEY, json.dumps(data))


def test_every_carried_value_hands_on_the_ticket_and_the_pack(job_env):
    with _instance(job_env["home"]) as instance:
        instance.add_dynamic_partitions("tickets", [KEY])
        result = dg.materialize(
            PHASE_ASSETS,
            partition_key=KEY,
            instance=instance,
            resources=resources(str(job_env["calls"]), str(job_env["values"])),
        )
        assert result.success
    store = ValueStore(base_dir=str(job_env["values"]))
    ticket, pack = store.load("ticket", KEY), store.load("context_pack", KEY)
    assert isinstance(ticket, Ticket) and isinstance(pack, ContextPack)
    for asset in (*CARRIED, "ci_outcome"):
        value = store.load(asset, KEY)
        assert isinstance(value, CarriesOrder) and value.order is not None, asset
        assert value.order.ticket == ticket, asset
        expected = (
            None
            if asset in ("repo_guess", "context_pack")
            else pack.model_copy(update={"order": None})
        )
        assert value.order.pack == expected, asset
    assert isinstance(store.load("feedback", KEY), Feedback)


def test_an_old_run_whose_values_carry_no_order_re_executes_from_failure(job_env):
    """An old run failed at ``patch``; its stored values have no ``order`` (the shape before
    it existed). Re-executed from failure, ``patch`` rebuilds its order from the stored ticket
    and pack, and no earlier phase runs (nor bills) again."""
    job = dg.reconstructable(recon.old_run_ticket_job)
    store = ValueStore(base_dir=str(job_env["values"]))
    with _instance(job_env["home"]) as instance:
        instance.add_dynamic_partitions("tickets", [KEY])
        with dg.execute_job(job, instance, tags={"dagster/partition": KEY}) as first:
            assert [e.step_key for e in first.all_events if e.is_step_failure] == ["patch"]
        _strip_orders(store, ("repo_guess", "context_pack", "red_tests"))
        red = json.loads(store.values().read("red_tests", KEY))
        assert "order" not in red  # stored as the old code stored it
        options = dg.ReexecutionOptions.from_failure(first.run_id, instance)
        with dg.execute_job(
            job, instance, reexecution_options=options, tags={"dagster/partition": KEY}
        ) as second:
            assert second.success
    calls = read_calls(job_env["calls"])
    assert calls["patch"] == 2  # failed once, then ran
    assert all(calls[p] == 1 for p in ("ticket", "repo_guess", "context_pack", "red_tests"))
    ticket, pack = store.load("ticket", KEY), store.load("context_pack", KEY)
    patch = store.load("patch", KEY)
    assert isinstance(patch, Patch) and patch.order is not None
    assert patch.order.ticket == ticket
    assert patch.order.pack == pack  # the old pack: no order of its own to strip
    ci = store.load("ci_outcome", KEY)
    assert isinstance(ci, CIOutcome) and ci.order == patch.order


def _guess(order: WorkOrder | None = None) -> RepoGuess:
    return RepoGuess(
        ticket_id="ENG-1",
        repo="acme/api",
        confidence="high",
        signal="url",
        decision="proceed",
        order=order,
    )


TICKET = Ticket(id="ENG-1", source="linear", title="Fix retries")
PACK = ContextPack(
    ticket_id="ENG-1",
    repo="acme/api",
    clone_url="",
    default_branch="main",
    base_sha="a" * 40,
    branch="veranda/eng-1",
    order=WorkOrder(ticket=TICKET),
)


def _nothing_stored(asset: str) -> Ticket:
    raise AssertionError(f"read the stored {asset} though the value carries the order")


def test_an_order_starts_at_the_ticket_and_the_pack_hands_itself_on():
    assert order_from(TICKET, _nothing_stored) == WorkOrder(ticket=TICKET)
    handed = order_from(PACK, _nothing_stored)
    assert handed.ticket == TICKET and handed.pack == PACK.model_copy(update={"order": None})
    assert order_from(_guess(WorkOrder(ticket=TICKET)), _nothing_stored).ticket == TICKET


def test_an_old_value_reads_the_stored_ticket_and_a_wrong_stored_shape_is_named():
    assert order_from(_guess(), {"ticket": TICKET}.__getitem__) == WorkOrder(ticket=TICKET)
    with pytest.raises(StoredValueError, match="stored a RepoGuess, not Ticket"):
        order_from(_guess(), lambda asset: _guess())
    with pytest.raises(InputError, match="carries no work order"):
        order_from(Feedback(ticket_id="ENG-1"), _nothing_stored)
    with pytest.raises(InputError, match="ENG-1: the work order holds no context pack"):
        packed(WorkOrder(ticket=TICKET))


def test_a_call_that_works_from_an_order_names_one_predecessor():
    from veranda_dagster.assets._policy import PHASES
    from veranda_dagster.assets._shell import phase_asset

    def patch(order: WorkOrder, red_tests: RedTests, ticket: Ticket) -> Patch:
        raise AssertionError("never called")

    declare = phase_asset(PHASES["patch"], Patch, "d", outcome=str, details=dict)
    with pytest.raises(TypeError, match=r"names one upstream value, not \['red_tests', 'ticket'\]"):
        declare(patch)


def test_an_old_value_without_its_stored_ticket_fails_typed_before_any_call(tmp_path):
    """A predecessor stored before orders, whose partition's ticket is gone: the step fails
    with the store's typed error, naming the asset and partition."""
    from types import SimpleNamespace

    from veranda_dagster.assets._policy import PHASES
    from veranda_dagster.assets._shell import work_order

    store = ValueStore(base_dir=str(tmp_path))
    old = RedTests(
        ticket_id="ENG-1",
        branch="veranda/eng-1",
        base_sha="a" * 40,
        commit_sha="b" * 40,
        test_files=[],
        base_run=CommandResult(command="pytest", exit_code=1),
        attempts=1,
    )
    context = SimpleNamespace(partition_key="ENG-1")
    with pytest.raises(dg.Failure) as failed:
        work_order(context, PHASES["patch"], store, {"red_tests": old})  # type: ignore[arg-type]
    assert failed.value.metadata["error"].value == "StoredValueError"
    assert "'ticket'" in failed.value.description and "ENG-1" in failed.value.description
