"""The forms of a secret push protection knows, found in bytes at any offset."""

from __future__ import annotations

import base64
import codecs

import pytest

from veranda_dagster.domain.clone.push_protection import (
    MIN_NEEDLE_BYTES,
    added_lines,
    find,
    needles,
    secret_forms,
)

SECRET = "lin_api_PUSH_canary_4f1e0b9d"


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abc", b"abcd"])
@pytest.mark.parametrize("urlsafe", [False, True])
def test_base64_is_found_at_every_alignment_inside_a_longer_text(
    prefix: bytes, urlsafe: bool
) -> None:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = encode(prefix + f"TOKEN={SECRET}\n".encode() + b"tail")
    hit = find(b"config = '" + blob + b"'", needles({SECRET: "$LINEAR_API_KEY"}))
    assert hit is not None and hit.describe() == "the value of $LINEAR_API_KEY (base64)"


def test_hex_reversed_and_the_value_itself_are_found() -> None:
    forms = needles({SECRET: "$K"})
    assert find(SECRET.encode().hex().encode(), forms).form == "hex"  # type: ignore[union-attr]
    assert find(SECRET.encode().hex().upper().encode(), forms).form == "hex"  # type: ignore[union-attr]
    assert find(SECRET[::-1].encode(), forms).form == "reversed"  # type: ignore[union-attr]
    assert find(f"x={SECRET}".encode(), forms).describe() == "the value of $K"  # type: ignore[union-attr]
    assert find(codecs.encode(SECRET, "rot13").encode(), forms) is None  # not a form it knows


def test_no_form_is_shorter_than_the_minimum() -> None:
    for shortest in ("12345678", "123456789", "1234567890"):
        assert all(len(n.data) >= MIN_NEEDLE_BYTES for n in secret_forms(shortest, "$X"))
        forms = {n.form for n in secret_forms(shortest, "$X")}
        assert forms == {"", "reversed", "hex", "base64"}


def test_added_lines_are_bytes_and_survive_a_binary_file() -> None:
    diff = (
        b"diff --git a/logo.png b/logo.png\n--- /dev/null\n+++ b/logo.png\n"
        b"@@ -0,0 +1 @@\n+\x89PNG\r\n\x1a\n+\xff\xfe\x00\x01\n"
        b"--- a/app.py\n+++ b/app.py\n+x = 2\n"
    )
    lines = list(added_lines(diff))
    assert lines[0] == ("logo.png", b"\x89PNG\r")
    assert lines[-1] == ("app.py", b"x = 2")
