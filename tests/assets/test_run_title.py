"""Each ticket's runs carry its title (``veranda/title``), so the runs list says what a run is
about: the ``ticket`` phase tags its run, and a re-execution that starts past it copies the tag
(asserted on a real re-execution in ``test_reexecution``). The title is hostile text: one
scrubbed line, bounded."""

from __future__ import annotations

from veranda_dagster.assets._run_title import MAX_TITLE_TAG_CHARS, title_tag


def test_a_hostile_title_is_one_scrubbed_bounded_line() -> None:
    secret = "ghp_" + "a" * 36
    shown = title_tag(f"Fix it\n\nnow {secret} " + "x" * 500)
    assert "\n" not in shown and secret not in shown
    assert len(shown) == MAX_TITLE_TAG_CHARS and shown.endswith("…")
    assert title_tag("  Fix the   retry bug ") == "Fix the retry bug"
