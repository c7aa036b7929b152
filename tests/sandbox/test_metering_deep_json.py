"""JSON nested past the parser's recursion, at each place the wire meter parses, through the
real credential proxy (its unix socket) with the vendor as an ``httpx.MockTransport``.

The request body comes from the sandboxed CLI and the answer from the vendor's upstream, so
either may be ten thousand ``[``. Each is "not a document" to the meter: the answer reaches
the CLI whole, nothing is charged and the meter says it saw no usage; never a
``RecursionError`` that drops the CLI's connection mid-answer or is logged as a meter crash.
The twin: the same places with nesting a real answer could have are still read and charged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.sandbox.test_spend_metering import TICKET, turn_meter
from veranda_dagster.sandbox.egress import X_API_KEY, Egress, Upstream
from veranda_dagster.sandbox.proxy import CredentialProxy
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.value_stores import FilesystemValues
from veranda_dagster.vendors.wire_meter import WireMeter

DEEP = 10_000
"""Far past CPython's default recursion limit (1000): the decoder raises ``RecursionError``."""

USAGE = {"input_tokens": 10, "output_tokens": 5}
ANSWER = {"type": "message", "model": "claude-opus-sim", "usage": USAGE}


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@dataclass(frozen=True)
class Place:
    """One parse of the meter: what the CLI sends, what the vendor answers, its type."""

    request: bytes
    answer: bytes
    content_type: str


def sse(*events: bytes) -> bytes:
    return b"".join(b"data: " + e + b"\n\n" for e in events)


def places(depth: int) -> dict[str, Place]:
    deep = nested(depth)
    with_deep = json.dumps({**ANSWER, "pad": "@"}).encode().replace(b'"@"', deep)
    return {
        "request body": Place(
            b'{"model": ' + deep + b"}", json.dumps(ANSWER).encode(), "application/json"
        ),
        "json answer": Place(b'{"model": "claude-opus-sim"}', with_deep, "application/json"),
        "sse event": Place(
            b'{"model": "claude-opus-sim"}',
            sse(deep, json.dumps({"type": "message_start", "message": ANSWER}).encode()),
            "text/event-stream",
        ),
    }


@pytest.fixture()
def ledger(tmp_path: Path) -> StoreLedger:
    return StoreLedger(FilesystemValues(tmp_path / "values"))


class Relay:
    """A proxy whose upstream answers each request with the next queued ``Place``'s answer;
    ``close`` returns once every answer was relayed and charged (the meter's ``finish``)."""

    def __init__(self, ledger: StoreLedger) -> None:
        self.queued: list[Place] = []
        egress = Egress(
            base_url="https://api.vendor.test", keys={"K": "real"}, carriers={"K": (X_API_KEY,)}
        )
        subs = egress.substitutions()
        self.key = subs[0].placeholder
        self.proxy = CredentialProxy(
            Upstream.of(egress.base_url),
            subs,
            transport=httpx.MockTransport(self._upstream),
            meter=WireMeter(turn_meter(ledger)),
        ).__enter__()
        transport = httpx.HTTPTransport(uds=str(self.proxy.socket_path))
        self.client = httpx.Client(transport=transport, base_url="http://bridge", timeout=10)

    def _upstream(self, request: httpx.Request) -> httpx.Response:
        place = self.queued.pop(0)
        return httpx.Response(
            200, content=place.answer, headers={"content-type": place.content_type}
        )

    def send(self, place: Place) -> httpx.Response:
        self.queued.append(place)
        return self.client.post(
            "/v1/messages",
            content=place.request,
            headers={"x-api-key": self.key, "content-type": "application/json"},
        )

    def close(self) -> None:
        self.client.close()
        self.proxy.close()


@pytest.fixture()
def relay(ledger: StoreLedger) -> Iterator[Relay]:
    relay = Relay(ledger)
    try:
        yield relay
    finally:
        relay.close()


@pytest.mark.parametrize("name", list(places(DEEP)))
def test_json_nested_past_the_parser_is_no_document_to_the_meter(
    relay: Relay,
    ledger: StoreLedger,
    caplog: pytest.LogCaptureFixture,
    name: str,
) -> None:
    place = places(DEEP)[name]
    with caplog.at_level("WARNING"):
        answer = relay.send(place)
        assert answer.status_code == 200
        assert answer.content == place.answer  # relayed whole, the meter's parse aside
        relay.close()  # every answer charged
    assert "metering an answer failed" not in caplog.text
    assert "RecursionError" not in caplog.text
    if name == "request body":  # the answer still reports usage: charged, model from it
        assert [e.model for e in ledger.entries(TICKET)] == ["claude-opus-sim"]
    elif name == "json answer":
        assert ledger.entries(TICKET) == []
        assert "reported no usage" in caplog.text
    else:  # the deep event is skipped, the next one still read
        assert [e.model for e in ledger.entries(TICKET)] == ["claude-opus-sim"]


@pytest.mark.parametrize("name", list(places(50)))
def test_json_nested_as_deep_as_a_real_answer_is_still_read(
    relay: Relay, ledger: StoreLedger, name: str
) -> None:
    """The twin: fifty levels (deeper than any vendor's answer, well inside the parser) at
    each place; every answer is charged, the usage read beside the nesting."""
    answer = relay.send(places(50)[name])
    assert answer.status_code == 200
    relay.close()
    assert len(ledger.entries(TICKET)) == 1
