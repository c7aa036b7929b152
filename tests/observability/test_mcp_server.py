"""The observability MCP server: its tools, a run-log query on a real instance, Prometheus
through MockTransport, Kubernetes absent and present (a fake CoreV1Api), and the descriptor
rendered into the Claude and Codex config formats."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import anyio
import dagster as dg
import httpx
import pytest
from mcp import Client

from veranda_dagster.domain.core.bounds import MAX_MCP_LOG_LINES
from veranda_dagster.domain.core.mcp_config import render_mcp_config
from veranda_dagster.observability.mcp_server import (
    MAX_ERROR_CAUSES,
    OBSERVABILITY_MCP,
    TOOL_NAMES,
    ObservabilityTools,
    build_server,
)
from veranda_dagster.observability.prometheus import PrometheusClient

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ops"


@dg.op
def clone_repo() -> str:
    return "ok"


@dg.op
def push_branch(cloned: str) -> None:
    raise RuntimeError("remote rejected veranda/eng-7 (token ghp_abcdefghijklmnopqrstuv)")


@dg.job
def broken_run() -> None:
    push_branch(clone_repo())


CHAIN_DEPTH = 8
"""Exceptions chained by one failing op: more than ``MAX_ERROR_CAUSES`` with Dagster's wrapper."""


@dg.op
def wrapped_failure() -> None:
    error: Exception | None = None
    for depth in reversed(range(CHAIN_DEPTH)):
        try:
            raise RuntimeError(f"cause level {depth}") from error
        except RuntimeError as exc:
            error = exc
    assert error is not None
    raise error


@dg.job
def chained_run() -> None:
    wrapped_failure()


@pytest.fixture(scope="module")
def failed_run(ops_home):
    """A failed run on the session's instance (it adds no phase materializations)."""
    with dg.DagsterInstance.get() as instance:
        result = broken_run.execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        yield instance, result.run_id


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _prometheus(handler) -> PrometheusClient:
    return PrometheusClient("http://prometheus.test", None, transport=httpx.MockTransport(handler))


def _call(tools: ObservabilityTools, name: str, args: dict) -> tuple[list[str], str]:
    async def go():
        async with Client(build_server(tools)) as client:
            listed = await client.list_tools()
            result = await client.call_tool(name, args)
            return [t.name for t in listed.tools], _text(result), listed

    names, text, listed = anyio.run(go)
    assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)
    return names, text


def test_lists_tools_and_answers_a_run_log_query_on_a_real_instance(failed_run) -> None:
    instance, run_id = failed_run
    tools = ObservabilityTools(instance=lambda: instance)
    names, text = _call(tools, "dagster_run_events", {"run_id": run_id})
    assert sorted(names) == sorted(TOOL_NAMES)
    assert "STEP_FAILURE push_branch" in text
    assert "remote rejected veranda/eng-7" in text
    assert "ghp_abcdefghijklmnopqrstuv" not in text  # scrubbed before it reaches a model
    assert "RUN_FAILURE" in text

    _, errors = _call(tools, "dagster_run_events", {"run_id": run_id, "errors_only": True})
    assert "STEP_FAILURE" in errors and "STEP_START" not in errors
    _, runs = _call(tools, "dagster_runs", {"status": "failure"})
    assert json.loads(runs)[0] == {
        "run_id": run_id,
        "job": "broken_run",
        "status": "FAILURE",
        "partition": None,
    }
    _, missing = _call(tools, "dagster_run_events", {"run_id": "nope"})
    assert missing == "no run 'nope' on this instance"


LEAKY_PASSWORD = "Hunter2%zz@Kx:9f/Qw3rty-long"


@dg.op
def connect_store() -> None:
    """What reached the event log before: libpq's own complaint quoting the password."""
    url = f"postgresql+psycopg2://veranda:{LEAKY_PASSWORD}@db:5432/veranda"
    raise RuntimeError(
        f"value store: cannot connect to {url}: invalid percent-encoded token: "
        f'"{LEAKY_PASSWORD.split("@")[0]}"; xai key xai-{"Ab3" * 10}; jwt '
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_nature-1"
    )


@dg.job
def store_run() -> None:
    connect_store()


def test_run_events_never_show_a_database_password_or_any_token_shape(ops_home, monkeypatch):
    monkeypatch.setenv(
        "VERANDA_POSTGRES_URL", f"postgresql+psycopg2://veranda:{LEAKY_PASSWORD}@db:5432/veranda"
    )
    with dg.DagsterInstance.get() as instance:
        result = store_run.execute_in_process(instance=instance, raise_on_error=False)
        _, text = _call(
            ObservabilityTools(instance=lambda: instance),
            "dagster_run_events",
            {"run_id": result.run_id},
        )
    assert "STEP_FAILURE connect_store" in text
    assert "Hunter2%zz" not in text and "Qw3rty" not in text and "xai-Ab3" not in text
    assert "eyJhbGci" not in text
    assert "postgresql+psycopg2://veranda:***@db:5432/veranda" in text


def test_run_events_are_bounded_to_the_named_limit(failed_run) -> None:
    instance, run_id = failed_run
    tools = ObservabilityTools(instance=lambda: instance)
    text = tools.dagster_run_events(run_id, limit=3)
    lines = text.splitlines()
    assert len(lines) == 4 and lines[0].endswith("earlier lines omitted ...")
    big = tools.dagster_run_events(run_id, limit=MAX_MCP_LOG_LINES + 50)
    assert len(big.splitlines()) <= MAX_MCP_LOG_LINES + 1


def test_prometheus_query_through_mock_transport() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.params["query"].endswith("("):
            body = (FIXTURES / "prometheus_query_bad_data.json").read_text()
            return httpx.Response(400, text=body)
        body = (FIXTURES / "prometheus_query_resolutions.json").read_text()
        return httpx.Response(200, text=body, headers={"content-type": "application/json"})

    tools = ObservabilityTools(prometheus=_prometheus(handler))
    query = "sum by (reason) (veranda_backend_resolutions_total)"
    _, text = _call(tools, "prometheus_query", {"query": query})
    assert seen[0].url.path == "/api/v1/query" and seen[0].url.params["query"] == query
    assert json.loads(text)["result"][1]["metric"] == {"reason": "fallback_quota"}
    bad = tools.prometheus_query("sum(")
    assert bad.startswith("prometheus query failed:") and "parse error" in bad
    tools.prometheus_query_range("up", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z", "5m")
    assert seen[-1].url.path == "/api/v1/query_range" and seen[-1].url.params["step"] == "5m"


def test_unconfigured_sources_answer_in_words(monkeypatch) -> None:
    monkeypatch.delenv("PROMETHEUS_URL", raising=False)

    def no_cluster():
        raise FileNotFoundError("no kubeconfig")

    tools = ObservabilityTools(core_v1=no_cluster)
    assert "PROMETHEUS_URL is unset" in tools.prometheus_query("up")
    assert tools.k8s_pod_logs("x").startswith("no Kubernetes cluster reachable")
    assert tools.k8s_events().startswith("no Kubernetes cluster reachable")


class FakeCoreV1:
    """The three CoreV1Api calls the tools make, recording the namespace they asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def read_namespaced_pod_log(self, name, namespace, container=None, tail_lines=None):
        self.calls.append(("log", namespace))
        lines = [f"line {i} OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstu" for i in range(900)]
        return "\n".join(lines[-tail_lines:])

    def list_namespaced_event(self, namespace, field_selector=None):
        self.calls.append(("events", namespace))
        obj = SimpleNamespace(kind="Pod", name="dagster-run-abc")
        ev = SimpleNamespace(
            type="Warning",
            reason="OOMKilled",
            involved_object=obj,
            message="container exceeded memory",
        )
        return SimpleNamespace(items=[ev])

    def list_namespaced_pod(self, namespace, label_selector=None):
        self.calls.append(("pods", namespace))
        pod = SimpleNamespace(
            metadata=SimpleNamespace(name="dagster-run-abc"), status=SimpleNamespace(phase="Failed")
        )
        return SimpleNamespace(items=[pod])


def test_kubernetes_tools_are_namespace_scoped_bounded_and_scrubbed() -> None:
    api = FakeCoreV1()
    tools = ObservabilityTools(core_v1=lambda: api, namespace="veranda-prod")
    logs = tools.k8s_pod_logs("dagster-run-abc", tail_lines=10_000)
    assert len(logs.splitlines()) == MAX_MCP_LOG_LINES and "sk-proj" not in logs
    assert "OOMKilled Pod/dagster-run-abc" in tools.k8s_events("dagster-run-abc")
    assert tools.k8s_pods() == "dagster-run-abc Failed"
    assert {ns for _, ns in api.calls} == {"veranda-prod"}


def test_descriptor_renders_into_claude_and_codex_formats() -> None:
    path, content = render_mcp_config([OBSERVABILITY_MCP], "mcp_json")
    assert path == ".mcp.json"
    assert json.loads(content)["mcpServers"]["veranda_observability"] == {
        "command": "veranda",
        "args": ["mcp-observability"],
    }
    path, content = render_mcp_config([OBSERVABILITY_MCP], "codex_toml")
    assert path == ".codex/config.toml"
    assert '[mcp_servers.veranda_observability]\ncommand = "veranda"' in content
    assert 'args = ["mcp-observability"]' in content


def test_stdio_entry_point_lists_tools_and_reads_the_instance(failed_run) -> None:
    """``veranda mcp-observability`` as a CLI would start it: a subprocess over stdio, reading
    the instance its DAGSTER_HOME names."""
    import os
    import sys

    from mcp import StdioServerParameters

    instance, run_id = failed_run
    home = instance.root_directory
    entry = "import sys; from veranda_dagster.cli import main; sys.exit(main())"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", entry, *OBSERVABILITY_MCP.args],
        env={**os.environ, "DAGSTER_HOME": home, "PROMETHEUS_URL": ""},
    )

    async def go():
        async with Client(params, read_timeout_seconds=60) as client:
            listed = await client.list_tools()
            runs = await client.call_tool("dagster_runs", {"limit": 5})
            prom = await client.call_tool("prometheus_query", {"query": "up"})
            return [t.name for t in listed.tools], _text(runs), _text(prom)

    names, runs, prom = anyio.run(go)
    assert sorted(names) == sorted(TOOL_NAMES)
    assert run_id in runs
    assert "PROMETHEUS_URL is unset" in prom


def test_an_error_chain_is_followed_at_most_its_bound_of_causes(failed_run) -> None:
    """``MAX_ERROR_CAUSES``: a step failure whose exception chains eight deep is reported with
    Dagster's wrapper and the user's causes up to the bound, not the deeper ones."""
    instance, _ = failed_run
    result = chained_run.execute_in_process(instance=instance, raise_on_error=False)
    assert not result.success
    tools = ObservabilityTools(instance=lambda: instance)
    _, errors = _call(tools, "dagster_run_events", {"run_id": result.run_id, "errors_only": True})
    (line,) = [x for x in errors.splitlines() if x.startswith("STEP_FAILURE")]
    shown = [f"cause level {d}" in line for d in range(CHAIN_DEPTH)]
    # the wrapper is the first message, so MAX_ERROR_CAUSES - 1 of the user's levels follow
    assert shown == [d < MAX_ERROR_CAUSES - 1 for d in range(CHAIN_DEPTH)]
