"""The outside systems' own limits, each with the documented number it comes from.

These are bounds like those in ``domain/core/bounds.py`` (each a named constant a test hits), but
they are facts about one tracker's or forge's API (page sizes, rate limits, polling etiquette),
so they live beside the clients that obey them and the domain never names a vendor.
"""

from typing import Final

LINEAR_PAGE_SIZE: Final = 50
"""Issues per Linear page: Linear's own default; a bigger page costs more query complexity."""

MAX_LINEAR_PAGES_PER_TICK: Final = 10
"""Linear pages walked in one sensor tick; the rest resumes from the stored page cursor."""

MAX_LINEAR_RATELIMIT_RETRIES: Final = 3
"""GraphQL-level ``RATELIMITED`` answers retried in-line before the tick gives up and skips."""

SLACK_HISTORY_LIMIT: Final = 15
"""Messages per conversations.history call: new non-Marketplace Slack apps are capped at 15."""

MAX_SLACK_PAGES_PER_TICK: Final = 5
"""History pages per channel per tick; the rest resumes from the stored page cursor."""

MAX_SLACK_CHANNELS: Final = 20
"""Channels one Slack sensor polls: each costs a rate-limited history call per tick."""

MAX_SLACK_THREADS_PER_TICK: Final = 10
"""Threads opened with conversations.replies per channel per tick to find mentions in replies."""

MAX_SLACK_THREAD_MESSAGES: Final = 20
"""Thread replies folded into a Slack ticket's description; past that it is a conversation."""

LINEAR_POLL_INTERVAL_S: Final = 60
"""Seconds between Linear polls: Linear discourages polling; once a minute is well inside it."""

SLACK_POLL_INTERVAL_S: Final = 60
"""Seconds between Slack polls: new internal apps get 1 history request per minute."""

GITHUB_CODE_SEARCH_PER_MINUTE: Final = 10
"""GitHub's own ``code_search`` limit (requests per rolling minute); the client waits, not 403s."""

MAX_SLACK_BLOCK_DEPTH: Final = 6
"""Nesting walked in a Slack message's blocks looking for a mention; rich text nests 3-4 deep."""

GITHUB_SEARCH_PER_PAGE: Final = 30
"""Results asked per code search: each needs its file's text to place line numbers."""
