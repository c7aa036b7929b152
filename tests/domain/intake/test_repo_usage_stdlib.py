"""A name reached through a module of Python's standard library is the standard library's
(``repo_usage._standard_module``): ``asyncio.wait_for(`` is no use of a catalog package that
also exports a ``wait_for``. Its twins: the bare name, or one reached through a module that is
not the standard library's, still is."""

from __future__ import annotations

import pytest

from tests.domain.intake.small_catalogs import catalog
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.repo_evidence import gather_evidence

ORG = catalog(
    "acme",
    {"streamer": {"imports": ["streamer"], "symbols": ["wait_for"]}, "other": {}},
)


def _api(text: str) -> set[str]:
    ticket = Ticket(id="T", source="linear", title="A hang", description=text)
    return {i.repo for i in gather_evidence(ticket, ORG).items() if i.kind == "api"}


@pytest.mark.parametrize(
    "text",
    [
        "```python\nawait asyncio.wait_for(consumer.getone(), 5)\n```",
        "```python\nimport asyncio as aio\nawait aio.wait_for(task, 1)\n```",
    ],
)
def test_a_name_reached_through_the_standard_library_is_no_use_of_the_package(
    text: str,
) -> None:
    assert _api(text) == set()


@pytest.mark.parametrize(
    "text",
    [
        "Calling `wait_for` with a zero timeout hangs.",
        "```python\nawait pool.wait_for(task, 1)\n```",
    ],
)
def test_the_twins_the_bare_name_or_another_modules_attribute_is_a_use(text: str) -> None:
    assert _api(text) == {"acme/streamer"}
