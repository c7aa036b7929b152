"""``scrub``: token-shaped strings never reach a PR body, comment or prompt."""

import pytest

from veranda_dagster.domain.core.redaction import scrub


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


# --- every shape each service and vendor issues ------------------------------------------------

from tests.support.plugins import scratch  # noqa: E402
from veranda_dagster.domain.core.redaction import (  # noqa: E402
    GENERIC_TOKENS,
    environ_secrets,
    token_shapes,
    url_password,
)
from veranda_dagster.plugins import provider_token_shapes  # noqa: E402
from veranda_dagster.vendors import registry  # noqa: E402

SHAPES = token_shapes()


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_every_token_shape_masks_its_sample_whole(shape):
    import re

    assert re.fullmatch(shape.pattern, shape.sample), "the sample is not of its own shape"
    for context in ("before {} after", "KEY={}\n", '{{"token": "{}"}}', "Bearer {}"):
        text = context.format(shape.sample)
        assert scrub(text, environ={}) == context.format("***")
    assert shape.sample[: len(shape.sample) // 2] not in scrub(shape.sample, environ={})


def test_each_vendor_brings_its_own_table_and_the_registry_collects_it():
    vendors = registry.vendors()
    assert {"claude", "codex", "gemini", "kimi", "grok", "glm", "cursor"} <= set(vendors)
    collected = {s.name for s in registry.token_patterns()}
    for vendor in vendors:
        plugin = registry.get(vendor).factory
        names = {s.name for s in plugin.token_patterns}
        assert names, f"{vendor} has no token_patterns table"
        assert names <= collected
    services = provider_token_shapes() + GENERIC_TOKENS
    assert collected | {s.name for s in services} == {s.name for s in SHAPES}
    expected = {
        "anthropic_api_key", "claude_oauth_token", "openai_project_key", "openai_legacy_key",
        "google_api_key", "moonshot_api_key", "xai_api_key", "zhipu_api_key",
        "cursor_user_api_key", "cursor_admin_api_key", "jwt", "github", "slack", "linear",
        "aws_access_key",
    }  # fmt: skip
    assert expected <= {s.name for s in SHAPES}
    for shape in SHAPES:
        assert shape.source, f"{shape.name} names no source"


def test_a_vendor_registered_later_brings_its_shapes_to_the_scrubber(monkeypatch):
    from veranda_dagster.domain.core.redaction import TokenShape

    class Fake:
        token_patterns = (TokenShape("acme", r"acme_[a-z0-9]{12,}", "acme_0123456789ab", "test"),)

    vendors = scratch(registry.VENDORS, monkeypatch)._items  # no complete vendor needed
    monkeypatch.setitem(vendors, "acme", registry.VendorInfo("acme", ("api_key",), 99, Fake))
    assert scrub("key acme_0123456789abcdef here", environ={}) == "key *** here"


@pytest.mark.parametrize(
    "password", ["p%zz", "p@ss", "p:ss", "p/ss", "p%40ss%25", "a@b:c/d%e#f?g", "%"]
)
def test_a_connection_url_password_is_masked_whatever_it_contains(password):
    url = f"postgresql+psycopg2://veranda:{password}@db.internal:5432/veranda?sslmode=require"
    line = f"value store: cannot connect to {url}: refused"
    out = scrub(line, environ={})
    assert out == (
        "value store: cannot connect to "
        "postgresql+psycopg2://veranda:***@db.internal:5432/veranda?sslmode=require: refused"
    )
    assert url_password(url) == password


def test_url_parsing_leaves_urls_without_a_password_alone():
    for text in (
        "https://github.com/o/r/pull/3 by a@b.com",
        "ssh://git@github.com:22/o/r.git",
        "see http://host:8080/x and mail me@example.com",
    ):
        assert scrub(text, environ={}) == text
    assert url_password("https://user@host/x") is None
    assert url_password("no url here") is None


def test_the_process_environment_supplies_secrets_no_shape_knows():
    environ = {
        "VAULT_TOKEN": "hvs-custom-0123456789",
        "DEBUG_TOKEN": "1",
        "GITHUB_TOKEN_FILE": "/run/secrets/github-token-path",
        "VERANDA_POSTGRES_URL": "postgresql://veranda:p@ss%word!@db/veranda",
        "HOME": "/home/veranda-user",
    }
    found = environ_secrets(environ)
    assert "hvs-custom-0123456789" in found and "p@ss%word!" in found
    assert "1" not in found and "/run/secrets/github-token-path" not in found
    assert "/home/veranda-user" not in found
    text = "vault said hvs-custom-0123456789; db pw p@ss%word! (encoded p%40ss%25word%21); 1 + 1"
    assert scrub(text, environ=environ) == "vault said ***; db pw *** (encoded ***); 1 + 1"


@pytest.mark.parametrize(
    "entry",
    [
        "import veranda_dagster.definitions",  # the code location and every run worker
        "from veranda_dagster.plugins import load_plugins; load_plugins()",  # the CLI, a test
    ],
)
def test_a_fresh_interpreter_scrubs_provider_shapes_once_an_entry_point_registered_them(entry):
    """Nothing registers at import; the one registration step, which the Definitions and the
    CLI run first, hands every provider's shapes to the scrubber."""
    import subprocess
    import sys

    code = (
        f"{entry}\n"
        "from veranda_dagster.domain.core.redaction import scrub\n"
        "print(scrub('a ghp_16C7e42F292c6912E7710c838347Ae178B4a b sk-ant-api03-'"
        " + 'x' * 90 + ' c xoxb-1234567890-1234567890-abcdefghij d', environ={}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split()[-7:] == ["a", "***", "b", "***", "c", "***", "d"]


def test_the_domain_scrubber_imports_no_provider_and_knows_only_generic_shapes_itself():
    import ast
    from pathlib import Path

    import veranda_dagster.domain.core.redaction as redaction

    tree = ast.parse(Path(redaction.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not {m for m in imported if m.startswith("veranda_dagster.")}
    assert {s.name for s in GENERIC_TOKENS} == {"aws_access_key", "jwt", "private_key"}


def test_passwords_said_in_prose_or_flags_are_masked_and_prose_is_left_alone():
    text = "deploy password: Hunt3r-2!x\nmysql --password S3cretPw9 -h db\npassword is required"
    assert scrub(text) == "deploy password: ***\nmysql --password *** -h db\npassword is required"


def test_the_high_entropy_pass_masks_random_hex_and_base64_runs_only():
    key = "a3f9c2e8d1b7465f90e2c3a4b5d6e7f8091a2b3c"
    b64 = "q8Zr3LmX0vTw9YbN2cKd7HfJ5gPa1sEu6iOy4tRn"
    prose = (
        "src/components/very_long_module_name_for_things.py "
        "ThisIsAVeryLongCamelCaseIdentifierName2 " + "ab" * 20
    )
    assert scrub(f"{key} {b64} {prose}", high_entropy=True) == f"*** *** {prose}"
    assert scrub(f"{key} {b64}") == f"{key} {b64}"  # elsewhere (a PR body's shas) untouched
