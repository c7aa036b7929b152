"""Walking a forge's oldest-first, page-numbered list so that its newest items survive the
page bound, and saying so when the bound cut it.

A PR's comment lists are oldest first on both forges (GitHub's issue comments cannot be sorted,
GitLab's discussions neither), and anyone can add to them: 1,050 spam comments used to push a
reviewer's newest comment past the last page read, silently. So page 1 is read first (it tells
how many pages there are: GitHub's ``Link: rel="last"``, GitLab's ``x-total-pages``), then the
last page and backwards until the bound; what was skipped is the *older* middle, and the result
names it in ``truncated``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Page = tuple[list[dict[str, Any]], int | None, bool]
"""One page read: its items, the total number of pages if the forge says, whether a next page
exists."""


@dataclass(frozen=True)
class Listing:
    items: list[dict[str, Any]]
    """Oldest first, as the forge orders them."""
    truncated: str | None = None
    """What the page bound left out, in words; ``None`` when every page was read."""


def newest_first(read_page: Callable[[int], Page], max_pages: int, what: str) -> Listing:
    """Pages 1 and N, N-1, ... of a list, ``max_pages`` reads at most. A forge that does not
    say how many pages there are is walked forward, and a cut there is named too."""
    first, total, more = read_page(1)
    if total is None:
        pages, number = [first], 1
        while more and number < max_pages:
            number += 1
            items, _, more = read_page(number)
            pages.append(items)
        cut = f"{what}: more than {max_pages} pages; later pages not read" if more else None
        return Listing([i for page in pages for i in page], cut)
    lowest = max(2, total - max_pages + 2)
    newer = [read_page(number)[0] for number in range(total, lowest - 1, -1)]
    items = first + [i for page in reversed(newer) for i in page]
    skipped = lowest - 2
    cut = None
    if skipped > 0:
        cut = (
            f"{what}: {total} pages, over the bound of {max_pages}; read the first and the "
            f"newest {max_pages - 1}, skipped {skipped} older page(s) between them"
        )
    return Listing(items, cut)
