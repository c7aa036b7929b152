"""The metadata each phase writes is exactly what its spec declares (an optional key only
when it has a value): the keys are a contract
with ``ops/`` (report, metrics replay) across processes, so a key added or dropped in an asset
module without its spec fails here."""

from __future__ import annotations

import dagster as dg

from tests.assets.fakes import resources
from veranda_dagster.assets import PHASE_ASSETS
from veranda_dagster.domain.core.phases import CALL_METADATA, PHASES

EMPTY = (None, "", "none")
"""What a row that says nothing looks like: ``None``, blank text, or the old ``none`` sentinel."""


def test_every_phase_writes_exactly_its_declared_metadata_keys(tmp_path) -> None:
    calls, values = tmp_path / "calls", tmp_path / "values"
    calls.mkdir()
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("tickets", ["ENG-9"])
        result = dg.materialize(
            PHASE_ASSETS,
            partition_key="ENG-9",
            instance=instance,
            resources=resources(str(calls), str(values)),
        )
        assert result.success
        for name, spec in PHASES.items():
            event = instance.get_latest_materialization_event(dg.AssetKey(name))
            assert event is not None and event.asset_materialization is not None, name
            written = set(event.asset_materialization.metadata)
            required = spec.metadata_keys - spec.optional_keys
            assert required <= written <= spec.metadata_keys, (
                f"{name}: undeclared {sorted(written - spec.metadata_keys)}, "
                f"declared but not written {sorted(required - written)}"
            )
            shown: dict[str, object] = {
                k: getattr(v, "value", v) for k, v in event.asset_materialization.metadata.items()
            }
            empty = {
                k: v
                for k, v in shown.items()
                if isinstance(v, str | None) and (v or "").strip() in EMPTY
            }
            assert not empty, f"{name}: rows with nothing to say {empty}"
            called = shown["model_calls"] != 0
            assert called == (set(CALL_METADATA) <= set(shown)), (name, sorted(shown))
