"""``paging.newest_first``: page 1, then the newest pages down to the bound; a forge that does
not say how many pages it has is walked forward, and a cut is named either way."""

from veranda_dagster.http.paging import Page, newest_first


def pages_of(total: int, say_total: bool):
    read: list[int] = []

    def read_page(n: int) -> Page:
        read.append(n)
        return [{"page": n}], (total if say_total else None), n < total

    return read_page, read


def test_the_newest_pages_are_read_and_the_skipped_middle_named():
    read_page, read = pages_of(15, say_total=True)
    listing = newest_first(read_page, 10, "x")
    assert read == [1, 15, 14, 13, 12, 11, 10, 9, 8, 7]  # 10 reads: the bound
    assert [i["page"] for i in listing.items] == [1, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    assert listing.truncated == (
        "x: 15 pages, over the bound of 10; read the first and the newest 9, "
        "skipped 5 older page(s) between them"
    )


def test_within_the_bound_every_page_is_read_and_nothing_is_said():
    read_page, read = pages_of(10, say_total=True)
    listing = newest_first(read_page, 10, "x")
    assert sorted(read) == list(range(1, 11)) and listing.truncated is None
    read_page, read = pages_of(1, say_total=True)
    assert newest_first(read_page, 10, "x").items == [{"page": 1}] and read == [1]


def test_a_forge_that_does_not_count_its_pages_is_walked_forward_and_the_cut_named():
    read_page, read = pages_of(12, say_total=False)
    listing = newest_first(read_page, 10, "x")
    assert read == list(range(1, 11))
    assert listing.truncated == "x: more than 10 pages; later pages not read"
    read_page, _ = pages_of(3, say_total=False)
    assert newest_first(read_page, 10, "x").truncated is None
