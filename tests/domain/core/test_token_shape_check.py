"""A token shape that matches a commit SHA, a UUID or plain hex is refused where its plugin
registers (vendors, forges), before the scrubber could blank every SHA in every text; every
shape the scrubber knows today passes the same check."""

from __future__ import annotations

import dataclasses

import pytest

from tests.support.plugins import scratch
from tests.vendors.test_vendor_declarations import Acme
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.redaction import TokenShape, scrub, token_shapes
from veranda_dagster.domain.core.token_shape_check import NEVER_SECRET, shape_problems
from veranda_dagster.forges.registry import FORGES
from veranda_dagster.vendors import registry

SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
GREEDY = [
    TokenShape("sha_like", r"[0-9a-f]{40}", SHA, "made up here"),
    TokenShape("hex_run", r"[0-9a-fA-F]{24,}", "0123456789abcdef01234567", "made up here"),
    TokenShape("uuid_like", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
               "123e4567-e89b-42d3-a456-426614174000", "made up here"),
]  # fmt: skip


@pytest.mark.parametrize("shape", GREEDY, ids=[s.name for s in GREEDY])
def test_a_shape_matching_what_is_never_secret_is_named_with_what_it_matched(shape) -> None:
    problems = shape_problems(shape)
    assert problems and all(f"token shape {shape.name!r} matches" in p for p in problems)


def test_the_harm_is_real_a_sha_shape_would_blank_a_commit_sha() -> None:
    import re

    assert re.search(GREEDY[0].pattern, f"fixed in {SHA}")  # what the check stands between


@pytest.mark.parametrize("shape", GREEDY, ids=[s.name for s in GREEDY])
def test_a_vendor_declaring_such_a_shape_is_refused_at_registration(monkeypatch, shape) -> None:
    vendors = scratch(registry.VENDORS, monkeypatch)
    greedy = type("Greedy", (Acme,), {"token_patterns": (shape,)})
    with pytest.raises(ConfigError, match=rf"vendor 'acme' is incomplete: .*{shape.name}"):
        vendors.register(registry.VendorInfo("acme", ("api_key",), 99, greedy))
    assert "acme" not in vendors


@pytest.mark.parametrize("shape", GREEDY, ids=[s.name for s in GREEDY])
def test_a_forge_declaring_such_a_shape_is_refused_at_registration(monkeypatch, shape) -> None:
    forges = scratch(FORGES, monkeypatch)
    row = dataclasses.replace(forges["github"], name="acme", token_shapes=(shape,))
    with pytest.raises(ConfigError, match=rf"forge 'acme' is incomplete: .*{shape.name}"):
        forges.register(row)
    assert "acme" not in forges


def test_a_shape_that_misses_its_own_sample_is_named() -> None:
    shape = TokenShape("acme", r"acme_[a-z]{10}", "acme_123", "made up here")
    assert shape_problems(shape) == ["token shape 'acme' does not match its own sample"]


@pytest.mark.parametrize("shape", token_shapes(), ids=[s.name for s in token_shapes()])
def test_every_shape_the_scrubber_knows_passes_and_leaves_shas_and_uuids_alone(shape) -> None:
    assert shape_problems(shape) == []
    for _label, text in NEVER_SECRET:
        assert text in scrub(f"commit {text} fixed it", environ={})
