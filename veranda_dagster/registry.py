"""One plugin shape for model vendors, ticket sources and forges: a table of declarations by
name that refuses an incomplete one, and finds the built-in plugins of its package.

The idea used to be built three times (a vendor registry, a source registry with its own
``missing_pieces`` and load guard, forge rows in a central module), each with its own way to
fail; here it is built once. A plugin is a module of the kind's package (a vendor,
``vendors/plugins/<name>.py``) or a folder of it whose ``plugin.py`` declares it (a source,
``sources/<name>/plugin.py``; a forge, ``forges/<name>/plugin.py``). Its declaration is the
module's ``PLUGIN`` attribute: importing a plugin registers nothing, so import order cannot
matter and no package ``__init__`` does work. ``discover`` is the one place registration
happens; every read discovers first (once), so no reader sees half the plugins.

A declaration missing a piece, named for another plugin than its folder, or owning a name
twice is a ``ConfigError`` saying what is wrong, since each such omission used to fail
silently (a pin re-routed, a turn recorded at $0, a Jira key read as Linear's).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Literal, TypeVar

from veranda_dagster.domain.core.errors import ConfigError

T = TypeVar("T")

PLUGIN_ATTRIBUTE = "PLUGIN"
"""The module attribute a plugin's declaration is read from."""

PLUGIN_MODULE = "plugin"
"""The module of a plugin folder that declares it."""


def no_conflicts(items: Sequence[object]) -> list[str]:
    """The default whole-table check: plugins of the kind never conflict with each other."""
    return []


class Registry(Mapping[str, T]):
    """``name -> declaration`` for one kind of plugin; reading it discovers the built-in ones.

    A ``Mapping``: ``registry[name]`` raises ``KeyError`` like any mapping, ``require(name)`` a
    ``ConfigError`` naming the choices, for a name that came from a person."""

    def __init__(
        self,
        kind: str,
        package: str,
        *,
        name_of: Callable[[T], str],
        missing_pieces: Callable[[T], list[str]],
        folders: bool = True,
        conflicts: Callable[[Sequence[T]], list[str]] = no_conflicts,
    ) -> None:
        self.kind = kind
        """What a plugin of this registry is called in a message (``ticket source``)."""
        self.package = package
        """The dotted package whose modules (or folders) are the built-in plugins."""
        self.name_of = name_of
        self.missing_pieces = missing_pieces
        """What a declaration lacks or gets wrong, in words a reader can act on; ``[]``: none."""
        self.folders = folders
        """Each plugin is a folder declared by its ``plugin.py`` (else one module each)."""
        self.conflicts = conflicts
        """What the whole table gets wrong (two sources owning one key), checked after discovery."""
        self._items: dict[str, T] = {}
        self._state: Literal["empty", "loading", "loaded"] = "empty"

    def register(self, item: T) -> T:
        """Add ``item``; one missing a piece, or a name already taken, is refused."""
        name = self.name_of(item)
        missing = self.missing_pieces(item)
        if missing:
            raise ConfigError(f"{self.kind} {name!r} is incomplete: {'; '.join(missing)}")
        if name in self._items:
            raise ConfigError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item
        return item

    def plugin_names(self) -> tuple[str, ...]:
        """The built-in plugins by name, from a directory listing (nothing is imported)."""
        package = importlib.import_module(self.package)
        return tuple(
            sorted(
                m.name
                for m in pkgutil.iter_modules(package.__path__)
                if m.ispkg == self.folders and not m.name.startswith("_")
            )
        )

    def discover(self) -> None:
        """Register every built-in plugin once, then check the table as a whole.

        A plugin module that reads this registry while the plugins load would see half of them;
        that is refused, not tolerated."""
        if self._state == "loaded":
            return
        if self._state == "loading":
            raise ConfigError(
                f"a {self.kind} plugin reads the {self.kind} registry while the plugins load; "
                "declare PLUGIN from its own module's names and read nothing derived"
            )
        self._state = "loading"
        try:
            for name in self.plugin_names():
                self._register_module(name)
            wrong = self.conflicts(list(self._items.values()))
            if wrong:
                raise ConfigError("; ".join(wrong))
        except BaseException:
            self._state = "empty"
            raise
        self._state = "loaded"

    def _register_module(self, name: str) -> None:
        dotted = f"{self.package}.{name}" + (f".{PLUGIN_MODULE}" if self.folders else "")
        where = dotted.replace(".", "/") + ".py"
        declared = getattr(importlib.import_module(dotted), PLUGIN_ATTRIBUTE, None)
        if declared is None:
            raise ConfigError(f"{where} declares no {PLUGIN_ATTRIBUTE} (its {self.kind})")
        if self.name_of(declared) != name:
            raise ConfigError(
                f"{where} declares the {self.kind} {self.name_of(declared)!r}, not {name!r}"
            )
        if self._items.get(name) is not declared:
            self.register(declared)

    def require(self, name: str) -> T:
        """The plugin ``name``; an unknown one is a ``ConfigError`` naming the choices."""
        try:
            return self[name]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} {name!r} (known: {', '.join(self)})") from None

    def __getitem__(self, name: str) -> T:
        self.discover()
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        self.discover()
        return iter(sorted(self._items))

    def __len__(self) -> int:
        self.discover()
        return len(self._items)
