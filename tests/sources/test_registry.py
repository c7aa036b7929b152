"""Each ticket source declares everything about itself in its ``sources/<name>/`` folder; what every
source shares is derived, a source missing a piece is refused loudly, and no two sources may
own one key."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import dagster as dg
import httpx
import pytest

from veranda_dagster import definitions
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.domain.core.ticket_key import is_ticket_key
from veranda_dagster.domain.core.ticket_source import KeyGrammar, SourcePort
from veranda_dagster.resources import sources_enabled
from veranda_dagster.resources.tickets import registered_type
from veranda_dagster.settings import secret
from veranda_dagster.sim import choices
from veranda_dagster.sources import registry, source_names
from veranda_dagster.sources.intake import intake_sensor
from veranda_dagster.sources.resource import TicketSourceResource

NAMES = [info.name for info in registry.sources()]


class AcmeResource(TicketSourceResource):
    """A complete new source's resource, declared the way a new resource module would."""

    token: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AcmeResource:
        return cls(token=secret("ACME_TOKEN", environ))

    @property
    def configured(self) -> bool:
        return bool(self.token)

    def client(self) -> httpx.Client:
        return httpx.Client()


def _acme_address(key: str) -> Ticket:
    return Ticket(id=key, source="acme", title=key, external_id=key.removeprefix("acme-"))


def _sensor_reading(key: str) -> dg.SensorDefinition:
    """An intake sensor that takes the resource bound under ``key``."""
    return intake_sensor(
        name="acme_tickets",
        source=key,
        tick=lambda context, resource, client: dg.SkipReason("nothing"),
        interval_s=60,
        description="Acme tickets",
        default_status=dg.DefaultSensorStatus.STOPPED,
    )


ACME_KEYS = KeyGrammar("acme-PAY-17", lambda k: k.startswith("acme-"), _acme_address)


class AcmePort(SourcePort[httpx.Client]):
    """A complete new source's port: its name and keys, reading and posting over its client."""

    name = "acme"
    keys = ACME_KEYS

    def fetch(self, key: str) -> Ticket:
        return _acme_address(key)

    def post(self, ticket: Ticket, text: str, marker: str) -> str:
        return marker


def _port(**declared: Any) -> type[SourcePort[Any]]:
    """``AcmePort`` with other class attributes (``name``, ``keys``)."""
    return type("OtherAcmePort", (AcmePort,), declared)


ACME = registry.TicketSourceInfo(
    port=AcmePort,
    title="Acme",
    resource=AcmeResource,
    secret_env=("ACME_TOKEN",),
    setup_hint="set ACME_TOKEN",
    sensor=_sensor_reading("acme"),
    token_shapes=(TokenShape("acme", r"acme_[a-z0-9]{16,}", "acme_0123456789abcdef", "made up"),),
)


def test_every_source_module_registers_its_own_name_and_only_those_are_known():
    assert NAMES == list(source_names()) == ["jira", "linear", "slack"]


@pytest.mark.parametrize("name", NAMES)
def test_every_builtin_source_declares_every_piece(name: str) -> None:
    info = registry.get(name)
    assert registry.missing_pieces(info) == []
    assert registry.address(info.keys.example).source == name


def test_a_complete_new_source_needs_nothing_more() -> None:
    assert registry.missing_pieces(ACME) == []


class TwoSecretAcme(AcmeResource):
    """Binds a second secret its declaration does not list (so no deployment would carry it)."""

    signing_key: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TwoSecretAcme:
        return cls(
            token=secret("ACME_TOKEN", environ), signing_key=secret("ACME_SIGNING_KEY", environ)
        )


class LeakyAcme(AcmeResource):
    """Configured with no secret set: its key would be read from somewhere undeclared."""

    @property
    def configured(self) -> bool:
        return True


def _wrong_address(key: str) -> Ticket:
    return Ticket(id=key, source="linear", title=key)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"title": ""}, r"\btitle\b"),
        ({"setup_hint": ""}, r"\bsetup_hint\b"),
        ({"secret_env": ()}, r"\bsecret_env\b"),
        ({"secret_env": ("ACME_TOKEN", "ACME_KEY")}, r"secret_env ACME_KEY is bound by no field"),
        ({"resource": TwoSecretAcme}, r"binds ACME_SIGNING_KEY, which secret_env leaves out"),
        ({"port": _port(name="")}, r"port\.name"),
        ({"port": _port(keys=None)}, r"port\.keys"),
        ({"port": _port(name="Acme")}, r"name 'Acme' is not lowercase"),
        ({"port": _port(keys=replace(ACME_KEYS, example="acme PAY"))}, r"not a ticket key"),
        ({"port": _port(keys=replace(ACME_KEYS, example="ENG-1"))}, r"refuses .* own example"),
        ({"port": _port(keys=replace(ACME_KEYS, address=_wrong_address))}, r"keys\.address"),
        ({"sensor": _sensor_reading("linear")}, r"takes resources \['linear'\]"),
        ({"resource": LeakyAcme}, r"configured with no secret set"),
    ],
)
def test_a_source_missing_a_piece_is_refused_at_registration(
    change: dict[str, Any], expected: str
) -> None:
    incomplete = replace(ACME, **change)
    with pytest.raises(ConfigError, match=rf"is incomplete: .*{expected}"):
        registry.SOURCES.register(incomplete)
    assert "acme" not in {i.name for i in registry.sources()}


def test_two_sources_owning_one_key_are_refused():
    assert registry.shared_keys(registry.sources()) == []
    greedy = replace(ACME, port=_port(keys=replace(ACME_KEYS, owns=is_ticket_key)))
    shared = registry.shared_keys([*registry.sources(), greedy])
    assert any(s.startswith("ticket sources linear and acme both own 'ENG-123'") for s in shared)
    assert len(shared) == len(NAMES)  # every builtin example is also claimed by the greedy one


def test_enabled_sources_and_listed_sensors_follow_the_declarations():
    assert sources_enabled.requested_sources({"VERANDA_SOURCES": "linear,trello"}) == [
        "linear",
        "trello",
    ]
    with pytest.raises(ConfigError, match=r"unknown source.*trello.*choose from jira, linear"):
        sources_enabled.enabled_sources({"VERANDA_SOURCES": "linear,trello"})
    on_by_default = [i.sensor.name for i in registry.sources() if i.on_by_default]
    assert [
        s.name for s in registry.listed_sensors(sources_enabled.enabled_sources({}))
    ] == on_by_default
    listed = registry.listed_sensors(
        sources_enabled.enabled_sources({"VERANDA_SOURCES": "slack,jira"})
    )
    assert {s.name for s in listed} == {i.sensor.name for i in registry.sources()}


def test_an_unknown_source_fails_the_definitions_load_not_the_asset_import(monkeypatch):
    """The kind icons (read at asset import) show the names as written; the Definitions,
    built from the same reading, refuse the unknown one by name."""
    from veranda_dagster.assets._policy import configured_names
    from veranda_dagster.domain.core import phases

    monkeypatch.setenv("VERANDA_SOURCES", "linear,trello")
    monkeypatch.delenv("VERANDA_JIRA_INTAKE", raising=False)
    assert configured_names()[phases.TRACKER] == {"linear", "trello"}
    with pytest.raises(ConfigError, match=r"unknown source\(s\) trello"):
        definitions.build_definitions()


def test_a_key_routes_to_the_one_source_owning_it_and_an_unowned_one_is_refused():
    assert registry.address("slack-C0ACME001-1712345670.000200").thread_ts == "1712345670.000200"
    assert registry.address("jira-PAY-17").external_id == "PAY-17"
    with pytest.raises(ConfigError, match="no ticket source owns"):
        registry.address("acme-PAY-17")
    assert registry.keys_mentioned("see ENG-12, not jira-PAY-3") == ["ENG-12"]


def test_every_source_is_bound_nested_and_listed_in_the_definitions():
    resources = definitions.defs.resources
    fields = set(registered_type().model_fields) - {"enabled"}
    assert fields == set(NAMES) <= set(resources)
    tickets = resources["tickets"]
    assert all(getattr(tickets, name) is resources[name] for name in NAMES)
    sensors = {s.name: s for s in definitions.defs.sensors}
    for info in registry.sources():
        if info.on_by_default:
            assert sensors[info.sensor.name].required_resource_keys == {info.name}


def test_the_simulations_sensor_table_agrees_with_the_registry():
    assert set(choices.TICKET_SOURCES) <= set(NAMES)
    assert {name: registry.get(name).sensor.name for name in choices.SENSORS} == choices.SENSORS


def test_the_known_names_cost_no_dagster_import():
    """``veranda detect-repo`` checks a ticket file's source without paying for Dagster."""
    probe = (
        "import sys; from veranda_dagster.sources import source_names; "
        "print(','.join(source_names()), 'dagster' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [",".join(NAMES), "False"]
