"""The lines of a bug report that a template or the reporter's setup wrote, not the bug.

Issue templates and reporters' habits put three things in a report whatever the bug is:

- a **task list** (``- [x] I have searched the issues…``, ``* [ ] This is a bug report``): the
  reporter ticks boxes; the names in them (a search site, a web framework, the project's own
  name) say nothing about where the fix goes;
- an **environment block**: consecutive ``Name: value`` lines giving versions and the platform
  (``Python: 3.12.3``, ``OpenSSL: OpenSSL 3.5.4``, ``Platform: Linux-6.17-x86_64``, a library's
  ``version_info()`` print-out). A platform tag such as ``x86_64`` then matches the project's
  release scripts, and the version words outweigh the prose in the full-text ranking;
- the **setup commands** a reporter ran to show that setup: a command that prints a version
  (``python -c "import pkg.utils; print(pkg.utils.version_info())"``, which a template asks
  for above its print-out, ``tool --version``), and a package installer's command and log
  (``pip install -U pkg``, ``Requirement already satisfied: … site-packages``). Their module
  paths and package names then read as the report's names and rank the version module and
  the packaging scripts first.

A block counts only when at least ``MIN_VERSION_LINES`` of its lines carry a version or a
platform, so a snippet of annotated fields (``name: str``) is never one, and an exception line
(``ValueError: 1.5 is not valid``) is never part of one: it is the report's error message. A
setup command counts only as a whole command (after a shell prompt, or a whole backticked
span): a prose mention of ``pkg.version`` or of installing is the report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from veranda_dagster.domain.core.bounds import MAX_EXTRACT_TEXT_CHARS

MIN_VERSION_LINES: Final = 2
"""Lines of a ``Name: value`` run that must name a version or a platform for the run to be an
environment block: one such line is as often a sentence (``Fixed in: 3.2``) as a setup."""
MAX_KEY_CHARS: Final = 40
"""The longest name of an environment line (``optional deps. installed``, ``Version of
Python``); longer text before a colon is a sentence."""

_KEY_VALUE = re.compile(
    rf"^\s*(?:[-*+]\s+)?(?:\*\*)?[A-Za-z][\w .()/-]{{0,{MAX_KEY_CHARS - 1}}}?"
    r"(?:\*\*)?[ \t]*:[ \t]+\S"
)
_VERSION_OR_PLATFORM = re.compile(
    r"\d+\.\d+|x86_64|amd64|arm64|aarch64|\b(?:Linux|Darwin|Windows|macOS)\b"
)
_EXCEPTION_LINE = re.compile(rf"^\s*[\w.]{{0,{MAX_KEY_CHARS}}}?(?:Error|Exception|Warning)[ \t]*:")
"""An exception line (``pkg.errors.ParseError: …``) among ``Name: value`` lines. It is only
asked of lines whose name fits ``MAX_KEY_CHARS``, so the same bound keeps its work per line
small and reads every exception name such a line can hold."""
_TASK_ITEM = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s")
MAX_COMMAND_CHARS: Final = 300
"""The longest setup command read (a one-liner printing a version is under 100 characters):
past it the text is not a command, and the patterns' work per line stays bounded."""
MIN_LOG_LINES: Final = 2
"""Consecutive installer lines that make a pasted install log: one line starting ``Collecting``
or ``Downloading`` is as often the report's own sentence."""
_PROMPT = r"(?:[$%\u276f>]|PS [^>\n]{0,80}>|\(\w[\w.-]{0,40}\)\s*[$%\u276f>])"
"""A shell prompt: ``$``, ``%``, ``>``, a themed shell's arrow (U+276F), PowerShell's, a
virtualenv's ``(env) $``. Not ``#``: at a line's start it is a heading."""
_VERSION_COMMAND = (
    r"[\w./-]+(?:\s+-m\s+[\w.]+)?\s+(?:--version|-V)(?![\w-])"
    r"|[\w./-]*python[\w.]*\s+-c\s+[\"'][^\"'\n]*(?i:version)[^\"'\n]*[\"']"
)
"""A command that prints a version: ``tool --version`` (``-V``), or a one-liner (``-c``) whose
code names a version (``version_info()``, ``sys.version``, ``pkg.VERSION``)."""
_INSTALL_COMMAND = (
    r"(?:[\w./-]*python[\w.]*\s+-m\s+)?(?:pip[\d.]*|uv\s+pip|conda|mamba|pipx|poetry|npm|yarn)"
    r"\s+(?:install|add|update|upgrade)\b"
)
"""A package installer's install command, typed at a prompt: the reporter showing what they
installed. In backticks it is prose (``pip install pkg[extra]`` misses a dependency)."""
_SETUP_COMMAND = re.compile(
    rf"^\s*{_PROMPT}\s*(?:{_VERSION_COMMAND}|{_INSTALL_COMMAND})[^\n]{{0,{MAX_COMMAND_CHARS}}}$"
    rf"|`\s*(?:{_VERSION_COMMAND})\s*`\s*:"
)
"""A setup command at a prompt, or a backticked version command introducing its output (a
template's ``Output of `pkg --version`:``); a backticked one in a sentence is the report."""
_INSTALLER_LOG = re.compile(
    r"^\s*(?:Requirement already (?:satisfied|up-to-date)|Collecting|Downloading|Using cached"
    r"|Installing collected packages|Successfully (?:installed|built|uninstalled)"
    r"|Building wheels? for|Created wheel for|Stored in directory|Found existing installation"
    r"|Attempting uninstall|Uninstalling|Obtaining|Preparing metadata|Installing build dependencies"
    r"|Getting requirements to build)\b"
)
"""A package installer's progress lines (pip's): what was installed, from where, not the bug."""


def _runs(
    lines: list[str], member: Callable[[str], object], keep: Callable[[list[str]], bool]
) -> set[int]:
    """Indices of the runs of consecutive lines that are ``member``s and that ``keep`` accepts
    as a whole (long enough, or holding enough versions)."""
    found: set[int] = set()
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and member(lines[end]):
            end += 1
        if end > start and keep(lines[start:end]):
            found.update(range(start, end))
        start = max(end, start + 1)
    return found


def _names_versions(run: list[str]) -> bool:
    """An environment block: at least ``MIN_VERSION_LINES`` of its lines name a version or a
    platform."""
    return sum(1 for line in run if _VERSION_OR_PLATFORM.search(line)) >= MIN_VERSION_LINES


def _in_block(line: str) -> bool:
    return bool(
        _KEY_VALUE.match(line) and not _TASK_ITEM.match(line) and not _EXCEPTION_LINE.match(line)
    )


def boilerplate_lines(text: str) -> set[int]:
    """Indices (in ``text.split("\\n")``) of the task-list items, setup commands, install-log runs
    and environment-block lines among the first ``MAX_EXTRACT_TEXT_CHARS`` characters; what lies
    past them is read as it is."""
    lines = text[:MAX_EXTRACT_TEXT_CHARS].split("\n")
    found = {i for i, line in enumerate(lines) if _TASK_ITEM.match(line)}
    found |= {i for i, line in enumerate(lines) if _SETUP_COMMAND.search(line)}
    found |= _runs(lines, _INSTALLER_LOG.match, lambda run: len(run) >= MIN_LOG_LINES)
    found |= _runs(lines, _in_block, _names_versions)
    return found


def split_boilerplate(text: str) -> tuple[str, str]:
    """``(report, boilerplate)``: the text without its boilerplate lines, and those lines."""
    drop = boilerplate_lines(text)
    if not drop:
        return text, ""
    lines = text.split("\n")
    kept = [line for i, line in enumerate(lines) if i not in drop]
    return "\n".join(kept), "\n".join(lines[i] for i in sorted(drop))
