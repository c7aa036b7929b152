"""Each phase asset's code reference (``dagster/code_references``) points at its own module.

Dagster's ``with_source_code_references`` links the function Dagster runs, which for every
phase is the shared ``compute`` in ``_shell.py``; a newcomer clicking "open source" wants the
phase's own module and its domain call. ``phase_asset`` keeps that call on the compute function
(``SOURCE_ATTR``); this builds the reference from it.

The metadata classes are marked beta in Dagster 1.13 and warn on every construction, which
printed one warning pair per asset on every code-location load (228 lines per demo). The
warning says the API may change; we pin Dagster, so it is silenced here, at its one source,
for exactly that category and nothing else.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import dagster as dg

CODE_REFERENCES_KEY = "dagster/code_references"
"""The metadata key the UI reads an asset's source links from."""
SOURCE_ATTR = "veranda_source"
"""The attribute on an asset's compute function naming the phase's own declared call."""


def _source_of(asset: dg.AssetsDefinition) -> Callable[..., Any] | None:
    compute = getattr(asset.op.compute_fn, "decorated_fn", asset.op.compute_fn)
    source = getattr(compute, SOURCE_ATTR, compute)
    return source if callable(source) else None


def own_code_reference(asset: dg.AssetsDefinition) -> tuple[str, int] | None:
    """The file and first line of the function that states the phase (its asset module)."""
    source = _source_of(asset)
    if source is None:
        return None
    path = inspect.getsourcefile(source)
    return (path, inspect.getsourcelines(source)[1]) if path else None


def with_own_code_references(
    assets: Sequence[dg.AssetsDefinition],
) -> list[dg.AssetsDefinition]:
    """``assets`` with each one's code reference set to its own module and line."""
    out: list[dg.AssetsDefinition] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        for asset in assets:
            where = own_code_reference(asset)
            if where is None:
                out.append(asset)
                continue
            ref = dg.LocalFileCodeReference(file_path=where[0], line_number=where[1])
            meta = {CODE_REFERENCES_KEY: dg.CodeReferencesMetadataValue(code_references=[ref])}
            out.append(
                asset.map_asset_specs(
                    lambda spec, meta=meta: spec.replace_attributes(  # type: ignore[misc]
                        metadata={**spec.metadata, **meta}
                    )
                )
            )
    return out
