import pytest

from veranda_dagster.domain.context.seeds import (
    MAX_SEED_LEN,
    extract_keywords,
    extract_seeds,
    relaxed_variant,
    seed_candidates,
)
from veranda_dagster.domain.core.bounds import MAX_SEARCHES, MAX_SEEDS


def test_nine_distinct_seeds_are_capped_at_exactly_eight():
    text = " ".join(f"`ident_number_{i}`" for i in range(9))
    seeds = extract_seeds([text])
    assert len(seeds) == MAX_SEEDS == 8
    assert seeds == [f"ident_number_{i}" for i in range(8)]


def test_exactly_eight_are_all_kept_and_a_higher_limit_cannot_lift_the_bound():
    text = " ".join(f"`ident_number_{i}`" for i in range(8))
    assert len(extract_seeds([text])) == 8
    many = " ".join(f"`ident_number_{i}`" for i in range(20))
    assert len(extract_seeds([many], limit=50)) == 8
    assert len(extract_seeds([many], limit=3)) == 3


def test_every_kind_is_extracted():
    text = (
        "Calling `retry_after()` in src/http/retry.py fails; parseRetryAfter and HttpService "
        "disagree with client.session.get and MAX_RETRY_AFTER_S."
    )
    seeds = extract_seeds([text])
    assert set(seeds) == {
        "retry_after",
        "src/http/retry.py",
        "parseRetryAfter",
        "HttpService",
        "client.session.get",
        "MAX_RETRY_AFTER_S",
    }


def test_backticked_and_paths_rank_before_bare_identifiers():
    text = "the parseRetryAfter helper and snake_case_name in `Widget` near lib/widget.py"
    seeds = extract_seeds([text])
    assert seeds[:2] == ["lib/widget.py", "Widget"] or seeds[:2] == ["Widget", "lib/widget.py"]
    assert seeds.index("parseRetryAfter") > 1


def test_frequency_then_specificity_break_ties():
    text = "fooBarBaz once. abcDef abcDef abcDef. averyLongCamelIdentifier once."
    seeds = extract_seeds([text])
    assert seeds[0] == "abcDef"
    assert seeds.index("averyLongCamelIdentifier") < seeds.index("fooBarBaz")


def test_stopwords_short_tokens_versions_and_urls_are_dropped():
    text = (
        "`id` `db` `this` `None` v1.2.3 and/or see https://github.com/acme/api/blob/main/x.py "
        "e.g. i.e. `the`"
    )
    assert extract_seeds([text]) == []


def test_duplicates_collapse_case_insensitively_across_texts():
    seeds = extract_seeds(["`HttpService` is broken", "httpService and HttpService again"])
    assert [s.lower() for s in seeds].count("httpservice") == 1


def test_traceback_paths_become_repo_relative():
    tb = 'File "/usr/lib/python3.11/site-packages/requests/adapters.py", line 12, in send_request'
    seeds = extract_seeds([tb])
    assert "requests/adapters.py" in seeds
    assert "send_request" in seeds


def test_long_backticked_code_contributes_its_identifiers():
    code = "`for item in queue_items: result = process_item(item); total_count += result.value`"
    seeds = extract_seeds([code])
    assert "process_item" in seeds and "queue_items" in seeds
    assert "item" not in seeds and "for" not in seeds


def test_prose_slashes_are_not_paths():
    assert extract_seeds(["read and/or write, input/output"]) == []
    assert extract_seeds(["see src/http for details"]) == ["src/http"]


def test_relaxed_variants():
    assert relaxed_variant("src/http/retry.py") == "retry.py"
    assert relaxed_variant("client.session.get_user") == "get_user"
    assert relaxed_variant("process_item(item)") == "process_item"
    assert relaxed_variant("parseRetryAfter") is None


def test_calls_private_names_emails_hosts_and_changelogs():
    text = (
        "Fix _pipepager()/_tempfilepage() and echo() per CHANGES.rst; "
        "Co-authored-by: A <a.b@users.noreply.github.com>, see deldycke.com"
    )
    assert extract_seeds([text]) == ["_tempfilepage", "_pipepager", "echo"]


def test_keywords_are_plain_topic_words_not_already_seeds():
    texts = ["Pager breaks the pager on Windows", "`pager_cmd` is wrong; the metavar shows"]
    seeds = extract_seeds(texts)
    assert seeds == ["pager_cmd"]
    assert extract_keywords(texts, seeds, 12) == ["breaks", "windows", "metavar"]
    assert extract_keywords(texts, seeds, 1) == ["breaks"]


def test_candidates_extend_the_seeds_and_are_capped_at_exactly_twelve():
    text = " ".join(f"`ident_number_{i:02d}`" for i in range(13))
    candidates = seed_candidates([text])
    assert len(candidates) == MAX_SEARCHES == 12
    assert candidates == [f"ident_number_{i:02d}" for i in range(12)]
    assert candidates[:MAX_SEEDS] == extract_seeds([text])
    assert len(seed_candidates([text], limit=50)) == 12
    assert seed_candidates([text], limit=0) == [] == extract_seeds([text], limit=0)


def test_an_identifier_of_the_seed_bound_is_a_seed_and_one_longer_is_not():
    """``MAX_SEED_LEN``: a bare identifier of exactly the bound is a seed; one character longer
    it is a pasted blob, not a name anyone searches for."""
    name = "parse_" + "x" * (MAX_SEED_LEN - 6)
    assert extract_seeds([name]) == [name]
    assert extract_seeds([name + "y"]) == []


@pytest.mark.parametrize("length", [MAX_SEED_LEN, MAX_SEED_LEN + 1])
def test_a_backticked_span_past_the_seed_bound_contributes_its_identifiers(length):
    """``MAX_SEED_LEN`` for a backticked span: at the bound it is a snippet searched whole (with
    its head); one character longer it is code, and only the identifiers in it are seeds."""
    text = ("fetch_user with retry_token " * 10)[: length - 1].rstrip()
    span = text + "x" * (length - len(text))
    assert len(span) == length
    seeds = extract_seeds([f"`{span}`"])
    if length <= MAX_SEED_LEN:
        assert seeds[:2] == [span, "fetch_user"]
    else:
        assert span not in seeds and {"fetch_user", "retry_token"} <= set(seeds)
