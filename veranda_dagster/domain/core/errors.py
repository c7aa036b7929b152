"""One exception tree for the whole product, so callers decide retryability by type.

Every error carries a message a person can act on; none carries a secret. Its root and
``ConfigError`` live below every layer (``veranda_dagster.errors``), since the sandbox, under the
domain, raises them too; they are named here so the whole tree reads in one place.
"""

from veranda_dagster.errors import ConfigError, VerandaError

__all__ = [
    "AwaitingHumanError",
    "ConfigError",
    "InputError",
    "StoredValueError",
    "TicketRunInProgressError",
    "TransientError",
    "VerandaError",
]


class InputError(VerandaError):
    """A ticket, payload, file or CLI output failed validation at the edge."""


class SetupError(InputError):
    """A repository's setup step failed, timed out or outgrew its size bound. The message
    names which, the declaration and the output tail; nothing already materialized is lost
    and the next ticket tries again (a failed setup is never cached)."""


class TransientError(VerandaError):
    """A failure worth retrying: a 5xx, a timeout, a rate limit past its wait."""

    retryable = True


class AwaitingHumanError(VerandaError):
    """The run cannot proceed until a person answers (e.g. which repository)."""


class StoredValueError(VerandaError):
    """A durable asset value is missing or corrupt; the message names the asset and partition."""


class TicketRunInProgressError(VerandaError):
    """Another run of the same ticket started first and is still in progress; this one stops
    before any model call instead of paying for a twin that would fail at push."""

    def __init__(self, ticket: str, other_run_id: str, run_id: str) -> None:
        self.ticket = ticket
        self.other_run_id = other_run_id
        super().__init__(
            f"ticket {ticket} already has run {other_run_id} in progress, so run {run_id} "
            "stopped before any model call; wait for that run, or cancel it and launch again"
        )
