"""A merged text does not depend on the merge history: its "; " / "；" parts are sentences (a member that
is itself a merge repeats nothing), a sentence a longer one says adds nothing in either order, and
merging A, B then C gives what merging A, B, C gives."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
import pytest

import memkit as mk
from memkit.errors import ValidationError
from memkit.merge_rule import merge_content, remerge

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_merged_member_repeats_nothing() -> None:
    assert merge_content("用户喜欢喝美式咖啡", ["用户喜欢喝冰美式咖啡；用户喜欢喝美式咖啡"]) == (
        "用户喜欢喝美式咖啡；用户喜欢喝冰美式咖啡"
    )
    assert merge_content("Lives in Paris", ["Works at a bank; Lives in Paris."]) == (
        "Lives in Paris; Works at a bank"
    )


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("User walks the dog", "User walks the dog daily"),
        ("用户喜欢喝美式咖啡", "用户喜欢喝美式咖啡，少加糖"),
    ],
)
def test_a_sentence_a_longer_one_says_adds_nothing_in_either_order(short: str, long: str) -> None:
    sep = "；" if short[0] > "~" else "; "
    assert merge_content(short, [long]) == long
    assert merge_content(long, [short]) == long
    assert merge_content(short + sep + long, []) == long
    assert merge_content(long + sep + short, []) == long
    # a negated or otherwise altered longer sentence says nothing of the run: both stay
    assert merge_content("Not allergic to peanuts", ["Allergic to peanuts"]) == (
        "Not allergic to peanuts; Allergic to peanuts"
    )


def _row(i: int, text: str) -> dict[str, Any]:
    return {"id": f"m{i}", "content": text, "importance": 0.5, "created_at": T0 + timedelta(hours=i)}


def _merge(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The merged memory of ``rows`` as the store makes it (the rule's text; created_at the min)."""
    survivor, content = remerge(pl.DataFrame(rows))
    return {"id": f"x{survivor}", "content": content, "importance": 0.5,
            "created_at": min(r["created_at"] for r in rows)}  # fmt: skip


def _sentences(text: str) -> list[str]:
    return sorted(s.strip(" .。") for s in re.split(r"[;；]|\.\s", text) if s.strip(" .。"))


GROUPS = [
    ["User walks the dog", "User walks the dog daily", "User walks the dog; User feeds the cat"],
    ["用户喜欢喝美式咖啡", "用户喜欢喝冰美式咖啡", "用户喜欢喝美式咖啡，少加糖"],
    ["用户喜欢喝冰美式咖啡；用户喜欢喝美式咖啡", "用户喜欢喝美式咖啡", "用户住在杭州"],
    ["Lives in Hangzhou", "Lives in Hangzhou. Works at a bank", "Works at a bank"],
]


@pytest.mark.parametrize("texts", GROUPS)
def test_merging_in_steps_gives_what_merging_at_once_gives(texts: list[str]) -> None:
    """The same sentences, each once; the same text too while the survivor is the same (a merge of
    two may out-inform the third where that one was the survivor at once: then the order differs)."""
    for order in itertools.permutations(texts):
        a, b, c = (_row(i, t) for i, t in enumerate(order))
        at_once = _merge([a, b, c])
        assert len(set(_sentences(at_once["content"]))) == len(_sentences(at_once["content"])), order
        for steps in (_merge([_merge([a, b]), c]), _merge([a, _merge([b, c])]), _merge([_merge([a, c]), b])):
            assert _sentences(steps["content"]) == _sentences(at_once["content"]), order
            if steps["id"].lstrip("x") == at_once["id"].lstrip("x"):  # one survivor: one text
                assert steps["content"] == at_once["content"], order


def test_store_merge_of_a_merge_repeats_nothing(store: mk.MemoryStore) -> None:
    h = timedelta(hours=1)
    store.add("用户喜欢喝美式咖啡", namespace="u", now=T0)
    store.add("用户喜欢喝冰美式咖啡", namespace="u", now=T0 + h)
    first = store.consolidate("u", now=T0 + 2 * h)["content"].to_list()
    assert first == ["用户喜欢喝冰美式咖啡；用户喜欢喝美式咖啡"]
    store.add("用户喜欢喝美式咖啡", namespace="u", now=T0 + 3 * h)
    plan = store.consolidate("u", now=T0 + 4 * h, params=mk.MergeParams(threshold=0.5))
    assert plan["content"].to_list() in ([], first)  # merged again or not: never 美式咖啡 twice


def test_merge_content_bad_input_is_named() -> None:
    with pytest.raises(ValidationError, match="survivor"):
        merge_content(None, [])  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="others"):
        merge_content("x", "y")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="others"):
        merge_content("x", [1])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("survivor", "other"),
    [
        ("Lives in Paris.", "Lives in Paris, but not anymore."),
        ("Lives in Paris.", "Used to live in Paris; lives in Paris no more."),
        ("Drinks coffee.", "Drinks coffee no longer."),
        ("用户住在杭州。", "用户住在杭州，现在不住了。"),
        ("用户喝咖啡。", "用户不再喝咖啡了。"),
    ],
)
def test_a_sentence_saying_the_fact_has_ceased_does_not_replace_it(survivor: str, other: str) -> None:
    # the review of ec6e90b: a later sentence that says the survivor's fact no longer holds covers the
    # survivor's words but not what it says: both stay
    merged = merge_content(survivor, [other])
    assert survivor.rstrip("。.") in merged and merged != other
