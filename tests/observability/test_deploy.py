"""Helm values against the chart's schema, rendered manifests against Kubernetes' schemas,
the K8sRunLauncher loading in a DagsterInstance, and the values' operational promises."""

from __future__ import annotations

import copy
import json
import re

import dagster as dg
import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.observability.render import (
    ROOT,
    dagster_home,
    k8s_documents,
    launcher_config,
    load_values,
    render_run_job,
    render_user_deployment,
    write_kubeconfig,
)
from veranda_dagster.cli.serve_ops import DEFAULT_PORT
from veranda_dagster.concurrency import MAX_CONCURRENT_RUNS, POOL_DEFAULT_LIMIT
from veranda_dagster.jobs import RUN_MAX_RUNTIME_S, TICKET_RUN_TAG
from veranda_dagster.partitions import TICKET_TAG

K8S_VERSION = "1.33.0"
SCHEMA = json.loads((ROOT / "tests/fixtures/ops/dagster_values_subset.schema.json").read_text())
PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")
SECRET_SHAPES = re.compile(
    r"(sk-(ant-|proj-)?[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{16,}|xox[abp]-[A-Za-z0-9-]{10,}"
    r"|lin_api_[A-Za-z0-9]{16,}|AKIA[0-9A-Z]{16}|postgres(ql)?(\+\w+)?://[^\s:]+:[^\s@]+@)"
)


def _errors(values: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA)
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(values)]


def test_values_validate_against_the_chart_schema() -> None:
    assert _errors(load_values()) == []


@pytest.mark.parametrize(
    "path, key",
    [
        (["runLauncher", "config", "k8sRunLauncher"], "loadInClusterConfig"),  # case typo
        (["dagsterDaemon"], "runMonitor"),
        (["dagsterDaemon", "runCoordinator", "config", "queuedRunCoordinator"], "tagLimits"),
        ([], "ingres"),
    ],
)
def test_a_misspelled_key_fails_the_schema(path: list[str], key: str) -> None:
    values = copy.deepcopy(load_values())
    node = values
    for part in path:
        node = node[part]
    node[key] = True
    errors = _errors(values)
    assert errors and any(key in e for e in errors)
    assert _errors(load_values()) == []  # and only because of the typo


@pytest.fixture(scope="module")
def launcher(tmp_path_factory):
    kubeconfig = write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")
    overrides = {
        "run_launcher": {
            "module": "dagster_k8s",
            "class": "K8sRunLauncher",
            "config": launcher_config(load_values(), kubeconfig),
        }
    }
    with dg.instance_for_test(overrides=overrides) as instance:
        yield instance.run_launcher


def test_k8s_run_launcher_config_loads_in_a_dagster_instance(launcher) -> None:
    from dagster_k8s import K8sRunLauncher

    assert isinstance(launcher, K8sRunLauncher)
    assert launcher.job_namespace == "veranda"
    assert launcher.fail_pod_on_run_failure is True
    assert launcher.load_incluster_config is False


def test_rendered_run_job_validates_and_carries_vault_not_secrets(launcher) -> None:
    job = render_run_job(launcher)
    kubernetes_validate.validate(job, K8S_VERSION, strict=True)
    pod = job["spec"]["template"]
    annotations = pod["metadata"]["annotations"]
    assert annotations["vault.hashicorp.com/agent-inject"] == "true"
    assert annotations["vault.hashicorp.com/agent-pre-populate-only"] == "true"
    template = annotations["vault.hashicorp.com/agent-inject-template-providers.env"]
    for key in PROVIDER_KEYS:
        assert f"export {key}=" in template
    assert pod["metadata"]["labels"]["veranda/role"] == "run-worker"
    assert job["spec"]["backoffLimit"] == 0
    spec = pod["spec"]
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["automountServiceAccountToken"] is False
    container = spec["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["resources"]["limits"]["memory"] == "4Gi"
    env_names = {e["name"] for e in container.get("env", [])}
    assert not env_names & set(PROVIDER_KEYS)  # keys come from Vault files, not the manifest
    assert not SECRET_SHAPES.search(json.dumps(job))


def test_run_pods_can_start_the_sandbox_under_the_shipped_seccomp_profile(launcher) -> None:
    """bubblewrap needs the shipped Localhost profile (RuntimeDefault refuses its namespaces),
    an unmasked /proc (for its fresh procfs), which Kubernetes allows only with hostUsers:
    false; the instance's home is outside the folders the sandbox binds read-only."""
    spec = render_run_job(launcher)["spec"]["template"]["spec"]
    assert spec["hostUsers"] is False
    profile = spec["securityContext"]["seccompProfile"]
    assert profile["type"] == "Localhost"
    assert profile["localhostProfile"] == "veranda/veranda-bwrap.json"
    assert (ROOT / "deploy/seccomp/veranda-bwrap.json").is_file()
    main = spec["containers"][0]
    assert main["securityContext"]["procMount"] == "Unmasked"
    assert main["securityContext"]["capabilities"]["drop"] == ["ALL"]
    user = load_values()["dagster-user-deployments"]["deployments"][0]  # runs take its env
    env = {e["name"]: e.get("value") for e in user["env"]}
    assert env["VERANDA_SANDBOX"] == "bwrap"
    assert not dagster_home(load_values()).startswith("/opt/")


def test_rendered_user_deployment_validates_with_one_ops_port() -> None:
    deployment = render_user_deployment(load_values())
    kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["annotations"]["vault.hashicorp.com/agent-inject"] == "true"
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(DEFAULT_PORT)
    ops = [c for c in pod["spec"]["containers"] if c["name"] == "ops"]
    assert len(ops) == 1
    assert [p["containerPort"] for p in ops[0]["ports"]] == [DEFAULT_PORT]
    assert ops[0]["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert ops[0]["readinessProbe"]["httpGet"]["path"] == "/readyz"
    # /readyz reads the chart's instance: the sidecar gets its config and the PG password ref
    mounts = {m["mountPath"]: m["name"] for m in ops[0]["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    instance_volume = volumes[mounts[f"{dagster_home(load_values())}/dagster.yaml"]]
    assert instance_volume["configMap"]["name"] == "veranda-dagster-instance"
    env = {e["name"]: e for e in ops[0]["env"]}
    assert (
        env["DAGSTER_PG_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"]
        == (load_values()["global"]["postgresqlSecretName"])
    )
    main = pod["spec"]["containers"][0]
    assert main["args"][:3] == ["dagster", "code-server", "start"]
    assert "veranda_dagster.definitions" in main["args"]


def test_network_policies_validate_and_deny_run_ingress() -> None:
    docs = k8s_documents(ROOT / "deploy/k8s/networkpolicy.yaml")
    assert len(docs) == 3
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    run = docs[0]["spec"]
    assert run["podSelector"]["matchLabels"] == {"veranda/role": "run-worker"}
    assert run["ingress"] == [] and set(run["policyTypes"]) == {"Ingress", "Egress"}


def test_values_keep_the_operational_promises() -> None:
    values = load_values()
    daemon = values["dagsterDaemon"]
    assert values["ingress"]["enabled"] is False
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert "tagConcurrencyLimits" not in daemon["runCoordinator"]["config"]["queuedRunCoordinator"]
    runs = values["concurrency"]["runs"]
    assert values["concurrency"]["pools"] == {"defaultLimit": POOL_DEFAULT_LIMIT}
    assert runs["maxConcurrentRuns"] == MAX_CONCURRENT_RUNS
    instance = yaml.safe_load((ROOT / "dagster.yaml").read_text())["concurrency"]["runs"]
    assert runs["tagConcurrencyLimits"] == instance["tag_concurrency_limits"]  # same numbers
    assert [limit["key"] for limit in runs["tagConcurrencyLimits"]] == [
        TICKET_RUN_TAG,
        "dagster/backfill",
        "dagster/partition",
        TICKET_TAG,
    ]
    assert daemon["runMonitoring"]["maxRuntimeSeconds"] == RUN_MAX_RUNTIME_S
    assert daemon["runMonitoring"]["enabled"] is True
    assert daemon["runRetries"] == {
        "enabled": True,
        "maxRetries": 2,
        "retryOnAssetOrOpFailure": False,
    }
    assert values["postgresql"]["enabled"] is False
    assert values["generatePostgresqlPasswordSecret"] is False
    assert values["postgresql"]["postgresqlPassword"] == ""
    assert values["global"]["postgresqlSecretName"]
    text = (ROOT / "deploy/helm/values.yaml").read_text()
    assert not SECRET_SHAPES.search(text)
    assert "value: sk-" not in text and "apiKey:" not in text
