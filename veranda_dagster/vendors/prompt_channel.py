"""How a prompt reaches a vendor CLI: on its stdin, or in a file its argv names.

Never as a command-line argument: Linux refuses any one argument over 128 KiB (``E2BIG``), so a
ticket that large used to kill every model phase. Claude Code, Codex, Gemini and opencode read
the prompt from stdin; Grok reads ``--prompt-file``; Kimi and Cursor take text only through
``-p``/the argv, so they get a short pointer naming the file that holds the whole prompt (their
agents read files with their own tools). The file lives in the clone's ``.git`` folder (the
agent can read it, git never tracks it) or, outside a git checkout, hidden in the workdir; it
exists only for the turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

PromptChannel = Literal["stdin", "file"]

PROMPT_FILE_IN_GIT = "veranda-prompt.md"
PROMPT_FILE_HIDDEN = ".veranda-prompt.md"
MAX_ROLE_LINE_CHARS = 80
"""Only a short ``Role:`` first line is repeated in a pointer (the seat the prompt names)."""


def prompt_file_path(workdir: str) -> Path:
    """Where a turn's prompt file goes: pure, so an argv builder can name it before staging."""
    git = Path(workdir) / ".git"
    return git / PROMPT_FILE_IN_GIT if git.is_dir() else Path(workdir) / PROMPT_FILE_HIDDEN


def pointer_prompt(prompt: str, path: Path) -> str:
    """A short prompt for a CLI that takes text only as an argument: the seat's ``Role:`` line
    (every product prompt opens with one) and where the whole prompt is."""
    first = prompt.split("\n", 1)[0]
    role = first if first.startswith("Role:") and len(first) <= MAX_ROLE_LINE_CHARS else ""
    pointer = (
        f"Your complete instructions ({len(prompt)} characters) are in the file {path}. "
        "Read all of that file with your file-reading tool before anything else, then follow "
        "it exactly; it is the task, this line only says where it is."
    )
    return f"{role}\n{pointer}" if role else pointer


def stage_prompt_file(path: Path, prompt: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(prompt, encoding="utf-8")
    return path


def argv_bytes(argv: list[str]) -> int:
    """What the kernel counts for an argv: each argument's bytes plus its terminating NUL."""
    return sum(len(a.encode("utf-8", "surrogateescape")) + 1 for a in argv)
