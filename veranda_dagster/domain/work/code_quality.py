"""Two more CI report formats as ``Violation`` values: Code Climate issues and security reports.

Some forges collect linters' findings as a *Code Climate* issue list (the ``codeclimate.json``
subset: ``description``, ``check_name``, ``fingerprint``, ``severity``, ``location.path`` with
``lines.begin``/``end`` or ``positions.begin.line``) and scanners' findings as a *security
report* (``{"version", "scan": {"scanner": ...}, "vulnerabilities": [{"name", "severity",
"identifiers", "location": {"file", "start_line", "end_line"}}]}``). Both become the same
``Violation`` the SARIF parser yields, so ``static_analysis.filter_to_commit`` keeps only the
findings this commit caused and the one grounded CI repair reads them exactly as it reads SARIF.
Findings of ``info`` severity are advice, as a check annotation's ``notice`` is, and are dropped.
"""

from __future__ import annotations

from typing import Any

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Violation
from veranda_dagster.domain.work.static_analysis import (
    json_in_text,
    load_json_report,
    normalise_path,
    parse_report_value,
    report_end_line,
    report_line,
    threshold,
)

ADVICE_SEVERITIES = frozenset({"info"})


def parse_code_climate(data: str | bytes | list[Any], root: str | None = None) -> list[Violation]:
    """A Code Climate issue list (a JSON array; one issue per linter finding)."""
    issues = load_json_report(data, "CI report")
    if not isinstance(issues, list):
        raise InputError("Code Climate report is not a JSON list of issues")
    out: list[Violation] = []
    for issue in issues:
        if not isinstance(issue, dict) or issue.get("type", "issue").lower() != "issue":
            continue
        if str(issue.get("severity") or "").lower() in ADVICE_SEVERITIES:
            continue
        location = issue.get("location") or {}
        path = location.get("path") if isinstance(location, dict) else None
        if not isinstance(path, str) or not path:
            continue
        lines = location.get("lines") or {}
        begin = (location.get("positions") or {}).get("begin") or {}
        end = (location.get("positions") or {}).get("end") or {}
        start = lines.get("begin") if isinstance(lines, dict) and lines else begin.get("line")
        stop = lines.get("end") if isinstance(lines, dict) and lines else end.get("line")
        message = str(issue.get("description") or issue.get("check_name") or "").strip()
        first = report_line(start)
        out.append(
            Violation(
                tool=str(issue.get("engine_name") or "code-quality"),
                rule=str(issue.get("check_name") or "unknown"),
                message=message,
                path=normalise_path(path, root),
                line=first,
                end_line=report_end_line(stop, first),
                threshold=threshold(message),
            )
        )
    return out


def parse_security_report(
    data: str | bytes | dict[str, Any], root: str | None = None
) -> list[Violation]:
    """A security report's ``vulnerabilities`` with a file location (SAST, not dependency
    scans, whose findings name a lock file rather than a line we wrote)."""
    report = load_json_report(data, "CI report")
    if not isinstance(report, dict) or not isinstance(report.get("vulnerabilities"), list):
        raise InputError("security report has no 'vulnerabilities' list")
    scanner = ((report.get("scan") or {}).get("scanner") or {}).get("id") or "sast"
    out: list[Violation] = []
    for vuln in report["vulnerabilities"]:
        if not isinstance(vuln, dict):
            continue
        if str(vuln.get("severity") or "").lower() in ADVICE_SEVERITIES:
            continue
        location = vuln.get("location") or {}
        path = location.get("file") if isinstance(location, dict) else None
        if not isinstance(path, str) or not path or "start_line" not in location:
            continue
        identifiers = [i for i in vuln.get("identifiers") or [] if isinstance(i, dict)]
        rule = next((str(i.get("value") or i.get("name")) for i in identifiers), "") or "unknown"
        message = str(vuln.get("name") or vuln.get("message") or vuln.get("description") or rule)
        severity = str(vuln.get("severity") or "")
        first = report_line(location.get("start_line"))
        out.append(
            Violation(
                tool=str(scanner),
                rule=rule,
                message=f"{message.strip()} ({severity})" if severity else message.strip(),
                path=normalise_path(path, root),
                line=first,
                end_line=report_end_line(location.get("end_line"), first),
            )
        )
    return out


def parse_any_report(text: str, root: str | None = None) -> list[Violation]:
    """Whichever known report ``text`` holds: these two formats, then every format
    ``static_analysis.parse_report`` reads (SARIF, ruff, golangci-lint, ESLint); ``[]`` for
    none."""
    data = json_in_text(text)
    if isinstance(data, dict) and isinstance(data.get("vulnerabilities"), list):
        return parse_security_report(data, root)
    if (
        isinstance(data, list)
        and data
        and isinstance(data[0], dict)
        and "check_name" in data[0]
        and "location" in data[0]
    ):
        return parse_code_climate(data, root)
    return parse_report_value(data, root)
