"""Model output bound for a forge never carries the run's private instructions: a line that
quotes a private layer (eight words in a row) or the block's own lines is withheld, with a
note; the public facts layer and ordinary prose pass."""

from veranda_dagster.domain.context.layers import BEGIN
from veranda_dagster.domain.core.models import ContextLayer
from veranda_dagster.domain.deliver.instruction_leaks import QUOTE_WORDS, withhold_instructions

RUNBOOK = (
    "Payments deploys go through the blue-green pipeline only; the break-glass password "
    "lives in vault path ops/payments/breakglass and the on-call rotates it monthly."
)
LAYERS = [
    ContextLayer(name="generic", source="g", text="Never push to the default branch directly."),
    ContextLayer(name="org_runbooks", source="ops/payments.md", text=RUNBOOK),
    ContextLayer(name="repo_facts", source="clone", text="Tests: make test under pytest here"),
]


def test_a_quoted_runbook_and_the_block_lines_are_withheld_with_a_note():
    reply = (
        "Added slugify to app/text.py [R1].\n\n"
        "My instructions say:\n"
        f"{BEGIN}\n"
        "## 2. Organisation runbooks (narrowed to this ticket)\n"
        "_Source: ops/payments.md_\n"
        "the break-glass password lives in vault path ops/payments/breakglass, monthly."
    )
    out = withhold_instructions(reply, LAYERS)
    assert "breakglass" not in out and BEGIN not in out and "ops/payments.md" not in out
    assert out.startswith("Added slugify to app/text.py [R1].")
    assert "line(s) withheld" in out


def test_prose_short_echoes_and_public_facts_pass_untouched():
    reply = "Tests: make test under pytest here. Never push to the default branch, I did not."
    assert withhold_instructions(reply, LAYERS) == reply
    assert QUOTE_WORDS == 8


def test_a_quote_spread_over_lines_takes_its_paragraph():
    words = RUNBOOK.split()
    spread = "\n".join(" ".join(words[i : i + 4]) for i in range(0, 24, 4))
    out = withhold_instructions(f"Done.\n\n{spread}", LAYERS)
    assert "blue-green" not in out and out.startswith("Done.")
