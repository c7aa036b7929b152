"""Which code search a pack uses: the clone's own, whenever there is a clone.

A forge's hosted code index is rate-limited per token (one large forge: 10 a minute), shared by
every run holding the token. A pack that spent it made the next ticket of the same minute wait
~50 s in ``context_pack`` for searches the clone it already holds answers locally in about a
second (``LocalGitGrep``: the same case-insensitive fixed-string matches, plus the traceback
frames and full-text ranking only a clone can give). So with a clone present the pack searches
locally and touches no budget; the forge's index is the fallback for a pack without one, and
there it is planned within what the shared budget has free *now* (``_pack``), never slept on.
The choice is recorded in the pack (``ContextPack.search_index``) and the phase's metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from veranda_dagster.domain.context.code_search import CodeSearch, LocalGitGrep
from veranda_dagster.domain.context.seeds import relaxed_variant
from veranda_dagster.domain.core.bounds import MAX_SEARCHES
from veranda_dagster.domain.intake.ticket_signals import error_messages

SearchIndex = Literal["local_clone", "forge_index"]
"""What answered a pack's searches: the clone (``git grep`` and the in-memory index) or the
forge's hosted code index."""


def has_clone(repo_dir: str | Path | None) -> bool:
    """A checked-out clone with its own git directory (what ``Workspace.ensure`` leaves)."""
    return repo_dir is not None and (Path(repo_dir) / ".git").is_dir()


def search_for_pack(
    search: CodeSearch, repo_dir: str | Path | None, base_sha: str
) -> tuple[CodeSearch, SearchIndex]:
    """The search the pack runs and what it is: the clone's, pinned to ``base_sha`` (the
    default branch's commit, so a resumed run whose work branch moved still cites the base),
    when there is a clone; else the forge's ``search`` as given."""
    if isinstance(search, LocalGitGrep):
        return search.at(base_sha), "local_clone"
    if has_clone(repo_dir):
        assert repo_dir is not None
        return LocalGitGrep(repo_dir, base_sha), "local_clone"
    return search, "forge_index"


def likely_queries(candidates: list[str], keywords: list[str], ticket_text: str) -> list[str]:
    """What a pack may search, most likely first, for a search that can answer many queries in
    one read (``LocalGitGrep.prefetch``): the first ``MAX_SEARCHES`` seed candidates, their
    relaxed variants, the ticket's words and its error messages. A pack searches at most
    ``MAX_SEARCHES`` of them; one not listed here is only slower, never different."""
    firsts = candidates[:MAX_SEARCHES]
    variants = [v for c in firsts if (v := relaxed_variant(c))]
    messages = error_messages(ticket_text)[:MAX_SEARCHES]
    return list(dict.fromkeys([*firsts, *variants, *keywords[:MAX_SEARCHES], *messages]))


def prefetch_queries(search: CodeSearch, queries: list[str]) -> None:
    """Hand ``queries`` to a search that reads the tree once for many (``prefetch``); no-op
    for any other (a forge's hosted index answers one query per request)."""
    prefetch = getattr(search, "prefetch", None)
    if callable(prefetch):
        prefetch(queries)
