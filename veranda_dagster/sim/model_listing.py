"""The ``GET /v1/models`` listing every scripted model server answers with.

Shared by the demo's model server (``sim/model_server.py``) and the tests' vendor-wire server,
so both list the same ids: the tier tables' own.
"""

from __future__ import annotations

from typing import Any

from veranda_dagster.vendors.tiers import MODE_TIERS, TIERS

MODEL_LIST_CREATED = 1_767_225_600
"""A fixed ``created`` stamp (2026-01-01) for every listed model: Grok 0.2.111 refuses a
listing without it (``missing field `created```)."""


def model_listing(first: str) -> dict[str, Any]:
    """OpenAI's ``GET /v1/models`` shape: ``first``, then every tier id the product may ask
    for. Grok takes the first id as its default and rejects a requested id not listed
    ("unknown model id"), and it needs ``created`` and ``owned_by`` on each entry."""
    ids = [first]
    for table in (*TIERS.values(), *MODE_TIERS.values()):
        ids += [m for m in table.values() if m not in ids]
    data = [
        {"id": mid, "object": "model", "created": MODEL_LIST_CREATED, "owned_by": "veranda-sim"}
        for mid in ids
    ]
    return {"object": "list", "data": data}
