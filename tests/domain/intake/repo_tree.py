"""A repository's files as a dict, for the catalog's readers (vocabulary, definitions,
subcommands, configuration keys): folders derived from the paths, every ask counted."""

from __future__ import annotations


class Tree:
    """A repository's files as a dict, folders derived from the paths; counts reads."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files, self.reads = files, 0

    def read(self, path: str) -> str | None:
        self.reads += 1
        return self.files.get(path)

    def listdir(self, path: str) -> list[str] | None:
        self.reads += 1
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        heads = {
            n[len(prefix) :].partition("/")[0] + ("/" if "/" in n[len(prefix) :] else "")
            for n in self.files
            if n.startswith(prefix)
        }
        return sorted(heads) or None

    def root(self) -> list[str]:
        return self.listdir("") or []
