"""Scrub anything that looks like a credential out of text bound for a PR, comment or prompt.

It masks the values a caller knows (``known``: the HTTP clients pass their own token) and,
since most callers do not know them, also recognises the shapes: GitHub, Slack, Linear,
OpenAI/Anthropic-style keys, AWS access keys, bearer headers and ``user:password@`` in URLs.
"""

from __future__ import annotations

import re

MASK = "***"

_PATTERNS = (
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{16,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\blin_(?:api|oauth)_[A-Za-z0-9]{16,}"),
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),
    re.compile(r"(?i)(?<=authorization: )(?:bearer|basic|token) [A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{20,}"),
)
_URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^\s:/@]+):[^\s@/]+@")
_ASSIGNED = re.compile(
    r"\b(?P<name>[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|API_KEY|APIKEY)[A-Z0-9_]*)"
    r"(?P<sep>\s*[=:]\s*)(?P<q>['\"]?)(?!\*\*\*)[^\s'\"]{6,}"
)
"""``GITHUB_TOKEN=...`` / ``API_KEY: ...``: environment-style names only, so prose such as
"nothing secret: app/x.py:12" is left alone; lowercase keys count only with ``=``."""
_ASSIGNED_LOWER = re.compile(
    r"(?i)\b(?P<name>[a-z0-9_]*(?:token|secret|password|api_key|apikey))"
    r"(?P<sep>=)(?P<q>['\"]?)(?!\*\*\*)[^\s'\"&]{6,}"
)


def scrub(text: str, known: list[str] | None = None) -> str:
    """``text`` with every known secret value and every token-shaped string masked."""
    for secret in known or []:
        if secret:
            text = text.replace(secret, MASK)
    text = _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    for pattern in _PATTERNS:
        text = pattern.sub(MASK, text)
    for pattern in (_ASSIGNED, _ASSIGNED_LOWER):
        text = pattern.sub(lambda m: f"{m['name']}{m['sep']}{m['q']}{MASK}", text)
    return text
