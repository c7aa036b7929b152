"""Slack's own limits, each with the documented number it comes from (the sensor, the client
and the message reader obey them; a test hits each)."""

from typing import Final

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

SLACK_POLL_INTERVAL_S: Final = 60
"""Seconds between Slack polls: new internal apps get 1 history request per minute."""

MAX_SLACK_BLOCK_DEPTH: Final = 6
"""Nesting walked in a Slack message's blocks looking for a mention; rich text nests 3-4 deep."""
