"""Static-analysis findings as ``Violation`` values, and the filter that keeps only our own.

A CI repair prompt grounded in a log tail says *that* something failed; grounded in the gate's
own findings it says which rule broke, where, and by how much (``complexity 21 > 15``). The
parsers read the shapes the tools really emit (SARIF 2.1.0, ``ruff --output-format json``,
golangci-lint v2 JSON, ESLint ``-f json``) and the forge's own findings, which its port hands
over already typed (``CiFinding``); paths are normalised to repo-relative so they can be
matched against this commit's diff hunks. Function-level rules report only the ``def`` line,
so they count as ours when any added line falls inside the function's span.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import Any

from veranda_dagster.domain.core.bounds import MAX_LINT_MESSAGE_CHARS
from veranda_dagster.domain.core.documents import json_or_none
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.forge_port import CiFinding
from veranda_dagster.domain.core.models import Violation

_THRESHOLDS = (
    re.compile(r"(?:cyclomatic|cognitive) complexity (\d+) of func .* is high \(> (\d+)\)"),
    re.compile(r"is too complex \((\d+) > (\d+)\)"),
    re.compile(r"\((\d+) > (\d+)\)"),
    re.compile(r"of (\d+)\. Maximum allowed is (\d+)\."),
    re.compile(r"\((\d+)\)\. Maximum allowed is (\d+)"),
    re.compile(r"is (\d+), max is (\d+)"),
    re.compile(r"is (\d+) characters long, which exceeds the maximum of (\d+)"),
)
FUNCTION_RULES = frozenset(
    {
        "C901", "PLR0911", "PLR0912", "PLR0915", "gocyclo", "gocognit", "cyclop", "funlen",
        "nestif", "complexity", "max-lines-per-function", "max-statements", "max-depth",
        "sonarjs/cognitive-complexity",
    }
)  # fmt: skip
"""Rules whose finding sits on the function's first line but is about its whole body."""

Span = Callable[[str, int], tuple[int, int] | None]
"""``(path, def line) -> (first, last)`` line of the function starting there, if known."""


def threshold(message: str) -> str | None:
    """``"21 > 15"`` from any of the tools' complexity/length messages, else ``None``."""
    message = message[:MAX_LINT_MESSAGE_CHARS]  # a hostile linter's message is one line
    for pattern in _THRESHOLDS:
        match = pattern.search(message)
        if match:
            return f"{match.group(1)} > {match.group(2)}"
    return None


def normalise_path(path: str, root: str | None = None) -> str:
    """Repo-relative POSIX path: ``file://`` stripped, ``root`` removed, ``./`` dropped."""
    if path.startswith("file://"):
        path = path[len("file://") :]
    path = path.replace("\\", "/")
    if root:
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix):
            path = path[len(prefix) :]
    while path.startswith("./"):
        path = path[2:]
    return path


def load_json_report(data: str | bytes | Any, what: str = "static analysis report") -> Any:
    """The report's JSON value, parsed when given as text; ``what`` names it in the error."""
    if isinstance(data, (str, bytes)):
        try:
            return json.loads(data)
        except ValueError as exc:
            raise InputError(f"{what} is not JSON: {exc}") from None
        except RecursionError:  # a report of ten thousand ``[``: not JSON the step can read
            raise InputError(f"{what} nests deeper than JSON is read") from None
    return data


def report_line(value: Any) -> int:
    """A finding's line as a report gives it: at least 1, and 1 when absent or unreadable.

    Reports come from the repository's own tools and are hostile input; a ``null``, ``"12a"``
    or ``-3`` must not abort reading the other findings."""
    try:
        return max(1, int(value))
    except (TypeError, ValueError, OverflowError):
        return 1


def report_end_line(value: Any, line: int) -> int | None:
    """A finding's last line, or ``None`` (a single line) when absent, unreadable or before
    ``line``: a range that ends before it starts would cover no line of the commit."""
    try:
        end = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return end if end >= line else None


def _violation(
    tool: str, rule: str, message: str, path: str, line: Any, end: Any = None
) -> Violation:
    first = report_line(line)
    return Violation(
        tool=tool,
        rule=rule or "unknown",
        message=message.strip(),
        path=path,
        line=first,
        end_line=report_end_line(end, first),
        threshold=threshold(message),
    )


def parse_sarif(data: str | bytes | dict[str, Any], root: str | None = None) -> list[Violation]:
    report = load_json_report(data)
    if not isinstance(report, dict) or not isinstance(report.get("runs"), list):
        raise InputError("SARIF report has no 'runs' list")
    out: list[Violation] = []
    for run in report["runs"]:
        tool = str(((run.get("tool") or {}).get("driver") or {}).get("name") or "sarif")
        for result in run.get("results") or []:
            if result.get("level") == "none":
                continue
            rule = result.get("ruleId") or (result.get("rule") or {}).get("id") or ""
            message = (result.get("message") or {}).get("text") or rule
            for loc in (result.get("locations") or [])[:1]:
                phys = loc.get("physicalLocation") or {}
                uri = (phys.get("artifactLocation") or {}).get("uri")
                region = phys.get("region") or {}
                if uri:
                    path = normalise_path(uri, root)
                    out.append(
                        _violation(
                            tool,
                            rule,
                            message,
                            path,
                            region.get("startLine"),
                            region.get("endLine"),
                        )
                    )
    return out


def parse_ruff_json(data: str | bytes | list[Any], root: str | None = None) -> list[Violation]:
    items = load_json_report(data)
    if not isinstance(items, list):
        raise InputError("ruff JSON report is not a list")
    return [
        _violation(
            "ruff",
            item.get("code") or "",
            item.get("message") or "",
            normalise_path(item.get("filename") or "", root),
            (item.get("location") or {}).get("row"),
            (item.get("end_location") or {}).get("row"),
        )
        for item in items
        if isinstance(item, dict) and item.get("filename")
    ]


def parse_golangci_json(
    data: str | bytes | dict[str, Any], root: str | None = None
) -> list[Violation]:
    report = load_json_report(data)
    if not isinstance(report, dict):
        raise InputError("golangci-lint JSON report is not an object")
    out: list[Violation] = []
    for issue in report.get("Issues") or []:
        pos = issue.get("Pos") or {}
        if pos.get("Filename"):
            rng = issue.get("LineRange") or {}
            out.append(
                _violation(
                    "golangci-lint",
                    issue.get("FromLinter") or "",
                    issue.get("Text") or "",
                    normalise_path(pos["Filename"], root),
                    pos.get("Line"),
                    rng.get("To"),
                )
            )
    return out


def parse_eslint_json(data: str | bytes | list[Any], root: str | None = None) -> list[Violation]:
    files = load_json_report(data)
    if not isinstance(files, list):
        raise InputError("ESLint JSON report is not a list")
    out: list[Violation] = []
    for entry in files:
        path = normalise_path(entry.get("filePath") or "", root)
        for msg in entry.get("messages") or []:
            rule = msg.get("ruleId") or ("parse-error" if msg.get("fatal") else "")
            out.append(
                _violation(
                    "eslint",
                    rule,
                    msg.get("message") or "",
                    path,
                    msg.get("line"),
                    msg.get("endLine"),
                )
            )
    return out


def from_findings(findings: Iterable[CiFinding]) -> list[Violation]:
    """The forge's findings at ``error``/``warning`` severity (``notice`` is advice)."""
    return [
        _violation(f.tool, f.rule, f.message, normalise_path(f.path), f.start_line, f.end_line)
        for f in findings
        if f.severity != "notice" and f.path
    ]


def json_in_text(text: str) -> Any:
    """The JSON value that starts at the first ``{`` or ``[`` of ``text`` and runs to its end
    (a tool's report after its log lines), or ``None`` when there is none."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    return json_or_none(text[start:])


def parse_report(text: str, root: str | None = None) -> list[Violation]:
    """Whichever known report ``text`` holds (SARIF, ruff, golangci-lint, ESLint); ``[]`` when
    it holds none, so a check's free-text output can be tried without knowing the tool."""
    return parse_report_value(json_in_text(text), root)


def parse_report_value(data: Any, root: str | None = None) -> list[Violation]:
    """``parse_report`` on a JSON value already parsed."""
    if isinstance(data, dict) and "runs" in data:
        return parse_sarif(data, root)
    if isinstance(data, dict) and "Issues" in data:
        return parse_golangci_json(data, root)
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "filePath" in data[0]:
            return parse_eslint_json(data, root)
        if "code" in data[0] and "filename" in data[0]:
            return parse_ruff_json(data, root)
    return []


def _match_path(path: str, changed: dict[str, set[int]]) -> str | None:
    """``path`` as it appears in ``changed``; an absolute path from a CI runner's checkout
    (``/home/runner/work/r/r/src/x.py``) matches the changed path it ends with."""
    if path in changed:
        return path
    for candidate in changed:
        if path.endswith("/" + candidate):
            return candidate
    return None


def in_commit(v: Violation, changed: dict[str, set[int]], span: Span | None = None) -> bool:
    path = _match_path(v.path, changed)
    if path is None:
        return False
    lines = changed[path]
    last = v.end_line or v.line
    if any(n in lines for n in range(v.line, last + 1)):
        return True
    if v.rule in FUNCTION_RULES and span is not None:
        found = span(path, v.line)
        if found:
            return any(found[0] <= n <= found[1] for n in lines)
    return False


def filter_to_commit(
    violations: list[Violation], changed: dict[str, set[int]], span: Span | None = None
) -> tuple[list[Violation], list[Violation]]:
    """``(ours, theirs)``: ours are on lines this commit added (or inside a function it changed,
    for function-level rules), paths rewritten to the diff's; theirs are left alone."""
    ours: list[Violation] = []
    theirs: list[Violation] = []
    for v in violations:
        if in_commit(v, changed, span):
            path = _match_path(v.path, changed) or v.path
            ours.append(v.model_copy(update={"path": path}))
        else:
            theirs.append(v)
    return ours, theirs


def python_function_span(source: str, line: int) -> tuple[int, int] | None:
    """The span of the Python function whose ``def`` (or name) is on ``line``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if first <= line <= node.lineno:
                return first, node.end_lineno or node.lineno
    return None


def brace_function_span(source: str, line: int) -> tuple[int, int] | None:
    """For brace languages (Go, JS, TS): from ``line`` to the brace that closes its body."""
    lines = source.splitlines()
    depth, opened = 0, False
    for n in range(line, len(lines) + 1):
        for ch in lines[n - 1]:
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return line, n
    return None


def file_span(read: Callable[[str], str | None]) -> Span:
    """A ``Span`` reading files through ``read(path)`` (the commit's version of the file)."""

    def span(path: str, line: int) -> tuple[int, int] | None:
        text = read(path)
        if text is None:
            return None
        if PurePosixPath(path).suffix == ".py":
            return python_function_span(text, line)
        return brace_function_span(text, line)

    return span


def render(violations: list[Violation]) -> str:
    """One line per violation, as the repair prompt carries them."""
    rows = []
    for v in violations:
        where = f"{v.path}:{v.line}" + (
            f"-{v.end_line}" if v.end_line and v.end_line != v.line else ""
        )
        limit = f" [threshold {v.threshold}]" if v.threshold else ""
        rows.append(f"- {where} {v.tool} {v.rule}: {v.message}{limit}")
    return "\n".join(rows)
