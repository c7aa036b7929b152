"""Linear's own limits, each with the documented number it comes from (the sensor and the
client obey them; a test hits each)."""

from typing import Final

LINEAR_PAGE_SIZE: Final = 50
"""Issues per Linear page: Linear's own default; a bigger page costs more query complexity."""

MAX_LINEAR_PAGES_PER_TICK: Final = 10
"""Linear pages walked in one sensor tick; the rest resumes from the stored page cursor."""

MAX_LINEAR_RATELIMIT_RETRIES: Final = 3
"""GraphQL-level ``RATELIMITED`` answers retried in-line before the tick gives up and skips."""

LINEAR_POLL_INTERVAL_S: Final = 60
"""Seconds between Linear polls: Linear discourages polling; once a minute is well inside it."""
