"""A CLI's output read within bounds: its stdout and stderr each held up to
``MAX_CLI_OUTPUT_BYTES``, read on threads of their own while the prompt is written on a third,
so neither a CLI that prints without end nor one that never reads its input can hold the
worker past the turn's time bound.

``Popen.communicate`` holds everything a CLI prints, however much: a looping agent printing
its tool output again and again would fill the worker's memory before the turn's timeout.
Past the bound the CLI's group is killed (``on_over``) and the turn ends with what was read.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Callable
from typing import IO, Final

MAX_CLI_OUTPUT_BYTES: Final = 64 * 1024 * 1024
"""Of one stream (stdout, stderr) of one CLI run. A turn's stream-json carries each message
and tool result once: a long turn is a few megabytes. Sixty-four is a CLI printing in a loop;
it is killed rather than held."""
PIPE_CHUNK_BYTES: Final = 64 * 1024
OVER_NOTE: Final = "[veranda: the CLI's output passed {limit} bytes; the CLI was killed]"


class CappedPipe:
    """One pipe read to its end on a daemon thread, holding at most ``limit`` bytes; past it
    ``over`` is set, ``on_over`` is called once, and the rest is read and dropped."""

    def __init__(self, pipe: IO[bytes], limit: int, on_over: Callable[[], None]) -> None:
        self.limit, self.over = limit, False
        self._pipe, self._on_over = pipe, on_over
        self._chunks: list[bytes] = []
        self._size = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        read = getattr(self._pipe, "read1", self._pipe.read)
        with contextlib.suppress(OSError, ValueError):  # the pipe closed under us: done
            while chunk := read(PIPE_CHUNK_BYTES):
                with self._lock:
                    room = self.limit - self._size
                    if room > 0:
                        self._chunks.append(chunk[:room])
                        self._size += min(room, len(chunk))
                    newly_over = len(chunk) > room and not self.over
                    self.over = self.over or newly_over
                if newly_over:
                    self._on_over()
        with contextlib.suppress(OSError):
            self._pipe.close()

    def join(self, timeout: float) -> bool:
        """Whether the pipe was read to its end within ``timeout`` seconds."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def abandon(self) -> None:
        """Keep nothing more: a process outside the killed group holds the pipe open, and the
        thread, blocked on it, ends only when that process closes it (it holds no more than
        its limit meanwhile, and never the caller)."""
        with self._lock:
            self._size = self.limit

    def text(self) -> str:
        """What was read, decoded as text the way a text-mode pipe reads it (universal
        newlines), a malformed byte replaced rather than failing the turn."""
        with self._lock:
            data = b"".join(self._chunks)
        text = data.decode("utf-8", errors="replace")
        return text.replace("\r\n", "\n").replace("\r", "\n")


def feed(proc: subprocess.Popen[bytes], text: str | None) -> None:
    """Write the prompt to the CLI's stdin on a daemon thread and close it: a CLI that reads
    none of it cannot block the caller, whose deadline still runs."""
    if text is None or proc.stdin is None:
        return
    stdin = proc.stdin

    def write() -> None:
        with contextlib.suppress(OSError, ValueError):  # the CLI exited without reading
            stdin.write(text.encode("utf-8"))
        with contextlib.suppress(OSError, ValueError):
            stdin.close()

    threading.Thread(target=write, daemon=True).start()
