"""Shared HTTP behaviour: timeouts on, 429/Retry-After honoured, 5xx retried, secrets redacted,
and credentials sent only to the configured origin.

Retries live here, in one bounded layer, because httpx retries only connection errors. The
origin rule lives here too, because every client's token rides on ``request``: a URL a server
hands back (a ``Link: rel="next"``, a redirect's ``Location``) is followed only when its
scheme, host and port are the base URL's own, and a client holding a token must have an https
base URL (plain http only for a loopback host, which is what the simulation's fakes are).
"""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, TypedDict

import httpx

from veranda_dagster.domain.core.bounds import MAX_HTTP_REDIRECTS
from veranda_dagster.domain.core.errors import ConfigError, InputError, TransientError, VerandaError
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.http.bounded import (
    MAX_REQUEST_S,
    BoundedResponse,
    bounded,
    read_body,
)

log = logging.getLogger("veranda.clients")

MAX_HTTP_ATTEMPTS = 4
"""Attempts per request (1 + 3 retries) on 429/5xx/transport errors."""

MAX_RETRY_AFTER_S = 60.0
"""Longest Retry-After we sleep through in-line; longer waits surface as a TransientError."""

DEFAULT_TIMEOUT: Final = httpx.Timeout(20.0, connect=5.0)
"""Per read and per connect of one request to a tracker or forge API: their answers come in
well under a second, so twenty seconds of silence is an outage (retried, ``MAX_REQUEST_S``
bounds the whole attempt) and five to connect is an unreachable host."""

Sleep = Callable[[float], None]


class HttpSeams(TypedDict, total=False):
    """What a test or a caller hands any client, passed through to ``HttpService`` unchanged:
    the transport (``httpx.MockTransport(handler)``), or a ready ``httpx.Client``, the sleep
    every wait goes through and the clock rate-limit resets are read against."""

    transport: httpx.BaseTransport | None
    client: httpx.Client | None
    sleep: Sleep
    clock: Callable[[], float]
    deadline_s: float


class HttpAuthError(VerandaError):
    """The service rejected our credentials (401/403, Slack ``invalid_auth``)."""


class CredentialOriginError(VerandaError):
    """A request would have carried our credentials off the configured origin (another host,
    port or scheme: a pagination link or redirect a server handed back). Refused, not retried."""


Origin = tuple[str, str, int]

_BODY_KWARGS = ("json", "content", "data", "files")


def is_loopback(host: str) -> bool:
    """``localhost``, ``127.0.0.0/8`` or ``::1``: a server on this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def origin(url: httpx.URL, scheme: str = "") -> Origin:
    """(scheme, host, port) with the scheme's default port filled in: what 'same origin' means.
    ``scheme`` stands in for a scheme-relative URL's (``//host/path``)."""
    scheme = url.scheme or scheme
    port = url.port or {"https": 443, "http": 80}.get(scheme, 0)
    return (scheme, url.host.lower(), port)


def _show(o: Origin) -> str:
    return f"{o[0]}://{o[1]}:{o[2]}"


class HttpStatusError(VerandaError):
    def __init__(self, service: str, status: int, detail: str) -> None:
        self.status = status
        super().__init__(f"{service} answered HTTP {status}: {detail[:300]}")


def retry_after_seconds(response: httpx.Response, default: float = 1.0) -> float:
    """Seconds to wait from Retry-After (seconds form) or a reset header, else ``default``."""
    value = response.headers.get("retry-after")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            return default
    return default


def backoff_s(attempt: int) -> float:
    """Exponential backoff for a retry without a server-given wait: 2, 4, 8, 8 ... seconds."""
    return min(2.0**attempt, 8.0)


class HttpService:
    """Base for a JSON-over-HTTP client with one bounded retry policy.

    A service states what differs as class data: its ``default_headers``, and how its error
    answers read (``auth_rejected``, ``forbidden``, ``permission_error``, ``not_found_error``,
    ``error_detail``); ``retry_wait`` is the hook for its own rate-limit signals."""

    service = "http"
    default_headers: ClassVar[Mapping[str, str]] = {}
    """Sent on every request (``Accept``, an API version)."""
    auth_rejected: ClassVar[str | None] = None
    """The message of a 401, naming the setting to fix; else the generic one."""
    forbidden: ClassVar[str | None] = None
    """What a 403 means here, before the method and URL ("the token may not"); else a 403
    reads as rejected credentials."""
    permission_error: ClassVar[type[HttpAuthError]] = HttpAuthError
    not_found_error: ClassVar[type[HttpStatusError] | None] = None
    """The type a 404 raises when the service tells "no such thing" apart."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        transport: httpx.BaseTransport | None = None,
        client: httpx.Client | None = None,
        sleep: Sleep = time.sleep,
        clock: Callable[[], float] = time.time,
        deadline_s: float = MAX_REQUEST_S,
    ) -> None:
        """``clock`` is wall-clock epoch seconds, what rate-limit reset headers count in;
        ``deadline_s`` is the total time one attempt may take (``_bounded``)."""
        if not base_url:
            raise ConfigError(f"{self.service}: base URL is empty")
        self._token = token or ""
        self._sleep = sleep
        self._clock = clock
        self.deadline_s = deadline_s
        self.base_url = base_url.rstrip("/")
        base = httpx.URL(self.base_url)
        if base.scheme not in ("https", "http") or not base.host:
            raise ConfigError(f"{self.service}: base URL {self.base_url!r} is not an http(s) URL")
        if self._token and base.scheme != "https" and not is_loopback(base.host):
            raise ConfigError(
                f"{self.service}: base URL {self.base_url} is plain http; credentials are sent "
                "only over https (http is allowed for a loopback host only)"
            )
        self.origin = origin(base)
        """Where this client's credentials may go, and the only place it sends requests."""
        self._client = client or httpx.Client(
            base_url=self.base_url,
            transport=transport,
            timeout=DEFAULT_TIMEOUT,
            headers=dict(self.default_headers),
        )
        self.waits: list[float] = []
        """Every rate-limit wait taken, in seconds: observable in tests and metrics."""
        self.truncated: list[str] = []
        """Every list this client cut at its page bound, in words (also logged as a warning):
        a cut is said, never silent."""

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    max_retry_wait_s: float = MAX_RETRY_AFTER_S
    """Longest wait slept through in-line; a longer one surfaces as ``TransientError`` so the
    caller's retry policy (Dagster's, a sensor's next tick) takes it instead of a thread."""

    def retry_wait(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying ``response``, or ``None`` when it is final.

        The one place a service's own rate-limit signals are read; 429 and 5xx by default."""
        if response.status_code == 429 or response.status_code >= 500:
            return retry_after_seconds(response, default=backoff_s(attempt))
        return None

    def raise_for_status(self, response: httpx.Response, method: str, url: str) -> None:
        """Map a final, non-retried error response to the typed error a caller acts on, in the
        service's own words where it declares them."""
        status = response.status_code
        if status == 401 and self.auth_rejected:
            raise HttpAuthError(self.auth_rejected)
        if status == 403 and self.forbidden:
            detail = self._clean(self.error_detail(response))[:200]
            raise self.permission_error(
                f"{self.service}: {self.forbidden} {method} {url} (HTTP 403): {detail}"
            )
        if status == 404 and self.not_found_error is not None:
            detail = self._clean(self.error_detail(response))
            raise self.not_found_error(self.service, 404, detail)
        if status in (401, 403):
            raise HttpAuthError(f"{self.service} rejected the credentials (HTTP {status})")
        if status >= 400:
            raise HttpStatusError(self.service, status, self._clean(response.text))

    def error_detail(self, response: httpx.Response) -> str:
        """An error answer's message as one line (a service with a JSON error body reads it)."""
        return response.text

    def check_origin(self, url: str | httpx.URL) -> None:
        """Raise ``CredentialOriginError`` unless ``url`` is relative to the base URL or has its
        exact scheme, host and port."""
        target = httpx.URL(url)
        if not target.host:  # a path, joined to the base URL
            return
        where = origin(target, scheme=self.origin[0])
        if where != self.origin:
            raise CredentialOriginError(
                f"{self.service}: refusing to send a request with our credentials to "
                f"{_show(where)}; they go only to {_show(self.origin)}"
            )

    def _send_once(
        self, method: str, url: str, headers: dict[str, str], deadline: float, **kwargs: Any
    ) -> BoundedResponse:
        """One request, its body streamed within the byte cap and ``deadline``."""
        request = self._client.build_request(method, url, headers=headers, **kwargs)
        response = self._client.send(request, stream=True, follow_redirects=False)
        what = f"{self.service} {method} {request.url.copy_with(query=None)}"
        try:
            body = read_body(response, what=what, deadline=deadline)
        finally:
            response.close()
        return bounded(response, body, what)

    def _send(
        self, method: str, url: str, headers: dict[str, str], follow: bool, kwargs: dict[str, Any]
    ) -> httpx.Response:
        """One attempt: the request, then same-origin redirects up to ``MAX_HTTP_REDIRECTS``
        (httpx is never left to follow one with our headers), all within one deadline."""
        deadline = time.monotonic() + self.deadline_s
        for _ in range(MAX_HTTP_REDIRECTS + 1):
            self.check_origin(url)
            response = self._send_once(method, url, headers, deadline, **kwargs)
            # a 304 Not Modified is a 3xx without a location: an answer, not a redirect
            if not (follow and response.has_redirect_location):
                return response
            url = str(response.url.join(response.headers["location"]))
            if response.status_code in (301, 302, 303) and method != "HEAD":
                method = "GET"
                kwargs = {k: v for k, v in kwargs.items() if k not in _BODY_KWARGS}
        raise InputError(f"{self.service}: more than {MAX_HTTP_REDIRECTS} redirects, last to {url}")

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        headers = {**self._auth_headers(), **kwargs.pop("headers", {})}
        follow = bool(kwargs.pop("follow_redirects", True))
        for attempt in range(1, MAX_HTTP_ATTEMPTS + 1):
            try:
                response = self._send(method, url, headers, follow, kwargs)
            except httpx.TransportError as exc:
                if attempt < MAX_HTTP_ATTEMPTS:
                    self._wait(backoff_s(attempt))
                    continue
                detail = self._clean(f"{type(exc).__name__}: {exc}")
                raise TransientError(f"{self.service} unreachable: {detail}") from None
            wait = self.retry_wait(response, attempt)
            if wait is None:
                self.raise_for_status(response, method, url)
                return response
            if attempt < MAX_HTTP_ATTEMPTS and wait <= self.max_retry_wait_s:
                self._wait(wait)
                continue
            kind = "rate limited" if response.status_code < 500 else "server error"
            raise TransientError(
                f"{self.service} HTTP {response.status_code} ({kind}) on {method} {url} "
                f"after {attempt} attempts; retry in {wait:.0f}s"
            )
        raise AssertionError("unreachable: the last attempt returns or raises")

    def json(self, method: str, url: str, **kwargs: Any) -> Any:
        return self.request(method, url, **kwargs).json()

    def note_truncated(self, what: str) -> None:
        """Record and log that a list was cut at its bound (``what`` names it and the bound)."""
        self.truncated.append(what)
        log.warning("%s", what)

    def _wait(self, seconds: float) -> None:
        self.waits.append(seconds)
        self._sleep(seconds)

    def _clean(self, text: str) -> str:
        """Error text with our token and anything token-shaped masked (one scrubber for all)."""
        return scrub(text, [self._token])

    def close(self) -> None:
        self._client.close()
