"""The push intake's Kubernetes manifests (``deploy/k8s/intake.yaml``) and the chart's instance
class (``additionalInstanceConfig`` in ``deploy/helm/values.yaml``).

The receiver is its own pod so the webhook secrets live there alone; it must read the same
instance and workspace as the daemon (or its runs and the poll's would not share run keys), run
the product's own CLI with arguments that CLI accepts, and filter tickets as the poll does."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import kubernetes_validate
import pytest
import yaml
from dagster._core.instance.ref import InstanceRef

from tests.observability.render import (
    ROOT,
    dagster_home,
    k8s_documents,
    load_values,
    render_user_deployment,
)
from tests.observability.test_deploy import K8S_VERSION
from tests.support.helm_secrets import vault_exports
from veranda_dagster.cli import OneLineParser
from veranda_dagster.cli import intake as intake_cli
from veranda_dagster.instance import VerandaInstance
from veranda_dagster.resources.secrets import service_secrets
from veranda_dagster.sources import webhook_auth
from veranda_dagster.sources.webhook_server import scope_from_env
from veranda_dagster.vendors import registry

MANIFEST = ROOT / "deploy/k8s/intake.yaml"


def _documents() -> dict[str, dict[str, Any]]:
    return {doc["kind"]: doc for doc in k8s_documents(MANIFEST)}


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return dict(containers[0])


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def _mounted_config_maps(deployment: dict[str, Any]) -> dict[str, str]:
    """Mount path -> the ConfigMap mounted there."""
    pod = deployment["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    return {
        m["mountPath"]: volumes[m["name"]]["configMap"]["name"]
        for m in _container(deployment)["volumeMounts"]
        if "configMap" in volumes[m["name"]]
    }


def _parsed_args(container: dict[str, Any]) -> Any:
    args = container["args"]
    assert args[:2] == ["veranda", "intake"]
    parser = OneLineParser(prog="veranda intake")
    intake_cli.add_arguments(parser)
    return parser.parse_args(args[2:])


def _secret_names(deployment: dict[str, Any]) -> set[str]:
    return {e.name for e in vault_exports(deployment)}


def test_the_manifests_validate() -> None:
    docs = _documents()
    assert set(docs) == {"Deployment", "Service"}
    for doc in docs.values():
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_the_intake_pod_holds_the_webhook_secrets_and_no_other_secret() -> None:
    deployment = _documents()["Deployment"]
    exports = vault_exports(deployment)
    assert {e.name for e in exports} == set(webhook_auth.SECRET_ENV.values())
    assert all(e.optional for e in exports), "a source without a secret stays off, not broken"
    others = {n for table in (registry.secret_env(), service_secrets()) for v in table.values()
              for n in v}  # fmt: skip
    assert others and not others & _secret_names(deployment)
    # only the database password arrives outside Vault, from the chart's own Secret
    env = _env(_container(deployment))
    refs = {n: e["valueFrom"]["secretKeyRef"]["name"] for n, e in env.items() if "valueFrom" in e}
    assert refs == {"DAGSTER_PG_PASSWORD": load_values()["global"]["postgresqlSecretName"]}


def test_a_model_key_added_to_the_intake_pod_is_caught() -> None:
    """The twin: the reading above sees a provider key someone templates into this pod."""
    deployment = copy.deepcopy(_documents()["Deployment"])
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    key = "vault.hashicorp.com/agent-inject-template-webhooks.env"
    annotations[key] = annotations[key].replace(
        "{{- end }}\n{{- end }}",
        '{{- end }}\nexport ANTHROPIC_API_KEY="{{ .Data.data.anthropic_api_key }}"\n{{- end }}',
    )
    assert "ANTHROPIC_API_KEY" in _secret_names(deployment)


def test_the_pod_runs_the_product_cli_on_the_daemons_instance_and_workspace() -> None:
    docs = _documents()
    deployment, service = docs["Deployment"], docs["Service"]
    container = _container(deployment)
    args = _parsed_args(container)
    assert args.action == "serve" and args.host == "0.0.0.0"
    port = {p["name"]: p["containerPort"] for p in container["ports"]}["webhooks"]
    assert args.port == port
    assert [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [(port, "webhooks")]
    assert service["spec"]["selector"].items() <= (
        deployment["spec"]["template"]["metadata"]["labels"].items()
    )
    values = load_values()
    home = dagster_home(values)
    assert _env(container)["DAGSTER_HOME"]["value"] == home
    maps = _mounted_config_maps(deployment)
    # the same instance ConfigMap the code server's ops sidecar reads
    user = render_user_deployment(values)["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in user["volumes"]}
    sidecar = next(c for c in user["containers"] if c["name"] == "ops")
    sidecar_maps = {
        m["mountPath"]: volumes[m["name"]]["configMap"]["name"]
        for m in sidecar["volumeMounts"]
        if "configMap" in volumes[m["name"]]
    }
    instance_map = sidecar_maps[f"{home}/dagster.yaml"]
    assert maps[f"{home}/dagster.yaml"] == instance_map
    # the chart's workspace ConfigMap (`<fullname>-workspace-yaml`) holds the workspace file
    fullname = instance_map.removesuffix("-instance")
    workspace_dir = str(Path(args.workspace).parent)
    assert maps[workspace_dir] == f"{fullname}-workspace-yaml"
    assert Path(args.workspace).name == "workspace.yaml"


class _Recording(dict[str, str]):
    """An empty environment that remembers which variables were asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)


def _scope_variables() -> set[str]:
    environ = _Recording()
    scope_from_env(environ)
    assert environ.asked, "the scope reads its filters from the environment"
    return environ.asked


def _values_of(env: Mapping[str, dict[str, Any]], names: set[str]) -> dict[str, Any]:
    return {n: env[n].get("value") for n in names if n in env}


def test_the_intake_filters_tickets_as_the_poll_does() -> None:
    """A filter set on the code server (where the poll runs) and not on the receiver would make
    a push start runs the poll would never start."""
    names = _scope_variables()
    user = render_user_deployment(load_values())["spec"]["template"]["spec"]["containers"][0]
    intake = _container(_documents()["Deployment"])
    assert _values_of(_env(intake), names) == _values_of(_env(user), names)


def test_a_filter_set_on_the_code_server_alone_is_caught() -> None:
    names = _scope_variables()
    user = render_user_deployment(load_values())["spec"]["template"]["spec"]["containers"][0]
    user_env = {**_env(user), "JIRA_PROJECT": {"name": "JIRA_PROJECT", "value": "PAY"}}
    intake = _container(_documents()["Deployment"])
    assert "JIRA_PROJECT" in names
    assert _values_of(_env(intake), names) != _values_of(user_env, names)


def test_the_intake_network_policy_opens_its_port_alone() -> None:
    policies = {
        d["metadata"]["name"]: d for d in k8s_documents(ROOT / "deploy/k8s/networkpolicy.yaml")
    }
    policy = policies["veranda-intake-ingress"]["spec"]
    deployment = _documents()["Deployment"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert policy["podSelector"]["matchLabels"].items() <= labels.items()
    port = _parsed_args(_container(deployment)).port
    assert [p["port"] for rule in policy["ingress"] for p in rule["ports"]] == [port]
    run = policies["veranda-run-egress"]["spec"]["podSelector"]["matchLabels"]
    assert not run.items() <= labels.items(), "the intake is not a run pod"


@pytest.fixture
def chart_home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    yield home


def _load(home: Path, extra: dict[str, Any]) -> dg.DagsterInstance:
    (home / "dagster.yaml").write_text(yaml.safe_dump(extra))
    return dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home)))


def test_the_charts_instance_is_verandas_instance(chart_home: Path) -> None:
    """What the chart appends to its dagster.yaml loads the product's instance class, the one
    both shipped dagster.yaml files name (storage left at its default here: the class does not
    depend on it)."""
    extra = load_values()["additionalInstanceConfig"]
    assert set(extra) == {"instance_class"}
    for shipped in ("dagster.yaml", "dagster.postgres.yaml"):
        assert (
            extra["instance_class"]
            == yaml.safe_load((ROOT / shipped).read_text())["instance_class"]
        )
    with _load(chart_home, extra) as instance:
        assert type(instance) is VerandaInstance


def test_without_it_the_chart_would_run_dagsters_own_instance(chart_home: Path) -> None:
    with _load(chart_home, {}) as instance:
        assert type(instance) is dg.DagsterInstance
