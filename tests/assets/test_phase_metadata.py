"""The metadata each phase writes is exactly what its spec declares (an optional key only
when it has a value): the keys are a contract
with ``ops/`` (report, metrics replay) across processes, so a key added or dropped in an asset
module without its spec fails here."""

from __future__ import annotations

import re

import dagster as dg
import pytest

from tests.assets.fakes import resources
from veranda_dagster.assets import PHASE_ASSETS
from veranda_dagster.assets._metadata import (
    MAX_COMMAND_MD_CHARS,
    MAX_MD_CHARS,
    MAX_TABLE_ROWS,
    bounded_md,
    command_md,
    fence_for,
    pack_table,
)
from veranda_dagster.domain.core.models import CommandResult, PackFile
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


def test_a_markdown_value_is_cut_at_its_bound_and_one_at_it_is_whole() -> None:
    """``MAX_MD_CHARS``: a value one character past the bound is kept to exactly the bound and
    says where the rest is; at the bound it is whole. A command's long output keeps its tail
    within the bound, fenced (the fence is closed: the cut came before it)."""
    at_bound = "x" * MAX_MD_CHARS
    assert bounded_md(at_bound).value == at_bound
    cut = bounded_md(at_bound + "y").value
    assert cut == at_bound + "\n\n… (cut; the whole value is in the store)"
    run = CommandResult(command="make test", exit_code=1, output_tail="z" * (3 * MAX_MD_CHARS))
    shown = command_md(run).value
    assert isinstance(shown, str)
    assert len(shown) <= MAX_MD_CHARS and shown.endswith("z\n```") and "cut;" not in shown


@pytest.mark.parametrize(
    ("command", "output"),
    [
        pytest.param("make test", "z" * (3 * MAX_MD_CHARS), id="long-output"),
        pytest.param(
            "make test", ("`" * 40 + "x\n") * (MAX_MD_CHARS // 20), id="long-runs-widen-fence"
        ),
        pytest.param("make test", "`" * (3 * MAX_MD_CHARS), id="one-run-only"),
        pytest.param("x" * (5 * MAX_MD_CHARS), "z" * MAX_MD_CHARS, id="command-of-any-length"),
        pytest.param("run `it`", "ok\n", id="backticks-in-the-command"),
        pytest.param("pytest -q", "ok\n", id="twin-short-whole"),
    ],
)
def test_a_command_value_is_fenced_and_closed_within_the_bound(command: str, output: str) -> None:
    """``MAX_COMMAND_MD_CHARS`` and the fence: whatever the output's backtick runs and the
    command's length, the value fits ``MAX_MD_CHARS`` uncut and its fence is closed (a fence
    grown by the output once pushed the closing fence past the bound, where it was cut off)."""
    shown = command_md(CommandResult(command=command, exit_code=1, output_tail=output)).value
    assert isinstance(shown, str)
    assert len(shown) <= MAX_MD_CHARS and "cut;" not in shown
    head, _, body = shown.partition("\n\n")
    assert len(head) < MAX_COMMAND_MD_CHARS + 40 and head.count("`") == 2
    opening, _, rest = body.partition("\n")
    assert set(opening) == {"`"} and rest.endswith("\n" + opening)
    inside = rest[: -len(opening)]
    assert len(opening) > max(map(len, re.findall("`+", inside)), default=0)
    if len(output) < MAX_MD_CHARS // 2:
        assert inside.rstrip("\n") == output.rstrip()


def test_the_fence_is_found_in_one_pass_over_a_long_run() -> None:
    """A tail of one long backtick run: the fence is one longer, not found by growing it one
    backtick at a time over the whole text."""
    assert fence_for("a" + "`" * 5_000 + "b") == "`" * 5_001
    assert fence_for("no ticks") == "```"


def test_a_table_value_holds_at_most_its_bound_of_rows() -> None:
    """``MAX_TABLE_ROWS``: a pack of one file more than the bound shows the first
    ``MAX_TABLE_ROWS``; exactly the bound shows every file."""
    files = [PackFile(path=f"src/m{i}.py", windows=[]) for i in range(MAX_TABLE_ROWS + 1)]
    for shown in (files, files[:MAX_TABLE_ROWS]):
        table = pack_table(shown)
        assert isinstance(table, dg.TableMetadataValue)
        rows = table.records
        assert [r.data["path"] for r in rows] == [f.path for f in files[:MAX_TABLE_ROWS]]
