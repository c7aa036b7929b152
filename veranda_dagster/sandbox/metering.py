"""What the credential proxy asks of a meter: may this request start, and what did it cost.

The proxy stays ignorant of vendors' wire formats and of money: it hands a ``RequestMeter`` the
path of each request before forwarding it, and each answer's bytes as they pass. The meter of a
budgeted turn (``vendors.wire_meter``) reads the usage out of the vendor's answer and charges
the ticket's ledger. Standard library only, like ``egress``.
"""

from __future__ import annotations

from typing import Protocol


class ResponseTally(Protocol):
    """One answer being read: fed every byte the upstream sent, then finished exactly once,
    however the exchange ended (the CLI went away, the stream was cut, the turn was killed)."""

    def feed(self, chunk: bytes) -> None: ...

    def finish(self, status: int) -> None: ...


class RequestMeter(Protocol):
    def admit(self, path: str) -> str | None:
        """``None`` to forward the request, else why it must not start (the refusal's text)."""
        ...

    def tally(self, path: str, body: bytes) -> ResponseTally | None:
        """A tally for the answer to this request, or ``None`` when it bills nothing."""
        ...
