"""The parsers read the tools' real output shapes; the filter keeps only this commit's lines."""

import json
from pathlib import Path

import pytest

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.forge_port import CiFinding
from veranda_dagster.domain.work.code_quality import parse_code_climate, parse_security_report
from veranda_dagster.domain.work.static_analysis import (
    filter_to_commit,
    from_findings,
    parse_eslint_json,
    parse_golangci_json,
    parse_report,
    parse_ruff_json,
    parse_sarif,
    python_function_span,
    render,
    report_end_line,
    report_line,
    threshold,
)

FIX = Path(__file__).parents[2] / "fixtures" / "static_analysis"


def load(name: str):
    return json.loads((FIX / name).read_text())


def test_ruff_json_paths_made_relative_and_thresholds_read():
    vs = parse_ruff_json(load("ruff_half_outside.json"), root="/home/runner/work/app/app")
    assert [(v.rule, v.path, v.line) for v in vs] == [
        ("C901", "app/text.py", 8),
        ("E501", "app/text.py", 13),
        ("F401", "app/text.py", 5),
        ("E711", "tests/test_text.py", 5),
    ]
    assert [v.threshold for v in vs[:3]] == ["12 > 10", "131 > 100", None]


def test_sarif_runs_tools_and_uris():
    vs = parse_sarif(load("sarif_half_outside.json"))
    assert [(v.tool, v.rule, v.line) for v in vs] == [
        ("ruff", "C901", 12),
        ("ruff", "PLR2004", 5),
        ("golangci-lint", "funlen", 21),
        ("golangci-lint", "lll", 3),
    ]
    assert vs[0].path == "/home/runner/work/app/app/app/text.py"  # absolute until matched
    assert vs[2].path == "internal/server/handler.go" and vs[2].threshold == "70 > 60"
    assert vs[3].threshold == "140 > 120"


def test_golangci_and_eslint():
    go = parse_golangci_json(load("golangci_half_outside.json"))
    assert [(v.rule, v.line, v.threshold) for v in go] == [
        ("gocyclo", 20, "21 > 15"),
        ("lll", 22, "131 > 120"),
        ("gocognit", 3, "40 > 30"),
        ("errcheck", 7, None),
    ]
    es = parse_eslint_json(load("eslint_half_outside.json"), root="/home/runner/work/app/app")
    assert [(v.rule, v.path, v.threshold) for v in es] == [
        ("complexity", "web/a.js", "3 > 2"),
        ("no-unused-vars", "web/a.js", None),
        ("parse-error", "web/a.js", None),
    ]


def test_a_forges_findings_skip_notices_and_carry_paths_and_thresholds():
    complex_ = "`slugify` is too complex (18 > 15)"
    findings = [
        CiFinding("./app/text.py", 12, 14, "C901", complex_, "error", "lint"),
        CiFinding("app/text.py", 4, None, "W291", "trailing whitespace", "warning", "lint"),
        CiFinding("README.md", 2, 2, "Spell", "Check your spelling.", "notice", "spell"),
    ]
    vs = from_findings(findings)
    assert [(v.tool, v.rule, v.path, v.line, v.end_line, v.threshold) for v in vs] == [
        ("lint", "C901", "app/text.py", 12, 14, "18 > 15"),
        ("lint", "W291", "app/text.py", 4, None, None),
    ]


def test_parse_report_detects_the_format_inside_free_text():
    text = "Run ruff\n" + (FIX / "golangci_half_outside.json").read_text()
    assert [v.tool for v in parse_report(text)] == ["golangci-lint"] * 4
    assert parse_report("no json at all") == [] and parse_report("{not json") == []
    with pytest.raises(InputError, match="not JSON"):
        parse_ruff_json("{")


def test_filter_keeps_commit_lines_and_function_spans():
    source = "def f(x):\n    if x:\n        return 1\n    return 2\n\n\ndef g():\n    pass\n"
    vs = parse_ruff_json(
        [
            {
                "code": "C901",
                "message": "`f` is too complex (11 > 10)",
                "filename": "/r/m.py",
                "location": {"row": 1},
            },
            {
                "code": "C901",
                "message": "`g` is too complex (11 > 10)",
                "filename": "/r/m.py",
                "location": {"row": 7},
            },
            {
                "code": "E501",
                "message": "Line too long (101 > 100)",
                "filename": "/r/m.py",
                "location": {"row": 3},
            },
            {
                "code": "E501",
                "message": "Line too long (120 > 100)",
                "filename": "/r/other.py",
                "location": {"row": 3},
            },
        ],
        root="/r",
    )
    ours, theirs = filter_to_commit(
        vs, {"m.py": {3}}, lambda path, line: python_function_span(source, line)
    )
    assert [(v.rule, v.line) for v in ours] == [("C901", 1), ("E501", 3)]
    assert [(v.path, v.line) for v in theirs] == [("m.py", 7), ("other.py", 3)]
    assert "m.py:1 ruff C901: `f` is too complex (11 > 10) [threshold 11 > 10]" in render(ours)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("calculated cyclomatic complexity for function X is 22, max is 15", "22 > 15"),
        ("Function 'g' has too many lines (6). Maximum allowed is 5.", "6 > 5"),
        ("has too many statements (46 > 40)", "46 > 40"),
        ("`if b1` has complex nested blocks (complexity: 3)", None),
    ],
)
def test_threshold_messages(message, expected):
    assert threshold(message) == expected


LINES_READ = [(12, 12), ("12", 12), (12.7, 12), (None, 1), ("", 1), ("12a", 1), (-3, 1), (0, 1)]
LINES_READ += [([5], 1), ({"line": 5}, 1), (float("nan"), 1), (float("inf"), 1)]


@pytest.mark.parametrize(("value", "expected"), LINES_READ)
def test_a_report_line_is_at_least_one_and_bad_values_read_as_one(value, expected):
    assert report_line(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(14, 14), ("14", 14), (10, 10), (9, None), (0, None), (None, None), ("x", None)],
)
def test_a_report_end_line_is_dropped_when_absent_unreadable_or_before_the_start(value, expected):
    assert report_end_line(value, 10) == expected


HOSTILE_LINES = [
    ("12", "14", 12, 14),
    (None, None, 1, None),
    ("12a", "oops", 1, None),
    (-3, 0, 1, None),
    (20, 5, 20, None),
]


@pytest.mark.parametrize(("start", "end", "line", "end_line"), HOSTILE_LINES)
def test_every_report_format_reads_line_numbers_the_same_way(start, end, line, end_line):
    """The four readers that take a line from a report (SARIF, ruff, Code Climate, SAST) agree,
    and a bad number in one finding never aborts reading the report."""
    sarif = {
        "runs": [
            {
                "tool": {"driver": {"name": "t"}},
                "results": [
                    {
                        "ruleId": "R1",
                        "message": {"text": "m"},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "a.py"},
                                    "region": {"startLine": start, "endLine": end},
                                }
                            }
                        ],
                    }
                ],
            }
        ]
    }
    ruff = [
        {
            "code": "R1",
            "message": "m",
            "filename": "a.py",
            "location": {"row": start},
            "end_location": {"row": end},
        }
    ]
    climate = [
        {"check_name": "R1", "location": {"path": "a.py", "lines": {"begin": start, "end": end}}}
    ]
    sast = {
        "vulnerabilities": [
            {
                "name": "m",
                "identifiers": [{"value": "R1"}],
                "location": {"file": "a.py", "start_line": start, "end_line": end},
            }
        ]
    }
    found = [
        parse_sarif(sarif)[0],
        parse_ruff_json(ruff)[0],
        parse_code_climate(climate)[0],
        parse_security_report(sast)[0],
    ]
    assert [(v.line, v.end_line) for v in found] == [(line, end_line)] * 4
