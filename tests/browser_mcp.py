"""A minimal MCP stdio client for tests: start a server as a CLI would, call its tools.

Newline-delimited JSON-RPC over the child's stdin/stdout (the MCP stdio transport), every read
bounded by a deadline so a silent server fails the test instead of hanging it. The child is
ours alone and is ended by its pid when the block exits.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from pathlib import Path
from typing import Any

REPLY_TIMEOUT_S = 60.0
PROTOCOL_VERSION = "2025-06-18"


class McpStdioClient:
    def __init__(self, argv: list[str], cwd: str | Path | None = None) -> None:
        self.argv = argv
        self.cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None
        self._next_id = 0
        self._info: dict[str, Any] = {}
        self._buffer = b""

    def __enter__(self) -> McpStdioClient:
        self._proc = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=os.environ.copy(),
        )
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "veranda-tests", "version": "1"},
            },
        )
        self._info = result.get("serverInfo") or {}
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
        return self

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        if proc.stdout:
            proc.stdout.close()  # the pipe too, not left to the collector

    def server_info(self) -> dict[str, Any]:
        return self._info

    def tool_names(self) -> list[str]:
        return [t["name"] for t in self.request("tools/list", {}).get("tools", [])]

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """The text of the tool's result (an error result raises)."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        text = "\n".join(c.get("text", "") for c in result.get("content", []))
        if result.get("isError"):
            raise AssertionError(f"{tool} failed: {text}")
        return text

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        wanted = self._next_id
        self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while True:
            message = self._read(deadline)
            if message.get("id") == wanted and "method" not in message:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result") or {}

    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write((json.dumps(message) + "\n").encode())
        self._proc.stdin.flush()

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        out = self._proc.stdout
        with selectors.DefaultSelector() as sel:
            sel.register(out, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise TimeoutError(f"{self.argv[0]}: no reply in {REPLY_TIMEOUT_S:.0f}s")
                chunk = os.read(out.fileno(), 65536)
                if not chunk:
                    raise EOFError(f"{self.argv[0]} closed its stdout")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)
