"""Reading an answer as hostile data: a byte cap, a total deadline and typed JSON errors.

Anyone who can write into a forge or a tracker (a comment, a job log, a fork) shapes what our
clients read back, and a server can be slow on purpose. httpx bounds neither an answer's size
nor its total time (its read timeout restarts on every byte), and ``Response.json`` raises
``JSONDecodeError`` or, on deeply nested input, ``RecursionError``. So every answer is streamed
here, at most ``MAX_RESPONSE_BYTES`` (decoded, so a gzip bomb counts at its real size) and no
longer than the request's deadline, and the ``BoundedResponse`` it becomes parses JSON into a
typed ``ResponseJsonError``. Callers (``HttpService.request``, and the log readers that keep a
tail) all go through ``read_body``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final, Literal

import httpx

from veranda_dagster.domain.core.errors import InputError, TransientError

MAX_RESPONSE_BYTES: Final = 32 * 1024 * 1024
"""Largest answer body kept in memory: a full page of 100 comments at GitHub's 65,536-character
limit is ~26 MB of JSON; anything bigger is not an answer we asked for."""

MAX_REQUEST_S: Final = 120.0
"""Total time of one attempt, from sending to the last body byte, beside the per-read timeout:
a server dripping a byte every few seconds never trips the read timeout, this ends it."""

Keep = Literal["head", "tail"]


class ResponseTooLargeError(InputError):
    """An answer's body ran past its byte cap; reading stopped there."""


class ResponseDeadlineError(TransientError):
    """An answer took longer than its request's deadline; reading stopped there. Retryable
    later (by the caller's policy), never in-line: a slow server is asked once per attempt."""


class ResponseJsonError(InputError, ValueError):
    """An answer that should be JSON is not (or nests deeper than the parser goes). A
    ``ValueError`` too, so code that already caught ``JSONDecodeError`` keeps working."""


def read_body(
    response: httpx.Response,
    *,
    what: str,
    limit: int = MAX_RESPONSE_BYTES,
    deadline: float,
    keep: Keep = "head",
    now: Callable[[], float] = time.monotonic,
) -> bytes:
    """The body of a streamed ``response``: all of it, raising ``ResponseTooLargeError`` past
    ``limit`` (``head``), or its last ``limit`` bytes (``tail``, for a log whose end matters).
    ``deadline`` is on ``now``'s clock; it is checked as each chunk arrives, so a read ends at
    most one read timeout after it."""
    chunks: deque[bytes] = deque()
    size = 0
    for chunk in response.iter_bytes():
        if now() > deadline:
            raise ResponseDeadlineError(f"{what}: answer still arriving at its deadline")
        chunks.append(chunk)
        size += len(chunk)
        if keep == "head" and size > limit:
            raise ResponseTooLargeError(f"{what}: answer is over {limit} bytes; not read further")
        while keep == "tail" and len(chunks) > 1 and size - len(chunks[0]) >= limit:
            size -= len(chunks.popleft())
    body = b"".join(chunks)
    return body[-limit:] if keep == "tail" else body


class BoundedResponse(httpx.Response):
    """A response whose body was read by ``read_body``, and whose ``json`` raises
    ``ResponseJsonError`` (naming the service and the request) instead of whatever the parser
    raised."""

    what: str = "http"

    def json(self, **kwargs: Any) -> Any:
        try:
            return super().json(**kwargs)
        except RecursionError:
            raise ResponseJsonError(f"{self.what}: JSON nested too deep to read") from None
        except ValueError:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise ResponseJsonError(f"{self.what}: answer is not JSON") from None


_REENCODED = ("content-encoding", "content-length", "transfer-encoding")


def bounded(response: httpx.Response, body: bytes, what: str) -> BoundedResponse:
    """``response`` (streamed, now closed) with ``body`` as its content. The body is already
    decoded, so the headers that described its wire form are dropped."""
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _REENCODED]
    out = BoundedResponse(
        response.status_code,
        headers=headers,
        content=body,
        request=response.request,
        extensions=response.extensions,
    )
    out.what = what
    return out
