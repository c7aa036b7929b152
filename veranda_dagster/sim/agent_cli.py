"""``veranda-sim-agent``: a stand-in for ``claude -p ... --output-format stream-json --verbose``.

The product runs it through its normal Claude vendor (``binary: veranda-sim-agent`` and
``base_url`` in the vendors config), so argv, env, stream parsing and failure classification
are the real ones. It takes the same flags and reads the same variables (``ANTHROPIC_BASE_URL``;
``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN`` or ``CLAUDE_CODE_OAUTH_TOKEN``;
``CLAUDE_CODE_MAX_RETRIES``). It runs Claude Code's tool loop over Anthropic Messages: the
prompt (``CLAUDE.md`` as the system text) and its two tools, ``Write`` and ``Edit``, applied
inside its working directory (never outside it); each ``tool_use`` reply's results go back in
the next request until a reply ends the turn. It prints Claude Code's event shapes:
``system/init``, ``assistant``, ``user`` tool results, and ``result`` with ``usage`` summed
over the loop, ``modelUsage`` and ``total_cost_usd``. API failures print what Claude Code 2.1.332
printed against the same statuses (``tests/fixtures/vendors/claude_stream_*.jsonl``), exit 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

VERSION = "2.1.332"
ALIASES = {"haiku": "claude-haiku-sim", "sonnet": "claude-sonnet-sim", "opus": "claude-opus-sim"}
RATES_PER_MTOK = {"haiku": (1.0, 5.0), "sonnet": (3.0, 15.0), "opus": (5.0, 25.0)}
"""USD per million input/output tokens, by vendor word."""
REQUEST_TIMEOUT_S = 600.0
RETRY_DELAY_S = 0.2
MAX_AGENT_TURNS = 16
"""Model requests one turn may make (Claude Code's ``--max-turns``): a reply that keeps
calling tools ends the turn with an error here, not at the vendor's time bound."""


def _emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _model_id(requested: str | None) -> str:
    if not requested:
        return ALIASES["sonnet"]
    return ALIASES.get(requested, requested)


def _cost(model: str, usage: dict[str, int]) -> float:
    vendor = next((f for f in RATES_PER_MTOK if f in model), "sonnet")
    rate_in, rate_out = RATES_PER_MTOK[vendor]
    return round((usage["input_tokens"] * rate_in + usage["output_tokens"] * rate_out) / 1e6, 8)


def _inside(cwd: Path, file_path: str) -> Path | None:
    target = (
        (cwd / file_path).resolve() if not os.path.isabs(file_path) else Path(file_path).resolve()
    )
    return target if target == cwd or cwd in target.parents else None


def apply_tool(cwd: Path, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    """Run one Write/Edit in ``cwd``; returns (ok, tool result text)."""
    target = _inside(cwd, str(args.get("file_path") or ""))
    if target is None:
        return False, f"Refusing to write outside the working directory: {args.get('file_path')}"
    if name == "Write":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(str(args.get("content") or ""))
        return True, f"File created successfully at: {target}"
    if name == "Edit":
        if not target.is_file():
            return False, f"File does not exist: {target}"
        text = target.read_text()
        old, new = str(args.get("old_string") or ""), str(args.get("new_string") or "")
        if old and old in text:
            target.write_text(text.replace(old, new, 1))
            return True, f"The file {target} has been updated."
        if new and new in text:
            return True, f"The file {target} already has this change."
        return False, f"String to replace not found in file.\nString: {old}"
    return False, f"No such tool available: {name}"


def _mcp_names(configs: list[str]) -> list[str]:
    """Server names in ``--mcp-config`` arguments given inline as JSON (what the vendor
    passes); the stand-in lists them in its init event as Claude Code does, and starts none."""
    names: list[str] = []
    for raw in configs:
        try:
            servers = json.loads(raw).get("mcpServers") or {}
        except (ValueError, AttributeError):
            continue
        names += [str(n) for n in servers]
    return names


def _init(
    session: str, cwd: Path, model: str, key_source: str, mode: str, mcp: list[str]
) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "init",
        "cwd": str(cwd),
        "session_id": session,
        "tools": [t["name"] for t in TOOLS],
        "mcp_servers": [{"name": n, "status": "pending"} for n in mcp],
        "model": model,
        "permissionMode": mode,
        "apiKeySource": key_source,
        "claude_code_version": VERSION,
        "output_style": "default",
        "uuid": str(uuid.uuid4()),
    }


def _failure(session: str, status: int | None, kind: str | None, text: str, err: str) -> None:
    """The synthetic assistant message and error result Claude Code prints on an API error."""
    zero = {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    _emit(
        {
            "type": "assistant",
            "message": {
                "id": str(uuid.uuid4()),
                "model": "<synthetic>",
                "role": "assistant",
                "stop_reason": "stop_sequence",
                "type": "message",
                "usage": zero,
                "content": [{"type": "text", "text": text}],
            },
            "parent_tool_use_id": None,
            "session_id": session,
            "uuid": str(uuid.uuid4()),
            "error": err,
            "is_api_error_message": True,
            "api_error_status": status,
            "api_error_type": kind,
        }
    )
    _emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "duration_ms": 1,
            "duration_api_ms": 0,
            "num_turns": 1,
            "result": text,
            "stop_reason": "stop_sequence",
            "session_id": session,
            "total_cost_usd": 0,
            "usage": zero,
            "modelUsage": {},
            "permission_denials": [],
            "terminal_reason": "api_error",
            "api_error_status": status,
            "api_error_type": kind,
            "uuid": str(uuid.uuid4()),
        }
    )


def _describe(status: int | None, body: Any, base_url: str, key_source: str) -> tuple[str, str]:
    message = ""
    if isinstance(body, dict):
        message = str((body.get("error") or {}).get("message") or "")
    if status == 401:
        if key_source == "none":
            return "Invalid bearer token · Please run /login", "authentication_failed"
        return "Invalid API key · Fix external API key", "authentication_failed"
    if status == 429:
        return f"API Error: Request rejected (429) · {message}", "rate_limit"
    if status is None:
        return (
            "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)"
        ), "server_error"
    if status == 400:
        # a refused request (the stand-in's "only the sample's tickets"): the client's to fix
        return f"API Error: 400 {message or 'Bad request'}", "invalid_request"
    host = base_url.split("://", 1)[-1].rstrip("/")
    return (
        f"API Error: {status} {message or 'Internal server error'}. This is a server-side "
        f"issue, usually temporary — try again in a moment. If it persists, check your "
        f"inference gateway ({host})."
    ), "server_error"


TOOLS = [
    {
        "name": "Write",
        "description": "Write a file in the working directory.",
        "input_schema": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["file_path", "content"],
        },
    },
    {
        "name": "Edit",
        "description": "Replace one occurrence of a string in a file.",
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
            },
            "required": ["file_path", "old_string", "new_string"],
        },
    },
]
"""The stand-in's tools (no shell: it never runs a command the model asks for)."""
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def run(args: argparse.Namespace) -> int:
    cwd = Path.cwd().resolve()
    session = str(uuid.uuid4())
    api_key = os.environ.get("ANTHROPIC_API_KEY", "")
    oauth = os.environ.get("ANTHROPIC_AUTH_TOKEN") or os.environ.get("CLAUDE_CODE_OAUTH_TOKEN", "")
    key_source = "ANTHROPIC_API_KEY" if api_key else "none"
    model = _model_id(args.model)
    mcp = _mcp_names(args.mcp_config or [])
    _emit(_init(session, cwd, model, key_source, args.permission_mode, mcp))
    if not api_key and not oauth:
        _failure(session, None, None, "Not logged in · Please run /login", "authentication_failed")
        return 1
    base = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
    headers = {"anthropic-version": "2023-06-01", "content-type": "application/json"}
    headers.update({"x-api-key": api_key} if api_key else {"authorization": f"Bearer {oauth}"})
    instructions = cwd / "CLAUDE.md"
    system = instructions.read_text(errors="replace") if instructions.is_file() else ""
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": 32000,
        "system": system,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": args.prompt}],
    }
    retries = int(os.environ.get("CLAUDE_CODE_MAX_RETRIES") or 10)
    started = time.monotonic()
    usage = dict.fromkeys(USAGE_KEYS, 0)
    for turn in range(1, MAX_AGENT_TURNS + 1):
        status, body = _post_with_retries(f"{base}/v1/messages", request, headers, retries, session)
        if status != 200 or not isinstance(body, dict):
            text, err = _describe(status, body, base, key_source)
            kind = ((body or {}).get("error") or {}).get("type") if isinstance(body, dict) else None
            _failure(session, status, kind, text, err)
            return 1
        for key in USAGE_KEYS:
            usage[key] += int((body.get("usage") or {}).get(key) or 0)
        model = str(body.get("model") or model)
        text, results = _play(session, cwd, body, model)
        if body.get("stop_reason") != "tool_use" or not results:
            return _result(session, text, model, usage, started, turn)
        request["messages"] += [
            {"role": "assistant", "content": body.get("content") or []},
            {"role": "user", "content": results},
        ]
    _failure(session, None, None, f"Reached maximum number of turns ({MAX_AGENT_TURNS})", "")
    return 1


def _post_with_retries(
    url: str, request: dict[str, Any], headers: dict[str, str], retries: int, session: str
) -> tuple[int | None, Any]:
    status: int | None = None
    body: Any = None
    for attempt in range(retries + 1):
        status, body = _post(url, request, headers)
        if status in (200, 400) or attempt == retries:  # a 400 is not retried
            break
        _emit(
            {
                "type": "system",
                "subtype": "api_retry",
                "attempt": attempt + 1,
                "max_retries": retries,
                "retry_delay_ms": int(RETRY_DELAY_S * 1000),
                "error_status": status,
                "error": _retry_reason(status),
                "session_id": session,
                "uuid": str(uuid.uuid4()),
            }
        )
        time.sleep(RETRY_DELAY_S)
    return status, body


def _retry_reason(status: int | None) -> str:
    if status == 401:
        return "authentication_failed"
    if status == 429:
        return "rate_limit"
    return "server_error" if status else "unknown"


def _post(url: str, payload: dict[str, Any], headers: dict[str, str]) -> tuple[int | None, Any]:
    """One request with the stdlib (a CLI started per turn should not pay for httpx's import);
    ``(None, None)`` when the server cannot be reached."""
    req = urllib.request.Request(url, json.dumps(payload).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT_S) as resp:
            raw, status = resp.read(), resp.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(), exc.code
    except (urllib.error.URLError, OSError):
        return None, None
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


def _play(
    session: str, cwd: Path, body: dict[str, Any], model: str
) -> tuple[str, list[dict[str, Any]]]:
    """Print one reply's blocks as Claude Code does and run its tool calls; returns the reply's
    text and the ``tool_result`` blocks for the next request."""
    texts: list[str] = []
    results: list[dict[str, Any]] = []
    for block in body.get("content") or []:
        message = {
            "id": body.get("id"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": None,
            "usage": body.get("usage") or {},
        }
        _emit(
            {
                "type": "assistant",
                "message": message,
                "parent_tool_use_id": None,
                "session_id": session,
                "uuid": str(uuid.uuid4()),
            }
        )
        if block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_use":
            ok, output = apply_tool(cwd, str(block.get("name")), dict(block.get("input") or {}))
            result = {
                "type": "tool_result",
                "tool_use_id": block.get("id"),
                "content": output,
                "is_error": not ok,
            }
            results.append(result)
            _emit(
                {
                    "type": "user",
                    "message": {"role": "user", "content": [result]},
                    "parent_tool_use_id": None,
                    "session_id": session,
                    "uuid": str(uuid.uuid4()),
                }
            )
    return "\n".join(t for t in texts if t), results


def _result(
    session: str, text: str, model: str, usage: dict[str, int], started: float, turns: int
) -> int:
    """The terminal event: the last reply's text, usage summed over the loop, as 2.1.332."""
    cost = _cost(model, usage)
    _emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": int((time.monotonic() - started) * 1000),
            "duration_api_ms": 1,
            "num_turns": turns,
            "result": text,
            "stop_reason": "end_turn",
            "session_id": session,
            "total_cost_usd": cost,
            "usage": usage,
            "permission_denials": [],
            "modelUsage": {
                model: {
                    "inputTokens": usage["input_tokens"],
                    "outputTokens": usage["output_tokens"],
                    "cacheReadInputTokens": usage["cache_read_input_tokens"],
                    "cacheCreationInputTokens": usage["cache_creation_input_tokens"],
                    "costUSD": cost,
                }
            },
            "terminal_reason": "completed",
            "api_error_status": None,
            "uuid": str(uuid.uuid4()),
        }
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="veranda-sim-agent", description=__doc__.splitlines()[0])
    p.add_argument("-p", "--print", action="store_true", required=True)
    p.add_argument("prompt", nargs="?", help="as Claude Code: read from stdin when absent")
    p.add_argument("--output-format", default="text", choices=["text", "json", "stream-json"])
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--model")
    p.add_argument("--effort")
    p.add_argument("--permission-mode", default="default")
    p.add_argument("--dangerously-skip-permissions", action="store_true")
    # accepted as Claude Code 2.1.332 takes them: the stand-in reads no settings or MCP files
    p.add_argument("--setting-sources")
    p.add_argument("--strict-mcp-config", action="store_true")
    p.add_argument("--mcp-config", nargs="+")
    p.add_argument("--settings")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.output_format != "stream-json" or not args.verbose:
        sys.stderr.write("veranda-sim-agent only speaks --output-format stream-json --verbose\n")
        return 2
    if args.prompt is None:
        args.prompt = sys.stdin.read()
    if not args.prompt.strip():
        sys.stderr.write(
            "Error: Input must be provided either through stdin or as a prompt "
            "argument when using --print\n"
        )
        return 1
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
