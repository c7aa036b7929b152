"""A thin read-only Prometheus HTTP API client (``/api/v1/query``, ``/api/v1/query_range``).

Built on ``HttpService`` like every client here, so tests drive it through
``httpx.MockTransport`` with recorded response shapes.
"""

from __future__ import annotations

from typing import Any

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.http.client import HttpService


class PrometheusClient(HttpService):
    service = "prometheus"

    def _data(self, path: str, params: dict[str, str]) -> dict[str, Any]:
        if not params.get("query", "").strip():
            raise InputError("prometheus: query is empty")
        body = self.json("GET", path, params=params)
        if not isinstance(body, dict) or body.get("status") != "success":
            detail = body.get("error", "unknown error") if isinstance(body, dict) else "bad body"
            raise InputError(f"prometheus rejected the query: {detail}")
        data = body.get("data")
        if not isinstance(data, dict):
            raise InputError("prometheus answered without a data object")
        return data

    def query(self, query: str, time: str | None = None) -> dict[str, Any]:
        """Instant query: ``{"resultType": ..., "result": [...]}``."""
        params = {"query": query}
        if time:
            params["time"] = time
        return self._data("/api/v1/query", params)

    def query_range(self, query: str, start: str, end: str, step: str) -> dict[str, Any]:
        """Range query over ``[start, end]`` (RFC 3339 or epoch) at ``step`` (``30s``, ``5m``)."""
        return self._data(
            "/api/v1/query_range", {"query": query, "start": start, "end": end, "step": step}
        )
