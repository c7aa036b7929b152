"""``ReadBudget``: the catalog's repository readers stop at their bound, say so once, and never
read a file past their size bound."""

from __future__ import annotations

from veranda_dagster.domain.intake.read_budget import ReadBudget

FILES = {"a.py": "x = 1\n", "big.py": "x" * 101, "pkg/": ""}


def _budget(notes: list[str], asked: list[str], limit: int = 3) -> ReadBudget:
    def read(path: str) -> str | None:
        asked.append(path)
        return FILES.get(path)

    def listdir(path: str) -> list[str] | None:
        asked.append(path + "/")
        return ["a.py", "big.py"] if path == "" else None

    return ReadBudget("acme/x", read, listdir, notes, limit=limit, max_bytes=100, what="things")


def test_reads_stop_at_the_limit_and_say_so_once() -> None:
    notes: list[str] = []
    asked: list[str] = []
    budget = _budget(notes, asked)
    assert budget.listdir("") == ["a.py", "big.py"]
    assert budget.read("a.py") == "x = 1\n"
    assert budget.read("missing.py") is None and budget.left == 0
    assert budget.read("a.py") is None and budget.listdir("") == []  # past the bound: not asked
    assert asked == ["/", "a.py", "missing.py"]
    assert notes == ["acme/x: stopped reading things after 3 files"]


def test_a_file_past_the_size_bound_reads_as_none_with_a_note() -> None:
    notes: list[str] = []
    budget = _budget(notes, [])
    assert budget.read("big.py") is None
    assert notes == ["acme/x: skipped big.py (over the things size bound)"]
    assert budget.read("a.py") == "x = 1\n"  # twin: within the bound it is read


def test_note_stopped_is_said_once() -> None:
    notes: list[str] = []
    budget = _budget(notes, [], limit=0)
    budget.note_stopped()
    assert budget.read("a.py") is None
    assert notes == ["acme/x: stopped reading things after 0 files"]
