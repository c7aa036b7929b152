"""The loopback vendor API: each wire shape, scripted replies, failures, and a secret-free log."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support.vendor_api import VendorApiServer


@pytest.fixture
def api():
    with VendorApiServer() as server:
        yield server


def sse_data(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def test_binds_loopback_only(api):
    assert api.base_url.startswith("http://127.0.0.1:")


def test_anthropic_stream_carries_text_and_usage(api):
    api.reply("hello", input_tokens=11, output_tokens=3, cache_read_tokens=5)
    r = httpx.post(
        f"{api.base_url}/v1/messages",
        json={"model": "claude-x", "stream": True, "messages": []},
        headers={"x-api-key": "sk-secret"},
    )
    events = sse_data(r.text)
    assert events[0]["message"]["usage"]["input_tokens"] == 11
    assert any(e.get("delta", {}).get("text") == "hello" for e in events)
    assert events[-2]["usage"]["output_tokens"] == 3 and events[-1]["type"] == "message_stop"
    call = api.calls[0]
    assert (call.model, call.stream, call.authorized) == ("claude-x", True, True)
    assert "sk-secret" not in repr(api.calls)


def test_responses_and_chat_completions(api):
    api.reply("r1")
    api.reply("c1")
    events = sse_data(httpx.post(f"{api.base_url}/v1/responses", json={"model": "gpt"}).text)
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["usage"]["input_tokens_details"]["cached_tokens"] == 1000
    chat = httpx.post(f"{api.base_url}/v1/chat/completions", json={"model": "g"}).json()
    assert chat["choices"][0]["message"]["content"] == "c1"


def test_gemini_schema_calls_do_not_spend_the_script(api):
    api.reply("turn")
    schema = {
        "type": "object",
        "properties": {"model_choice": {"enum": ["flash", "pro"]}, "score": {"type": "INTEGER"}},
    }
    url = f"{api.base_url}/v1beta/models/gemini-x:generateContent"
    routed = httpx.post(url, json={"generationConfig": {"responseJsonSchema": schema}}).json()
    text = routed["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(text) == {"model_choice": "flash", "score": 1}
    streamed = httpx.post(url.replace(":generateContent", ":streamGenerateContent"), json={})
    assert sse_data(streamed.text)[0]["candidates"][0]["content"]["parts"][0]["text"] == "turn"


@pytest.mark.parametrize(
    ("status", "kind"),
    [(401, "authentication_error"), (429, "rate_limit_error"), (500, "api_error")],
)
def test_failures_on_demand_with_vendor_error_bodies(api, status, kind):
    api.fail(status, retry_after=2)
    r = httpx.post(f"{api.base_url}/v1/messages", json={"model": "m"})
    assert r.status_code == status and r.json()["error"]["type"] == kind
    assert r.headers["retry-after"] == "2"
    ok = httpx.post(f"{api.base_url}/v1/messages", json={"model": "m"})
    assert ok.status_code == 200  # `fail` is one-shot; `fail_always` sticks


def test_models_listing_has_what_grok_requires(api):
    # Grok 0.2.111 against the old listing: 'serialization error: missing field `created`',
    # then "Couldn't set model 'grok-4.5': Invalid params: unknown model id".
    data = httpx.get(f"{api.base_url}/v1/models").json()["data"]
    assert data[0]["id"] == "sim-model"  # grok's default model is the first id
    assert all({"id", "object", "created", "owned_by"} <= set(m) for m in data)
    assert {"grok-4.3", "grok-4.5", "grok-4.7", "kimi-k2.7-code"} <= {m["id"] for m in data}


def test_chat_chunks_carry_created(api):
    r = httpx.post(
        f"{api.base_url}/v1/chat/completions",
        json={"model": "grok-4.5", "stream": True, "messages": []},
        headers={"authorization": "Bearer k"},
    )
    assert all(isinstance(e["created"], int) for e in sse_data(r.text))
