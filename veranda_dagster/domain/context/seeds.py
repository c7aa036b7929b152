"""Retrieval seeds: the identifiers a ticket names, pulled out by regex and capped at eight.

An identifier is a lexical object, so the seeds are exactly what a person typed that looks like
code: backticked spans, file paths, dotted names, camelCase/PascalCase and snake_case. They are
ranked by how much each one narrows a search (backticks and paths first because a person chose
them; then longer, more specific tokens; then frequency) and capped at ``MAX_SEEDS``, because past
a handful of identifiers the searches dilute instead of sharpening.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from veranda_dagster.domain.core.bounds import MAX_EXTRACT_TEXT_CHARS, MAX_SEARCHES, MAX_SEEDS

MIN_SEED_LEN = 4
"""Shorter tokens (``id``, ``db``, ``foo``) match everywhere and rank nothing."""

MAX_SEED_LEN = 80
"""A backticked span longer than this is a code block, not an identifier; its parts are used."""

CODE_EXTENSIONS = (
    "py|pyi|go|rs|js|jsx|ts|tsx|mjs|cjs|vue|svelte|java|kt|kts|scala|rb|php|cs|c|h|cc|cpp|hpp|"
    "m|swift|sql|proto|graphql|gql|yaml|yml|toml|json|ini|cfg|sh|bash|md|rst|txt|html|css|scss|"
    "tf|hcl|lua|ex|exs|erl|dart|r|jl|mk|gradle|xml|lock"
)

_BACKTICK = re.compile(r"`([^`\n]{2,200})`")
_PATH = re.compile(
    rf"(?<![\w.:/-])(/?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:{CODE_EXTENSIONS}))(?![\w/-])"
    rf"|(?<![\w.:/-])(/?(?:[\w.-]+/)+[\w.-]+)(?![\w/-])"
    r"|\b(Makefile|Dockerfile|Jenkinsfile)\b"
)
_DOTTED = re.compile(r"(?<![\w./-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w/-])")
_CAMEL = re.compile(
    r"(?<![\w.])([a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"
    r"|[A-Z]{2,}[a-z][A-Za-z0-9]*|[a-z]+[A-Z]{2,}[A-Za-z0-9]*)(?![\w])"
)
_SNAKE = re.compile(
    r"(?<![\w.])(_{0,2}[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_{0,2}|_{1,2}[A-Za-z][A-Za-z0-9]{3,})"
    r"(?![\w])"
)
_CALL = re.compile(r"(?<![\w.])(_*[A-Za-z]\w{2,})\(\)")
"""``name()`` in prose: a person wrote it as a function, so it is one."""
_CHANGELOG = re.compile(r"(^|/)(CHANGES|CHANGELOG|HISTORY|NEWS|README)[\w.-]*$", re.IGNORECASE)
"""Release notes and readmes are named in tickets but are never where the code is."""
_IDENT_IN_SPAN = re.compile(r"[A-Za-z_][\w.]*")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{0,31}://\S+")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]+(?:\.[\w-]+)+")
"""Both run over whole ticket texts, so neither may rescan a run from every position inside it
(quadratic on ``a.a.a.…``): the scheme is bounded (real ones are short) and an address starts
only where its run does, with RFC 5321's 64-character local part."""
_HOST_SUFFIXES_TEXT = "com org net io dev ai co uk de fr cloud app edu gov info me us"
_HOST_SUFFIXES = frozenset(_HOST_SUFFIXES_TEXT.split())
"""A dotted token ending like this is a host name (``example.com``), not an identifier."""
_SITE_PREFIX = re.compile(
    r"^.*?/(?:site-packages|dist-packages|node_modules|src/(?:[a-z0-9-]+\.)+[a-z]{2,})/"
)
"""Where installed code starts: a Python site, ``node_modules``, or a Go source tree's
``src/<host>/`` (any host: a module path begins with the forge's host name)."""

_STOPWORDS_TEXT = """
    about above after again against also among another because been before being below between
    both build could does doing done down during each error errors every example false fixed from
    further have having here http https into issue issues itself just like make might more most
    must need needs none only other over ought same should since some still such than that their
    theirs them then there these they this those through true under until very want was were what
    when where which while will with within without would your yours test tests return returns
    self none null undefined todo fixme note please thanks using used uses line lines file files
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
"""English words and code words too common to narrow a search."""

_TIER = {"backtick": 0, "path": 0, "dotted": 1, "call": 1, "camel": 2, "snake": 2}
"""Lower is stronger: a person chose a backticked span or a path; a dotted name is qualified."""


@dataclass
class _Candidate:
    text: str
    tier: int
    count: int = 0
    first: int = 0


def _is_version_or_number(token: str) -> bool:
    return bool(re.fullmatch(r"v?[\d._-]+[a-z]?\d*", token))


def _clean(token: str) -> str:
    token = token.strip().strip("\"'.,;:()[]{}<>")
    if token.endswith("()"):
        token = token[:-2]
    return token


def _acceptable(token: str) -> bool:
    if len(token) < MIN_SEED_LEN or len(token) > MAX_SEED_LEN:
        return False
    if token.lower() in STOPWORDS or _is_version_or_number(token):
        return False
    return any(ch.isalpha() for ch in token)


_COMMON_DIRS_TEXT = (
    "src lib pkg cmd internal app apps packages tests test docs web api cli core"
    " scripts tools config services modules components"
)
_COMMON_DIRS = frozenset(_COMMON_DIRS_TEXT.split())


def _plausible_dir_path(token: str) -> bool:
    """``src/http`` is a path, ``and/or`` and ``client/server`` are prose."""
    parts = [p for p in token.strip("/").split("/") if p]
    if len(parts) >= 3 or token.startswith("/"):
        return True
    if parts and parts[0] in _COMMON_DIRS:
        return True
    return any(re.search(r"[_\-\dA-Z]", p) for p in parts)


def _normalize_path(path: str) -> str:
    """Traceback paths (``/usr/lib/python3/site-packages/pkg/mod.py``) become repo-relative."""
    path = _SITE_PREFIX.sub("", path)
    return path.lstrip("./") if path.startswith("./") else path.lstrip("/")


_SHELL_COMMANDS_TEXT = """
    python python3 py pip pip3 pipx uv uvx poetry pdm hatch tox nox pytest git npm npx yarn pnpm
    node deno docker docker-compose podman kubectl make cmake cargo go conda mamba micromamba brew
    apt apt-get dnf yum sudo cd ls cat echo export set curl wget bash sh zsh source pre-commit
    black ruff mypy flake8 isort twine sphinx-build gunicorn uvicorn flask django-admin
"""
SHELL_COMMANDS = frozenset(_SHELL_COMMANDS_TEXT.split())
"""Programs a report shows being run: a backticked command line says how the user got there,
not which code to read (``poetry show --only main`` made ``poetry`` a seed that every file
matches)."""
_FLAG = re.compile(r"^--?[A-Za-z][\w-]*(?:=\S*)?$")
_MODULE_ARG = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


def is_shell_command(span: str) -> bool:
    """A backticked span that is a command line or a bare flag (``--no-ansi``, ``-e py311``,
    ``$ tox -rvv``, ``python -m pkg.mod``), not code: a known program first, or a flag among
    its words and no call or assignment before it."""
    words = span.strip().lstrip("$> ").split()
    if not words:
        return False
    if _FLAG.match(words[0]):
        return True
    if len(words) < 2:
        return False
    head = words[1] if words[0] == "sudo" else words[0]
    if head.lower() in SHELL_COMMANDS:
        return True
    assignment = re.search(r"\s=\s", span)
    return "(" not in span and not assignment and any(_FLAG.match(w) for w in words[1:])


def _command_tokens(span: str) -> list[tuple[str, str]]:
    """The dotted module names a command line runs (``python -m werkzeug.serving``): the only
    part of a command that names code."""
    words = span.strip().lstrip("$> ").split()
    return [
        (word, "dotted")
        for word in words[1:]
        if _MODULE_ARG.match(word) and _acceptable(word) and not _PATH.fullmatch(word)
    ]


def _span_tokens(span: str) -> list[tuple[str, str]]:
    """What a backticked span contributes: itself when it reads as one identifier or a short
    snippet, else the identifiers inside it; of a command line or a flag, only the dotted
    module names it runs (``is_shell_command``)."""
    span = _clean(span)
    if is_shell_command(span):
        return _command_tokens(span)
    if _PATH.fullmatch(span):
        return [(_normalize_path(span), "path")]
    if len(span) <= MAX_SEED_LEN and not re.search(r"\s{2,}|[;{}]", span):
        head = re.split(r"[\s(=]", span, maxsplit=1)[0]
        out = [(span, "backtick")]
        if head != span and _acceptable(_clean(head)):
            out.append((_clean(head), "backtick"))
        return out
    idents = [
        m.group(0)
        for m in _IDENT_IN_SPAN.finditer(span)
        if re.search(r"[._]|[a-z][A-Z]", m.group(0).strip("_"))
    ]
    return [(ident, "dotted" if "." in ident else "snake") for ident in idents]


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each (sorted, disjoint) span replaced by spaces, in one pass."""
    parts, cursor = [], 0
    for start, end in spans:
        parts += [text[cursor:start], " " * (end - start)]
        cursor = end
    return "".join([*parts, text[cursor:]])


def _scan(text: str) -> Iterable[tuple[str, str, int]]:
    """(token, kind, offset) for every seed-like token in ``text``."""
    text = _EMAIL.sub(" ", _URL.sub(" ", text[:MAX_EXTRACT_TEXT_CHARS]))
    for m in _BACKTICK.finditer(text):
        for token, kind in _span_tokens(m.group(1)):
            yield token, kind, m.start()
    bare = _BACKTICK.sub(lambda m: " " * len(m.group(0)), text)
    spans: list[tuple[int, int]] = []
    for m in _PATH.finditer(bare):
        token = next(g for g in m.groups() if g)
        if m.group(2) and not _plausible_dir_path(token):
            continue
        spans.append(m.span())
        if not _CHANGELOG.search(token):
            yield _normalize_path(token), "path", m.start()
    bare = _blank(bare, spans)
    for kind, pattern in (
        ("dotted", _DOTTED),
        ("call", _CALL),
        ("camel", _CAMEL),
        ("snake", _SNAKE),
    ):
        for m in pattern.finditer(bare):
            token = m.group(1)
            if kind == "dotted" and (
                _PATH.fullmatch(token) or token.rsplit(".", 1)[-1].lower() in _HOST_SUFFIXES
            ):
                continue
            yield token, kind, m.start()


def extract_seeds(texts: list[str], limit: int = MAX_SEEDS) -> list[str]:
    """Seeds from the ticket and dossiers, de-duplicated, ranked, and at most ``limit``."""
    return _ranked(texts, min(limit, MAX_SEEDS))


def seed_candidates(texts: list[str], limit: int = MAX_SEARCHES) -> list[str]:
    """The same ranking as ``extract_seeds``, but up to ``MAX_SEARCHES`` long: retrieval searches
    these in order and keeps the first ``MAX_SEEDS`` that match the tree, so a local name from a
    user's snippet (``cherry.py``, ``http_client``) hands its slot to the next candidate instead
    of wasting it. The first ``MAX_SEEDS`` are exactly ``extract_seeds(texts)``."""
    return _ranked(texts, min(limit, MAX_SEARCHES))


def _ranked(texts: list[str], limit: int) -> list[str]:
    if limit <= 0:
        return []
    found: dict[str, _Candidate] = {}
    order = 0
    for text in texts:
        for raw, kind, _offset in _scan(text or ""):
            token = _clean(raw) if kind != "backtick" else raw.strip()
            if not _acceptable(token):
                continue
            key = token
            cand = found.get(key)
            if cand is None:
                cand = found[key] = _Candidate(token, _TIER[kind], first=order)
                order += 1
            cand.tier = min(cand.tier, _TIER[kind])
            cand.count += 1
    ranked = sorted(
        found.values(),
        key=lambda c: (c.tier, -min(c.count, 3), -_specificity(c.text), c.first),
    )
    seeds: list[str] = []
    lowered: set[str] = set()
    for cand in ranked:
        if cand.text.lower() in lowered:
            continue
        seeds.append(cand.text)
        lowered.add(cand.text.lower())
        if len(seeds) >= limit:
            break
    return seeds


def _specificity(token: str) -> int:
    """Longer identifiers with more parts are rarer in a codebase; capped so prose-length spans
    do not beat a crisp identifier."""
    parts = len(re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])|[./_]", token))
    return min(len(token), 32) + 2 * min(parts, 4)


_WORD = re.compile(r"(?<![\w./-])([A-Za-z][a-z]{4,})(?![\w/-])")
_PROSE_TEXT = """
    add added adding allow allows allowed always behavior behaviour better change changed changes
    check correct correctly current default display enable ensure expected failing fails failure
    feature handle handled handling improve incorrect instead invalid leave makes message missing
    multiple never option passed passing problem properly python raise raised remove removed
    report result right running shows something support supported there thing update updated
    value values version warning whether works wrong could would should these those their other
    """
PROSE_WORDS = STOPWORDS | frozenset(_PROSE_TEXT.split())


def extract_keywords(texts: list[str], seeds: list[str], limit: int) -> list[str]:
    """Plain words (5+ letters, not stopwords, not already inside a seed) for the searches left
    over once every seed had its turn: a ticket that names no identifier still names its topic
    (``pager``, ``metavar``). Ranked by frequency, then first appearance."""
    taken = " ".join(seeds).lower()
    counts: dict[str, int] = {}
    for text in texts:
        text = _EMAIL.sub(" ", _URL.sub(" ", (text or "")[:MAX_EXTRACT_TEXT_CHARS]))
        for m in _WORD.finditer(text):
            word = m.group(1).lower()
            if word in PROSE_WORDS or word in taken:
                continue
            counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts, key=lambda w: -counts[w])
    return ranked[: max(0, limit)]


def relaxed_variant(seed: str) -> str | None:
    """A looser query for a seed that found nothing: a path's basename, a dotted name's last part,
    a snippet's leading identifier. ``None`` when there is nothing looser worth a search."""
    candidates: list[str] = []
    if "/" in seed:
        candidates.append(seed.rsplit("/", 1)[-1])
    if "." in seed and "/" not in seed and " " not in seed:
        candidates.append(seed.rsplit(".", 1)[-1])
    if re.search(r"[\s(=]", seed):
        candidates.append(_clean(re.split(r"[\s(=]", seed, maxsplit=1)[0]))
    for cand in candidates:
        if cand != seed and _acceptable(cand):
            return cand
    return None
