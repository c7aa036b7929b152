"""Every ``veranda`` subcommand fed each bad input: one line on stderr, exit 2, in a bound.

Each row runs the real command as a subprocess (the way an operator or a script runs it). The
bad inputs are what a careless operator or a broken machine hands over: a missing path, a
directory, a FIFO (which used to hang), ``/dev/zero``, an empty file, binary bytes, JSON nested
ten thousand deep, and a file past its named size bound (sparse, so it costs no disk).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from veranda_dagster.domain.bounds import (
    MAX_CATALOG_BYTES,
    MAX_CONFIG_FILE_BYTES,
    MAX_DOSSIER_BYTES,
    MAX_TICKET_FILE_BYTES,
)

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "tests/fixtures/repo_detection/catalog.json"
CLI_BOUND_S = 60.0
"""Wall-clock bound on one refusal, including interpreter and Dagster import on a loaded box."""
DEEP = 10_000
ENTRY = "import sys; from veranda_dagster.cli import main; sys.exit(main())"


def _missing(d: Path, bound: int) -> Path:
    return d / "does-not-exist.json"


def _directory(d: Path, bound: int) -> Path:
    (d / "a-dir.json").mkdir()
    return d / "a-dir.json"


def _fifo(d: Path, bound: int) -> Path:
    os.mkfifo(d / "pipe.json")
    return d / "pipe.json"


def _dev_zero(d: Path, bound: int) -> Path:
    return Path("/dev/zero")


def _empty(d: Path, bound: int) -> Path:
    (d / "empty.json").write_text("")
    return d / "empty.json"


def _binary(d: Path, bound: int) -> Path:
    (d / "binary.json").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe")
    return d / "binary.json"


def _deep_json(d: Path, bound: int) -> Path:
    (d / "deep.json").write_text("[" * DEEP + "]" * DEEP)
    return d / "deep.json"


def _oversize(d: Path, bound: int) -> Path:
    path = d / "huge.json"
    with path.open("wb") as handle:
        handle.write(b'{"a": "')
        handle.truncate(bound + 1)  # sparse: no disk, but a size past the bound
    return path


BAD_FILES: dict[str, Callable[[Path, int], Path]] = {
    "missing": _missing,
    "directory": _directory,
    "fifo": _fifo,
    "dev_zero": _dev_zero,
    "empty": _empty,
    "binary": _binary,
    "deep_json": _deep_json,
    "oversize": _oversize,
}


def _ticket(d: Path) -> Path:
    path = d / "good-ticket.json"
    path.write_text(json.dumps({"id": "ENG-1", "source": "linear", "title": "Crash on launch"}))
    return path


def _repo(d: Path) -> Path:
    repo = d / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


# subcommand, how the bad file is passed (argv builder, extra env), the slot's size bound
FILE_SLOTS: dict[str, tuple[Callable[[Path, Path], tuple[list[str], dict[str, str]]], int]] = {
    "backends --config": (
        lambda d, bad: (["backends", "--config", str(bad)], {}),
        MAX_CONFIG_FILE_BYTES,
    ),
    "backends $VERANDA_BACKENDS_CONFIG": (
        lambda d, bad: (["backends"], {"VERANDA_BACKENDS_CONFIG": str(bad)}),
        MAX_CONFIG_FILE_BYTES,
    ),
    "detect-repo --catalog": (
        lambda d, bad: (
            ["detect-repo", "--no-model", "--catalog", str(bad), "--ticket", str(_ticket(d))],
            {},
        ),
        MAX_CATALOG_BYTES,
    ),
    "detect-repo --ticket": (
        lambda d, bad: (
            ["detect-repo", "--no-model", "--catalog", str(CATALOG), "--ticket", str(bad)],
            {},
        ),
        MAX_TICKET_FILE_BYTES,
    ),
    "pack --ticket": (
        lambda d, bad: (["pack", "--repo-dir", str(_repo(d)), "--ticket", str(bad)], {}),
        MAX_TICKET_FILE_BYTES,
    ),
    "pack --dossier": (
        lambda d, bad: (
            [
                "pack",
                "--repo-dir",
                str(_repo(d)),
                "--ticket",
                str(_ticket(d)),
                "--dossier",
                str(bad),
            ],
            {},
        ),
        MAX_DOSSIER_BYTES,
    ),
    "report $DAGSTER_HOME/dagster.yaml": (
        lambda d, bad: (["report"], {"DAGSTER_HOME": str(_home_with(d, bad))}),
        MAX_CONFIG_FILE_BYTES,
    ),
}


def _home_with(d: Path, bad: Path) -> Path:
    home = d / "home"
    home.mkdir()
    (home / "dagster.yaml").symlink_to(bad)
    return home


def veranda(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "VERANDA_BACKENDS_CONFIG": "", **env},
        timeout=CLI_BOUND_S * 2,
        stdin=subprocess.DEVNULL,
    )
    return done, time.monotonic() - started


def assert_one_line_refusal(done: subprocess.CompletedProcess[str], elapsed: float) -> None:
    lines = done.stderr.splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert len(lines) == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and lines[0].strip()
    assert elapsed < CLI_BOUND_S


@pytest.mark.parametrize("bad", list(BAD_FILES))
@pytest.mark.parametrize("slot", list(FILE_SLOTS))
def test_every_file_argument_refuses_each_bad_input_in_one_line(slot, bad, tmp_path):
    if slot.startswith("report") and bad in ("missing", "empty"):
        pytest.skip("no or an empty dagster.yaml is Dagster's default instance, not bad input")
    build, bound = FILE_SLOTS[slot]
    bad_path = BAD_FILES[bad](tmp_path, bound)
    args, env = build(tmp_path, bad_path)
    done, elapsed = veranda(args, env)
    assert_one_line_refusal(done, elapsed)


def _a_file(d: Path) -> str:
    (d / "plain.txt").write_text("x")
    return str(d / "plain.txt")


def _a_fifo(d: Path) -> str:
    os.mkfifo(d / "dir-fifo")
    return str(d / "dir-fifo")


DIR_SLOTS: dict[str, Callable[[Path], tuple[list[str], dict[str, str]]]] = {
    "pack --repo-dir missing": lambda d: (
        ["pack", "--repo-dir", str(d / "nope"), "--ticket", str(_ticket(d))],
        {},
    ),
    "pack --repo-dir a file": lambda d: (
        ["pack", "--repo-dir", _a_file(d), "--ticket", str(_ticket(d))],
        {},
    ),
    "demo --workdir a file": lambda d: (["demo", "--agent", "sim", "--workdir", _a_file(d)], {}),
    "demo --workdir a fifo": lambda d: (["demo", "--agent", "sim", "--workdir", _a_fifo(d)], {}),
    "demo --workdir unwritable": lambda d: (
        ["demo", "--agent", "sim", "--workdir", "/proc/veranda-demo"],
        {},
    ),
    "report DAGSTER_HOME unset": lambda d: (["report"], {"DAGSTER_HOME": ""}),
    "report DAGSTER_HOME missing": lambda d: (["report"], {"DAGSTER_HOME": str(d / "nope")}),
    "report DAGSTER_HOME a file": lambda d: (["report"], {"DAGSTER_HOME": _a_file(d)}),
    "report DAGSTER_HOME relative": lambda d: (["report"], {"DAGSTER_HOME": "relative/home"}),
    "report --since garbage": lambda d: (["report", "--since", "yesterday-ish"], {}),
    "serve-ops --port not a number": lambda d: (["serve-ops", "--port", "eighty"], {}),
    "detect-repo no --ticket": lambda d: (["detect-repo", "--catalog", str(CATALOG)], {}),
    "unknown flag": lambda d: (["backends", "--frobnicate"], {}),
}


@pytest.mark.parametrize("slot", list(DIR_SLOTS))
def test_every_directory_and_environment_argument_refuses_in_one_line(slot, tmp_path):
    args, env = DIR_SLOTS[slot](tmp_path)
    if slot == "report --since garbage":
        home = tmp_path / "home"
        home.mkdir()
        env = {"DAGSTER_HOME": str(home)}
    done, elapsed = veranda(args, env)
    assert_one_line_refusal(done, elapsed)


def test_debug_shows_the_traceback(tmp_path):
    done, _ = veranda(["backends", "--config", str(tmp_path / "nope.yaml"), "--debug"], {})
    assert done.returncode == 2 and "Traceback" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("veranda backends: error:")
