"""``veranda --help`` is for a newcomer: what the product is, where to start (``veranda dev``),
no internal docstring markup; and every option of every command says what it does."""

from __future__ import annotations

import argparse
import importlib

import pytest

from veranda_dagster.cli import COMMANDS, main


def test_top_level_help_says_what_it_is_and_where_to_start(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: veranda")
    assert "autonomous coding agent run as a Dagster service" in out
    assert "start here:\n  veranda dev " in out and "veranda sim ticket" in out
    assert "``" not in out and "subcommand module" not in out
    assert all(name in out for name in COMMANDS)


def _options_without_help(parser: argparse.ArgumentParser, prefix: str) -> list[str]:
    missing: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += _options_without_help(sub, f"{prefix} {name}")
        elif action.help is None and not isinstance(action, argparse._HelpAction):
            missing.append(f"{prefix} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_option_of_every_command_has_help() -> None:
    missing: list[str] = []
    for name, (module, _) in COMMANDS.items():
        parser = argparse.ArgumentParser(prog=f"veranda {name}")
        importlib.import_module(module).add_arguments(parser)
        missing += _options_without_help(parser, f"veranda {name}")
    assert missing == []
