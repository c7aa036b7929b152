"""GitHub's own limits, each with the documented number it comes from (its code search obeys
them; a test hits each)."""

from typing import Final

GITHUB_CODE_SEARCH_PER_MINUTE: Final = 10
"""GitHub's own ``code_search`` limit (requests per rolling minute); the client waits, not 403s."""

GITHUB_SEARCH_PER_PAGE: Final = 30
"""Results asked per code search: each needs its file's text to place line numbers."""
