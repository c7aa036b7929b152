"""Table tests for issue 35: every traceback form is read as a frame, every seed rule holds, and
the windows are planned around where a fix would go. Each row runs the real parser or the real
pack over a real git repository (``make_repo``) and asserts on what comes out."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context.code_search import LocalGitGrep, module_path_levels
from veranda_dagster.domain.context.pack_promotion import MAX_CALLEE_FILES
from veranda_dagster.domain.context.pack_windows import (
    MAX_CALLEE_WINDOWS,
    MAX_WIDEN_LINES,
    same_file_callees,
    widen_windows,
)
from veranda_dagster.domain.context.retrieval import NOISE_FACTOR, build_pack
from veranda_dagster.domain.context.seeds import is_shell_command, seed_candidates
from veranda_dagster.domain.core.bounds import (
    MAX_HITS_PER_FILE,
    MAX_PACK_BYTES,
    MAX_PACK_FILES,
    MAX_SEARCHES,
    MAX_SEEDS,
)
from veranda_dagster.domain.core.models import Window
from veranda_dagster.domain.intake.ticket_signals import Frame, traceback_frames

# --- traceback forms -------------------------------------------------------------------------

FRAME_FORMS = [
    (
        "cpython",
        'Traceback (most recent call last):\n  File "/venv/lib/python3.11/site-packages/'
        'pkg/mod.py", line 41, in parse\n    x = y()\nValueError: bad',
        Frame("pkg/mod.py", 41, "parse"),
    ),
    (
        "pytest",
        "pkg/mod.py:41: in parse\n    x = y()\nE   ValueError: bad",
        Frame("pkg/mod.py", 41, "parse"),
    ),
    (
        "ipython8",
        "Cell In[3], line 1\n----> 1 f()\n\nFile ~/miniconda3/lib/python3.11/site-packages/"
        "pkg/mod.py:41, in parse(text, strict)\n     40 def parse(text, strict):\n"
        "---> 41     x = y()\n\nValueError: bad",
        Frame("pkg/mod.py", 41, "parse"),
    ),
    (
        "ipython8_absolute",
        "File /home/me/src/pkg/mod.py:41, in parse(text)\n---> 41 x = y()",
        Frame("home/me/src/pkg/mod.py", 41, "parse"),
    ),
    (
        "ipython7",
        "~/anaconda3/lib/python3.7/site-packages/pkg/mod.py in parse(text, strict)\n"
        "     39 def parse(text, strict):\n     40     a = 1\n---> 41     x = y()\n"
        "     42 \n\nValueError: bad",
        Frame("pkg/mod.py", 41, "parse"),
    ),
    (
        "logging_exc_info",
        "2026-12-05 00:01:02,003 ERROR [app.worker] job failed\nTraceback (most recent call "
        'last):\n  File "/srv/venv/lib/python3.12/site-packages/pkg/mod.py", line 41, in parse\n'
        "    x = y()\nValueError: bad",
        Frame("pkg/mod.py", 41, "parse"),
    ),
    (
        "sphinx",
        'Exception occurred:\n  File "/usr/lib/python3/dist-packages/pkg/mod.py", line 41, '
        "in parse\n    x = y()\nValueError: bad\nThe full traceback has been saved in "
        "/tmp/sphinx-err-abc.log, if you want to report the issue to the developers.",
        Frame("pkg/mod.py", 41, "parse"),
    ),
    (
        "jinja_template",
        '  File "/srv/app/templates/index.html", line 7, in top-level template code\n'
        "    {{ parse(x) }}\njinja2.exceptions.UndefinedError: 'parse' is undefined",
        Frame("srv/app/templates/index.html", 7, None),
    ),
    (
        "windows_paths",
        '  File "C:\\\\Users\\\\me\\\\venv\\\\Lib\\\\site-packages\\\\pkg\\\\mod.py", line 41, '
        "in parse\n    x = y()",
        Frame("pkg/mod.py", 41, "parse"),
    ),
]


@pytest.mark.parametrize(("form", "text", "frame"), FRAME_FORMS, ids=[f[0] for f in FRAME_FORMS])
def test_every_common_traceback_form_is_a_frame(form, text, frame):
    assert traceback_frames(text)[0] == frame


def test_an_ipython8_frame_anchors_the_pack_on_the_fixed_file(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pkg/mod.py": "import os\n\n\ndef parse(text):\n    return text.strip()\n",
            "pkg/other.py": "def parse_other(text):\n    return text\n",
        },
    )
    ticket = "It fails\nFile ~/venv/lib/python3.11/site-packages/pkg/mod.py:5, in parse(text)"
    pack = build_pack([], LocalGitGrep(repo), ticket_text=ticket)
    assert pack.files[0].path == "pkg/mod.py"
    assert any(w.start <= 5 <= w.end for w in pack.files[0].windows)


# --- seed rules ------------------------------------------------------------------------------

SEED_RULES = [
    (
        "command_line",
        "run `poetry show --only main -C /tmp/foobar` and `Installer.run` fails",
        ["Installer.run"],
        ["poetry", "poetry show --only main -C /tmp/foobar"],
    ),
    (
        "bare_flag",
        "passing `--no-ansi` to `render_table` crashes",
        ["render_table"],
        ["--no-ansi", "no-ansi"],
    ),
    (
        "dollar_prompt",
        "`$ tox -rvv --parallel auto -e py311` then `EnvSelector` breaks",
        ["EnvSelector"],
        ["tox -rvv --parallel auto -e py311"],
    ),
    (
        "module_run_keeps_module",
        "`python -m werkzeug.serving -r main.app` raises",
        ["werkzeug.serving"],
        ["python -m werkzeug.serving -r main.app", "python"],
    ),
    ("code_stays_code", "calling `obj.method(x)` and `x = y` is wrong", ["obj.method"], []),
]


@pytest.mark.parametrize(
    ("rule", "text", "kept", "dropped"), SEED_RULES, ids=[r[0] for r in SEED_RULES]
)
def test_shell_commands_and_flags_are_not_seeds(rule, text, kept, dropped):
    seeds = seed_candidates([text])
    assert all(k in seeds for k in kept), seeds
    assert not any(d in seeds for d in dropped), seeds


@pytest.mark.parametrize(
    ("span", "command"),
    [
        ("pip install -U foo", True),
        ("--no-ansi", True),
        ("-e py311", True),
        ("sudo apt-get install x", True),
        ("foo.bar(baz)", False),
        ("MyClass", False),
        ("x = y --z", False),
        ("retry_after", False),
    ],
)
def test_what_reads_as_a_command_line(span, command):
    assert is_shell_command(span) is command


def test_a_dotted_module_ending_like_a_file_type_is_its_module_first(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pkg/rst.py": "def parse_rst(text):\n    return text\n",
            "pkg/util.py": "def helper():\n    return 1\n",
            "docs/pkg.rst": "pkg\n===\n",
        },
    )
    search = LocalGitGrep(repo)
    hits = [h for h in search.search("pkg.rst") if h.kind == "path"]
    assert [h.path for h in hits] == ["pkg/rst.py"]
    assert module_path_levels("pkg.rst") == []  # the seeds' own reading is unchanged
    assert module_path_levels("pkg.rst", suffix_ok=True) == [["pkg/rst.py", "pkg/rst/__init__.py"]]


def test_a_file_name_seed_without_such_a_module_is_still_a_file(tmp_path):
    repo = make_repo(tmp_path / "repo", {"conf/setup.cfg": "[x]\n", "setup.py": "x = 1\n"})
    hits = [h for h in LocalGitGrep(repo).search("setup.cfg") if h.kind == "path"]
    assert [h.path for h in hits] == ["conf/setup.cfg"]  # never ``setup.py`` one level up


def _noise_tree() -> dict[str, str]:
    files = {f"pkg/m{i}.py": f"def f{i}():\n    raise ValueError('x')\n" for i in range(8)}
    files["pkg/target.py"] = "def load_config(path):\n    return open(path).read()\n"
    files["scripts/release.py"] = "ValueError\nValueError\nValueError\nload\n"
    return files


def test_a_seed_in_most_files_is_weighed_as_noise(tmp_path):
    search = LocalGitGrep(make_repo(tmp_path / "repo", _noise_tree()))
    ticket = "`ValueError` when I call `load_config`"
    pack = build_pack(["ValueError", "load_config"], search, ticket_text=ticket)
    assert pack.files[0].path == "pkg/target.py"
    assert 0 < NOISE_FACTOR < 1


def test_a_definition_past_the_per_file_hit_cap_is_kept(tmp_path):
    uses = "".join(f"# parse_header is used here {i}\n" for i in range(MAX_HITS_PER_FILE + 3))
    text = uses + "\n\ndef parse_header(raw):\n    return raw.split(':')\n"
    repo = make_repo(tmp_path / "repo", {"pkg/headers.py": text})
    hits = LocalGitGrep(repo).search("parse_header")
    lines = [h.line for h in hits if h.path == "pkg/headers.py"]
    definition = text.splitlines().index("def parse_header(raw):") + 1
    assert definition in lines  # the cap took the first eight uses, the def is added
    assert len(lines) == MAX_HITS_PER_FILE + 1
    pack = build_pack(["parse_header"], LocalGitGrep(repo), ticket_text="`parse_header` fails")
    assert any(w.start <= definition <= w.end for w in pack.files[0].windows)


# --- windows ---------------------------------------------------------------------------------

NAMED_AND_HELPER = """import re


def _split(raw):
    parts = raw.split(",")
    return [p for p in parts if p]


def unrelated():
    return 0


def parse_list(raw):
    items = _split(raw)
    return sorted(items)
"""


def test_the_named_function_comes_with_the_helper_it_calls_in_the_same_file(tmp_path):
    repo = make_repo(tmp_path / "repo", {"pkg/lists.py": NAMED_AND_HELPER})
    pack = build_pack(["parse_list"], LocalGitGrep(repo), ticket_text="`parse_list` drops items")
    [packed] = pack.files
    covered = [(w.start, w.end) for w in packed.windows]
    assert any(s <= 13 <= e and e >= 15 for s, e in covered)  # the whole named function
    assert any(s <= 4 and e >= 6 for s, e in covered)  # and the helper it calls


def test_same_file_callees_are_bounded_and_skip_the_function_itself(tmp_path):
    lines = NAMED_AND_HELPER.splitlines(keepends=True)
    body = Window(start=13, end=15, text="".join(lines[12:15]))
    assert same_file_callees(lines, body) == [4]
    many = "".join(f"def h{i}():\n    return {i}\n\n" for i in range(5))
    caller = "def top():\n" + "".join(f"    h{i}()\n" for i in range(5))
    text = (many + caller).splitlines(keepends=True)
    start = len(many.splitlines()) + 1
    window = Window(start=start, end=len(text), text="".join(text[start - 1 :]))
    assert len(same_file_callees(text, window)) == MAX_CALLEE_WINDOWS


def test_a_plain_hit_in_a_later_file_gets_its_whole_function(tmp_path):
    files = {
        f"pkg/f{i}.py": "\n".join(f"x{j} = {j}" for j in range(30))
        + f"\n\n\ndef handler_{i}(event):\n    value = event.get('retry_budget')\n"
        + "".join(f"    value += {k}\n" for k in range(15))
        + "    return value\n"
        for i in range(5)
    }
    pack = build_pack(["retry_budget"], LocalGitGrep(make_repo(tmp_path / "r", files)))
    assert len(pack.files) == 5
    for packed in pack.files:
        [first] = packed.windows[:1]  # widened by the bytes left over: the body is inside
        head, _, body = first.text.partition("def handler_")
        assert len(head.splitlines()) <= MAX_WIDEN_LINES and "    return value\n" in body
    assert pack.bytes <= MAX_PACK_BYTES


SETTINGS = (
    "".join(f"OPTION_{i} = {i}\n" for i in range(29))
    + "RETRY_BUDGET = 3\n"
    + "".join(f"OPTION_{i} = {i}\n" for i in range(30, 80))
)


@pytest.mark.parametrize(
    ("case", "line", "covered"),
    [
        ("the statement above the hit", 30 - 6 - 5, True),
        ("the statement below the hit", 30 + 6 + 5, True),
        ("beyond the widening", 30 - 6 - MAX_WIDEN_LINES - 2, False),
    ],
)
def test_bytes_left_over_widen_the_window_around_the_hit(tmp_path, case, line, covered):
    repo = make_repo(tmp_path / "repo", {"pkg/settings.py": SETTINGS})
    pack = build_pack(["RETRY_BUDGET"], LocalGitGrep(repo), ticket_text="`RETRY_BUDGET` ignored")
    [packed] = pack.files
    assert any(w.start <= line <= w.end for w in packed.windows) is covered, case
    assert pack.bytes == sum(len(w.text.encode()) for w in packed.windows) <= MAX_PACK_BYTES


def _window(lines: list[str], start: int, end: int) -> Window:
    return Window(start=start, end=end, text="".join(lines[start - 1 : end]))


def test_widening_never_passes_the_budget_nor_touches_a_cut_window():
    lines = [f"line_{i:03d} = {i}\n" for i in range(1, 201)]  # 14 bytes a line
    near = [_window(lines, 10, 12), _window(lines, 16, 18)]  # three lines apart
    cut = Window(start=100, end=101, text=lines[99] + lines[100][:5])  # truncated to fit
    kept = {"a.py": near, "b.py": [cut], "gone.py": [_window(lines, 50, 51)]}
    readable = {"a.py": lines, "b.py": lines}
    used = sum(len(w.text) for ws in kept.values() for w in ws)
    out = widen_windows(kept, ["a.py", "b.py", "gone.py"], readable.get, used + 14 * 6)
    assert sum(len(w.text) for ws in out.values() for w in ws) <= used + 14 * 6
    assert out["b.py"] == [cut] and out["gone.py"] == kept["gone.py"]  # cut / unreadable: kept
    [merged] = out["a.py"]  # the gap of three lines filled: one window, no line twice
    assert merged.text == "".join(lines[merged.start - 1 : merged.end])
    huge = widen_windows({"a.py": [_window(lines, 1, 2)]}, ["a.py"], readable.get, 10**6)
    assert [(w.start, w.end) for w in huge["a.py"]] == [(1, 2 + MAX_WIDEN_LINES)]
    full = sum(len(w.text) for w in near)  # no byte left over: nothing moves
    assert widen_windows({"a.py": near}, ["a.py"], readable.get, full) == {"a.py": near}


CALLER = """from pkg.helpers import normalise


def render(value):
    return normalise(value).upper()
"""
HELPERS = """def normalise(value):
    return value.strip()


def other():
    return 1
"""


def test_the_file_defining_what_the_named_function_calls_is_a_candidate(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {"pkg/__init__.py": "", "pkg/view.py": CALLER, "pkg/helpers.py": HELPERS},
    )
    pack = build_pack(["render"], LocalGitGrep(repo), ticket_text="`render` keeps spaces")
    paths = [f.path for f in pack.files]
    assert paths[0] == "pkg/view.py"
    assert "pkg/helpers.py" in paths  # no word of the ticket is in it: the call graph brought it
    [helper] = [f for f in pack.files if f.path == "pkg/helpers.py"]
    assert any(w.start <= 1 and w.end >= 2 for w in helper.windows)
    assert MAX_CALLEE_FILES >= 1


def test_the_pack_stays_inside_its_bounds_with_every_rule_on(tmp_path):
    files = {f"pkg/m{i}.py": NAMED_AND_HELPER * 6 for i in range(12)}
    files["pkg/view.py"] = CALLER
    files["pkg/helpers.py"] = HELPERS
    repo = make_repo(tmp_path / "repo", files)
    seeds = [f"name_{i}" for i in range(20)] + ["parse_list", "render", "ValueError"]
    ticket = "`parse_list` and `render`\nFile ~/x/pkg/m3.py:13, in parse_list(raw)\n" * 3
    pack = build_pack(seeds, LocalGitGrep(repo), ticket_text=ticket)
    assert len(pack.files) <= MAX_PACK_FILES
    assert pack.bytes <= MAX_PACK_BYTES
    assert pack.searches <= MAX_SEARCHES
    assert len(pack.seeds) <= MAX_SEEDS
    again = build_pack(seeds, LocalGitGrep(repo), ticket_text=ticket)
    assert again.model_dump() == pack.model_dump()  # deterministic
