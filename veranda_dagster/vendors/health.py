"""Health is measured, not configured: classify what a CLI run actually did.

``classify`` turns an exit code, the parsed stream (or the reason it would not parse) and
stderr into one of seven verdicts, with a table of ordered rules taken from the failure matrix
recorded against each real CLI (reference notes §5): the shared rules here, and the wordings
only one CLI prints declared by its vendor (``health_rules``) and placed among them. Only a
*failed* run is matched against the rules, and only its error text (stderr, the stream's error
events), never the model's transcript or a tool's input or output: a real Claude Code turn
killed at its bound while editing ``billing/invoice.py`` was once classified ``quota`` from the
word "billing" in its ``Edit`` call, and the run fell back to a vendor that looped the same
way. A run killed at its bound is ``timeout`` unless its error text says why (a CLI retrying a
429 until the bound is still ``quota``); one that printed nothing at all is ``unreachable``.

``HealthCache`` keeps one verdict per vendor for the process: an ``ok`` holds until a turn
fails on that vendor; a failure is re-probed after ``HEALTH_RECHECK_S``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from veranda_dagster.domain.core.bounds import HEALTH_RECHECK_S
from veranda_dagster.vendors.command import EGRESS_REFUSED, RunOutput
from veranda_dagster.vendors.port import HealthVerdict, Vendor, Verdict


@dataclass(frozen=True)
class Rule:
    name: str
    verdict: Verdict
    pattern: re.Pattern[str]
    after_shared: bool = False
    """For a vendor's own rule: tried after the shared rules of its verdict (a broad wording
    that must not shadow their more precise names), instead of before them."""


def error_rule(name: str, verdict: Verdict, pattern: str, *, after_shared: bool = False) -> Rule:
    """A rule matching ``pattern`` (case-insensitive) in a failed run's error text."""
    return Rule(name, verdict, re.compile(pattern, re.I), after_shared)


SHARED_RULES: tuple[Rule, ...] = (
    # 1. auth (a mode whose credential cannot go through the proxy is refused before it runs)
    error_rule("egress_refused", "auth", re.escape(EGRESS_REFUSED)),
    error_rule(
        "status_401", "auth", r"\"?(statusCode|api_error_status|status|code)\"?\s*[:=]\s*40[13]\b"
    ),
    error_rule(
        "auth_wording",
        "auth",
        r"not logged in|please run /login|invalid (x-)?api[ _-]?key|incorrect api key|"
        r"authentication_error|api key not valid|unauthenticated|\b401\b|login required|"
        r"no api key|missing api key|invalid_api_key|token (has )?expired|"
        r"credentials? (were )?not found|invalid auth method",
    ),
    # 2. quota (before rate limit: a 429 with quota wording is quota)
    error_rule(
        "quota_wording",
        "quota",
        r"insufficient_quota|exceeded your current quota|quota|credit balance|billing|"
        r"RESOURCE_EXHAUSTED|usage limit|out of credits",
    ),
    # 3. rate limit: the vendor cannot serve now, which drives fallback like quota does
    error_rule(
        "rate_limit",
        "quota",
        r"provider\.rate_limit|\b429\b|rate limit|too many requests|rate_limit_error",
    ),
    # 4. upstream
    error_rule(
        "status_5xx",
        "upstream",
        r"\"?(statusCode|api_error_status|http_status|status)\"?\s*[:=]\s*5\d\d\b|"
        r"\bAPI Error: 5\d\d\b|\(status 5\d\d|\b50[0234]\b|internal server error|overloaded|"
        r"service unavailable|bad gateway|experiencing high demand|temporary errors",
    ),
    # 5. unreachable
    error_rule(
        "connection",
        "unreachable",
        r"Connection error|error sending request|ECONNREFUSED|APIConnectionError|"
        r"ENOTFOUND|EAI_AGAIN|getaddrinfo|connection refused|unable to connect|fetch failed|"
        r"ETIMEDOUT|ECONNRESET|network error|socket hang up",
    ),
)
"""The rules every vendor shares, in precedence order; a vendor's own rules (its vendor's
``health_rules``) are placed among them by ``ordered_rules``."""


def ordered_rules(vendor_rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """The shared rules with a vendor's own in their places: each verdict's group in the shared
    order, a vendor rule before the shared rules of its verdict (or after, when it says so);
    one whose verdict no shared rule has is tried last."""
    ordered: list[Rule] = []
    for verdict in dict.fromkeys(r.verdict for r in SHARED_RULES):
        own = [r for r in vendor_rules if r.verdict == verdict]
        ordered += [r for r in own if not r.after_shared]
        ordered += [r for r in SHARED_RULES if r.verdict == verdict]
        ordered += [r for r in own if r.after_shared]
    return (*ordered, *(r for r in vendor_rules if r not in ordered))


_ERROR_KEYS = ("error", "error_message", "error_name", "error_status", "api_error_status")
_ERROR_TYPES = frozenset({"error", "turn.failed"})


def error_events(stdout: str) -> list[str]:
    """The lines of a CLI's stdout that report a failure: error events (``type: error`` of
    Codex, Gemini, Grok and opencode, ``turn.failed``), events carrying an error field
    (Claude Code's ``api_retry`` and error ``result``, Kimi's retry notices), and lines that are
    not JSON at all (an HTML error page, a CLI's plain-text complaint). Assistant messages,
    tool calls and tool results are never among them, whatever they say."""
    lines: list[str] = []
    for raw in stdout.splitlines():
        line = raw.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the decoder
            lines.append(line)
            continue
        if not isinstance(event, dict):
            continue
        if (
            event.get("type") in _ERROR_TYPES
            or event.get("is_error") is True
            or event.get("is_api_error_message") is True
            or any(event.get(k) for k in _ERROR_KEYS)
        ):
            lines.append(line)
    return lines


def error_text(out: RunOutput, stream_error: str | None) -> str:
    """The part of a run the rules may read: stderr, the parsed stream's error and the raw
    stream's error events; never the transcript."""
    parts = [out.stderr, stream_error or "", *error_events(out.stdout)]
    return "\n".join(p for p in parts if p)


def classify(
    rules: tuple[Rule, ...],
    out: RunOutput,
    *,
    parsed: bool,
    terminal: bool,
    stream_error: str | None = None,
    parse_error: str | None = None,
) -> HealthVerdict:
    """One verdict for one CLI run (probe or turn), by ``rules`` in order (a vendor's rules:
    ``ordered_rules`` of its vendor's own, or ``registry.health_rules(vendor)``)."""
    if out.exit_code == 0 and parsed and terminal and not stream_error and not out.timed_out:
        return HealthVerdict(verdict="ok")
    if out.exit_code == 127:
        return HealthVerdict(verdict="unreachable", detail=_clip(out.stderr), rule="no_binary")
    if out.timed_out and not out.stdout.strip():
        return HealthVerdict(
            verdict="unreachable", detail="timed out with no output", rule="timeout_silent"
        )
    haystack = error_text(out, stream_error)
    for rule in rules:
        match = rule.pattern.search(haystack)
        if match:
            return HealthVerdict(
                verdict=rule.verdict, detail=_around(haystack, match), rule=rule.name
            )
    if out.timed_out:
        detail = f"killed at its time bound after {out.duration_s:g} s, still working"
        return HealthVerdict(verdict="timeout", detail=detail, rule="timeout")
    reason = stream_error or parse_error or f"exit {out.exit_code}, no terminal event"
    if out.stderr.strip():
        reason += f"; stderr: {out.stderr.strip()[-200:]}"
    return HealthVerdict(verdict="turn_failed", detail=_clip(reason), rule="fallthrough")


def _around(text: str, match: re.Match[str], width: int = 160) -> str:
    start = max(0, match.start() - width // 2)
    return _clip(text[start : start + width])


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class HealthCache:
    """Verdict per vendor for this process; the resolver reads it before every resolution."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._verdicts: dict[tuple[str, ...], tuple[HealthVerdict, float]] = {}
        self.probes = 0

    def verdict(self, vendor: Vendor) -> HealthVerdict:
        key = _key(vendor)
        cached = self._verdicts.get(key)
        now = self._clock()
        if cached is not None:
            verdict, at = cached
            if verdict.verdict == "ok" or now - at < HEALTH_RECHECK_S:
                return verdict
        self.probes += 1
        verdict = vendor.probe()
        self._verdicts[key] = (verdict, now)
        return verdict

    def mark(self, vendor: Vendor, verdict: HealthVerdict) -> None:
        """A turn failed on this vendor: remember it, so the next resolution skips it until
        the recheck interval has passed and a fresh probe says otherwise."""
        self._verdicts[_key(vendor)] = (verdict, self._clock())

    def snapshot(self) -> dict[str, HealthVerdict]:
        return {"/".join(k[:2]): v for k, (v, _) in self._verdicts.items()}

    def clear(self) -> None:
        self._verdicts.clear()


def _key(vendor: Vendor) -> tuple[str, ...]:
    """Vendor, mode and (for vendors) binary and base URL: two configs pointing one vendor at
    different binaries or servers must not share a verdict."""
    return tuple(getattr(vendor, "health_key", (vendor.vendor, vendor.mode)))


PROCESS_HEALTH = HealthCache()
"""The per-process cache ``build_agent`` uses unless given another."""
