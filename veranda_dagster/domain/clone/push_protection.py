"""Push protection: the forms a secret can take in a change, searched in bytes.

Defence in depth only (the agent and the repository's code no longer hold the worker's keys),
and a substring test was easy to walk past: base64, hex and reversed copies of a key, or the
key as a file name, went out; and a change adding a PNG crashed the check reading git's diff as
UTF-8. So the diff, the file names and the commit messages are read as bytes, and each secret
is looked for as itself, reversed, in hex (both cases) and in base64 (standard and URL-safe)
at each of the three alignments it can start at inside a longer encoded text.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MIN_NEEDLE_BYTES = 8
"""An encoded form shorter than this matches too much by chance (``MIN_ENV_SECRET_CHARS``)."""


@dataclass(frozen=True)
class Needle:
    data: bytes
    label: str
    """Whose value (``$API_TOKEN``, ``the forge token``)."""
    form: str
    """``""`` for the value itself, else ``base64``, ``hex``, ``reversed``."""

    def describe(self) -> str:
        return f"the value of {self.label}" + (f" ({self.form})" if self.form else "")


def _base64_cores(raw: bytes) -> list[bytes]:
    """The part of base64 text that depends only on ``raw``, whichever of the three byte
    offsets (mod 3) it starts at in the encoded stream: the characters mixed with unknown
    neighbouring bytes at either end are cut off."""
    cores: list[bytes] = []
    for offset, start in ((0, 0), (1, 2), (2, 3)):
        encoded = base64.b64encode(b"\0" * offset + raw)
        end = (offset + len(raw)) // 3 * 4
        core = encoded[start:end]
        if len(core) >= MIN_NEEDLE_BYTES:
            cores += [core, core.translate(bytes.maketrans(b"+/", b"-_"))]
    return cores


def secret_forms(secret: str, label: str) -> list[Needle]:
    raw = secret.encode()
    forms = [Needle(raw, label, ""), Needle(raw[::-1], label, "reversed")]
    forms += [Needle(h.encode(), label, "hex") for h in (raw.hex(), raw.hex().upper())]
    forms += [Needle(core, label, "base64") for core in _base64_cores(raw)]
    unique = {n.data: n for n in forms if len(n.data) >= MIN_NEEDLE_BYTES}
    return list(unique.values())


def needles(named: Mapping[str, str]) -> list[Needle]:
    """Every form of every secret in ``named`` (value -> label)."""
    return [n for secret, label in named.items() for n in secret_forms(secret, label)]


def find(data: bytes, among: Iterable[Needle]) -> Needle | None:
    return next((n for n in among if n.data in data), None)


def diff_leak(diff: bytes, among: list[Needle]) -> str | None:
    """Why ``diff`` (``git diff --text --unified=0``) must not go out: a file whose name holds
    a secret (its ``diff --git`` header names it, even for an empty or binary file) or a line
    adding one; ``None`` when it is clean. Names the file and the secret, never the value."""
    for line in diff.split(b"\n"):
        if line.startswith(b"diff --git "):
            hit = find(line, among)
            if hit:
                return f"a file name holds {hit.describe()}"
    for where, added in added_lines(diff):
        hit = find(added, among)
        if hit:
            return f"{where} adds {hit.describe()}"
    return None


def added_lines(diff: bytes) -> Iterable[tuple[str, bytes]]:
    """``(file, line)`` for each line a ``git diff --unified=0`` adds."""
    where = ""
    for line in diff.split(b"\n"):
        if line.startswith(b"+++ "):
            name = line[6:] if line.startswith(b"+++ b/") else line[4:]
            where = name.decode("utf-8", errors="replace")
        elif line.startswith(b"+"):
            yield where, line[1:]
