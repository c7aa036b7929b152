"""The durable IO manager: each asset partition's value is one pydantic model stored as JSON.

A downstream phase re-run in a new process (or pod) loads its upstream values from here instead
of recomputing them, which is what makes re-execution from failure cheap: the paid model calls
of finished phases are data, not work to redo. Values are written only from ``handle_output``,
which Dagster calls only after the asset body returned, so a failed step never touches the
stored value of a previous success.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from pydantic import BaseModel, ValidationError

from veranda_dagster.dagster_typing import Resource
from veranda_dagster.domain.core.errors import (
    ConfigError,
    InputError,
    StoredValueError,
    VerandaError,
)
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.types import value_type
from veranda_dagster.storage.value_stores import (
    TABLE,
    FilesystemValues,
    PostgresValues,
    Values,
    default_values_dir,
    parse_json,
)

VENDORS = ("filesystem", "postgres")


def portable_location(where: str) -> str:
    """A stored value's path as metadata shows it: under ``$DAGSTER_HOME`` or
    ``$VERANDA_VALUES_DIR`` when it is (no machine's absolute path in the UI), else as is."""
    path = Path(where)
    for var in ("VERANDA_VALUES_DIR", "DAGSTER_HOME"):
        base = os.environ.get(var)
        if base and path.is_relative_to(base):
            return f"${var}/{path.relative_to(base).as_posix()}"
    return where


class ValueStore(Resource):
    """Typed access to stored values; shared by the IO manager, the checks and ``feedback``."""

    store_kind: str = "filesystem"
    """``filesystem`` (default) or ``postgres``."""
    base_dir: str = ""
    """Filesystem root; empty = ``default_values_dir()``."""
    postgres_url: str = ""
    """Connection URL for the ``postgres`` store (from ``VERANDA_POSTGRES_URL``)."""

    def values(self) -> Values:
        if self.store_kind == "filesystem":
            return FilesystemValues(self.base_dir or default_values_dir())
        if self.store_kind == "postgres":
            return PostgresValues(self.postgres_url)
        raise ConfigError(
            f"value store kind {self.store_kind!r} is unknown (VERANDA_VALUE_STORE must be one "
            f"of {', '.join(VENDORS)})"
        )

    def save(self, asset: str, partition: str, value: BaseModel) -> str:
        expected = value_type(asset)
        if not isinstance(value, BaseModel) or (expected and not isinstance(value, expected)):
            want = expected.__name__ if expected else "a pydantic model"
            raise InputError(
                f"asset {asset!r} partition {partition!r}: refusing to store "
                f"{type(value).__name__}, expected {want}"
            )
        return self.values().write(asset, partition, value.model_dump_json())

    def load(self, asset: str, partition: str, model: type[BaseModel] | None = None) -> BaseModel:
        model = model or value_type(asset)
        if model is None:
            raise StoredValueError(
                f"asset {asset!r} partition {partition!r}: no value type is registered "
                "(add its spec to veranda_dagster.domain.core.phases.PHASES)"
            )
        text = self.values().read(asset, partition)
        data = parse_json(text, asset, partition)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "<root>"
            raise StoredValueError(
                f"stored value for asset {asset!r} partition {partition!r} is not a valid "
                f"{model.__name__}: field {where!r}: {first['msg']} ({exc.error_count()} errors)"
            ) from None

    def ledger(self) -> StoreLedger:
        """The per-ticket spend ledger, on this store's kind of storage."""
        return StoreLedger(self.values())

    def load_or_none(self, asset: str, partition: str) -> BaseModel | None:
        """The stored value, or None when there is none yet (a corrupt one still raises)."""
        if not self.values().exists(asset, partition):
            return None
        return self.load(asset, partition)


def _no_retry(exc: VerandaError) -> dg.Failure:
    """A missing/corrupt value or a wrong type does not heal by waiting: fail without retry."""
    return dg.Failure(
        description=f"{type(exc).__name__}: {exc}",
        metadata={"error": type(exc).__name__},
        allow_retries=False,
    )


def _partition(context: dg.OutputContext | dg.InputContext) -> str:
    if not context.has_asset_partitions:
        raise InputError(f"asset {context.asset_key.to_user_string()!r} has no partition")
    return context.asset_partition_key


class VerandaIOManager(dg.ConfigurableIOManager):
    """Stores and loads phase values through ``ValueStore``, keyed by (asset, partition)."""

    store: ValueStore

    def handle_output(self, context: dg.OutputContext, obj: BaseModel) -> None:
        asset = context.asset_key.path[-1]
        try:
            where = self.store.save(asset, _partition(context), obj)
        except (StoredValueError, InputError, ConfigError) as exc:
            raise _no_retry(exc) from exc
        shown = portable_location(where) if self.store.store_kind == "filesystem" else TABLE
        context.add_output_metadata({"stored_in": self.store.store_kind, "stored_at": shown})

    def load_input(self, context: dg.InputContext) -> BaseModel:
        asset = context.asset_key.path[-1]
        annotated = getattr(context.dagster_type, "typing_type", None)
        model = value_type(asset) or (
            annotated if isinstance(annotated, type) and issubclass(annotated, BaseModel) else None
        )
        try:
            return self.store.load(asset, _partition(context), model)
        except (StoredValueError, InputError, ConfigError) as exc:
            raise _no_retry(exc) from exc
