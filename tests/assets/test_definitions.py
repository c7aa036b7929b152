"""The code location loads and says what a Dagster user expects to see."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

import dagster as dg
import pytest
import yaml
from dagster._core.instance.ref import InstanceRef

from tests.support.processes import ROOT, run_in_repo
from veranda_dagster import concurrency, definitions
from veranda_dagster.assets._policy import PHASES, PIPELINE_GROUP, configured_names, shown_kinds
from veranda_dagster.domain.core import phases as registry
from veranda_dagster.jobs import RUN_MAX_RUNTIME_S, TICKET_RUN_TAG
from veranda_dagster.partitions import TICKET_JOB, TICKET_TAG
from veranda_dagster.storage import VerandaIOManager

LINEAGE = {
    "ticket": set(),
    "repo_guess": {"ticket"},
    "context_pack": {"repo_guess"},
    "red_tests": {"context_pack"},
    "patch": {"red_tests"},
    "pull_request": {"patch"},
    "review_rounds": {"pull_request"},
    "ci_outcome": {"review_rounds"},
    "feedback": {"pull_request"},
}
"""The edges of the phases that exist today: each reads its predecessor only (the ticket and
the pack ride in the values, ``WorkOrder``). A phase added to the registry is checked by the
derived rules below (every phase in the graph, parents earlier in the registry, the ticket an
ancestor of all), and needs no row here; an existing phase that loses or gains an input fails."""


def test_dagster_definitions_validate_in_a_clean_process(tmp_path):
    shutil.copy(ROOT / "dagster.yaml", tmp_path / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_TOKEN", "_KEY"))}
    env["DAGSTER_HOME"] = str(tmp_path)
    proc = run_in_repo(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"],
        env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Validation successful" in proc.stdout + proc.stderr


def test_dg_check_defs_loads_the_project(tmp_path):
    """``[tool.dg]`` in pyproject: Dagster's current CLI finds and loads the same module."""
    dg_cli = shutil.which("dg")
    if dg_cli is None:
        pytest.skip("dg (dagster-dg-cli, a dev dependency) is not installed")
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    proc = run_in_repo([dg_cli, "check", "defs"], env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "All definitions loaded successfully" in proc.stdout + proc.stderr


def ancestors(graph: Any, name: str) -> set[str]:
    """Every phase ``name`` depends on, directly or through its predecessors."""
    parents = {p.path[-1] for p in graph.get(dg.AssetKey(name)).parent_keys}
    return parents.union(*(ancestors(graph, p) for p in parents))


def test_assets_lineage_groups_owners_kinds_and_policies():
    defs = definitions.defs
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    assert set(LINEAGE) <= set(registry.PHASES)
    order = list(registry.PHASES)
    first = order[0]
    for name in order:
        key = dg.AssetKey(name)
        node = graph.get(key)
        parents = {p.path[-1] for p in node.parent_keys}
        if name in LINEAGE:
            assert parents == LINEAGE[name], name
        # the registry is the pipeline's order: no phase reads a later one; each reads one
        # predecessor, so the ticket is an ancestor of all
        assert parents <= set(order[: order.index(name)]), name
        assert name == first or len(parents) == 1, name
        assert name == first or first in ancestors(graph, name), name
        spec = PHASES[name]
        assert node.group_name == PIPELINE_GROUP  # one group: the lineage opens as the chain
        assert node.tags["veranda/stage"] == registry.PHASES[name].stage == spec.group
        assert node.owners == ["team:veranda"] and node.description
        assert node.partitions_def is not None and node.partitions_def.name == "tickets"
        assert set(node.kinds) == set(shown_kinds(spec.kinds, configured_names()))
        assets_def = graph.assets_def_for_key(key)
        assert assets_def.op.retry_policy == spec.retry
        assert assets_def.op.tags["veranda/timeout_s"] == str(int(spec.timeout_s))
    model = [s for s in PHASES.values() if s.model]
    api = [s for s in PHASES.values() if not s.model]
    assert max(s.retry.max_retries for s in model) < min(s.retry.max_retries for s in api)
    assert min(s.retry.delay for s in model) > max(s.retry.delay for s in api)
    assert PHASES["patch"].timeout_s > 10 * PHASES["pull_request"].timeout_s


def rank_skipping_edges(lineage: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Edges that jump over a rank of the layered layout (rank = longest path from a root,
    as dagre, the Dagster UI's layout, ranks a DAG): each is drawn across the columns between
    its ends, which is what makes the expanded lineage cross. A proxy for crossings, computed
    from the declared deps, not from a rendered picture."""
    rank: dict[str, int] = {}

    def rank_of(name: str) -> int:
        if name not in rank:
            rank[name] = 1 + max((rank_of(p) for p in lineage[name]), default=-1)
        return rank[name]

    return [
        (parent, name)
        for name, parents in lineage.items()
        for parent in sorted(parents)
        if rank_of(name) - rank_of(parent) > 1
    ]


def test_the_lineage_reads_as_the_chain():
    """Every phase reads its predecessor only: the ticket and the pack that later phases work
    from ride in the values (``WorkOrder``), so no edge jumps a rank of the layout. 23 edges,
    15 skipping a rank, at first; 20 and 12 once the PR and CI reads were trimmed; 8 and 0
    now (the checks hang off their own assets and are not edges between phases)."""
    graph = definitions.defs.resolve_asset_graph()
    declared = {
        name: {p.path[-1] for p in graph.get(dg.AssetKey(name)).parent_keys} for name in LINEAGE
    }
    skipping = rank_skipping_edges(declared)
    assert sum(map(len, declared.values())) == 8 and skipping == [], skipping


def test_job_checks_resources_and_sensors():
    defs = definitions.defs
    job = defs.resolve_job_def(TICKET_JOB)
    assert job.tags[TICKET_RUN_TAG] == "true" and int(job.tags["dagster/max_runtime"]) > 0
    assert job.partitions_def is not None and job.partitions_def.name == "tickets"
    selected = {k.path[-1] for k in job.asset_layer.executable_asset_keys}
    assert selected == set(registry.PHASES)
    checks = {k.name for k in defs.resolve_asset_graph().asset_check_keys}
    assert checks == {
        "pack_within_bounds",
        "pack_citations_valid",
        "red_tests_fail_on_base",
        "pull_request_citations_resolve",
    }
    assert isinstance(defs.resources["io_manager"], VerandaIOManager)
    sensors = {s.name for s in defs.sensors}
    assert {"linear_tickets", "slack_mentions"} <= sensors  # the intake sensors exist now
    for sensor in defs.sensors:
        assert set(sensor.required_resource_keys) <= set(defs.resources)


def test_secrets_bind_as_env_vars_not_values(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret-value")
    monkeypatch.setenv("VERANDA_VALUE_STORE", "postgres")
    monkeypatch.setenv("VERANDA_POSTGRES_URL", "postgresql://u:pw@127.0.0.1/v")
    outside = _outside()
    token = outside.forge.token
    assert isinstance(token, dg.EnvVar) and token == "GITHUB_TOKEN"
    assert outside.tickets.linear.api_key is None  # unset: a working default, not a load error
    store = definitions.value_store()
    assert store.store_kind == "postgres" and isinstance(store.postgres_url, dg.EnvVar)


def _outside() -> definitions.OutsideResources:
    """The outside-system resources as the Definitions build them from the environment."""
    return definitions.OutsideResources.from_env(definitions.value_store())


def expected_run_limits() -> list[dict]:
    per_value = {"applyLimitPerUniqueValue": True}
    return [
        {"key": TICKET_RUN_TAG, "limit": concurrency.TICKET_RUNS_AT_ONCE},
        {"key": "dagster/backfill", "limit": concurrency.BACKFILL_RUNS_AT_ONCE},
        {"key": "dagster/partition", "value": per_value, "limit": concurrency.RUNS_PER_TICKET},
        {"key": TICKET_TAG, "value": per_value, "limit": concurrency.RUNS_PER_TICKET},
    ]


def test_instance_yaml_files_state_the_limits_in_the_concurrency_form(tmp_path):
    for name in ("dagster.yaml", "dagster.postgres.yaml"):
        config = yaml.safe_load((ROOT / name).read_text())
        # the limits are in `concurrency: runs:`; the coordinator block keeps only the queue's
        # own polling interval (1 s, not Dagster's 5 s on every ticket's critical path)
        assert config["run_coordinator"]["config"] == {"dequeue_interval_seconds": 1}
        assert config["concurrency"]["pools"] == {"default_limit": concurrency.POOL_DEFAULT_LIMIT}
        runs = config["concurrency"]["runs"]
        assert runs["max_concurrent_runs"] == concurrency.MAX_CONCURRENT_RUNS
        assert runs["tag_concurrency_limits"] == expected_run_limits()
        assert config["run_retries"]["retry_on_asset_or_op_failure"] is False
        assert config["run_monitoring"]["max_runtime_seconds"] == RUN_MAX_RUNTIME_S
    assert "storage" not in yaml.safe_load((ROOT / "dagster.yaml").read_text())
    pg = yaml.safe_load((ROOT / "dagster.postgres.yaml").read_text())
    assert pg["storage"]["postgres"]["postgres_url"] == {"env": "VERANDA_POSTGRES_URL"}

    # the pinned Dagster reads the block: a queued coordinator with these limits
    shutil.copy(ROOT / "dagster.yaml", tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path))) as instance:
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert instance.run_coordinator.dequeue_interval_seconds == 1
        config = instance.get_concurrency_config()
        assert config.pool_config.default_pool_limit == concurrency.POOL_DEFAULT_LIMIT
        assert config.run_queue_config.max_concurrent_runs == concurrency.MAX_CONCURRENT_RUNS
        assert config.run_queue_config.tag_concurrency_limits == expected_run_limits()
        assert instance.run_monitoring_max_runtime_seconds == RUN_MAX_RUNTIME_S


def test_model_and_forge_phases_claim_a_pool_in_every_run():
    graph = definitions.defs.resolve_asset_graph()
    pools = {
        key.path[-1]: graph.assets_def_for_key(key).op.pool for key in graph.get_all_asset_keys()
    }
    assert pools == {
        name: concurrency.MODEL_POOL
        if spec.model
        else (concurrency.FORGE_POOL if name == "pull_request" else None)
        for name, spec in PHASES.items()
    }
    assert pools["ticket"] is None and pools["patch"] == "veranda/model"


def test_all_three_sensors_are_wired_with_their_resources():
    names = {s.name for s in definitions.defs.sensors}
    assert names == {
        "linear_tickets",
        "slack_mentions",
        "pr_feedback",
        "ticket_run_failures",
        "workspace_sweep",
    }
    assert {"linear", "slack", "forge", "tickets", "workspace"} <= set(definitions.defs.resources)


@pytest.mark.parametrize("raw", ["soon", "-5", "0", "nan", "inf"])
def test_a_bad_numeric_setting_names_the_variable(monkeypatch, raw):
    from veranda_dagster.domain.core.errors import ConfigError

    monkeypatch.setenv("VERANDA_VALIDATION_TIMEOUT_S", raw)
    with pytest.raises(ConfigError, match="VERANDA_VALIDATION_TIMEOUT_S"):
        _outside()
    monkeypatch.delenv("VERANDA_VALIDATION_TIMEOUT_S")
    monkeypatch.setenv("VERANDA_TICKET_BUDGET_USD", raw)
    with pytest.raises(ConfigError, match="VERANDA_TICKET_BUDGET_USD"):
        _outside()


def test_numeric_settings_are_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("VERANDA_CI_WAIT_TIMEOUT_S", "4")
    monkeypatch.setenv("VERANDA_CODE_SEARCH_PER_MINUTE", "600")
    resource = _outside()
    assert resource.workspace.ci_wait_timeout_s == 4.0
    assert resource.forge.search_per_minute == 600


def test_the_ticket_budget_and_its_ledger_follow_the_value_store(monkeypatch, tmp_path):
    from veranda_dagster.domain.core.bounds import TICKET_BUDGET_USD

    assert _outside().agents.ticket_budget_usd == TICKET_BUDGET_USD
    monkeypatch.setenv("VERANDA_TICKET_BUDGET_USD", "2.5")
    monkeypatch.setenv("VERANDA_VALUES_DIR", str(tmp_path))
    resource = _outside()
    assert resource.agents.ticket_budget_usd == 2.5
    assert resource.agents.store.base_dir == str(tmp_path)  # the ledger is the store's


def test_kind_icons_name_the_configured_tracker_and_forge_not_a_fixed_vendor(monkeypatch):
    from veranda_dagster.domain.core import phases

    intake = phases.PHASES["ticket"].kinds
    pr = phases.PHASES["pull_request"].kinds
    assert intake == {phases.TRACKER} and pr == {phases.FORGE}
    gitlab_jira = {phases.TRACKER: frozenset({"jira"}), phases.FORGE: frozenset({"gitlab"})}
    assert shown_kinds(intake, gitlab_jira) == {"jira"}
    assert shown_kinds(pr | {"git"}, gitlab_jira) == {"gitlab", "git"}
    for name in ("VERANDA_SOURCES", "VERANDA_FORGE", "VERANDA_JIRA_INTAKE"):
        monkeypatch.delenv(name, raising=False)
    assert configured_names() == {
        phases.TRACKER: frozenset({"linear", "slack"}),
        phases.FORGE: frozenset({"github"}),
    }
    monkeypatch.setenv("VERANDA_SOURCES", "jira, linear")
    monkeypatch.setenv("VERANDA_FORGE", "GitLab")
    assert configured_names() == gitlab_jira | {phases.TRACKER: frozenset({"jira", "linear"})}
