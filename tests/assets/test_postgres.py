"""On a real PostgreSQL: run events (dagster-postgres) and asset values (the IO manager) land
in the database and survive a new ``DagsterInstance`` and a new store object."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import dagster as dg
import psycopg2
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.assets.fakes import read_calls, resources
from veranda_dagster.assets import PHASE_ASSETS
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.storage import ValueStore, VerandaIOManager
from veranda_dagster.storage.value_stores import TABLE, PostgresValues, libpq_url

ROOT = Path(__file__).resolve().parents[2]
KEY = "ENG-21"

pytestmark = pytest.mark.postgres


def _rows(url: str, sql: str, *args: object) -> list[tuple]:
    conn = psycopg2.connect(libpq_url(url))
    try:
        with conn, conn.cursor() as cur:
            cur.execute(sql, args)
            return cur.fetchall()
    finally:
        conn.close()


def test_run_events_and_values_survive_a_new_instance(tmp_path, postgres_url, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.postgres.yaml", home / "dagster.yaml")  # the shipped variant
    monkeypatch.setenv("VERANDA_POSTGRES_URL", postgres_url)
    calls = tmp_path / "calls"
    calls.mkdir()
    store = ValueStore(store_kind="postgres", postgres_url=postgres_url)
    res = {**resources(str(calls), str(tmp_path / "unused"))}
    res["value_store"] = store
    res["io_manager"] = VerandaIOManager(store=store)

    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        instance.add_dynamic_partitions("tickets", [KEY])
        result = dg.materialize(
            PHASE_ASSETS[:3], partition_key=KEY, instance=instance, resources=res
        )
        assert result.success
        run_id = result.run_id

    assert not any(tmp_path.rglob("*.json"))  # nothing went to a filesystem store
    assert _rows(postgres_url, "SELECT status FROM runs WHERE run_id = %s", run_id) == [
        ("SUCCESS",)
    ]
    stored = _rows(postgres_url, f"SELECT asset FROM {TABLE} WHERE partition = %s", KEY)
    assert sorted(a for (a,) in stored) == ["context_pack", "repo_guess", "ticket"]

    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as fresh:
        run = fresh.get_run_by_id(run_id)
        assert run is not None and run.is_success
        assert fresh.get_dynamic_partitions("tickets") == [KEY]
        event = fresh.get_latest_materialization_event(dg.AssetKey("context_pack"))
        assert event is not None and event.run_id == run_id
        assert event.asset_materialization.metadata["outcome"].value == "packed"
        assert event.asset_materialization.metadata["stored_at"].value == TABLE
        assert len(fresh.all_logs(run_id)) > 20

        # A downstream re-run with a new store object loads upstream values from Postgres.
        again = ValueStore(store_kind="postgres", postgres_url=postgres_url)
        res2 = {**res, "value_store": again, "io_manager": VerandaIOManager(store=again)}
        rerun = dg.materialize(
            PHASE_ASSETS, selection="red_tests", partition_key=KEY, instance=fresh, resources=res2
        )
        assert rerun.success
    assert read_calls(calls) == {"ticket": 1, "repo_guess": 1, "context_pack": 1, "red_tests": 1}
    red = _rows(postgres_url, f"SELECT value->>'branch' FROM {TABLE} WHERE asset = 'red_tests'")
    assert red == [("veranda/eng-21",)]


def test_postgres_store_upserts_and_reports_corruption(postgres_url):
    values = PostgresValues(postgres_url)
    store = ValueStore(store_kind="postgres", postgres_url=postgres_url)
    store.save("ticket", "ENG-22", Ticket(id="ENG-22", source="linear", title="one"))
    store.save("ticket", "ENG-22", Ticket(id="ENG-22", source="linear", title="two"))
    assert store.load("ticket", "ENG-22").title == "two"
    count = _rows(postgres_url, f"SELECT count(*) FROM {TABLE} WHERE partition = 'ENG-22'")
    assert count == [(1,)]
    values.write("ticket", "ENG-23", '{"id": "ENG-23"}')
    with pytest.raises(Exception, match=r"'ticket' partition 'ENG-23' .*field 'source'"):
        store.load("ticket", "ENG-23")
    assert store.load_or_none("ticket", "ENG-24") is None


def test_unreachable_postgres_is_transient_and_hides_the_password():
    from veranda_dagster.domain.core.errors import TransientError

    url = "postgresql://veranda:hunter2-secret@127.0.0.1:1/veranda"
    with pytest.raises(TransientError) as caught:
        PostgresValues(url).read("ticket", "ENG-1")
    assert "hunter2-secret" not in str(caught.value) and "***" in str(caught.value)


@pytest.mark.parametrize("password", ["p%zz", "p@ss", "p:ss/w%rd", "%"])
def test_a_password_with_any_character_connects_and_never_reaches_an_error(postgres_url, password):
    """libpq parsing the URL itself failed on these and quoted the fragment ("invalid
    percent-encoded token: p%zz", 'could not translate host name "ss@127.0.0.1"') into an
    error that retries copied into the event log; the store now hands libpq keywords."""
    from veranda_dagster.domain.core.errors import TransientError

    url = postgres_url.replace("://postgres@", f"://postgres:{password}@")
    values = PostgresValues(url)
    values.write("ticket", "ENG-31", '{"id": "ENG-31"}')
    assert values.read("ticket", "ENG-31") == '{"id": "ENG-31"}'

    port = postgres_url.split("127.0.0.1:", 1)[1].split("/", 1)[0]
    unreachable = url.replace(f"127.0.0.1:{port}", "127.0.0.1:1")
    with pytest.raises(TransientError) as caught:
        PostgresValues(unreachable).read("ticket", "ENG-31")
    message = str(caught.value)
    assert password not in message.replace("postgres:***@", "")
    assert "percent-encoded" not in message and "ss@" not in message
    assert "postgresql+psycopg2://postgres:***@127.0.0.1:1/veranda_test" in message


def test_the_value_store_reuses_one_pooled_connection_per_process(postgres_url):
    from veranda_dagster.storage.value_stores import pooled_connection

    values = PostgresValues(postgres_url)
    pids = set()
    for n in range(5):
        values.write("ticket", f"ENG-9{n}", '{"n": 1}')
        assert values.exists("ticket", f"ENG-9{n}")
        with pooled_connection(postgres_url) as conn, conn.cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            pids.add(cur.fetchone()[0])
    assert len(pids) == 1  # fifteen operations, one server connection


def test_a_connection_past_postgres_pool_max_is_a_typed_error(postgres_url):
    """``POSTGRES_POOL_MAX`` connections held at once by this process: one more is a typed
    ``TransientError`` naming the bound (not psycopg2's ``PoolError``); the twin, once one
    is returned, is a connection again."""
    from veranda_dagster.domain.core.bounds import POSTGRES_POOL_MAX
    from veranda_dagster.domain.core.errors import TransientError
    from veranda_dagster.storage.value_stores import pooled_connection

    with contextlib.ExitStack() as held:
        for _ in range(POSTGRES_POOL_MAX):
            held.enter_context(pooled_connection(postgres_url))
        with (
            pytest.raises(TransientError, match=f"all {POSTGRES_POOL_MAX} connections"),
            pooled_connection(postgres_url),
        ):
            pass
    with pooled_connection(postgres_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
