"""The credential proxy meters every model answer into the ticket's ledger, and refuses a
request once the budget is spent: the real proxy (its unix socket), the real wire meter, the
scripted model server as the vendor on loopback, and the ledger on the filesystem value store.

The model server keeps its own invoice (``billed``: the usage of each answer it produced), so
each test holds the ledger against what the "vendor" billed, to the micro-dollar.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from veranda_dagster.domain.core.budget import SpendEntry
from veranda_dagster.domain.core.models import Usage
from veranda_dagster.domain.core.spend_meter import SpendCap, TurnMeter
from veranda_dagster.sandbox.egress import BEARER, X_API_KEY, X_GOOG_API_KEY, Egress, Upstream
from veranda_dagster.sandbox.proxy import BUDGET_REFUSED_STATUS, CredentialProxy
from veranda_dagster.sim.model_server import ScriptedModelServer
from veranda_dagster.sim.sim_vendors import SIM_KEYS, model_credentials
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.value_stores import FilesystemValues
from veranda_dagster.vendors.wire_meter import WireMeter

TICKET = "ENG-37"
PROMPT = "Role: implementer\nFix the invoice total."


@pytest.fixture()
def model() -> Iterator[ScriptedModelServer]:
    keys, tokens = model_credentials()
    with ScriptedModelServer(api_keys=keys, oauth_tokens=tokens) as server:
        yield server


@pytest.fixture()
def ledger(tmp_path: Path) -> StoreLedger:
    return StoreLedger(FilesystemValues(tmp_path / "values"))


def turn_meter(ledger: StoreLedger, cap_usd: float = 100.0) -> TurnMeter:
    def charge(vendor: str, model: str | None, usage: Usage, usd: float) -> None:
        entry = SpendEntry(role="implementer", vendor=vendor, model=model, usd=usd)
        ledger.record(TICKET, entry.model_copy(update={"source": "proxy"}))

    cap = SpendCap(f"ticket {TICKET}", cap_usd, lambda: ledger.spent(TICKET))
    return TurnMeter([cap], charge)


WIRES = {
    # wire: (key variable, carrier, path, body without "stream")
    "anthropic": (
        "SIM_ANTHROPIC_API_KEY",
        X_API_KEY,
        "/v1/messages",
        {"model": "claude-opus-sim", "messages": [{"role": "user", "content": PROMPT}]},
    ),
    "responses": (
        "SIM_OPENAI_API_KEY",
        BEARER,
        "/v1/responses",
        {"model": "gpt-5.5", "input": PROMPT},
    ),
    "chat": (
        "SIM_XAI_API_KEY",
        BEARER,
        "/v1/chat/completions",
        {"model": "grok-4.7", "messages": [{"role": "user", "content": PROMPT}]},
    ),
    "gemini": ("SIM_GEMINI_API_KEY", X_GOOG_API_KEY, "/v1beta/models/gemini-3.8-flash", {}),
}


def proxy_for(
    model: ScriptedModelServer, wire: str, meter: TurnMeter
) -> tuple[CredentialProxy, dict[str, str]]:
    env, carrier, _, _ = WIRES[wire]
    egress = Egress(base_url=model.base_url, keys={env: SIM_KEYS[env]}, carriers={env: (carrier,)})
    subs = egress.substitutions()
    proxy = CredentialProxy(Upstream.of(model.base_url), subs, meter=WireMeter(meter))
    header = carrier.header or ""
    return proxy.__enter__(), {header: carrier.scheme + subs[0].placeholder}


def ask(proxy: CredentialProxy, wire: str, headers: dict[str, str], stream: bool) -> httpx.Response:
    _, _, path, body = WIRES[wire]
    if wire == "gemini":
        path += ":streamGenerateContent?alt=sse" if stream else ":generateContent"
        body = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
    else:
        body = {**dict(body), "stream": stream}  # type: ignore[call-overload]
    transport = httpx.HTTPTransport(uds=str(proxy.socket_path))
    with httpx.Client(transport=transport, base_url="http://bridge", timeout=30) as client:
        return client.post(path, json=body, headers=headers)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("wire", list(WIRES))
def test_each_wire_is_metered_to_exactly_what_the_model_billed(
    model: ScriptedModelServer, ledger: StoreLedger, wire: str, stream: bool
) -> None:
    meter = turn_meter(ledger)
    proxy, headers = proxy_for(model, wire, meter)
    try:
        for _ in range(2):
            assert ask(proxy, wire, headers, stream).status_code == 200
    finally:
        proxy.close()
    assert len(model.billed) == 2 and model.billed_usd() > 0
    entries = ledger.entries(TICKET)
    assert [e.source for e in entries] == ["proxy", "proxy"]
    assert ledger.spent(TICKET) == model.billed_usd() == meter.usd
    billed_usage = model.billed[0].usage + model.billed[1].usage
    assert (meter.usage.input, meter.usage.output) == (billed_usage.input, billed_usage.output)


def test_a_request_past_the_cap_is_refused_before_it_reaches_the_model(
    model: ScriptedModelServer, ledger: StoreLedger
) -> None:
    """Under a cap smaller than two answers, the first request crosses it and the second is
    refused by the proxy (402, the reason in the body): the model never sees it, the ledger
    equals what was billed, and the overshoot is at most the one request that crossed."""
    meter = turn_meter(ledger, cap_usd=0.00001)
    proxy, headers = proxy_for(model, "anthropic", meter)
    try:
        first = ask(proxy, "anthropic", headers, stream=True)
        second = ask(proxy, "anthropic", headers, stream=True)
    finally:
        proxy.close()
    assert first.status_code == 200
    assert second.status_code == BUDGET_REFUSED_STATUS
    assert "budget reached: ticket ENG-37" in second.json()["error"]["message"]
    assert len(model.calls) == 1 and len(model.billed) == 1
    assert ledger.spent(TICKET) == model.billed_usd()
    assert ledger.spent(TICKET) - 0.00001 <= model.billed[0].usd
    assert meter.refusal is not None and meter.refusal.cap == f"ticket {TICKET}"


def test_an_answer_the_client_abandons_is_still_read_and_metered(
    model: ScriptedModelServer, ledger: StoreLedger
) -> None:
    """A CLI killed while its answer streams: the proxy reads the answer to its end for the
    usage the vendor billed, and closing the proxy waits for that."""
    import socket

    meter = turn_meter(ledger)
    proxy, headers = proxy_for(model, "anthropic", meter)
    arrived = model.block("implementer")
    body = (
        b'{"model": "claude-opus-sim", "stream": true, "messages": '
        b'[{"role": "user", "content": "Role: implementer"}]}'
    )
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    raw = (
        f"POST /v1/messages HTTP/1.1\r\nhost: bridge\r\n{head}"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(str(proxy.socket_path))
    conn.sendall(raw)
    assert arrived.wait(10)
    conn.close()  # the CLI is gone before a byte of the answer came
    releaser = threading.Timer(0.2, model.release, ("implementer",))
    releaser.start()
    try:
        pause = threading.Event()
        for _ in range(200):  # bounded: the answer is produced after the release
            if ledger.entries(TICKET):
                break
            pause.wait(0.05)
    finally:
        proxy.close()
        releaser.join()
    assert len(model.billed) == 1
    assert ledger.spent(TICKET) == model.billed_usd() > 0


def test_closing_waits_for_an_answer_in_flight_only_up_to_its_bound(
    ledger: StoreLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer whose head came but whose body stalls: closing the proxy waits for it to be
    metered, but no longer than ``METER_SETTLE_TIMEOUT_S``."""
    import time

    from veranda_dagster.sandbox import proxy as proxy_module

    monkeypatch.setattr(proxy_module, "METER_SETTLE_TIMEOUT_S", 0.5)
    stall = threading.Event()

    def stalled_body() -> Iterator[bytes]:
        yield b'event: message_start\ndata: {"type": "message_start", "message": {}}\n\n'
        stall.wait(30)

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=stalled_body())

    egress = Egress(
        base_url="https://api.vendor.test", keys={"K": "real"}, carriers={"K": (X_API_KEY,)}
    )
    subs = egress.substitutions()
    proxy = CredentialProxy(
        Upstream.of(egress.base_url),
        subs,
        transport=httpx.MockTransport(upstream),
        meter=WireMeter(turn_meter(ledger)),
    ).__enter__()
    transport = httpx.HTTPTransport(uds=str(proxy.socket_path))
    client = httpx.Client(transport=transport, base_url="http://bridge", timeout=30)
    try:
        with client.stream(
            "POST", "/v1/messages", json={"model": "claude-opus-sim"},
            headers={"x-api-key": subs[0].placeholder},
        ) as answer:  # fmt: skip
            assert answer.status_code == 200
            started = time.monotonic()
            proxy.close()
            waited = time.monotonic() - started
    finally:
        stall.set()
        client.close()
        with proxy._settled:  # the stalled answer's thread ends before the next test starts
            proxy._settled.wait_for(lambda: proxy._answering == 0, 10)
    assert 0.4 <= waited < 5
    assert ledger.entries(TICKET) == []  # no usage had come: nothing to charge


def test_an_answer_past_the_metering_bounds_charges_nothing_and_says_so(
    ledger: StoreLedger, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A JSON answer past ``MAX_METERED_JSON_BYTES`` is not buffered whole, and an event line
    past ``MAX_SSE_LINE_BYTES`` is dropped: each is logged as unmetered, never a crash."""
    import json

    from veranda_dagster.vendors import wire_meter

    monkeypatch.setattr(wire_meter, "MAX_METERED_JSON_BYTES", 64)
    monkeypatch.setattr(wire_meter, "MAX_SSE_LINE_BYTES", 64)
    usage = {"input_tokens": 10, "output_tokens": 5}
    answer = {"type": "message", "model": "claude-opus-sim", "usage": usage, "pad": "x" * 200}
    meter = WireMeter(turn_meter(ledger))
    with caplog.at_level("WARNING", logger="veranda.spend"):
        big_json = meter.tally("/v1/messages", b"{}")
        assert big_json is not None
        big_json.feed(json.dumps(answer).encode())
        big_json.finish(200)
        long_line = meter.tally("/v1/messages", b"{}")
        assert long_line is not None
        long_line.feed(b"data: " + json.dumps({"pad": "y" * 200}).encode())
        long_line.finish(200)
    assert ledger.entries(TICKET) == []
    assert caplog.text.count("reported no usage") == 2
