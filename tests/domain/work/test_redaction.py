"""``scrub``: token-shaped strings never reach a PR body, comment or prompt."""

import pytest

from veranda_dagster.domain.redaction import scrub


@pytest.mark.parametrize(
    "secret",
    [
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "xoxb-1234567890-abcdefghijkl",
        "lin_api_abcdefghijklmnop1234",
        "sk-ant-api03-abcdefghijklmnopqrstuv",
        "AKIAIOSFODNN7EXAMPLE",
    ],
)
def test_token_shapes_are_masked(secret):
    out = scrub(f"before {secret} after")
    assert secret not in out and out == "before *** after"


def test_urls_headers_assignments_and_known_values():
    text = (
        "clone https://x-access-token:s3cr3tvalue@github.com/o/r.git\n"
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz\n"
        "GITHUB_TOKEN=plainvalue123 and my-own-secret-here"
    )
    out = scrub(text, known=["my-own-secret-here"])
    assert "s3cr3tvalue" not in out and "x-access-token:***@github.com" in out
    assert "abcdefghijklmnopqrstuvwxyz" not in out
    assert "GITHUB_TOKEN=***" in out and "my-own-secret-here" not in out
    assert scrub("nothing secret: app/text.py:12 [R1]") == "nothing secret: app/text.py:12 [R1]"
