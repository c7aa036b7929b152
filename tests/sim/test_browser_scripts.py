"""The scripted model's side of the browser: Claude Code's vocabulary for deferred MCP tools,
and reading back every tool result a turn has seen."""

from __future__ import annotations

from veranda_dagster.sim import wire_anthropic
from veranda_dagster.sim.renderers import render_actions
from veranda_dagster.sim.scripted_agent import BrowserCall, LoadBrowserTools, RunCommand

CLAUDE_TOOLS = {"Write": frozenset({"file_path"}), "Edit": frozenset({"file_path"})}
ACTIONS = [
    LoadBrowserTools(("browser_navigate",)),
    RunCommand("npm run dev"),
    BrowserCall("browser_navigate", {"url": "{{dev_url}}"}),
]


def test_browser_calls_render_the_same_before_and_after_the_tools_are_loaded():
    """Claude Code defers MCP tools behind ToolSearch: absent at step 0, offered once loaded.
    The script's calls must not shift between those steps."""
    deferred = {**CLAUDE_TOOLS, "Bash": frozenset({"command"}), "ToolSearch": frozenset({"query"})}
    loaded = {**deferred, "mcp__playwright__browser_navigate": frozenset({"url"})}
    before, after = render_actions(ACTIONS, deferred), render_actions(ACTIONS, loaded)
    assert before == after
    assert [c.name for c in before] == ["ToolSearch", "Bash", "mcp__playwright__browser_navigate"]
    assert before[0].args["query"] == "select:mcp__playwright__browser_navigate"


def test_a_cli_without_the_browser_skips_the_browser_calls():
    offered = {**CLAUDE_TOOLS, "Bash": frozenset({"command"})}
    assert [c.name for c in render_actions(ACTIONS, offered)] == ["Bash"]
    assert [c.name for c in render_actions(ACTIONS, CLAUDE_TOOLS)] == []


def test_tool_results_are_read_past_a_notice_that_follows_them():
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "text", "text": "R"}],
    }
    body = {
        "messages": [
            {"role": "user", "content": "Role: implementer"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t0", "name": "Bash"}]},
            {"role": "user", "content": [{**result, "tool_use_id": "t0", "content": "EARLIER"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash"}]},
            {"role": "user", "content": [result]},
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x"}]},
        ]
    }
    conv = wire_anthropic.parse(body, 100)
    assert conv.step == 2
    assert conv.tool_results == ["R"]
    assert conv.history == ["EARLIER", "R"]
