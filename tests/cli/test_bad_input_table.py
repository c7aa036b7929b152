"""Every ``veranda`` subcommand fed each bad input: one line on stderr, exit 2, in a bound.

The bad inputs are what a careless operator or a broken machine hands over: a missing path, a
directory, a FIFO (which used to hang), ``/dev/zero``, an empty file, binary bytes, JSON nested
ten thousand deep, and a file past its named size bound (sparse, so it costs no disk).

The whole table runs the CLI's ``main()`` in this process: file descriptor 2 captured (so a
logging handler or a stray print to the real stderr counts as a line), every warning counted
as a line, SIGALRM ending a hang, the environment and working directory restored. One row per
subcommand also runs as a real ``python`` process (the way an operator or a script runs it),
which proves the exit code through ``sys.exit``, that importing the subcommand prints nothing,
and that the in-process run shows exactly what the process shows. A subprocess costs a fresh
interpreter and Dagster import (seconds on a loaded box); in process the table takes seconds.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from veranda_dagster.cli import main
from veranda_dagster.domain.core.bounds import (
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
    "vendors --config": (
        lambda d, bad: (["vendors", "--config", str(bad)], {}),
        MAX_CONFIG_FILE_BYTES,
    ),
    "vendors $VERANDA_VENDORS_CONFIG": (
        lambda d, bad: (["vendors"], {"VERANDA_VENDORS_CONFIG": str(bad)}),
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
    "catalog --hand-kept": (
        lambda d, bad: (["catalog", "--org", "acme", "--hand-kept", str(bad)], {}),
        MAX_CATALOG_BYTES,
    ),
    "catalog $VERANDA_ORGS": (
        lambda d, bad: (["catalog", "--org", "acme"], {"VERANDA_ORGS": str(bad)}),
        MAX_CONFIG_FILE_BYTES,
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


@dataclass(frozen=True)
class Outcome:
    """What one ``veranda`` invocation left behind: its exit code, its stderr, its wall time."""

    returncode: int
    stderr: str
    elapsed: float


class HungError(BaseException):
    """Raised by SIGALRM in a refusal that did not end in its bound (a ``BaseException``, so
    the CLI's catch-all cannot turn a hang into a one-line refusal)."""


def _on_alarm(signum: int, frame: object) -> None:
    raise HungError(f"no refusal within {CLI_BOUND_S * 2:.0f} s")


@contextmanager
def _restored_process_state() -> Iterator[None]:
    """The environment and working directory as they were, whatever the command changed."""
    env, cwd = dict(os.environ), os.getcwd()
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)


def veranda_in_process(
    args: list[str], env: dict[str, str], capfd: pytest.CaptureFixture[str]
) -> Outcome:
    """``main(args)`` here, with what a subprocess would see: the same environment overlay, and
    every byte written to fd 2 and every warning (a process prints each) on its stderr.
    Earlier tests' garbage is collected first: a client another test left open would otherwise
    warn of its socket whenever the collector happens to run inside this command's window,
    which a fresh process never sees."""
    gc.collect()
    capfd.readouterr()
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, CLI_BOUND_S * 2)
    try:
        with _restored_process_state(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            os.environ.update({"VERANDA_VENDORS_CONFIG": "", **env})
            try:
                returncode = main(list(args))
            except SystemExit as exc:  # argparse's refusal, as in the console script
                returncode = exc.code if isinstance(exc.code, int) else 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    elapsed = time.monotonic() - started
    stderr = capfd.readouterr().err
    stderr += "".join(
        f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}\n" for w in caught
    )
    return Outcome(returncode, stderr, elapsed)


def veranda_process(args: list[str], env: dict[str, str]) -> Outcome:
    """The command as an operator runs it: a fresh interpreter, stdin closed."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "VERANDA_VENDORS_CONFIG": "", **env},
        timeout=CLI_BOUND_S * 2,
        stdin=subprocess.DEVNULL,
    )
    return Outcome(done.returncode, done.stderr, time.monotonic() - started)


def assert_one_line_refusal(done: Outcome) -> None:
    lines = done.stderr.splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert len(lines) == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and lines[0].strip()
    assert done.elapsed < CLI_BOUND_S


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
    "report --since garbage": lambda d: (
        ["report", "--since", "yesterday-ish"],
        {"DAGSTER_HOME": str(_empty_home(d))},
    ),
    "serve-ops --port not a number": lambda d: (["serve-ops", "--port", "eighty"], {}),
    "detect-repo no --ticket": lambda d: (["detect-repo", "--catalog", str(CATALOG)], {}),
    "catalog no forge token": lambda d: (
        ["catalog", "--org", "acme"],
        {"VERANDA_FORGE": "gitlab", "GITLAB_TOKEN": "", "VERANDA_ORGS": ""},
    ),
    "catalog --out in a missing folder": lambda d: (
        ["catalog", "--org", "acme", "--out", str(d / "nope" / "catalog.json")],
        {"VERANDA_ORGS": ""},
    ),
    "unknown flag": lambda d: (["vendors", "--frobnicate"], {}),
}


def _empty_home(d: Path) -> Path:
    (d / "home").mkdir()
    return d / "home"


DEFAULT_INSTANCE = {
    ("report $DAGSTER_HOME/dagster.yaml", "missing"),
    ("report $DAGSTER_HOME/dagster.yaml", "empty"),
}
"""No or an empty ``dagster.yaml`` is Dagster's default instance, not bad input."""
CASES = [
    f"{slot} <- {bad}"
    for slot in FILE_SLOTS
    for bad in BAD_FILES
    if (slot, bad) not in DEFAULT_INSTANCE
]
CASES += list(DIR_SLOTS)


def build_case(case: str, d: Path) -> tuple[list[str], dict[str, str]]:
    """The argv and environment overlay of one table row, its files made under ``d``."""
    if case in DIR_SLOTS:
        return DIR_SLOTS[case](d)
    slot, bad = case.split(" <- ")
    build, bound = FILE_SLOTS[slot]
    return build(d, BAD_FILES[bad](d, bound))


PROCESS_CASES = [
    "vendors --config <- fifo",
    "detect-repo --ticket <- oversize",
    "pack --dossier <- deep_json",
    "report $DAGSTER_HOME/dagster.yaml <- binary",
    "demo --workdir unwritable",
    "serve-ops --port not a number",
    "catalog $VERANDA_ORGS <- binary",
]
"""One row per subcommand as a real process: the exit code through ``sys.exit``, nothing printed
by importing the subcommand, and the in-process run's outcome shown equal to the process's."""


@pytest.mark.parametrize("case", CASES)
def test_every_argument_refuses_each_bad_input_in_one_line(case, tmp_path, capfd):
    args, env = build_case(case, tmp_path)
    assert_one_line_refusal(veranda_in_process(args, env, capfd))


@pytest.mark.parametrize("case", PROCESS_CASES)
def test_a_real_process_refuses_in_the_same_one_line(case, tmp_path, capfd):
    assert case in CASES
    outcomes = []
    for run in ("process", "in-process"):
        (tmp_path / run).mkdir()
        args, env = build_case(case, tmp_path / run)
        if run == "process":
            done = veranda_process(args, env)
        else:
            done = veranda_in_process(args, env, capfd)
        assert_one_line_refusal(done)
        outcomes.append((done.returncode, done.stderr.replace(str(tmp_path / run), "<dir>")))
    assert outcomes[0] == outcomes[1]


def test_debug_shows_the_traceback(tmp_path):
    done = veranda_process(["vendors", "--config", str(tmp_path / "nope.yaml"), "--debug"], {})
    assert done.returncode == 2 and "Traceback" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("veranda vendors: error:")


def _noisy_main(noise: Callable[[], object]) -> Callable[[list[str]], int]:
    real_main = main

    def noisy(argv: list[str]) -> int:
        noise()
        return real_main(argv)

    return noisy


@pytest.mark.parametrize(
    "noise",
    [
        lambda: os.write(2, b"a stray write to fd 2\n"),
        lambda: print("a stray print", file=sys.__stderr__, flush=True),
        lambda: warnings.warn("a warning a process would print", UserWarning, stacklevel=1),
    ],
    ids=["fd 2", "sys.__stderr__", "warning"],
)
def test_the_in_process_run_counts_what_a_process_would_print(noise, monkeypatch, tmp_path, capfd):
    """The harness is not blinder than a subprocess: a second line on stderr is seen."""
    monkeypatch.setattr(sys.modules[__name__], "main", _noisy_main(noise))
    args, env = build_case("vendors --config <- missing", tmp_path)
    done = veranda_in_process(args, env, capfd)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 2, done


def test_a_hang_in_process_ends_at_the_bound_and_is_not_a_refusal(monkeypatch, tmp_path, capfd):
    os.mkfifo(tmp_path / "never-written")
    monkeypatch.setattr(sys.modules[__name__], "CLI_BOUND_S", 0.5)
    monkeypatch.setattr(
        sys.modules[__name__], "main", lambda argv: open(tmp_path / "never-written").close()
    )
    with pytest.raises(HungError):
        veranda_in_process([], {}, capfd)
