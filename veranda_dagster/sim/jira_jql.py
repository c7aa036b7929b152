"""A small JQL evaluator for the Jira fake: the clauses a ticket source writes, nothing more.

Grammar (recursive descent): ``expr := term (OR term)*``, ``term := factor (AND factor)*``,
``factor := NOT factor | "(" expr ")" | field op value | field [NOT] IN "(" values ")"``, then an
optional ``ORDER BY field [ASC|DESC], ...``. Values are bare words or double-quoted strings
with backslash escapes. Dates are ``yyyy/MM/dd HH:mm`` (or ``-`` separated, or a date alone),
read as UTC, the fake instance's zone, or relative to now (``"-37m"``, ``"-2h"``, ``"-1d"``,
``"-1w"``), as JQL allows.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<op>!=|>=|<=|=|>|<|~)|(?P<punct>[(),])'
    r"|(?P<word>[^\s(),=!<>~\"]+))"
)
_CATEGORIES = {"new": "to do", "indeterminate": "in progress", "done": "done"}
FIELDS = frozenset({"project", "labels", "assignee", "status", "statuscategory", "updated", "key"})


class JqlError(ValueError):
    """Malformed JQL or an unknown field; the fake answers 400 with the message."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if not match:
            raise JqlError(f"Error in the JQL Query: unexpected character at {pos}")
        kind = match.lastgroup or "word"
        value = match.group(kind)
        if kind == "str":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        out.append((kind, value))
        pos = match.end()
    return out


def _split_order(jql: str) -> tuple[str, str]:
    match = re.search(r"\border\s+by\b", jql, re.I)
    return (jql[: match.start()], jql[match.end() :]) if match else (jql, "")


_RELATIVE = re.compile(r"^([-+]?)(\d+)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _date(value: str, now: datetime) -> datetime:
    relative = _RELATIVE.match(value.strip())
    if relative:
        sign, amount, unit = relative.groups()
        delta = timedelta(**{_UNITS[unit]: int(amount)})
        return now + delta if sign == "+" else now - delta
    for fmt in ("%Y/%m/%d %H:%M", "%Y-%m-%d %H:%M", "%Y/%m/%d", "%Y-%m-%d"):
        try:
            return datetime.strptime(value, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise JqlError(f"Date value '{value}' for field 'updated' is invalid")


def _compare(issue: dict[str, Any], field: str, op: str, values: list[str], now: datetime) -> bool:
    if field not in FIELDS:
        raise JqlError(f"Field '{field}' does not exist or you do not have permission to view it.")
    if field == "updated":
        target = _date(values[0], now)
        precise = bool(_RELATIVE.match(values[0].strip()))
        moment = issue["updated"] if precise else issue["updated"].replace(second=0, microsecond=0)
        return bool({
            "=": moment == target, "!=": moment != target, ">=": moment >= target,
            "<=": moment <= target, ">": moment > target, "<": moment < target,
        }.get(op, False))  # fmt: skip
    if field == "labels":
        have = {x.lower() for x in issue["labels"]}
        hit = any(v.lower() in have for v in values)
    elif field == "statuscategory":
        key = str(issue["category"]).lower()
        hit = any(v.lower() in (key, _CATEGORIES.get(key, "")) for v in values)
    else:
        current = str(issue.get(field) or "").lower()
        hit = any(v.lower() == current for v in values)
    if op in ("=", "in", "~"):
        return hit
    if op in ("!=", "not in"):
        return not hit
    raise JqlError(f"The operator '{op}' is not supported by the '{field}' field.")


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], issue: dict[str, Any], now: datetime):
        self.tokens = tokens
        self.pos = 0
        self.issue = issue
        self.now = now

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise JqlError("Error in the JQL Query: the query ended early")
        self.pos += 1
        return token

    def keyword(self, word: str) -> bool:
        token = self.peek()
        if token and token[0] == "word" and token[1].upper() == word:
            self.pos += 1
            return True
        return False

    def expr(self) -> bool:
        result = self.term()
        while self.keyword("OR"):
            result = self.term() or result
        return result

    def term(self) -> bool:
        result = self.factor()
        while self.keyword("AND"):
            result = self.factor() and result
        return result

    def factor(self) -> bool:
        if self.keyword("NOT"):
            return not self.factor()
        if self.peek() == ("punct", "("):
            self.take()
            result = self.expr()
            if self.take() != ("punct", ")"):
                raise JqlError("Error in the JQL Query: expected ')'")
            return result
        kind, field = self.take()
        if kind not in ("word", "str"):
            raise JqlError(f"Error in the JQL Query: expected a field, got {field!r}")
        negated = self.keyword("NOT")
        if self.keyword("IN"):
            op = "not in" if negated else "in"
            return _compare(self.issue, field.lower(), op, self.list(), self.now)
        kind, op = self.take()
        if kind != "op":
            raise JqlError(f"Error in the JQL Query: expected an operator after {field!r}")
        return _compare(self.issue, field.lower(), op, [self.value()], self.now)

    def value(self) -> str:
        kind, value = self.take()
        if kind not in ("word", "str"):
            raise JqlError(f"Error in the JQL Query: expected a value, got {value!r}")
        return value

    def list(self) -> list[str]:
        if self.take() != ("punct", "("):
            raise JqlError("Error in the JQL Query: expected '(' after IN")
        values = [self.value()]
        while self.peek() == ("punct", ","):
            self.take()
            values.append(self.value())
        if self.take() != ("punct", ")"):
            raise JqlError("Error in the JQL Query: expected ')'")
        return values


def jql_match(jql: str, issue: dict[str, Any], now: datetime | None = None) -> bool:
    where, _ = _split_order(jql)
    tokens = _tokens(where)
    if not tokens:
        return True
    parser = _Parser(tokens, issue, now or datetime.now(UTC))
    result = parser.expr()
    if parser.peek() is not None:
        raise JqlError(f"Error in the JQL Query: unexpected {parser.peek()[1]!r}")  # type: ignore[index]
    return result


def order_key(jql: str, issue: dict[str, Any]) -> tuple[Any, ...]:
    """Sort key for ``ORDER BY updated|key [ASC|DESC], ...`` (default: key ascending)."""
    _, order = _split_order(jql)
    parts: list[Any] = []
    for clause in (c.split() for c in order.split(",") if c.strip()):
        field, desc = clause[0].lower(), len(clause) > 1 and clause[1].upper() == "DESC"
        if field == "updated":
            stamp = issue["updated"].timestamp()
            parts.append(-stamp if desc else stamp)
        elif field == "key":
            project, _, number = issue["key"].partition("-")
            n = int(number) if number.isdigit() else 0
            parts.append((project, -n if desc else n))
    return (*parts, issue["key"])
