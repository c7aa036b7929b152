"""The one scrubber: anything that is or looks like a credential is masked before text reaches a
PR, a comment, a prompt, an error message or an observability tool's answer.

Four passes, each proportional to the length of the text (a hostile ticket or a chatty log must not
stall the step that scrubs it):

1. **Known values**: the caller's ``known`` (an HTTP client passes its own token) and, from the
   process environment, every variable named like a secret (``*_TOKEN``, ``*_API_KEY``,
   ``*PASSWORD*``...) plus the password inside every URL-valued variable, each also in its
   percent-encoded form.
2. **Connection URLs, parsed**: in ``scheme://user:password@host`` the password runs from the
   user's ``:`` to the *last* ``@`` of the URL, so a raw ``%``, ``@``, ``:`` or ``/`` inside it is
   masked with the rest (a regex over "password characters" is what leaked them).
3. **Token shapes**: the generic ones below (cloud access keys, JWTs, private keys) and every
   provider's, registered from outside the domain (``register_shape_source``): each tracker's
   and forge's beside its client, each vendor's in its plugin module, so a new provider
   brings its shapes with it.
4. **Assignments and headers**: ``<NAME>_TOKEN=...``, ``password=...``, ``password: ...``,
   ``--password ...``, ``Authorization: Bearer``.
5. **High entropy** (``high_entropy=True``, for text from outside going to a model: CI logs,
   comments): a run of 32+ hex or base64 characters random enough to be a key (a 40-hex API
   key is indistinguishable from a commit sha, so both are masked there; nowhere else).
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, unquote

MASK = "***"

MIN_ENV_SECRET_CHARS = 8
"""Shorter values of secret-named variables are not masked: ``DEBUG_TOKEN=1`` would otherwise
turn every ``1`` in a PR body into ``***``."""


@dataclass(frozen=True)
class TokenShape:
    """One kind of token a service issues, as the scrubber recognises it.

    ``pattern`` must match in one pass by construction: a literal prefix and runs of single
    character classes, each ending where the next class cannot continue it (no nested or overlapping
    quantifiers). The scrubber only lets a match start where a run of token characters does.
    """

    name: str
    pattern: str
    sample: str
    """A made-up token of this shape; the tests scrub it."""
    source: str
    """Where the shape comes from; starts with ``unverified:`` when it could not be checked."""


GENERIC_TOKENS: tuple[TokenShape, ...] = (
    TokenShape(
        "aws_access_key",
        r"(?:AKIA|ASIA)[0-9A-Z]{16}",
        "AKIAIOSFODNN7EXAMPLE",
        "AWS IAM docs: access key ids (AKIA long-term, ASIA temporary); the secret key has no "
        "prefix and is caught as an assignment",
    ),
    TokenShape(
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "RFC 7519 (base64url JSON header and claims, both starting '{\"' = 'eyJ')",
    ),
    TokenShape(
        "private_key",
        r"-----BEGIN[A-Z ]{0,40} PRIVATE KEY-----(?:[^-]++|-(?!----))*+"
        r"(?:-----END[A-Z ]{0,40} PRIVATE KEY-----)?",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
        "RFC 7468 (PEM): BEGIN line to END line, encryption headers included",
    ),
)

_TOKEN_START = r"(?<![A-Za-z0-9_-])"
"""A token starts where a run of token characters does, so no run is rescanned from inside."""

_HEADERS = (
    re.compile(r"(?i)(?<=authorization: )(?:bearer|basic|token) [A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{20,}"),
)
_URL_USERINFO = re.compile(r"\b[a-z][a-z0-9+.-]{0,31}://[^\s:/]*:")
"""``scheme://user:`` (the scheme bounded, so a dotted word is not rescanned); the password is
found by parsing what follows, not by a character class."""
_WHITESPACE = re.compile(r"\s")
_ASSIGNED = re.compile(
    r"\b(?=[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|API_KEY|APIKEY))(?P<name>[A-Z0-9_]++)"
    r"(?P<sep>\s*+[=:]\s*+)(?P<q>['\"]?)(?!\*\*\*)[^\s'\"]{6,}"
)
"""``FORGE_TOKEN=...`` / ``API_KEY: ...``: environment-style names only, so prose such as
"nothing secret: app/x.py:12" is left alone; lowercase keys count only with ``=``."""
_ASSIGNED_LOWER = re.compile(
    r"(?i)\b(?P<name>[a-z0-9_]*(?:token|secret|password|api_key|apikey))"
    r"(?P<sep>=)(?P<q>['\"]?)(?!\*\*\*)[^\s'\"&]{6,}"
)
_PASSWORD_SAID = re.compile(
    r"(?i)(?P<name>\b(?:password|passwd|pwd)|--(?:password|passwd|token|secret|api-key))"
    r"(?P<sep>\s*+[:=]\s*+|\s++)(?P<q>['\"]?)(?!\*\*\*)(?=[^\s'\"]*[0-9!@#$%^&*_+=/-])"
    r"[^\s'\"]{6,}"
)
"""``deploy password: hunter2!x`` / ``--password s3cret99``: said in a log, any case; the value
must hold a digit or a symbol so "password is required" stays prose."""
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"[0-9a-fA-F]+")
MIN_HEX_ENTROPY = 3.0
"""Bits per character of a 32+ hex run to count as a key: random hex is ~3.9, a run of one
repeated digit group is far below."""
MIN_BASE64_ENTROPY = 4.3
"""Bits per character of a 32+ base64 run: random base64 is ~5, identifiers and paths ~4."""
_URL_DELIMITERS = re.compile(r"[@:/?#]")
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|_KEY$")
_NOT_A_VALUE = re.compile(r"_(?:FILE|PATH|DIR|ENV|NAME|URL_ENV)$")
"""``FORGE_TOKEN_FILE=/run/secrets/x`` names where a secret is, not the secret."""


ShapeSource = Callable[[], Iterable[TokenShape]]
"""Something outside the domain that knows token shapes: the trackers' and forges' clients,
the vendor registry. Called late, at the first scrub, so its modules may import this one."""

_SHAPE_SOURCES: list[ShapeSource] = []


def register_shape_source(source: ShapeSource) -> None:
    """Add the shapes a provider layer declares. ``plugins.load_plugins`` registers the
    providers' source where the Definitions are built and where the CLI starts."""
    if source not in _SHAPE_SOURCES:
        _SHAPE_SOURCES.append(source)


def _provided() -> tuple[TokenShape, ...]:
    """Asked afresh on every scrub (a few dozen shapes), so a vendor registered later counts;
    the compiled alternation is cached per distinct tuple."""
    return tuple(shape for source in _SHAPE_SOURCES for shape in source())


def token_shapes() -> tuple[TokenShape, ...]:
    """Everything the scrubber recognises by shape: every registered provider's (trackers,
    forges, model vendors), then the generic ones (cloud keys, JWTs, private keys)."""
    return _provided() + GENERIC_TOKENS


@functools.lru_cache(maxsize=4)
def _compiled(shapes: tuple[TokenShape, ...]) -> re.Pattern[str]:
    """All shapes as one alternation behind the token-start guard: one pass over the text
    instead of one per shape."""
    return re.compile(_TOKEN_START + "(?:" + "|".join(f"(?:{s.pattern})" for s in shapes) + ")")


def url_password(url: str) -> str | None:
    """The raw password of ``scheme://user:password@host...``: everything between the user's
    ``:`` and the last ``@``, whatever characters it holds. ``None`` when there is none."""
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme:
        return None
    userinfo, at, _ = rest.rpartition("@")
    if not at:
        return None
    _, colon, password = userinfo.partition(":")
    return password if colon and password else None


def environ_secrets(environ: Mapping[str, str]) -> list[str]:
    """Values in ``environ`` that are secrets by their name, and URL passwords in any value
    (whole, decoded, and their pieces between ``@ : / ? #``), at least
    ``MIN_ENV_SECRET_CHARS`` long."""
    found: list[str] = []
    for name, value in environ.items():
        upper = name.upper()
        if _SECRET_NAME.search(upper) and not _NOT_A_VALUE.search(upper):
            found.append(value)
        if "://" in value:
            password = url_password(value)
            if password:
                # and its pieces between URL delimiters: a parser that misreads the URL quotes
                # one of them in its error ('invalid percent-encoded token: "p%zz..."')
                found += [password, unquote(password), *_URL_DELIMITERS.split(password)]
    return [v for v in dict.fromkeys(found) if len(v) >= MIN_ENV_SECRET_CHARS]


def _mask_known(text: str, secrets: Iterable[str]) -> str:
    variants = {v for s in secrets if s for v in (s, quote(s, safe=""))}
    for secret in sorted(variants, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def mask_url_passwords(text: str) -> str:
    """Every ``scheme://user:<password>@`` with the password masked up to the URL's last ``@``
    (a URL ends at whitespace). One pass: the end of a URL and its last ``@`` are found once
    and reused for every candidate inside it."""
    out: list[str] = []
    cursor, url_end, last_at = 0, -1, -1
    for m in _URL_USERINFO.finditer(text):
        if m.start() < cursor:
            continue
        if m.end() > url_end:
            found = _WHITESPACE.search(text, m.end())
            url_end = found.start() if found else len(text)
            last_at = text.rfind("@", m.end(), url_end)
        if last_at < m.end():
            continue
        out += [text[cursor : m.end()], MASK]
        cursor = last_at
    return "".join([*out, text[cursor:]])


def entropy(text: str) -> float:
    """Shannon entropy of ``text``'s characters, in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _looks_random(run: str) -> bool:
    body = run.rstrip("=")
    if _HEX.fullmatch(body):
        return entropy(body) >= MIN_HEX_ENTROPY
    mixed = any(c.isdigit() for c in body) and body.lower() != body and body.upper() != body
    return mixed and entropy(body) >= MIN_BASE64_ENTROPY


def mask_high_entropy(text: str) -> str:
    """Every 32+ character hex or base64 run random enough to be a key, masked."""
    return _CANDIDATE.sub(lambda m: MASK if _looks_random(m[0]) else m[0], text)


def scrub(
    text: str,
    known: list[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    high_entropy: bool = False,
) -> str:
    """``text`` with every known secret value and every token-shaped string masked.

    ``environ`` (default: the process environment) supplies the secrets this process holds, so
    a value no shape knows (a custom token, a database password) is masked all the same.
    ``high_entropy`` adds pass 5, for text from outside on its way to a model."""
    env = os.environ if environ is None else environ
    text = _mask_known(text, [*(known or []), *environ_secrets(env)])
    text = mask_url_passwords(text)
    for pattern in (_compiled(token_shapes()), *_HEADERS):
        text = pattern.sub(MASK, text)
    for pattern in (_ASSIGNED, _ASSIGNED_LOWER, _PASSWORD_SAID):
        text = pattern.sub(lambda m: f"{m['name']}{m['sep']}{m['q']}{MASK}", text)
    return mask_high_entropy(text) if high_entropy else text
