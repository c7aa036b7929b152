"""The agentic scripted model server, driven over HTTP the way each real CLI drives it.

Request shapes are the ones the pinned CLIs sent (``tests/fixtures/sim/offered_tools.json``
holds the tools each offered); a test plays the CLI's side of the loop: send the turn, run
nothing, send the follow-up with a tool result, until the reply ends the turn.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from veranda_dagster.sim.model_server import MAX_SCRIPTED_STEPS, ScriptedModelServer
from veranda_dagster.sim.renderers import VOCABULARIES, render_actions, vocabulary_for
from veranda_dagster.sim.scripted_agent import (
    INVOICE,
    RED_TEST,
    ROLE_ASSET,
    STAND_IN_REFUSAL,
    TEST_COMMAND,
    ticket_title,
)
from veranda_dagster.sim.scripted_seats import knows_ticket, script_reply
from veranda_dagster.sim.sim_vendors import SIM_KEYS, model_credentials

OFFERED = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures/sim/offered_tools.json").read_text()
)
ANTHROPIC_KEY = {"x-api-key": SIM_KEYS["SIM_ANTHROPIC_API_KEY"]}
OPENAI_KEY = {"authorization": f"Bearer {SIM_KEYS['SIM_OPENAI_API_KEY']}"}
GEMINI_KEY = {"x-goog-api-key": SIM_KEYS["SIM_GEMINI_API_KEY"]}


def schema(params: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": {p: {"type": "string"} for p in params}}


def offered(cli: str) -> dict[str, frozenset[str]]:
    return {name: frozenset(params) for name, params in OFFERED[cli]["tools"].items()}


@pytest.fixture()
def model():
    with ScriptedModelServer(*model_credentials()) as server:
        yield server


def sse(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.headers["content-type"].startswith("text/event-stream")
    return [
        json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")
    ]


def anthropic_tools() -> list[dict[str, Any]]:
    return [{"name": n, "input_schema": schema(p)} for n, p in OFFERED["claude"]["tools"].items()]


def claude_turn(model: ScriptedModelServer, prompt: str, messages: list[dict[str, Any]]):
    body = {
        "model": "claude-sonnet-5-5",
        "stream": True,
        "tools": anthropic_tools(),
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}, *messages],
    }
    return httpx.post(f"{model.base_url}/v1/messages?beta=true", json=body, headers=ANTHROPIC_KEY)


def test_anthropic_turn_is_a_streamed_tool_loop_one_round_per_turn(model) -> None:
    prompt = "Role: test_writer\nWrite the red test."
    events = sse(claude_turn(model, prompt, []))
    start = next(e for e in events if e["type"] == "content_block_start")
    assert start["content_block"]["name"] == "Write" and start["content_block"]["input"] == {}
    delta = next(e for e in events if e["type"] == "content_block_delta")["delta"]
    assert delta["type"] == "input_json_delta"
    assert json.loads(delta["partial_json"]) == {
        "file_path": "tests/test_quantity.py",
        "content": RED_TEST,
    }
    stop = next(e for e in events if e["type"] == "message_delta")["delta"]["stop_reason"]
    assert stop == "tool_use"
    history: list[dict[str, Any]] = []
    for step, tool in ((1, "Bash"), (2, None)):
        history += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{step}"}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{step}", "content": "ok"}],
            },
        ]
        events = sse(claude_turn(model, prompt, history))
        blocks = [e["content_block"] for e in events if e["type"] == "content_block_start"]
        stop = next(e for e in events if e["type"] == "message_delta")["delta"]["stop_reason"]
        if tool:
            assert [b.get("name") for b in blocks] == [tool] and stop == "tool_use"
    assert stop == "end_turn" and blocks == [{"type": "text", "text": ""}]
    text = "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta")
    assert text.startswith("Added tests/test_quantity.py")
    assert model.rounds["test_writer"] == 1  # three requests, one turn
    assert model.calls_by_role() == {"test_writer": 1}
    assert [(c.step, c.tool_call, c.tool_results) for c in model.calls] == [
        (0, "Write", ()),
        (1, "Bash", ("ok",)),
        (2, None, ("ok",)),
    ]


def test_a_plain_json_request_gets_plain_json(model) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "Role: reviewer\ndiff"}]}
    reply = httpx.post(f"{model.base_url}/v1/messages", json=body, headers=ANTHROPIC_KEY).json()
    assert reply["stop_reason"] == "end_turn"
    assert json.loads(reply["content"][0]["text"]) == {"findings": [script_reply_finding()]}


def script_reply_finding() -> dict[str, Any]:
    return json.loads(script_reply("reviewer", "", 1).text)["findings"][0]


def responses_body(prompt: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    tools = [
        {"type": "function", "name": n, "parameters": schema(p)}
        for n, p in OFFERED["codex"]["tools"].items()
    ]
    first = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "x"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
    ]
    return {"model": "gpt-5.3-codex", "stream": True, "tools": tools, "input": first + items}


def test_responses_turn_plays_function_call_items(model) -> None:
    url, prompt = f"{model.base_url}/v1/responses", "Role: implementer\nFix it."
    events = sse(httpx.post(url, json=responses_body(prompt, []), headers=OPENAI_KEY))
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    assert [i["type"] for i in added] == ["function_call"] and added[0]["arguments"] == ""
    args = next(e for e in events if e["type"] == "response.function_call_arguments.done")
    assert "python3 - <<'VERANDA_EOF'" in json.loads(args["arguments"])["cmd"]
    done = events[-1]
    assert done["type"] == "response.completed" and done["response"]["usage"]["input_tokens"] > 0
    call = done["response"]["output"][0]
    items = [call, {"type": "function_call_output", "call_id": call["call_id"], "output": "ok"}]
    events = sse(httpx.post(url, json=responses_body(prompt, items), headers=OPENAI_KEY))
    follow = events[-1]["response"]["output"][0]
    assert follow["type"] == "function_call" and json.loads(follow["arguments"]) == {
        "cmd": TEST_COMMAND
    }
    items += [follow, {"type": "function_call_output", "call_id": "c2", "output": "3 passed"}]
    events = sse(httpx.post(url, json=responses_body(prompt, items), headers=OPENAI_KEY))
    final = events[-1]["response"]["output"]
    assert [i["type"] for i in final] == ["message"]
    assert "invoice_total_cents" in final[0]["content"][0]["text"]
    assert [c.tool_results for c in model.calls] == [(), ("ok",), ("3 passed",)]


def chat_body(cli: str, prompt: str, messages: list[dict[str, Any]], **extra: Any) -> dict:
    tools = [
        {"type": "function", "function": {"name": n, "parameters": schema(p)}}
        for n, p in OFFERED[cli]["tools"].items()
    ]
    first = [{"role": "system", "content": "sys"}, {"role": "user", "content": prompt}]
    return {"model": "m", "stream": True, "tools": tools, "messages": first + messages, **extra}


def chat_chunks(model: ScriptedModelServer, body: dict[str, Any]) -> list[dict[str, Any]]:
    r = httpx.post(f"{model.base_url}/v1/chat/completions", json=body, headers=OPENAI_KEY)
    assert r.text.rstrip().endswith("data: [DONE]")
    return sse(r)


@pytest.mark.parametrize(("cli", "write"), [("kimi", "Write"), ("grok", "write")])
def test_chat_turn_streams_tool_call_deltas(model, cli: str, write: str) -> None:
    chunks = chat_chunks(model, chat_body(cli, "Role: second_test_writer\nAdd edge cases.", []))
    assert all(isinstance(c["created"], int) for c in chunks)  # grok refuses a chunk without
    calls = [tc for c in chunks for ch in c["choices"] for tc in ch["delta"].get("tool_calls", [])]
    assert calls[0]["function"] == {"name": write, "arguments": ""}
    args = json.loads(calls[1]["function"]["arguments"])
    assert args["content"].startswith("from billing.invoice import")
    finish = [ch["finish_reason"] for c in chunks for ch in c["choices"] if ch["finish_reason"]]
    assert finish == ["tool_calls"] and chunks[-1]["usage"]["prompt_tokens"] > 0


def test_side_calls_never_spend_a_scripted_reply(model) -> None:
    prompt = "Role: reviewer\nReview."
    title = {"model": "glm-5.3", "stream": True, "messages": [{"role": "user", "content": prompt}]}
    text = "".join(
        ch["delta"].get("content") or "" for c in chat_chunks(model, title) for ch in c["choices"]
    )
    assert text == "Veranda sim session"  # opencode's title call: no tools offered
    forced = chat_body(
        "grok", prompt, [], tool_choice={"type": "function", "function": {"name": "session_title"}}
    )
    forced["tools"] = [
        {
            "type": "function",
            "function": {
                "name": "session_title",
                "parameters": {"properties": {"session_title": {}}, "required": ["session_title"]},
            },
        }
    ]
    calls = [
        tc for c in chat_chunks(model, forced) for ch in c["choices"]
        for tc in ch["delta"].get("tool_calls", [])
    ]  # fmt: skip
    assert json.loads(calls[1]["function"]["arguments"]) == {"session_title": "Veranda sim session"}
    router = {
        "contents": [{"role": "user", "parts": [{"text": prompt}]}],
        "generationConfig": {
            "responseJsonSchema": {
                "type": "OBJECT",
                "properties": {"complexity_score": {"type": "INTEGER"}, "why": {"type": "STRING"}},
            }
        },
    }
    url = f"{model.base_url}/v1beta/models/gemini-3.5-flash-lite:generateContent"
    answer = httpx.post(url, json=router, headers=GEMINI_KEY).json()
    part = answer["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(part) == {"complexity_score": 1, "why": "sim"}
    assert model.rounds == {} and model.calls == []
    assert [why for _, why, _ in model.side_calls] == ["title", "title", "router"]
    reviewed = chat_chunks(model, chat_body("kimi", prompt, []))  # the real turn: round 1
    review = "".join(ch["delta"].get("content") or "" for c in reviewed for ch in c["choices"])
    assert json.loads(review)["findings"]  # round 1 raises the finding


def test_gemini_turn_answers_function_call_parts(model) -> None:
    tools = [
        {
            "functionDeclarations": [
                {"name": n, "parametersJsonSchema": schema(p)}
                for n, p in OFFERED["gemini"]["tools"].items()
            ]
        }
    ]
    user = {
        "role": "user",
        "parts": [{"text": "<session_context/>"}, {"text": "Role: implementer"}],
    }
    body: dict[str, Any] = {"contents": [user], "tools": tools}
    url = f"{model.base_url}/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse"
    (chunk,) = sse(httpx.post(url, json=body, headers=GEMINI_KEY))
    call = chunk["candidates"][0]["content"]["parts"][0]["functionCall"]
    assert call["name"] == "replace" and call["args"]["file_path"] == INVOICE
    assert {"instruction", "old_string", "new_string"} <= set(call["args"])
    result = {"functionResponse": {"name": "replace", "response": {"output": "Modified"}}}
    body["contents"] += [chunk["candidates"][0]["content"], {"role": "user", "parts": [result]}]
    (chunk,) = sse(httpx.post(url, json=body, headers=GEMINI_KEY))
    assert chunk["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == (
        "run_shell_command"
    )
    assert model.calls[-1].tool_results == ('{"output": "Modified"}',)


def test_a_conversation_past_the_step_cap_gets_a_clear_error(model) -> None:
    """A client that keeps asking after its turn ended (a looping script) is refused at the
    cap, instead of being answered until the vendor's time bound."""
    loop = [
        {"role": "assistant", "content": [{"type": "text", "text": "again"}]},
        {"role": "user", "content": [{"type": "text", "text": "continue"}]},
    ]
    below = claude_turn(model, "Role: simplifier", loop * (MAX_SCRIPTED_STEPS - 1))
    assert below.status_code == 200  # past the script's end: its answer again
    at = claude_turn(model, "Role: simplifier", loop * MAX_SCRIPTED_STEPS)
    assert at.status_code == 400
    message = at.json()["error"]["message"]
    assert f"reached {MAX_SCRIPTED_STEPS} steps" in message and "simplifier" in message


@pytest.mark.parametrize(
    ("seat", "title", "status"),
    [
        ("test_writer", "Fix the retry bug", 400),
        ("implementer", "Fix the retry bug", 400),
        ("reviewer", "Add CSV export", 400),
        ("repo_confirmer", "Fix the retry bug", 200),  # any ticket's guess can be confirmed
        ("test_writer", "Invoice total ignores line-item quantity", 200),
        ("test_writer", "Invoices charge a line once, whatever its QUANTITY", 200),
        ("test_writer", "Cart page total is stuck on Loading… in acme/storefront", 200),
    ],
)
def test_a_work_seat_of_a_ticket_the_script_does_not_know_is_refused(
    model, seat: str, title: str, status: int
) -> None:
    """The stand-in has an honest answer only for the sample's tickets: any other ticket's
    work seat gets a 400 saying so, instead of the invoice fix; the refusal is counted as a
    call but spends no round of the seat's script."""
    response = claude_turn(model, f"Role: {seat}\nTicket ENG-7: {title}\n\nrepo: acme/billing", [])
    assert response.status_code == status
    if status == 400:
        assert response.json()["error"]["message"] == STAND_IN_REFUSAL
        assert model.calls_by_role()[seat] == 1 and model.rounds[seat] == 0
    else:
        assert model.rounds[seat] == 1


def test_a_prompt_without_a_ticket_is_answered() -> None:
    assert knows_ticket("Role: implementer\nWrite the fix.")
    assert ticket_title("Role: x\nTicket jira-PAY-1: Refunds round down\n\nbody") == (
        "Refunds round down"
    )


def test_faults_hit_a_turns_start_or_one_of_its_follow_ups(model) -> None:
    prompt = "Role: test_writer\nWrite it."
    follow = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
    ]
    model.fail_role("test_writer", 500, step=1)
    model.fail_role("test_writer", 429)
    assert claude_turn(model, prompt, []).status_code == 429  # the unpinned fault: next request
    assert claude_turn(model, prompt, []).status_code == 200
    assert claude_turn(model, prompt, follow).status_code == 500  # pinned to the follow-up
    assert claude_turn(model, prompt, follow).status_code == 200
    model.revoke(SIM_KEYS["SIM_ANTHROPIC_API_KEY"])
    assert claude_turn(model, prompt, follow).status_code == 401  # a key revoked mid-turn
    assert model.rounds["test_writer"] == 1
    assert model.calls_by_role() == {"test_writer": 2}  # turn starts, the refused one too
    assert model.calls_by_role(ok_only=True) == {"test_writer": 1}


def test_a_hang_at_a_follow_up_holds_only_that_step(model) -> None:
    prompt = "Role: implementer\nFix it."
    follow = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
    ]
    arrived = model.block("implementer", step=1)
    assert claude_turn(model, prompt, []).status_code == 200  # step 0 passes
    statuses: list[int] = []
    held = threading.Thread(
        target=lambda: statuses.append(claude_turn(model, prompt, follow).status_code)
    )
    held.start()
    assert arrived.wait(10) and statuses == []
    model.release("implementer")
    held.join(10)
    assert statuses == [200]


@pytest.mark.parametrize("cli", sorted(OFFERED))
def test_each_cli_gets_every_seat_in_its_own_tool_vocabulary(cli: str) -> None:
    tools = offered(cli)
    vocabulary = vocabulary_for(tools)
    assert vocabulary is not None and vocabulary.vendor == cli
    for seat in ROLE_ASSET:
        reply = script_reply(seat, "Current guess: acme/billing", 1)
        calls = render_actions(reply.actions, tools)
        assert len(calls) == len(reply.actions), (cli, seat)  # nothing this CLI cannot do
        assert all(set(c.args) <= tools[c.name] for c in calls), (cli, seat)


def test_the_stand_in_has_no_shell_so_it_skips_running_tests() -> None:
    stand_in = {"Write": frozenset({"file_path", "content"}), "Edit": frozenset({"file_path"})}
    calls = render_actions(script_reply("implementer", "", 1).actions, stand_in)
    assert [c.name for c in calls] == ["Edit"]
    assert vocabulary_for({}) is None and len(VOCABULARIES) == len(OFFERED)
