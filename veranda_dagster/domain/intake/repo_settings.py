"""What a ticket does with a repository's command line and configuration: runs one of the
subcommands it declares (``celery worker``, ``poetry export``) or sets a key it documents
(``worker_prefetch_multiplier = 1``, ``export OTEL_SDK_DISABLED=true``).

Both are words that mean nothing alone (``run``, ``export``, ``timeout``), so each counts only
in the shape that makes it a use:

- a subcommand only run after a command some catalog repository is run by (``<command> <sub>``
  where a command starts, options between allowed: ``celery -A proj worker``), for the one
  repository that declares it when the command's own repositories do not and that extends the
  command (the umbrella's command with a plugin's subcommand: ``poetry export`` is
  poetry-plugin-export's), or for the one of several repositories run by the command that
  declares it;
- a configuration key only written as configuration (an assignment, a ``key = value`` /
  ``key: value`` line, a keyword argument, an environment variable set or read), and only when
  exactly one catalog repository documents it; a key that is one ordinary word (``timeout``,
  ``name``: no ``_``, ``-`` or ``.`` in it) counts only beside a second signal for the same
  repository.

Nothing here decides; ``repo_detection`` does.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from typing import Final

from veranda_dagster.domain.intake.catalog import Catalog, normalise

Adder = Callable[[str, str, int, int], None]
"""``(repo, kind, start, end)``: one use of a repository's term at ``text[start:end]``."""

MAX_OPTIONS_BEFORE_SUB: Final = 3
"""Options read between a command and its subcommand (``celery -A proj --quiet worker``): a
command line puts its global options there; past three it is no longer one command."""
_SUB_AFTER = re.compile(
    rf"(?:[ \t]+--?[A-Za-z][\w-]*(?:[ =](?!-)[^\s`'\"]+)?){{0,{MAX_OPTIONS_BEFORE_SUB}}}"
    r"[ \t]+([a-z][\w-]*)(?![\w-])"
)
_KEY_WRITTEN = re.compile(
    r"(?:^|(?<=[\s(,{\[\"'$]))([A-Za-z_][\w.-]*)[\"']?[ \t]*(?:=(?!=)|:(?![:=/]))", re.M
)
"""A key being set: ``key = 1``, ``key: 1``, ``app.conf.key = 1``, ``f(key=1)``, ``"key": 1``,
``export KEY=1``, ``KEY=1 cmd``. A key starts only after a space, a bracket, a comma, a quote or
``$``, never after a ``.``: a dotted name is taken whole from its first part and split by
``gather_setting_uses``, so a long dotted run is scanned once, not again from every dot (which
made a 20,000-character run of ``a.`` cost seconds)."""
_KEY_READ = re.compile(r"""(?:environ(?:\.get)?[\[(]|getenv\()[ \t]*["']([A-Za-z_]\w*)["']""")
"""An environment variable read: ``os.environ["KEY"]``, ``os.getenv("KEY")``."""


def subcommand_index(catalog: Catalog) -> dict[str, list[str]]:
    """subcommand (``normalise``d: ``list_templates`` is ``list-templates``) -> the repositories
    declaring it."""
    index: dict[str, list[str]] = defaultdict(list)
    for repo in catalog.repositories:
        for sub in repo.vocabulary.subcommands:
            if repo.full_name not in index[normalise(sub)]:
                index[normalise(sub)].append(repo.full_name)
    return index


def extends(catalog: Catalog, plugin: str, command: str) -> bool:
    """``plugin`` (a full name) extends the tool run as ``command``: its name has the command as
    a word (``poetry-plugin-export`` of ``poetry``, ``textual-dev`` of ``textual``) or it ships
    the command (``RepoVocabulary.ships``). An unrelated repository declaring the same word
    (pipx's ``list`` after ``pip``) is not the command's plugin: the host's own subcommands may
    simply be unread."""
    repo = catalog.by_full_name(plugin)
    if repo is None:
        return False
    words = re.split(r"[^a-z0-9]+", repo.name.lower())
    return command.lower() in words or command.lower() in repo.vocabulary.ships


def gather_subcommand_uses(
    text: str,
    starts: list[tuple[str, int, int]],
    commands: dict[str, list[str]],
    subcommands: dict[str, list[str]],
    add: Adder,
    related: Callable[[str, str], bool],
) -> None:
    """``<command> <sub>`` run where a command starts (``starts``: ``repo_usage.command_starts``;
    prose such as "Sentry sourcemaps upload failure" runs nothing) and ``commands`` (term ->
    repositories run by it) knows the command: the one repository that declares the subcommand
    when the command's own do not and that extends the command (``related(repo, command)``: the
    umbrella's command with a plugin's subcommand, ``poetry export``), or the one of several
    repositories run by the command that declares it. The command's only repository declaring
    it adds nothing its command did not already say."""
    if not subcommands:
        return
    seen: set[int] = set()
    for word, start, end in starts:
        command = word.rsplit("/", 1)[-1].lower()
        runners = commands.get(command, [])
        after = _SUB_AFTER.match(text, end) if runners and start not in seen else None
        seen.add(start)
        if after is None:
            continue
        declarers = subcommands.get(normalise(after.group(1)), [])
        own = [r for r in declarers if r in runners]
        chosen = own if len(runners) > 1 else []
        if not own and len(declarers) == 1 and related(declarers[0], command):
            chosen = declarers
        for repo in chosen:
            add(repo, "subcommand", start, after.end())


MIN_NAME_WORD_CHARS: Final = 3
"""A word of a repository's name that namespaces its environment variables (``PIPX_HOME``,
``OTEL_DOTNET_AUTO_HOME``); shorter parts (``io``, ``js``) are no namespace."""


def namespaced(key: str, name: str) -> bool:
    """An environment variable (``UPPER_SNAKE``) is a tool's own when it carries a word of the
    tool's name (``PIPX_HOME`` of pipx, ``FLASK_DEBUG`` of flask). Without one it is a
    convention many tools read (``HTTP_PROXY``, ``OTEL_SERVICE_NAME``, ``PIP_INDEX_URL`` in
    build's docs, ``SECRET_KEY``): documented by one repository of the catalog is no proof that
    only it reads it. A lower-case key (``worker_prefetch_multiplier``) is the tool's own."""
    if not key.isupper():
        return True
    words = {w for w in re.split(r"[^a-z0-9]+", name.lower()) if len(w) >= MIN_NAME_WORD_CHARS}
    return bool(words & set(key.lower().split("_")))


def settings_index(catalog: Catalog) -> dict[str, list[str]]:
    """configuration key (lower-cased) -> the repositories documenting it; an environment
    variable only under the repository whose name it carries (``namespaced``)."""
    index: dict[str, list[str]] = defaultdict(list)
    for repo in catalog.repositories:
        for key in repo.vocabulary.settings:
            if namespaced(key, repo.name) and repo.full_name not in index[key.lower()]:
                index[key.lower()].append(repo.full_name)
    return index


def ordinary_word(key: str) -> bool:
    """``timeout``, ``name``, ``deps``: one word, no ``_``, ``-`` or ``.`` joining words."""
    return not re.search(r"[_.-]", key.strip("_"))


def gather_setting_uses(
    text: str,
    settings: dict[str, list[str]],
    add: Adder,
    seconded: Callable[[str], bool],
) -> None:
    """Keys written as configuration that exactly one repository documents (``settings``:
    ``settings_index``); an ordinary word only for a repository ``seconded`` (that has a second
    signal of its own in the ticket) or with a compound key of its own beside it."""
    if not settings:
        return
    found: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for pattern in (_KEY_WRITTEN, _KEY_READ):
        for m in pattern.finditer(text):
            key, start = m.group(1), m.start(1)
            if key.lower() not in settings and "." in key:  # ``app.conf.task_acks_late``
                prefix, _, key = key.rpartition(".")
                start += len(prefix) + 1
            repos = settings.get(key.lower(), [])
            if len(repos) == 1:
                found[repos[0]].append((key, start, start + len(key)))
    for repo, uses in found.items():
        compound = any(not ordinary_word(key) for key, _, _ in uses)
        for key, start, end in uses:
            if not ordinary_word(key) or compound or seconded(repo):
                add(repo, "setting", start, end)
