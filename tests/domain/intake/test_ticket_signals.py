"""The pure parts of the ticket signals: frames, messages, function spans, BM25 terms."""

from __future__ import annotations

from veranda_dagster.domain.context.code_search import split_lines
from veranda_dagster.domain.context.full_text import FullTextIndex, identifier_terms, query_terms
from veranda_dagster.domain.context.function_spans import enclosing_function
from veranda_dagster.domain.intake.ticket_signals import (
    MAX_FRAMES,
    MAX_LINKS,
    MAX_MESSAGES,
    Frame,
    error_messages,
    resolve_frame_path,
    source_links,
    static_fragment,
    traceback_frames,
)

CHAINED = """Traceback (most recent call last):
  File "C:\\\\Users\\\\me\\\\venv\\\\Lib\\\\site-packages\\\\pkg\\\\io.py", line 10, in read
    data = fh.read()
OSError: disk gone

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/srv/app/pkg/api.py", line 40, in handler
    return read(path)
  File "/usr/lib/python3/site-packages/pkg/io.py", line 12, in read
    raise ReadFailed(path) from exc
pkg.errors.ReadFailed: could not read the configured source file /tmp/x.json
"""


def test_frames_are_deepest_first_with_site_packages_cut_and_each_once():
    frames = traceback_frames(CHAINED)
    assert frames == [
        Frame("pkg/io.py", 12, "read", "raise ReadFailed(path) from exc"),
        Frame("srv/app/pkg/api.py", 40, "handler", "return read(path)"),
        Frame("pkg/io.py", 10, "read", "data = fh.read()"),
    ]


def test_pytest_short_frames_count_too_and_a_recursion_is_capped():
    assert traceback_frames("src/pkg/mod.py:88: in check\n") == [
        Frame("src/pkg/mod.py", 88, "check")
    ]
    loop = "".join(f'  File "pkg/a.py", line {n}, in f\n' for n in range(1, 500))
    assert len(traceback_frames(loop)) == MAX_FRAMES


def test_links_to_file_views_give_the_path_in_the_tree_and_the_linked_line():
    text = (
        "It fails here: https://example.org/acme/app/blob/3aa4410/src/app/io.py#L46-L47, "
        "see (https://git.example.net/group/sub/app/-/blob/main/src/app/io.py#L12) and "
        "https://code.example.com/acme/app/src/v2.0/app/cli.py?at=x#lines-9 and "
        "https://example.org/acme/app/blob/main/src/app/io.py#L46 again; "
        "not https://example.org/acme/app/tree/main/src, https://docs.example.org/io.html#L3 "
        "or https://example.org/acme/app/blob/main/LICENSE; a file: "
        "https://example.org/acme/app/blob/main/setup.py"
    )
    assert source_links(text) == [
        Frame("src/app/io.py", 46, None),
        Frame("src/app/io.py", 12, None),
        Frame("app/cli.py", 9, None),
        Frame("setup.py", 0, None),  # no line: the file only
    ]
    many = " ".join(f"https://e.org/a/b/blob/m/pkg/m{i}.py#L1" for i in range(40))
    assert len(source_links(many)) == MAX_LINKS


def test_frame_paths_resolve_by_their_longest_tail_inside_the_project():
    repo = ["src/pkg/io.py", "tests/pkg/io.py", "src/other/io.py", "setup.py"]
    assert resolve_frame_path("srv/app/src/pkg/io.py", repo) == "src/pkg/io.py"
    assert resolve_frame_path("pkg/io.py", repo) == "src/pkg/io.py"  # ties: shortest path order
    assert resolve_frame_path("io.py", repo) is None  # a bare name is too weak
    assert resolve_frame_path("setup.py", repo) == "setup.py"
    assert resolve_frame_path("usr/lib/python3.11/json/decoder.py", repo) is None


def test_messages_keep_their_static_text_last_exception_first():
    # the path is a value, and "disk gone" is too short to narrow a search
    assert error_messages(CHAINED) == ["could not read the configured source file"]
    assert static_fragment("'abc' is not a valid integer.") == "is not a valid integer"
    assert static_fragment("got 42 at 0x7f3a") is None  # nothing static is long enough
    prose = 'It prints "Connection pool is full, discarding connection" and then hangs.'
    assert error_messages(prose) == ["Connection pool is full, discarding connection"]
    assert error_messages("E   KeyError: 'name'") == []


def test_enclosing_function_by_indentation():
    src = split_lines(
        "import os\n\nclass A:\n    @cached\n    def f(\n        self,\n    ) -> int:\n"
        "        if self:\n            return 1\n\n        return 2\n\n    x = 1\n"
    )
    assert enclosing_function(src, 9) == (4, 11)  # decorator and wrapped signature included
    assert enclosing_function(src, 5) == (4, 11)
    assert enclosing_function(src, 13) is None and enclosing_function(src, 1) is None
    go = split_lines(
        "package x\n\nfunc F(a int) int {\n\tif a > 0 {\n\t\treturn 1\n\t}\n\treturn 0\n}\n"
    )
    assert enclosing_function(go, 5) == (3, 8)


def test_identifier_terms_keep_the_whole_name_and_its_parts():
    assert identifier_terms("NetRCAuth") == ("netrcauth", "net", "rc", "auth")
    assert identifier_terms("parse_URL") == ("parse_url", "parse", "url")
    assert identifier_terms("__init__") == ("init",)
    assert query_terms("HTTPServer x")["http"] == 1


def test_bm25_prefers_the_file_whose_rare_words_the_ticket_uses():
    index = FullTextIndex(
        [
            ("pkg/throttle.py", "def backoff_delay(attempt):\n    return 2 ** attempt\n"),
            ("pkg/common.py", "def run(request):\n    return request\n" * 20),
            ("pkg/other.py", "value = request\n"),
        ]
    )
    ranked = index.rank(query_terms("the request backoff delay is too short"))
    assert ranked[0][0] == "pkg/throttle.py"
    assert all(score > 0 for _, score in ranked)
    assert index.rank(query_terms("nothing matches here zzz")) == []


def test_at_most_two_messages_are_searched():
    text = "".join(f"ValueError: the value number {w} was refused by the parser\n" for w in "abc")
    text = (
        text.replace("number a", "alpha").replace("number b", "beta").replace("number c", "gamma")
    )
    assert len(error_messages(text)) == MAX_MESSAGES == 2
