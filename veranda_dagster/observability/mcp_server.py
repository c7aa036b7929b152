"""The agents' own observability MCP server: read the trace instead of guessing.

Read-only tools over three sources, each behind a seam so tests use real local pieces:

* **Dagster** run list and a run's event log, from the instance ``DAGSTER_HOME`` names;
* **Prometheus** instant and range queries, against ``PROMETHEUS_URL``;
* **Kubernetes** pod list, pod logs and events, confined to one namespace
  (``VERANDA_K8S_NAMESPACE``) fixed at start, never a tool argument.

Nothing here writes: no run launch, no pod delete, no exec. Output is bounded in lines
(``MAX_MCP_LOG_LINES``) and scrubbed of known secrets, because it lands in a model's context.
A source that is not configured answers with a sentence saying so, not a stack trace.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from veranda_dagster.domain.core.bounds import MAX_MCP_LOG_LINES
from veranda_dagster.domain.core.mcp_config import McpServer
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.observability.prometheus import PrometheusClient

SERVER_NAME = "veranda-observability"

TOOL_NAMES = (
    "dagster_runs",
    "dagster_run_events",
    "prometheus_query",
    "prometheus_query_range",
    "k8s_pods",
    "k8s_pod_logs",
    "k8s_events",
)

OBSERVABILITY_MCP = McpServer(
    name="veranda_observability",
    command="veranda",
    args=["mcp-observability"],
)
"""The vendor-agnostic descriptor; ``render_mcp_config`` turns it into each CLI's format.
No env values: the server reads ``DAGSTER_HOME``/``PROMETHEUS_URL``/``VERANDA_K8S_NAMESPACE``
from the environment it inherits, so no URL or token is written into a clone."""


def _bounded(lines: list[str], limit: int) -> list[str]:
    limit = max(1, min(int(limit), MAX_MCP_LOG_LINES))
    if len(lines) <= limit:
        return lines
    return [f"... {len(lines) - limit} earlier lines omitted ...", *lines[-limit:]]


class ObservabilityTools:
    """The tool bodies, plain methods returning text; the MCP layer only registers them."""

    def __init__(
        self,
        *,
        instance: Callable[[], Any] | None = None,
        prometheus: PrometheusClient | None = None,
        core_v1: Callable[[], Any] | None = None,
        namespace: str | None = None,
    ) -> None:
        self._instance_factory = instance or _default_instance
        self._instance_value: Any = None
        self._prometheus = prometheus
        self._core_v1 = core_v1 or _default_core_v1
        self.namespace = namespace or os.environ.get("VERANDA_K8S_NAMESPACE", "veranda")

    # --- Dagster ----------------------------------------------------------------------------

    def _instance(self) -> Any:
        """One instance per server process, opened on first use (storage may be slow)."""
        if self._instance_value is None:
            self._instance_value = self._instance_factory()
        return self._instance_value

    def dagster_runs(self, limit: int = 20, status: str | None = None) -> str:
        import dagster as dg

        statuses = []
        if status:
            try:
                statuses = [dg.DagsterRunStatus(status.upper())]
            except ValueError:
                names = ", ".join(s.value for s in dg.DagsterRunStatus)
                return f"unknown run status {status!r}; one of: {names}"
        instance = self._instance()
        runs = instance.get_runs(
            filters=dg.RunsFilter(statuses=statuses) if statuses else None,
            limit=max(1, min(limit, MAX_MCP_LOG_LINES)),
        )
        rows = [
            {
                "run_id": r.run_id,
                "job": r.job_name,
                "status": r.status.value,
                "partition": r.tags.get("dagster/partition"),
            }
            for r in runs
        ]
        return json.dumps(rows, indent=1) if rows else "no runs"

    def dagster_run_events(self, run_id: str, limit: int = 200, errors_only: bool = False) -> str:
        instance = self._instance()
        if instance.get_run_by_id(run_id) is None:
            return f"no run {run_id!r} on this instance"
        lines: list[str] = []
        for entry in instance.all_logs(run_id):
            event = entry.dagster_event
            kind = event.event_type.name if event else "LOG"
            if errors_only and kind not in ("STEP_FAILURE", "RUN_FAILURE", "ENGINE_EVENT"):
                continue
            step = entry.step_key or "-"
            text = entry.user_message or (event.message if event and event.message else "")
            if event and event.event_specific_data is not None:
                text = " | ".join([text, *_error_chain(event.event_specific_data)])
            lines.append(f"{kind} {step}: {text}".rstrip())
        return scrub("\n".join(_bounded(lines, limit))) or "no events"

    # --- Prometheus -------------------------------------------------------------------------

    def _prom(self) -> PrometheusClient | str:
        if self._prometheus is not None:
            return self._prometheus
        url = os.environ.get("PROMETHEUS_URL", "")
        if not url:
            return "Prometheus is not configured here (PROMETHEUS_URL is unset)"
        self._prometheus = PrometheusClient(url, os.environ.get("PROMETHEUS_TOKEN") or None)
        return self._prometheus

    def prometheus_query(self, query: str, time: str | None = None) -> str:
        prom = self._prom()
        if isinstance(prom, str):
            return prom
        try:
            return json.dumps(prom.query(query, time), indent=1)
        except Exception as exc:
            return f"prometheus query failed: {scrub(str(exc))}"

    def prometheus_query_range(self, query: str, start: str, end: str, step: str = "60s") -> str:
        prom = self._prom()
        if isinstance(prom, str):
            return prom
        try:
            return json.dumps(prom.query_range(query, start, end, step), indent=1)
        except Exception as exc:
            return f"prometheus query failed: {scrub(str(exc))}"

    # --- Kubernetes -------------------------------------------------------------------------

    def _kube(self) -> Any:
        try:
            return self._core_v1()
        except Exception as exc:
            return f"no Kubernetes cluster reachable from here ({type(exc).__name__})"

    def k8s_pods(self, label_selector: str = "") -> str:
        api = self._kube()
        if isinstance(api, str):
            return api
        try:
            pods = api.list_namespaced_pod(self.namespace, label_selector=label_selector or None)
        except Exception as exc:
            return f"listing pods in {self.namespace} failed: {type(exc).__name__}"
        rows = [f"{p.metadata.name} {p.status.phase}" for p in pods.items]
        return "\n".join(_bounded(rows, MAX_MCP_LOG_LINES)) or f"no pods in {self.namespace}"

    def k8s_pod_logs(self, pod: str, container: str | None = None, tail_lines: int = 200) -> str:
        api = self._kube()
        if isinstance(api, str):
            return api
        lines = max(1, min(tail_lines, MAX_MCP_LOG_LINES))
        try:
            text = api.read_namespaced_pod_log(
                pod, self.namespace, container=container, tail_lines=lines
            )
        except Exception as exc:
            return f"reading logs of {pod} in {self.namespace} failed: {type(exc).__name__}"
        return scrub("\n".join(_bounded(str(text).splitlines(), lines))) or "(empty log)"

    def k8s_events(self, involved_object: str | None = None, limit: int = 100) -> str:
        api = self._kube()
        if isinstance(api, str):
            return api
        selector = f"involvedObject.name={involved_object}" if involved_object else None
        try:
            events = api.list_namespaced_event(self.namespace, field_selector=selector)
        except Exception as exc:
            return f"listing events in {self.namespace} failed: {type(exc).__name__}"
        rows = [
            f"{e.type} {e.reason} {e.involved_object.kind}/{e.involved_object.name}: {e.message}"
            for e in events.items
        ]
        return scrub("\n".join(_bounded(rows, limit))) or "no events"


MAX_ERROR_CAUSES = 5
"""Causes followed down one error chain: the wrapped user exception is usually the second."""


def _error_chain(data: Any) -> list[str]:
    """The messages of an event's error and its causes (Dagster wraps the user's exception)."""
    out: list[str] = []
    error = getattr(data, "error", None)
    while error is not None and len(out) < MAX_ERROR_CAUSES:
        out.append(str(error.message).strip())
        error = getattr(error, "cause", None)
    return out


def _default_instance() -> Any:
    import dagster as dg

    return dg.DagsterInstance.get()


def _default_core_v1() -> Any:
    from kubernetes import client, config  # ships no stubs: pyproject.toml ignores it

    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    return client.CoreV1Api()


def build_server(tools: ObservabilityTools | None = None) -> Any:
    """The MCP server with every tool registered, read-only annotations included."""
    try:
        from mcp.server.mcpserver import MCPServer as Server
    except ImportError:  # mcp 1.x
        # mcp 1.x only (the pinned 2.x has MCPServer), so unknown to the checker here
        from mcp.server.fastmcp import FastMCP as Server  # type: ignore[attr-defined,no-redef]
    from mcp.types import ToolAnnotations

    impl = tools or ObservabilityTools()
    server = Server(SERVER_NAME, instructions=__doc__.split("\n\n", 1)[0])
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
    docs = {
        "dagster_runs": "Recent Dagster runs (id, job, status, ticket partition).",
        "dagster_run_events": "A Dagster run's event log, oldest first, bounded; errors_only "
        "keeps failures.",
        "prometheus_query": "Prometheus instant query (PromQL), e.g. "
        "sum by (reason) (veranda_backend_resolutions_total).",
        "prometheus_query_range": "Prometheus range query over [start, end] at step.",
        "k8s_pods": "Pods in Veranda's namespace (name and phase).",
        "k8s_pod_logs": "The tail of one pod's log in Veranda's namespace.",
        "k8s_events": "Kubernetes events in Veranda's namespace, optionally for one object.",
    }
    for name in TOOL_NAMES:
        server.tool(name=name, description=docs[name], annotations=read_only)(getattr(impl, name))
    return server


def serve_stdio() -> None:
    build_server().run("stdio")
