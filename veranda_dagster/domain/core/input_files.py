"""Files and documents read from outside, each with a size, a kind and a depth.

A FIFO given as ``--ticket`` used to hang, ``/dev/zero`` to fill memory, a 50 MB description
to take minutes, and a ten-thousand-deep JSON to end in a ``RecursionError`` traceback. Every
file argument and configuration file goes through ``read_input_text``: a regular file only
(opened non-blocking, checked on the open descriptor), at most ``max_bytes``, UTF-8 text with no
NUL; ``parse_document`` then bounds nesting, and ``validate_document`` reads the result as its
model. Each refusal is one line naming the file.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from veranda_dagster.domain.core.bounds import MAX_DOCUMENT_NODES, MAX_JSON_DEPTH
from veranda_dagster.domain.core.errors import InputError, VerandaError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_input_text(
    path: str | Path,
    *,
    what: str,
    max_bytes: int,
    error: type[VerandaError] = InputError,
    allow_empty: bool = False,
) -> str:
    """The text of a regular file of at most ``max_bytes``, or ``error`` with one line."""
    where = f"{what} {path}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise error(f"{where}: cannot read (no such file)") from None
    except IsADirectoryError:
        raise error(f"{where}: cannot read (a directory, not a file)") from None
    except OSError as exc:
        raise error(f"{where}: cannot open ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise error(f"{where}: cannot read ({_kind(mode)}, not a regular file)")
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise error(f"{where}: cannot read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise error(f"{where}: larger than the {max_bytes:,}-byte limit")
    if not data.strip() and not allow_empty:
        raise error(f"{where}: is empty")
    if b"\0" in data:
        raise error(f"{where}: is binary (holds NUL bytes), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: is not UTF-8 text (byte {exc.start})") from None


def shape(value: Any, limit: int = MAX_JSON_DEPTH) -> tuple[int, int]:
    """(nesting, values) of a parsed document, walked without recursion and with aliases
    expanded (what a consumer will walk), stopping once past either bound."""
    deepest, count, stack = 0, 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        count += 1
        if count > MAX_DOCUMENT_NODES:
            break
        if not isinstance(node, dict | list):
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            break
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        stack.extend((child, level + 1) for child in children)
    return deepest, count


def parse_document(
    text: str,
    *,
    where: str,
    as_json: bool,
    error: type[VerandaError] = InputError,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """JSON (or YAML, which also reads JSON) nested at most ``max_depth`` levels."""
    try:
        data = json.loads(text) if as_json else yaml.safe_load(text)
    except RecursionError:
        raise error(f"{where}: nested deeper than {max_depth} levels") from None
    except (ValueError, yaml.YAMLError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise error(f"{where}: not valid {'JSON' if as_json else 'JSON/YAML'} ({reason})") from None
    deepest, count = shape(data, max_depth)
    if deepest > max_depth:
        raise error(f"{where}: nested deeper than {max_depth} levels")
    if count > MAX_DOCUMENT_NODES:
        raise error(f"{where}: more than {MAX_DOCUMENT_NODES:,} values (YAML aliases expanded)")
    return data


def load_document(
    path: str | Path,
    *,
    what: str,
    max_bytes: int,
    error: type[VerandaError] = InputError,
    as_json: bool | None = None,
) -> Any:
    """Read and parse one JSON/YAML file (JSON by a ``.json`` suffix unless told)."""
    text = read_input_text(path, what=what, max_bytes=max_bytes, error=error)
    json_file = Path(path).suffix.lower() == ".json" if as_json is None else as_json
    return parse_document(text, where=f"{what} {path}", as_json=json_file, error=error)


ModelT = TypeVar("ModelT", bound=BaseModel)


def validate_document(
    model: type[ModelT], data: Any, where: str, error: type[VerandaError] = InputError
) -> ModelT:
    """``data`` as a ``model``; invalid, ``error`` naming ``where``, the first bad field and why
    (``catalog c.yaml: field 'repositories.0.full_name': ...``)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(root)"
        raise error(f"{where}: field {field!r}: {first['msg']}") from None
