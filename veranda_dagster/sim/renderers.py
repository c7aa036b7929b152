"""One seat script, spoken in each vendor CLI's own tool vocabulary.

A seat's actions (``scripted_agent``: write a file, edit one, run a command) become the tool
calls the CLI in front of the model actually offers, with that CLI's argument names, as a real
model would emit them. Which vocabulary applies is read from the request itself: the tools it
offers, and the argument each one takes (Claude Code's ``Write`` takes ``file_path``, Kimi
Code's ``Write`` takes ``path``), so one model server serves every CLI with no configuration.
Tool names and parameters were read off what each pinned CLI sent (reference:
cli-wire-formats.md; Claude Code 2.1.332, Codex 0.171.0, Gemini CLI 0.61.0, Kimi Code 2.1.0,
Grok 0.2.111, opencode 1.18.33). Codex offers no file tool on a custom provider, so its edits
are shell commands (a quoted heredoc; ``python3`` for a replacement), as its model writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from veranda_dagster.sim.scripted_agent import (
    Action,
    BrowserCall,
    EditFile,
    LoadBrowserTools,
    RunCommand,
    WriteFile,
)

OfferedTools = Mapping[str, frozenset[str]]
"""Tool name -> the argument names its schema declares, as a request offers them."""


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Vocabulary:
    """How one CLI's tools take the three actions; ``None`` = this CLI has no such tool."""

    vendor: str
    signature: Mapping[str, str]
    """Tool -> an argument it must take, to recognise this CLI from the tools it offers."""
    write: Callable[[WriteFile], ToolCall]
    edit: Callable[[EditFile], ToolCall]
    run: Callable[[RunCommand], ToolCall] | None
    mcp_name: Callable[[str, str], str] | None = None
    """(server, tool) -> the name this CLI gives an MCP tool; None = browser calls not scripted."""
    tool_search: str | None = None
    """The tool that loads deferred MCP tools' schemas (Claude Code defers them behind it)."""

    def matches(self, offered: OfferedTools) -> bool:
        return all(arg in offered.get(tool, frozenset()) for tool, arg in self.signature.items())

    def render(self, action: Action, offered: OfferedTools) -> ToolCall | None:
        """The call for ``action``, or None when the CLI offers no tool for it (the
        ``veranda-sim-agent`` stand-in has no shell, so it skips running the tests).

        The answer must not depend on the step: a deferred MCP tool is absent from the first
        request's tools and present once loaded, so a browser call counts as offered whenever
        the CLI offers the search that loads it."""
        if isinstance(action, LoadBrowserTools | BrowserCall):
            return self._browser(action, offered)
        if isinstance(action, WriteFile):
            call: ToolCall | None = self.write(action)
        elif isinstance(action, EditFile):
            call = self.edit(action)
        else:
            call = self.run(action) if self.run else None
        return call if call is not None and call.name in offered else None

    def _browser(
        self, action: LoadBrowserTools | BrowserCall, offered: OfferedTools
    ) -> ToolCall | None:
        if self.mcp_name is None:
            return None
        searchable = self.tool_search is not None and self.tool_search in offered
        if isinstance(action, LoadBrowserTools):
            if not searchable:
                return None
            names = ",".join(self.mcp_name(BROWSER_SERVER, t) for t in action.tools)
            return ToolCall(
                str(self.tool_search),
                {"query": f"select:{names}", "max_results": len(action.tools)},
            )
        name = self.mcp_name(BROWSER_SERVER, action.tool)
        return ToolCall(name, dict(action.args)) if searchable or name in offered else None


HEREDOC_END = "VERANDA_EOF"
BROWSER_SERVER = "playwright"
"""The MCP server name the product writes for the browser (``domain.core.mcp_config``)."""


def _shell_write(w: WriteFile) -> str:
    parent = w.path.rsplit("/", 1)[0] if "/" in w.path else "."
    return f"mkdir -p {parent} && cat > {w.path} <<'{HEREDOC_END}'\n{w.content}{HEREDOC_END}"


def _shell_edit(e: EditFile) -> str:
    script = (
        "import pathlib\n"
        f"p = pathlib.Path({e.path!r})\n"
        "s = p.read_text()\n"
        f"old, new = {e.old!r}, {e.new!r}\n"
        "assert old in s, 'text to replace not found'\n"
        "p.write_text(s.replace(old, new, 1))\n"
    )
    return f"python3 - <<'{HEREDOC_END}'\n{script}{HEREDOC_END}"


def _described(command: str) -> dict[str, str]:
    return {"command": command, "description": "Run the repository's tests"}


CLAUDE = Vocabulary(
    vendor="claude",
    signature={"Write": "file_path", "Edit": "file_path"},
    write=lambda w: ToolCall("Write", {"file_path": w.path, "content": w.content}),
    edit=lambda e: ToolCall(
        "Edit", {"file_path": e.path, "old_string": e.old, "new_string": e.new}
    ),
    run=lambda r: ToolCall("Bash", _described(r.command)),
    mcp_name=lambda server, tool: f"mcp__{server}__{tool}",
    tool_search="ToolSearch",
)
KIMI = Vocabulary(
    vendor="kimi",
    signature={"Write": "path", "Edit": "path"},
    write=lambda w: ToolCall("Write", {"path": w.path, "content": w.content}),
    edit=lambda e: ToolCall("Edit", {"path": e.path, "old_string": e.old, "new_string": e.new}),
    run=lambda r: ToolCall("Bash", _described(r.command)),
)
CODEX = Vocabulary(
    vendor="codex",
    signature={"exec_command": "cmd"},
    write=lambda w: ToolCall("exec_command", {"cmd": _shell_write(w)}),
    edit=lambda e: ToolCall("exec_command", {"cmd": _shell_edit(e)}),
    run=lambda r: ToolCall("exec_command", {"cmd": r.command}),
)
GEMINI = Vocabulary(
    vendor="gemini",
    signature={"write_file": "file_path", "run_shell_command": "command"},
    write=lambda w: ToolCall("write_file", {"file_path": w.path, "content": w.content}),
    edit=lambda e: ToolCall(
        "replace",
        {
            "file_path": e.path,
            "instruction": "Apply the change the ticket asks for.",
            "old_string": e.old,
            "new_string": e.new,
        },
    ),
    run=lambda r: ToolCall("run_shell_command", _described(r.command)),
)
GROK = Vocabulary(
    vendor="grok",
    signature={"run_terminal_command": "description", "search_replace": "file_path"},
    write=lambda w: ToolCall("write", {"file_path": w.path, "content": w.content}),
    edit=lambda e: ToolCall(
        "search_replace", {"file_path": e.path, "old_string": e.old, "new_string": e.new}
    ),
    run=lambda r: ToolCall("run_terminal_command", _described(r.command)),
)
OPENCODE = Vocabulary(
    vendor="opencode",
    signature={"write": "filePath", "edit": "filePath"},
    write=lambda w: ToolCall("write", {"filePath": w.path, "content": w.content}),
    edit=lambda e: ToolCall("edit", {"filePath": e.path, "oldString": e.old, "newString": e.new}),
    run=lambda r: ToolCall("bash", {"command": r.command}),
)

VOCABULARIES = (CLAUDE, KIMI, CODEX, GEMINI, GROK, OPENCODE)


def vocabulary_for(offered: OfferedTools) -> Vocabulary | None:
    """The CLI whose tools these are, or None (a text-only request: a probe, a side call)."""
    return next((v for v in VOCABULARIES if v.matches(offered)), None)


def render_actions(actions: list[Action], offered: OfferedTools) -> list[ToolCall]:
    """The tool calls a seat's actions become for the CLI offering ``offered``, in order."""
    vocabulary = vocabulary_for(offered)
    if vocabulary is None:
        return []
    calls = (vocabulary.render(a, offered) for a in actions)
    return [c for c in calls if c is not None]
