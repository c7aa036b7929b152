"""Each named input bound, hit exactly: what is cut says so, what is refused says why."""

from __future__ import annotations

import time

import pytest

from tests.domain.intake.small_catalogs import catalog
from veranda_dagster.domain.core.bounds import (
    MAX_COMMENT_CHARS,
    MAX_CONFIG_FILE_BYTES,
    MAX_DOCUMENT_NODES,
    MAX_JSON_DEPTH,
    MAX_TICKET_ATTACHMENTS,
    MAX_TICKET_DESCRIPTION_CHARS,
    MAX_TICKET_LABELS,
    MAX_TICKET_TITLE_CHARS,
)
from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.domain.core.input_files import parse_document, read_input_text
from veranda_dagster.domain.core.models import Attachment, Ticket
from veranda_dagster.domain.intake.catalog import load_catalog
from veranda_dagster.domain.intake.repo_detection import detect_repo
from veranda_dagster.domain.intake.repo_usage import MAX_TRACE_FRAMES, gather_usage
from veranda_dagster.domain.intake.ticket_bounds import bound_ticket
from veranda_dagster.forges.github.shapes import issue_comment
from veranda_dagster.sources.linear.ticket import ticket_from_linear
from veranda_dagster.vendors.config import VendorsConfig


def ticket(**fields) -> Ticket:
    return Ticket(id="ENG-1", source="linear", title=fields.pop("title", "t"), **fields)


def test_a_description_at_the_bound_is_kept_and_one_past_is_cut_with_a_note():
    at = "x" * MAX_TICKET_DESCRIPTION_CHARS
    assert bound_ticket(ticket(description=at)).description == at
    cut = bound_ticket(ticket(description=at + "yz")).description
    assert cut.startswith(at) and "yz" not in cut
    assert f"cut at {MAX_TICKET_DESCRIPTION_CHARS:,} of {MAX_TICKET_DESCRIPTION_CHARS + 2:,}" in cut


def test_a_fifty_megabyte_description_costs_no_more_than_its_bound():
    huge = "ERROR worker crashed at line 42 of billing/invoice.py\n" * 1_000_000
    started = time.monotonic()
    bounded = bound_ticket(ticket(title="Crash", description=huge))
    assert len(bounded.description) < MAX_TICKET_DESCRIPTION_CHARS + 200
    assert time.monotonic() - started < 10


def test_title_nul_and_controls_are_removed_and_the_length_is_bounded():
    t = bound_ticket(ticket(title="Crash\x00 in\r\n billing\x1b[31m" + "!" * 1000))
    assert "\x00" not in t.title and "\x1b" not in t.title and "\n" not in t.title
    assert t.title.startswith("Crash in billing[31m")
    assert len(t.title) == MAX_TICKET_TITLE_CHARS and t.title.endswith("\u2026")


def test_a_nul_in_a_linear_title_reaches_repo_guess_as_text_not_a_value_error(tmp_path):
    node = {"identifier": "ENG-1", "id": "u1", "title": "Fix \x00acme/api crash"}
    t = bound_ticket(ticket_from_linear(node))
    catalog = tmp_path / "catalog.json"
    catalog.write_text('{"org": "acme", "repositories": [{"full_name": "acme/api"}]}')
    guess = detect_repo(t, load_catalog(catalog))
    assert guess.repo == "acme/api"


def test_attachments_and_labels_are_capped_and_the_drop_is_noted():
    many = [Attachment(url=f"https://x.test/{i}.png") for i in range(MAX_TICKET_ATTACHMENTS + 3)]
    t = bound_ticket(ticket(attachments=many, labels=[f"l{i}" for i in range(500)]))
    assert len(t.attachments) == MAX_TICKET_ATTACHMENTS and len(t.labels) == MAX_TICKET_LABELS
    assert "3 more attachment(s) not read" in t.description
    kept = bound_ticket(ticket(attachments=many[:MAX_TICKET_ATTACHMENTS]))
    assert len(kept.attachments) == MAX_TICKET_ATTACHMENTS and "not read" not in kept.description


def test_a_forge_comment_past_its_bound_is_cut_with_a_note():
    body = "please fix " * (MAX_COMMENT_CHARS // 5)
    comment = issue_comment({"id": 1, "user": {"login": "ann"}, "body": body})
    assert (
        len(comment.body) < MAX_COMMENT_CHARS + 100 and "[veranda: comment cut at" in comment.body
    )


def test_json_depth_at_the_bound_parses_and_one_deeper_is_refused():
    at = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert parse_document(at, where="x", as_json=True) is not None
    deeper = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(InputError, match=f"deeper than {MAX_JSON_DEPTH}"):
        parse_document(deeper, where="x", as_json=True)
    with pytest.raises(InputError, match="deeper"):
        parse_document("[" * 100_000 + "]" * 100_000, where="x", as_json=True)
    with pytest.raises(InputError, match="deeper"):
        parse_document(
            "a:\n" + "".join(f"{' ' * (i + 1)}b{i}:\n" for i in range(60)), where="y", as_json=False
        )


def test_yaml_aliases_that_expand_past_the_value_bound_are_refused():
    laughs = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i, name in enumerate("bcdefgh"):
        prev = "abcdefgh"[i]
        laughs.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    started = time.monotonic()
    with pytest.raises(InputError, match=f"more than {MAX_DOCUMENT_NODES:,} values"):
        parse_document("\n".join(laughs), where="bomb.yaml", as_json=False)
    assert time.monotonic() - started < 30


def test_a_vendors_file_past_its_bound_is_one_config_error(tmp_path):
    path = tmp_path / "vendors.yaml"
    path.write_text("vendors: []\n" + "#" * MAX_CONFIG_FILE_BYTES)
    with pytest.raises(ConfigError, match=f"{MAX_CONFIG_FILE_BYTES:,}-byte limit"):
        VendorsConfig.load(path)
    exact = tmp_path / "exact.yaml"
    head = "probe_timeout_s: 5\n"
    exact.write_text(head + "#" * (MAX_CONFIG_FILE_BYTES - len(head)))
    assert exact.stat().st_size == MAX_CONFIG_FILE_BYTES
    assert VendorsConfig.load(exact).probe_timeout_s == 5


def test_a_regular_file_only(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo")
    started = time.monotonic()
    with pytest.raises(InputError, match="a FIFO, not a regular file"):
        read_input_text(tmp_path / "fifo", what="ticket", max_bytes=10)
    with pytest.raises(InputError, match="a character device"):
        read_input_text("/dev/zero", what="ticket", max_bytes=10)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("case", "before", "read"),
    [
        ("the package's frame is the last read", MAX_TRACE_FRAMES - 1, True),
        ("the package's frame is one past the bound", MAX_TRACE_FRAMES, False),
    ],
)
def test_library_frames_are_read_up_to_their_bound(case, before, read):
    """``MAX_TRACE_FRAMES``: a pasted log's frames are read in the order written up to the
    bound; a catalog package's frame at the bound is trace evidence, one frame later it is
    never looked up."""
    org = catalog("acme", {"streamer": {"imports": ["streamer"]}})
    frame = 'File "/venv/lib/python3.12/site-packages/{}/core.py", line 3, in run\n'
    text = "".join(frame.format(f"noise{i}") for i in range(before)) + frame.format("streamer")
    found: list[tuple[str, str]] = []
    gather_usage(text, org, lambda repo, kind, excerpt, term: found.append((repo, kind)))
    assert (("acme/streamer", "trace") in found) is read, case
