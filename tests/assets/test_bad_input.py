"""Bad input gives a clear error naming what is wrong, and a failed run overwrites nothing."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from tests.assets.fakes import read_calls, resources
from tests.support.resources import tickets
from veranda_dagster.assets import PHASE_ASSETS, context_pack, repo_guess, ticket
from veranda_dagster.domain.core.errors import ConfigError, InputError, StoredValueError
from veranda_dagster.resources.domain_calls import DOMAIN_CALLS_KEY, DomainCalls
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sources.linear.resource import LinearResource
from veranda_dagster.sources.slack.resource import SlackResource
from veranda_dagster.storage import ValueStore, VerandaIOManager
from veranda_dagster.storage.types import VALUE_TYPES


@pytest.fixture
def instance():
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


def _dirs(tmp_path: Path) -> tuple[str, str]:
    calls, values = tmp_path / "calls", tmp_path / "values"
    calls.mkdir(exist_ok=True)
    return str(calls), str(values)


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    failures = [e for e in result.all_events if e.is_step_failure]
    assert failures, "expected a step failure"
    error = failures[0].step_failure_data.error
    parts = []
    while error is not None:
        parts.append(error.message)
        error = error.cause
    return "\n".join(parts)


def _retried(result: dg.ExecuteInProcessResult) -> bool:
    return any(e.event_type_value == "STEP_UP_FOR_RETRY" for e in result.all_events)


def _run(
    instance: dg.DagsterInstance, key: str, assets: list, res: dict, selection: str | None = None
) -> dg.ExecuteInProcessResult:
    """``assets`` (or only the ``selection`` of them) for ticket ``key``, as a new run; a
    failure is returned, not raised, so the test reads how it failed."""
    return dg.materialize(
        assets,
        selection=selection,
        partition_key=key,
        instance=instance,
        resources=res,
        raise_on_error=False,
    )


def _store_ticket(instance: dg.DagsterInstance, key: str, res: dict) -> None:
    instance.add_dynamic_partitions("tickets", [key])
    assert _run(instance, key, [ticket], res).success


def _guess_repo_alone(
    instance: dg.DagsterInstance, key: str, res: dict
) -> dg.ExecuteInProcessResult:
    """``repo_guess`` on its own, reading the stored ticket."""
    return _run(instance, key, [ticket, repo_guess], res, selection="repo_guess")


def test_unknown_partition_key_is_named(tmp_path, instance):
    calls, values = _dirs(tmp_path)
    with pytest.raises(Exception, match="ENG-404"):
        dg.materialize(
            [ticket], partition_key="ENG-404", instance=instance, resources=resources(calls, values)
        )
    assert read_calls(calls) == {}


def test_malformed_partition_key_fails_before_any_fetch(tmp_path, instance):
    calls, values = _dirs(tmp_path)
    instance.add_dynamic_partitions("tickets", ["not a ticket"])
    result = _run(instance, "not a ticket", [ticket], resources(calls, values))
    assert not result.success and not _retried(result)
    assert "'not a ticket' is not a ticket key" in _failure_message(result)
    assert read_calls(calls) == {}


def test_corrupt_stored_value_names_asset_and_partition(tmp_path, instance):
    calls, values = _dirs(tmp_path)
    res = resources(calls, values)
    _store_ticket(instance, "ENG-5", res)
    (Path(values) / "ticket" / "ENG-5.json").write_text('{"id": "ENG-5", "source": ')
    result = _guess_repo_alone(instance, "ENG-5", res)
    assert not result.success and not _retried(result)
    message = _failure_message(result)
    assert "asset 'ticket' partition 'ENG-5' is not valid JSON" in message
    assert read_calls(calls) == {"ticket": 1}  # repo_guess never ran on a corrupt input


def test_stored_value_of_the_wrong_shape_names_the_field(tmp_path):
    store = ValueStore(base_dir=str(tmp_path))
    target = tmp_path / "ticket" / "ENG-6.json"
    target.parent.mkdir()
    target.write_text('{"id": "ENG-6", "title": "x"}')
    with pytest.raises(StoredValueError, match=r"'ticket' partition 'ENG-6' .*field 'source'"):
        store.load("ticket", "ENG-6")
    with pytest.raises(
        StoredValueError, match="no stored value for asset 'patch' partition 'ENG-6'"
    ):
        store.load("patch", "ENG-6")


def _snapshot(values: str) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in Path(values).glob("*/ENG-9.json")}


def test_a_failed_run_overwrites_no_stored_value(tmp_path, instance):
    failing = "context_pack"  # the third phase: two phases before it succeed, six after never run
    calls, values = _dirs(tmp_path)
    instance.add_dynamic_partitions("tickets", ["ENG-9"])
    first = _run(instance, "ENG-9", PHASE_ASSETS, resources(calls, values, marker="v1"))
    assert first.success
    before = _snapshot(values)
    assert set(before) == set(VALUE_TYPES)

    again = tmp_path / "again"
    again.mkdir()
    res = resources(str(again), values, marker="v2", fail_once=failing)
    second = _run(instance, "ENG-9", PHASE_ASSETS, res)
    assert not second.success and not _retried(second)
    after = _snapshot(values)
    order = [a.key.path[-1] for a in PHASE_ASSETS]
    untouched = order[order.index(failing) :]
    for asset in untouched:
        assert after[asset] == before[asset], f"{asset} was overwritten by a failed run"
    assert b"v2" in after["ticket"]  # a phase that succeeded did store its new value


def test_missing_config_is_named_and_not_retried(tmp_path, instance):
    calls, values = _dirs(tmp_path)
    res = resources(calls, values)
    _store_ticket(instance, "ENG-10", res)
    workspace = WorkspaceResource(root=str(tmp_path))
    real = {**res, DOMAIN_CALLS_KEY: DomainCalls(), "workspace": workspace}
    assert real["catalog"].catalog_path == ""
    result = _guess_repo_alone(instance, "ENG-10", real)
    assert not result.success and not _retried(result)
    assert "ConfigError: catalog_path is empty: set VERANDA_CATALOG" in _failure_message(result)
    assert not (Path(values) / "repo_guess").exists()


def test_value_store_config_errors_name_the_setting(tmp_path):
    from veranda_dagster.domain.core.models import Ticket

    value = Ticket(id="ENG-1", source="linear", title="t")
    with pytest.raises(ConfigError, match="VERANDA_POSTGRES_URL"):
        ValueStore(store_kind="postgres").save("ticket", "ENG-1", value)
    with pytest.raises(ConfigError, match="kind 's3' is unknown"):
        ValueStore(store_kind="s3").save("ticket", "ENG-1", value)
    with pytest.raises(InputError, match="refusing to store Ticket, expected RepoGuess"):
        ValueStore(base_dir=str(tmp_path)).save("repo_guess", "ENG-1", value)
    assert not any(tmp_path.rglob("*.json"))


def test_a_question_stops_the_run_at_context_pack(tmp_path, instance):
    calls, values = _dirs(tmp_path)
    instance.add_dynamic_partitions("tickets", ["ENG-11"])
    result = _run(instance, "ENG-11", PHASE_ASSETS, resources(calls, values, ask=True))
    assert not result.success and not _retried(result)
    message = _failure_message(result)
    assert "AwaitingHumanError" in message and "acme/api or acme/web" in message
    assert "comment-1" in message
    assert read_calls(calls) == {"ticket": 1, "repo_guess": 1}
    guess = ValueStore(base_dir=values).load("repo_guess", "ENG-11")
    assert guess.decision == "ask" and guess.question_comment_id == "comment-1"
    outcome = result.asset_materializations_for_node("repo_guess")[0].metadata["outcome"]
    assert outcome.value == "ask"
    assert context_pack.key not in {m.asset_key for m in result.get_asset_materialization_events()}


def test_tokens_never_reach_metadata_or_logs(tmp_path, instance):
    calls, values = _dirs(tmp_path)
    instance.add_dynamic_partitions("tickets", ["ENG-12"])
    secret = "tok-DO-NOT-LEAK-0123456789"
    res = resources(
        calls,
        values,
        tickets=tickets(
            linear=LinearResource(api_key=secret), slack=SlackResource(bot_token=secret)
        ),
        forge=ForgeResource(token=secret),
    )
    store = ValueStore(base_dir=values)
    res["io_manager"] = VerandaIOManager(store=store)
    result = _run(instance, "ENG-12", PHASE_ASSETS[:3], res)
    assert result.success
    records = instance.all_logs(result.run_id)
    assert records and not any(secret in str(r) for r in records)
    assert not any(secret in p.read_text() for p in Path(values).rglob("*.json"))
