"""Shared HTTP behaviour: timeouts on, 429/Retry-After honoured, 5xx retried, secrets redacted.

Retries live here, in one bounded layer, because httpx retries only connection errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from veranda_dagster.domain.errors import ConfigError, InputError, TransientError, VerandaError
from veranda_dagster.domain.redaction import scrub

MAX_HTTP_ATTEMPTS = 4
"""Attempts per request (1 + 3 retries) on 429/5xx/transport errors."""

MAX_RETRY_AFTER_S = 60.0
"""Longest Retry-After we sleep through in-line; longer waits surface as a TransientError."""

DEFAULT_TIMEOUT = httpx.Timeout(20.0, connect=5.0)

Sleep = Callable[[float], None]


class HttpAuthError(VerandaError):
    """The service rejected our credentials (401/403, Slack ``invalid_auth``)."""


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
    """Base for a JSON-over-HTTP client with one bounded retry policy."""

    service = "http"

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        transport: httpx.BaseTransport | None = None,
        client: httpx.Client | None = None,
        sleep: Sleep = time.sleep,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not base_url:
            raise ConfigError(f"{self.service}: base URL is empty")
        self._token = token or ""
        self._sleep = sleep
        self.base_url = base_url.rstrip("/")
        self._client = client or httpx.Client(
            base_url=self.base_url,
            transport=transport,
            timeout=DEFAULT_TIMEOUT,
            headers=dict(headers or {}),
        )
        self.waits: list[float] = []
        """Every rate-limit wait taken, in seconds: observable in tests and metrics."""

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
        """Map a final, non-retried error response to the typed error a caller acts on."""
        if response.status_code in (401, 403):
            raise HttpAuthError(
                f"{self.service} rejected the credentials (HTTP {response.status_code})"
            )
        if response.status_code >= 400:
            raise HttpStatusError(self.service, response.status_code, self._clean(response.text))

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        headers = {**self._auth_headers(), **kwargs.pop("headers", {})}
        for attempt in range(1, MAX_HTTP_ATTEMPTS + 1):
            try:
                response = self._client.request(method, url, headers=headers, **kwargs)
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
        response = self.request(method, url, **kwargs)
        try:
            return response.json()
        except ValueError:
            raise InputError(
                f"{self.service} returned a non-JSON body for {method} {url}"
            ) from None

    def _wait(self, seconds: float) -> None:
        self.waits.append(seconds)
        self._sleep(seconds)

    def _clean(self, text: str) -> str:
        """Error text with our token and anything token-shaped masked (one scrubber for all)."""
        return scrub(text, [self._token])

    def close(self) -> None:
        self._client.close()
