"""Python's module names are case-sensitive: a name written with a capital is a module of the
catalog only where the catalog spells it so (``repo_usage.spelt_as_module``). ``Sentry.init(``
and ``import Sentry from '@sentry/node'`` are another language's namespace; ``sentry.init(``,
``import sentry`` and ``PIL.Image.open(`` are uses. Each negative row fails with the rule off."""

from __future__ import annotations

import pytest

from tests.domain.intake.small_catalogs import catalog
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.repo_evidence import gather_evidence

ORG = catalog(
    "acme",
    {
        "sentry": {"imports": ["sentry"]},
        "sentry-javascript": {},
        "pipfile": {"imports": ["pipfile"]},
        "pillow": {"imports": ["PIL"]},
    },
)


def _uses(text: str) -> set[tuple[str, str]]:
    ticket = Ticket(id="T", source="linear", title="A crash", description=text)
    ev = gather_evidence(ticket, ORG)
    return {(i.repo, i.kind) for i in ev.items() if i.kind in ("import", "usage")}


@pytest.mark.parametrize(
    "text",
    [
        "```js\nSentry.init({ dsn: 'x' });\n```",
        "```js\nimport Sentry from '@sentry/node';\n```",
        "It crashes in `Sentry.captureException(err)` before the event is sent.",
    ],
)
def test_a_capitalised_name_the_catalog_does_not_spell_so_is_no_use(text: str) -> None:
    assert _uses(text) == set()


@pytest.mark.parametrize(
    ("text", "use"),
    [
        ("```python\nsentry.init(dsn='x')\n```", ("acme/sentry", "usage")),
        ("```python\nimport sentry\n```", ("acme/sentry", "import")),
        ("```python\nfrom pipfile import Pipfile\n```", ("acme/pipfile", "import")),
        ("```python\nPIL.Image.open(path)\n```", ("acme/pillow", "usage")),
        ("```python\nfrom PIL import Image\n```", ("acme/pillow", "import")),
    ],
)
def test_the_twins_a_lower_case_name_or_the_catalogs_own_spelling_is_a_use(
    text: str, use: tuple[str, str]
) -> None:
    assert use in _uses(text)
