"""A report's boilerplate (an issue template's task list, the reporter's environment block) is
not evidence: the full-text query and the error messages leave it out, and a seed written only
there weighs as noise (docs/retrieval.md, eleventh round)."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.pack_signals import TicketEvidence
from veranda_dagster.domain.context.retrieval import SearchResult, boilerplate_seeds, build_pack
from veranda_dagster.domain.intake.report_boilerplate import (
    MAX_COMMAND_CHARS,
    MAX_KEY_CHARS,
    MIN_LOG_LINES,
    MIN_VERSION_LINES,
    boilerplate_lines,
    split_boilerplate,
)

MITM_BLOCK = (
    "Mitmproxy: 12.2.1\nPython:    3.14.2\nOpenSSL:   OpenSSL 3.5.4 30 Sep 2025\n"
    "Platform:  Linux-6.17.12-300.fc43.x86_64-x86_64-with-glibc2.42"
)
VERSION_INFO_BLOCK = (
    "             pydantic version: 1.9.0\n            pydantic compiled: True\n"
    "                 install path: /usr/local/lib/python3.8/site-packages/pydantic\n"
    "               python version: 3.8.12 (default, Oct 12 2021, 03:05:25)\n"
    "     optional deps. installed: ['dotenv', 'typing-extensions']"
)
BOLD_LIST = "- **Lib version**: 2.4.1\n- **Python version**: 3.13.13\n- **Operating system**: macOS"


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        ("Crash on save\n\n" + MITM_BLOCK + "\nthanks", [2, 3, 4, 5]),
        ("Output:\n" + VERSION_INFO_BLOCK, [1, 2, 3, 4, 5]),
        ("Env\n" + BOLD_LIST, [1, 2, 3]),
        ("- [x] I have searched the issues\n* [ ] This is a bug report\ntext", [0, 1]),
        ("- [X] I confirm that I'm using the latest release", [0]),
        # twins: what reads like boilerplate and is the report
        ("class Model(BaseModel):\n    name: str\n    age: int", []),
        ("Fixed in: 3.2\nWorks fine otherwise", []),
        ("ValueError: 1.5 is not valid\nTypeError: expected 2.0", []),
        ("OS: Linux 6.1\nValueError: 1.5 is not valid", []),
        ("- [docs](https://example.invalid/x) say 3.1\n- [faq](https://example.invalid/y)", []),
        ("Note: it broke between 3.1 and 3.2, see the log below", []),
    ],
)
def test_the_task_list_and_the_environment_block_are_boilerplate(text, dropped):
    assert sorted(boilerplate_lines(text)) == dropped


def test_a_block_needs_enough_version_lines():
    one = "Shell: zsh\nPython: 3.12.1\nEditor: vim"
    assert MIN_VERSION_LINES == 2 and boilerplate_lines(one) == set()
    assert boilerplate_lines(one.replace("zsh", "zsh 5.9")) == {0, 1, 2}


def test_split_keeps_the_report_and_returns_the_boilerplate():
    report, boilerplate = split_boilerplate("It crashes\n" + BOLD_LIST + "\nafter login")
    assert report == "It crashes\nafter login"
    assert boilerplate == BOLD_LIST
    assert split_boilerplate("plain text") == ("plain text", "")


def _result(query: str, seed: str | None) -> SearchResult:
    return SearchResult(query=query, rank=0, hits=[], seed=seed)


@pytest.mark.parametrize(
    ("query", "seed", "noise"),
    [
        ("x86_64", "x86_64", True),  # only on the platform line
        ("OpenSSL", "OpenSSL", True),
        ("check_auth", "check_auth", False),  # the report's own name
        ("Linux", "Linux", False),  # also in the prose: the reporter talks about it
        ("x86_64", None, False),  # a relaxed variant or a plain word is not a seed
    ],
)
def test_a_seed_written_only_in_the_boilerplate_is_noise(query, seed, noise):
    report, boilerplate = split_boilerplate(
        "`check_auth` fails on Linux\n\n" + MITM_BLOCK.replace("Mitmproxy", "App")
    )
    signals = TicketEvidence(report_text=report.lower(), boilerplate_text=boilerplate.lower())
    assert (query in boilerplate_seeds([_result(query, seed)], signals)) is noise


def _tree() -> dict[str, str]:
    return {
        "pkg/build_info.py": "PLATFORMS = ['x86_64', 'x86_64-musl']\nDEFAULT = 'x86_64'\n",
        "pkg/login.py": "def login(session, user):\n    return session.check_auth(user)\n",
        "pkg/other.py": "def other():\n    return 1\n",
    }


@pytest.mark.parametrize(
    ("prose", "first"),
    [
        ("`check_auth` rejects everyone.", "pkg/login.py"),
        # twin: the reporter names the platform in the prose, so it is evidence again
        ("Only on `x86_64`: `check_auth` rejects everyone.", "pkg/build_info.py"),
    ],
)
def test_a_platform_tag_from_the_environment_block_ranks_nothing(tmp_path, prose, first):
    search = LocalGitGrep(make_repo(tmp_path / "repo", _tree()))
    ticket = f"{prose}\n\n### System Information\n{MITM_BLOCK.replace('Mitmproxy', 'App')}"
    pack = build_pack(["x86_64", "check_auth"], search, ticket_text=ticket)
    assert pack.files[0].path == first


PIP_LOG = (
    "Requirement already satisfied, skipping upgrade: idna<3 in ./lib/python3.8/site-packages\n"
    "Requirement already satisfied, skipping upgrade: requests>=2.22 in ./lib/python3.8/site"
)


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        ('Output of `python -c "import app.utils; print(app.utils.version_info())"`:', [0]),
        ('```\n$ python -c "import app; print(app.VERSION)"\n```', [1]),
        ("* Output of `app --version`: 5.7.0", [0]),
        ("$ app --version\napp 1.2", [0]),
        ("(venv) $ python -m app -V", [0]),
        ("\u276f pip install -U app\n" + PIP_LOG + "\n\nhttp: error", [0, 1, 2]),
        ("$ python -m pip install app==2.0", [0]),
        ("Collecting app\n  Using cached app-2.0-py3-none-any.whl", [0, 1]),
        # twins: a command or a log word in the report's own sentences
        ("Running `app --version` prints 1.2 but the docs say 1.3", []),
        ('I ran `python -c "import app; app.run()"`:', []),
        ("$ python script.py --verbose", []),
        ("With `pip install app[socks]` the extra is missing", []),
        ("# pip install fails on Windows", []),
        ("Collecting garbage takes forever\nthen it hangs", []),
        ("$ app --versions", []),
    ],
)
def test_setup_commands_and_install_logs_are_boilerplate(text, dropped):
    assert sorted(boilerplate_lines(text)) == dropped


def test_an_install_log_needs_enough_lines():
    assert MIN_LOG_LINES == 2
    assert boilerplate_lines(PIP_LOG.split("\n")[0]) == set()
    assert boilerplate_lines(PIP_LOG) == {0, 1}


def _app_tree() -> dict[str, str]:
    return {
        "app/utils.py": "def version_info():\n    return {'version': VERSION}\n",
        "app/settings.py": (
            "def read_env(prefix, delimiter):\n    return prefix.split(delimiter)\n"
        ),
        "app/other.py": "def other():\n    return 1\n",
    }


@pytest.mark.parametrize(
    ("command", "first"),
    [
        (
            'Output of `python -c "import app.utils; print(app.utils.version_info())"`:',
            "app/settings.py",
        ),
        # twin: the reporter's own sentence names the function, so it is evidence again
        ("`app.utils.version_info` is wrong, and `read_env` too:", "app/utils.py"),
    ],
)
def test_a_version_command_ranks_nothing(tmp_path, command, first):
    search = LocalGitGrep(make_repo(tmp_path / "repo", _app_tree()))
    ticket = f"`read_env` splits the prefix\n\n{command}\n```\napp version: 1.9\npython: 3.8\n```"
    pack = build_pack(["app.utils.version_info", "read_env"], search, ticket_text=ticket)
    assert pack.files[0].path == first


def test_an_environment_line_is_read_up_to_its_name_bound() -> None:
    """A name of ``MAX_KEY_CHARS`` is an environment line; one character longer is a sentence,
    so the block around it falls below ``MIN_VERSION_LINES`` and nothing is boilerplate."""
    at_bound = "K" * MAX_KEY_CHARS
    assert boilerplate_lines(f"{at_bound}: 1.2.3\nPython: 3.12.1") == {0, 1}
    assert boilerplate_lines(f"{at_bound}K: 1.2.3\nPython: 3.12.1") == set()


def test_an_exception_line_as_long_as_a_name_can_be_is_never_part_of_a_block() -> None:
    """An exception whose qualified name is as long as an environment line's name can be is
    still the report's error, not a field: it splits the block it sits in."""
    error = "e" * (MAX_KEY_CHARS - len("Error")) + "Error"
    text = f"Python: 3.12.1\nPlatform: Linux-x86_64\n{error}: 1.5 is not valid\nLib: 2.0\nOS: 1.2"
    assert len(error) == MAX_KEY_CHARS
    assert boilerplate_lines(text) == {0, 1, 3, 4}


def test_a_setup_command_is_read_up_to_its_bound() -> None:
    """``MAX_COMMAND_CHARS`` after the installer's verb: a command line of exactly the bound is a
    setup command; one character longer is not read as one (the line stays the report's)."""
    at_bound = " " + "p" * (MAX_COMMAND_CHARS - 1)
    assert boilerplate_lines(f"$ pip install{at_bound}") == {0}
    assert boilerplate_lines(f"$ pip install{at_bound}p") == set()
