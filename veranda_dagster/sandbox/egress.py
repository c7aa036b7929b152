"""How one agent turn may reach its model: the upstream, and where its key travels.

An agent's sandbox has no network of its own; its only way out is the credential proxy
(``proxy.py``), which the worker runs outside the sandbox for the turn. The vendor of the
turn's vendor says, in its own module, where the CLI talks (its default base URL, or the
configured one) and how each key it reads travels in a request (``KeyCarrier``: a header, with
or without a ``Bearer`` scheme, or a query parameter). From that the runner builds an
``Egress``: the CLI gets a per-turn random placeholder instead of each key, and the proxy puts
the real key back in exactly those places, toward exactly that upstream.

A mode whose credential cannot travel that way (request signing such as Bedrock's SigV4 or
Vertex's service-account tokens; a login session file the CLI reads and refreshes itself) has
an ``Egress`` with ``refused`` set: such a turn is refused while the sandbox is on rather than
run with the credential inside.

Standard library only: the vendors import this module, and only ``proxy.py`` talks
HTTP.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

PLACEHOLDER_PREFIX = "veranda-placeholder-"
"""What a placeholder key starts with: recognisable in a log, worthless anywhere."""


@dataclass(frozen=True)
class KeyCarrier:
    """One place a key travels in a request: ``header`` (lower-case name) with an optional
    ``scheme`` before the key (``"Bearer "``), or a ``query`` parameter."""

    header: str | None = None
    scheme: str = ""
    query: str | None = None

    def __post_init__(self) -> None:
        if (self.header is None) == (self.query is None):
            raise ValueError("a key carrier is a header or a query parameter, not both")
        if self.header is not None and self.header != self.header.lower():
            raise ValueError(f"header names are declared lower-case: {self.header!r}")

    @property
    def where(self) -> str:
        """Names the place for a log line (never the value)."""
        return f"header {self.header}" if self.header else f"query {self.query}"


X_API_KEY = KeyCarrier(header="x-api-key")
BEARER = KeyCarrier(header="authorization", scheme="Bearer ")
X_GOOG_API_KEY = KeyCarrier(header="x-goog-api-key")
QUERY_KEY = KeyCarrier(query="key")


@dataclass(frozen=True)
class Upstream:
    """Where the proxy forwards: an origin (``scheme://host[:port]``) and the path prefix of
    the base URL the CLI was given; requests outside the prefix are refused."""

    origin: str
    prefix: str

    @classmethod
    def of(cls, base_url: str) -> Upstream:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) base URL: {base_url!r}")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError("a base URL with credentials, a query or a fragment is refused")
        return cls(f"{parts.scheme}://{parts.netloc}".lower(), parts.path.rstrip("/"))


@dataclass(frozen=True)
class Substitution:
    """One key: what the sandbox holds instead, and the places it may travel."""

    env: str
    placeholder: str
    real: str = field(repr=False)
    carriers: tuple[KeyCarrier, ...]


@dataclass(frozen=True)
class Egress:
    """One turn's way out, built by the vendor on the worker's side (it holds real keys and
    never enters a sandbox); ``refused`` says why a mode cannot go through the proxy."""

    base_url: str = ""
    """The upstream base URL exactly as the vendor put it in the CLI's env or argv; the runner
    rewrites it to the bridge's loopback address inside the sandbox."""
    keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Variable the CLI reads a key from -> the real key (only those with a carrier)."""
    carriers: Mapping[str, tuple[KeyCarrier, ...]] = field(default_factory=dict)
    refused: str | None = None

    def substitutions(self) -> list[Substitution]:
        """A fresh placeholder per distinct key, for one turn."""
        by_value: dict[str, str] = {}
        out: list[Substitution] = []
        for name, real in self.keys.items():
            placeholder = by_value.setdefault(real, PLACEHOLDER_PREFIX + secrets.token_hex(16))
            out.append(Substitution(name, placeholder, real, self.carriers[name]))
        return out


def refused(reason: str) -> Egress:
    return Egress(refused=reason)
