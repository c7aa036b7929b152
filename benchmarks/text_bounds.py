"""Hostile text: seconds per extractor on its worst shapes, and the ratio to an older revision.

Each extractor (seed/keyword extraction, citation scraping, scrubbing, Slack mentions, reply
parsing) gets each worst shape (a unit repeated: ``a.``, ``a@``, ``TOKEN``, ``<@U|``...) at
``--size`` characters, with its input cap lifted so the regexes themselves are measured. With
``--before REF`` the same extractors as they were at ``REF`` run on the same inputs in the same
process, and the table reports the worst shape's time for both and their ratio; the current
code is also timed on a megabyte.

    python benchmarks/text_bounds.py --before a0a55f2   # ratios against the pre-fix code
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPES = (
    "a", "a.", "a/", "a-", "a_", "aB", "a@", "@a.", "a.a@", "a:", "a(", "`a", "```{", " \t",
    "a://b:", "#L1-", "<@U|", "TOKEN", "token=a", "sk-", "xoxb-", "eyJa.",
)  # fmt: skip

MODULES = {
    "seeds": "veranda_dagster/domain/context/seeds.py",
    "citations": "veranda_dagster/domain/deliver/citations.py",
    "redaction": "veranda_dagster/domain/core/redaction.py",
    "intake": "veranda_dagster/sources/slack/ticket.py",
    "review": "veranda_dagster/domain/deliver/review.py",
}


def _load(name: str, path: str, ref: str | None) -> types.ModuleType:
    """The module's source now (``ref`` None) or at ``ref``, executed as a fresh module: the
    cap is lifted on that copy, never on the module the product (and the tests sharing this
    process) import, which kept the lifted cap before."""
    if ref is None:
        source = (ROOT / path).read_text()
    else:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    module = types.ModuleType(f"{'now' if ref is None else 'before'}_{name}")
    sys.modules[module.__name__] = module
    exec(compile(source, f"{ref or 'now'}:{path}", "exec"), module.__dict__)
    return module


def extractors(ref: str | None) -> dict[str, Callable[[str], object]]:
    m = {name: _load(name, path, ref) for name, path in MODULES.items()}
    for capped in (m["seeds"], m["citations"]):
        if hasattr(capped, "MAX_EXTRACT_TEXT_CHARS"):
            capped.MAX_EXTRACT_TEXT_CHARS = 10**9  # measure the regexes, not the cap
    return {
        "seeds": lambda t: m["seeds"].extract_seeds([t]),
        "keywords": lambda t: m["seeds"].extract_keywords([t], [], 12),
        "citations": m["citations"].scrape_references,
        "scrub": lambda t: m["redaction"].scrub(t, ["known-secret"]),
        "slack_mentions": lambda t: m["intake"].mentions({"text": t}, "U1"),
        "review_reply": lambda t: _quiet(m["review"].parse_findings, t),
    }


def _quiet(fn: Callable[[str], object], text: str) -> object:
    """The old reply parser raised ValueError on an unclosed brace; time it all the same."""
    try:
        return fn(text)
    except ValueError:
        return None


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def worst(fn: Callable[[str], object], size: int) -> tuple[float, str]:
    timings = []
    for unit in SHAPES:
        text = _fill(unit, size)
        start = time.perf_counter()
        fn(text)
        timings.append((time.perf_counter() - start, unit))
    return max(timings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=40_000, help="characters per shape")
    parser.add_argument("--before", help="a git revision to compare with (e.g. main~10)")
    parser.add_argument(
        "--big", type=int, default=1_000_000, help="characters of the 'now @big' column"
    )
    args = parser.parse_args(argv)
    now = extractors(None)
    before = extractors(args.before) if args.before else {}
    print(
        f"worst shape per extractor at {args.size:,} characters, 'now @big' at {args.big:,} "
        "(seconds)"
    )
    header = f"{'extractor':<16}{'now':>9}{'now @big':>10}"
    print(header + (f"{'before':>10}{'ratio':>9}  worst shape before" if before else ""))
    for name, fn in now.items():
        spent, _ = worst(fn, args.size)
        big, _ = worst(fn, args.big)
        line = f"{name:<16}{spent:>9.3f}{big:>10.3f}"
        if before:
            old, unit = worst(before[name], args.size)
            line += f"{old:>10.3f}{old / max(spent, 1e-6):>8.0f}x  {unit!r}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
