"""Manifests rendered from deploy/helm/values.yaml, for schema validation.

The run Job is rendered by dagster-k8s itself: a K8sRunLauncher loaded in a real
DagsterInstance from the values' ``k8sRunLauncher`` section builds it with the calls it makes
before submitting, so what is validated is what would be submitted. The user-code Deployment
mirrors the chart's
``deployment-user.yaml`` (main container running ``dagster code-server start`` with the
``codeServerArgs``, the sidecars, annotations, security contexts and volumes from the values).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from dagster._core.storage.dagster_run import DagsterRun
from dagster_k8s.job import construct_dagster_k8s_job
from kubernetes.client import ApiClient

ROOT = Path(__file__).resolve().parents[2]
VALUES = ROOT / "deploy" / "helm" / "values.yaml"


CHART_DAGSTER_HOME = "/opt/dagster/dagster_home"
"""The chart's ``global.dagsterHome`` when the values leave it out."""


def load_values() -> dict[str, Any]:
    return yaml.safe_load(VALUES.read_text())


def dagster_home(values: dict[str, Any]) -> str:
    """``DAGSTER_HOME`` as the chart sets it in every pod (``global.dagsterHome``)."""
    return str(values["global"].get("dagsterHome", CHART_DAGSTER_HOME))


RUN_K8S_KEYS = {
    "containerConfig": "container_config",
    "podTemplateSpecMetadata": "pod_template_spec_metadata",
    "podSpecConfig": "pod_spec_config",
    "jobSpecConfig": "job_spec_config",
    "jobMetadata": "job_metadata",
}


def launcher_config(values: dict[str, Any], kubeconfig: Path) -> dict[str, Any]:
    """The instance's ``run_launcher.config``, translated from the values as the chart's
    ``_run-launcher.tpl`` does, but reading a kubeconfig instead of the in-cluster account."""
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    user = values["dagster-user-deployments"]["deployments"][0]
    return {
        "load_incluster_config": False,
        "kubeconfig_file": str(kubeconfig),
        "job_namespace": launcher["jobNamespace"],
        "job_image": f"{user['image']['repository']}:{user['image']['tag']}",
        "image_pull_policy": launcher["imagePullPolicy"],
        "service_account_name": values["global"]["serviceAccountName"],
        "instance_config_map": "veranda-dagster-instance",
        "postgres_password_secret": values["global"]["postgresqlSecretName"],
        "dagster_home": dagster_home(values),
        "env_config_maps": launcher["envConfigMaps"],
        "env_secrets": launcher["envSecrets"],
        "env_vars": launcher["envVars"],
        "volume_mounts": launcher["volumeMounts"],
        "volumes": launcher["volumes"],
        "labels": launcher["labels"],
        "fail_pod_on_run_failure": launcher["failPodOnRunFailure"],
        "resources": launcher["resources"],
        "security_context": launcher["securityContext"],
        "run_k8s_config": {RUN_K8S_KEYS[k]: v for k, v in launcher["runK8sConfig"].items()},
    }


def write_kubeconfig(path: Path) -> Path:
    """A kubeconfig naming a loopback API server nobody listens on: loading needs no cluster."""
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "test",
                "clusters": [{"name": "test", "cluster": {"server": "https://127.0.0.1:6443"}}],
                "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
                "users": [{"name": "test", "user": {}}],
            }
        )
    )
    return path


def render_run_job(launcher: Any, run_id: str = "0f1e2d3c-0000-4000-8000-000000000000") -> dict:
    """The Job the K8sRunLauncher would submit for a ticket run: the same calls as its
    ``_launch_k8s_job_with_args``, minus the API request."""
    run = DagsterRun(job_name="ticket_run", run_id=run_id)
    context = launcher.get_container_context_for_run(run)
    job_config = context.get_k8s_job_config(job_image=None, run_launcher=launcher)
    name = f"dagster-run-{run_id}"
    job = construct_dagster_k8s_job(
        job_config=job_config,
        args=["dagster", "api", "execute_run", "{}"],
        job_name=name,
        pod_name=name,
        component="run_worker",
        user_defined_k8s_config=context.run_k8s_config,
        labels={"dagster/job": "ticket_run", "dagster/run-id": run_id},
    )
    return ApiClient().sanitize_for_serialization(job)


def render_user_deployment(values: dict[str, Any]) -> dict[str, Any]:
    user = values["dagster-user-deployments"]["deployments"][0]
    image = f"{user['image']['repository']}:{user['image']['tag']}"
    labels = {"component": "user-deployments", "deployment": user["name"]}
    main = {
        "name": user["name"],
        "image": image,
        "imagePullPolicy": user["image"]["pullPolicy"],
        "args": [
            "dagster",
            "code-server",
            "start",
            "-h",
            "0.0.0.0",
            "-p",
            str(user["port"]),
            *user["codeServerArgs"],
        ],
        "env": [{"name": "DAGSTER_HOME", "value": dagster_home(values)}, *user["env"]],
        "ports": [{"name": "grpc", "containerPort": user["port"]}],
        "securityContext": user["securityContext"],
        "resources": user["resources"],
        "volumeMounts": user["volumeMounts"],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": f"veranda-dagster-user-deployments-{user['name']}",
            "namespace": "veranda",
            "labels": labels,
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels, "annotations": user["annotations"]},
                "spec": {
                    "serviceAccountName": values["global"]["serviceAccountName"],
                    "securityContext": user["podSecurityContext"],
                    "containers": [main, *user["sidecarContainers"]],
                    "volumes": user["volumes"],
                },
            },
        },
    }


def k8s_documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
