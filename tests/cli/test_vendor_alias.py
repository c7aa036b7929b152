"""One name per concept: ``veranda vendors`` probes the configured vendors, and the former
``veranda backends`` stays as its alias (scripts call it), running the same command."""

from __future__ import annotations

from veranda_dagster.cli import ALIASES, COMMANDS


def test_the_former_name_runs_the_same_command_as_the_vendor_name() -> None:
    for alias, name in ALIASES.items():
        assert COMMANDS[alias][0] == COMMANDS[name][0]
        assert f"veranda {name}" in COMMANDS[alias][1]
