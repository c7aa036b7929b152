"""Two ``veranda dev`` at once: each keeps its own state file, neither deletes the other's,
``veranda sim`` says which one it drives, and a shared ``--state`` or ``--port`` is refused
in one line before anything starts. (The whole thing with two real ``dagster dev`` is in
``tests/e2e/test_two_dev.py``, in the ``dagster_ui`` step.)"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from veranda_dagster.cli import main
from veranda_dagster.cli.dev_state import (
    MAX_STATE_BYTES,
    MAX_STATE_FILES,
    STATE_DIR_ENV,
    STATE_ENV,
    claim,
    find_dev,
    own_state_path,
    read_state,
    release,
    running_devs,
)
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.sim.control import SimControl
from veranda_dagster.sim.world import SimWorld


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "states"))
    monkeypatch.delenv(STATE_ENV, raising=False)
    return tmp_path / "states"


@pytest.fixture
def other_process() -> Iterator[int]:
    """A live process that is not this one: the other ``veranda dev``'s pid."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait(10)


def write(path: Path, pid: int, ui: str, control: str = "http://127.0.0.1:9/") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "ui_url": ui, "control_url": control}))


def test_each_dev_has_its_own_file_and_removes_only_its_own(state_dir, other_process) -> None:
    mine = own_state_path()
    assert mine == state_dir / f"{os.getpid()}.json"
    theirs = state_dir / f"{other_process}.json"
    write(theirs, other_process, "http://127.0.0.1:3001")
    claim(mine, {"pid": os.getpid(), "ui_url": "http://127.0.0.1:3002", "control_url": "c"})
    assert sorted(d.ui_url for d in running_devs()) == [
        "http://127.0.0.1:3001",
        "http://127.0.0.1:3002",
    ]
    release(theirs)  # not ours: left alone
    release(mine)
    assert theirs.exists() and not mine.exists()
    assert [d.pid for d in running_devs()] == [other_process]


def test_a_state_file_held_by_a_live_dev_is_refused_with_its_url(tmp_path, other_process) -> None:
    shared = tmp_path / "dev.json"
    write(shared, other_process, "http://127.0.0.1:3001")
    with pytest.raises(InputError, match=r"pid \d+\).*its UI is http://127.0.0.1:3001"):
        claim(shared, {"pid": os.getpid(), "ui_url": "x", "control_url": ""})
    assert json.loads(shared.read_text())["ui_url"] == "http://127.0.0.1:3001"


def test_a_dead_devs_file_is_no_running_dev(state_dir, tmp_path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(30)
    write(state_dir / f"{proc.pid}.json", proc.pid, "http://127.0.0.1:3001")
    (state_dir / "junk.json").write_text("{not json")
    assert running_devs() == []
    with pytest.raises(InputError, match="no running veranda dev found"):
        find_dev()
    claim(tmp_path / "stale.json", {"pid": os.getpid(), "ui_url": "u", "control_url": "c"})


def test_the_folder_scan_is_bounded(state_dir) -> None:
    for n in range(MAX_STATE_FILES + 5):
        write(state_dir / f"{n}-x.json", os.getpid(), f"http://127.0.0.1:{4000 + n}")
    assert len(running_devs()) == MAX_STATE_FILES


def test_sim_with_two_devs_says_which_and_ui_picks(state_dir, tmp_path, capsys) -> None:
    with (
        SimWorld(root=tmp_path / "a") as first,
        SimControl(first) as first_ctl,
        SimWorld(root=tmp_path / "b") as second,
        SimControl(second) as second_ctl,
    ):
        write(state_dir / "1.json", os.getpid(), "http://127.0.0.1:3001", first_ctl.base_url)
        os.utime(state_dir / "1.json", (1, 1))  # the older one
        write(state_dir / "2.json", os.getpid(), "http://127.0.0.1:3002", second_ctl.base_url)
        assert main(["sim", "ticket", "To the newest"]) == 0
        err = capsys.readouterr().err
        assert "2 veranda dev are running; using the newest, UI http://127.0.0.1:3002" in err
        assert "pick one with --ui URL" in err
        assert [i["title"] for i in second.linear.issues.values()] == ["To the newest"]
        assert main(["sim", "--ui", "http://127.0.0.1:3001", "ticket", "To the first"]) == 0
        assert capsys.readouterr().err == ""
        assert [i["title"] for i in first.linear.issues.values()] == ["To the first"]
        assert main(["sim", "--ui", "http://127.0.0.1:9999", "status"]) == 2
        assert "no running veranda dev has the UI http://127.0.0.1:9999" in capsys.readouterr().err


def test_dev_refuses_a_taken_port_or_state_in_one_line(tmp_path, other_process, capsys) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert main(["dev", "--agent", "sim", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--port {port} is already in use" in err
    shared = tmp_path / "dev.json"
    write(shared, other_process, "http://127.0.0.1:3001")
    assert main(["dev", "--agent", "sim", "--state", str(shared)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "its UI is http://127.0.0.1:3001" in err
    assert json.loads(shared.read_text())["pid"] == other_process  # untouched


@pytest.mark.parametrize(("size", "read"), [(MAX_STATE_BYTES, True), (MAX_STATE_BYTES + 1, False)])
def test_a_state_file_is_read_up_to_its_bound(state_dir, size, read) -> None:
    """``MAX_STATE_BYTES``: a live dev's state file padded to exactly the bound is read; one
    byte more and it is not ours and not read (not even parsed)."""
    info = {"pid": os.getpid(), "ui_url": "http://127.0.0.1:3005", "control_url": "c", "pad": ""}
    info["pad"] = "p" * (size - len(json.dumps(info)))
    path = state_dir / "big.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(info))
    assert path.stat().st_size == size
    found = read_state(path)
    assert (found is not None and found.ui_url == "http://127.0.0.1:3005") is read
