"""GitHub's own limits, each with the documented number it comes from (its code search obeys
them; a test hits each)."""

from typing import Final

GITHUB_CODE_SEARCH_PER_MINUTE: Final = 10
"""GitHub's own ``code_search`` limit (requests per rolling minute); the client waits, not 403s."""

GITHUB_SEARCH_PER_PAGE: Final = 30
"""Results asked per code search: each needs its file's text to place line numbers. An answer
listing more is read only this far: each result reads its whole file again."""

GITHUB_TEXT_MATCHES_READ: Final = 10
"""A result's ``text_matches`` fragments looked for in its file when the seed itself is not in
it (a few per file in GitHub's answers, at most 10 in the simulator's). Each fragment is
searched for in every line, so an answer of thousands of fragments over a megabyte file would
cost their product (4,000 fragments over 16,000 lines: 3 s for one result)."""
