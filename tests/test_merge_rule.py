"""The merge rule (memkit.merge_rule): a merged memory's strength, never stronger at ``now`` than its
strongest member, never weaker than its oldest (the plain max when the members share one half-life); and
what it says, every member's sentence, none dropped as "said" by a longer sentence that negates it."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memkit.consolidate import plan_merges
from memkit.decay import below_floor, strength
from memkit.facts import fact_tokens, negated
from memkit.merge_rule import capped_importance, merge_content, merged_importance
from memkit.text import normalize

member = st.tuples(
    st.floats(0.0, 1.0),  # importance
    st.one_of(st.sampled_from([1.0, 24.0, 2160.0, 100_000.0]), st.floats(0.01, 1e7)),  # half-life
    st.one_of(st.sampled_from([0.0, 1.0, 100.0]), st.floats(0.0, 1e5)),  # age at `now`, hours
)


@settings(max_examples=400, deadline=None)
@given(st.lists(member, min_size=1, max_size=6), st.sampled_from([0.1, 0.05, 0.3]))
def test_a_merged_memory_is_between_its_oldest_and_its_strongest_member(members: list, floor: float) -> None:
    imp, hl, age = (np.array(c) for c in zip(*members, strict=True))
    s = strength(imp, age, hl)  # (m,) each member's strength at `now`
    got = merged_importance(imp, hl, age)
    assert 0.0 <= got <= imp.max()
    merged = strength(got, age.max(), hl.max())  # dated by its oldest member, its slowest half-life
    assert merged <= s.max()  # to the last bit: never stronger than its strongest member
    assert merged >= s[age == age.max()].max() * (1 - 1e-12)  # never weaker than its oldest
    if below_floor(s, floor).all():  # what forget() would drop stays droppable ...
        assert below_floor(merged, floor)
    elif not below_floor(s, floor).any() and s.min() > floor * (1 + 1e-12):  # ... and a strong merge strong
        assert not below_floor(merged, floor)
    if (hl == hl[0]).all():
        assert got == imp.max()  # one half-life (one layer's default): the cap never binds


def test_the_cap_is_vectorized_over_clusters_and_exact() -> None:
    top = np.array([0.05, 0.5, 0.0])
    got = capped_importance(
        top, np.array([0.9, 0.5, 0.7]), np.array([1e5, 10.0, 2.0]), np.array([100.0, 10.0, 1.0])
    )
    assert got[1] == 0.5 and got[2] == 0.0  # not over: the max; members of strength 0: importance 0
    assert strength(got[0], 100.0, 1e5) <= 0.05 < strength(np.nextafter(got[0], 1.0), 100.0, 1e5)


def test_the_planner_caps_the_importance_given_ages_and_half_lives() -> None:
    """plan_merges with store.merge_candidates' columns reports the importance consolidate writes."""
    t = datetime(2026, 1, 1, tzinfo=UTC)
    f = pl.DataFrame({
        "id": ["a", "b"], "namespace": ["u"] * 2, "layer": ["long_term"] * 2, "key": [None, None],
        "content": ["User likes green tea", "User likes green tea a lot"], "importance": [0.9, 0.05],
        "created_at": [t, t], "last_access_at": [t, t], "access_count": [0, 0], "status": ["active"] * 2,
        "protected": [False, False], "half_life_hours": [1.0, 100_000.0], "_age_hours": [100.0, 1.0],
    })  # fmt: skip
    emb = np.array([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    capped = plan_merges(f, emb)["importance"].item()
    assert capped == merged_importance([0.9, 0.05], [1.0, 100_000.0], [100.0, 1.0]) < 0.051
    assert plan_merges(f.drop("_age_hours"), emb)["importance"].item() == 0.9  # no clock: the max


# ------------------------------------------------------------------------------- what it says
# a longer sentence that holds a shorter one's words but does not say it: a merge keeps both
NOT_SAID = [
    ("Not allergic to peanuts", "Allergic to peanuts"),
    ("Never drinks coffee every morning", "Drinks coffee every morning"),
    ("Not married", "Married"),
    ("Not vegetarian", "Vegetarian"),
    ("I no longer live in Boston", "live in Boston"),
    ("Allergic to peanuts: no", "Allergic to peanuts"),
    ("She is a vegetarian", "is a vegetarian"),
    ("Her mother likes tea", "likes tea"),
    ("Gina likes tea", "likes tea"),
    ("Wants to move to Paris", "move to Paris"),
    ("Used to live in Paris", "live in Paris"),
    ("If it rains, cancel the picnic", "cancel the picnic"),
    ("Tea or coffee after lunch", "coffee after lunch"),
    ("Is he vegan?", "he vegan"),
    ("不喜欢吃辣", "喜欢吃辣"),
    ("用户对花生不过敏", "用户对花生过敏"),
    ("用户不再喜欢喝咖啡了", "用户喜欢喝咖啡"),
    ("用户没去过北京", "去过北京"),
    ("用户的妈妈住在宁波", "住在宁波"),
    ("他是经理", "是经理"),
    ("用户以前住在杭州", "住在杭州"),
    ("如果下雨，取消野餐", "取消野餐"),
    ("用户有三十个苹果", "用户有三"),
    ("has twenty five cats", "has twenty"),
]
# ... and longer sentences that do say it: the shorter adds nothing
SAID = [
    ("Likes coffee without sugar", "Likes coffee"),
    ("I like coffee, but not tea", "I like coffee"),
    ("User likes tea every morning", "likes tea"),
    ("用户喜欢喝美式咖啡，不加糖", "用户喜欢喝美式咖啡"),
    ("用户喜欢喝美式咖啡，少加糖", "用户喜欢喝美式咖啡"),
    ("Lives in Hangzhou.", "lives in Hangzhou!"),
]


@pytest.mark.parametrize(("longer", "shorter"), NOT_SAID)
def test_a_run_of_a_sentence_that_does_not_say_it_is_kept(longer: str, shorter: str) -> None:
    """Words that are a run of a longer sentence were dropped as said even when the longer sentence
    negated them ("Not allergic to peanuts" + "Allergic to peanuts" merged into the first alone)."""
    for survivor, other in ((longer, shorter), (shorter, longer)):
        parts = [p.rstrip("?。.") for p in re.split("；|; ", merge_content(survivor, [other]))]
        assert sorted(parts) == sorted([longer.rstrip("?"), shorter.rstrip("?")])  # each said, whole


@pytest.mark.parametrize(("longer", "shorter"), SAID)
def test_a_run_of_a_sentence_that_says_it_adds_nothing(longer: str, shorter: str) -> None:
    assert merge_content(longer, [shorter]) == longer


_SENTENCE = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s|$)|\n|；|; ")
_WORDS = re.compile(r"[\u4e00-\u9fff]|[^\W_\u4e00-\u9fff]+")
subjects = st.sampled_from(["", "User ", "用户", "Gina ", "She ", "用户的妈妈"])
negations = st.sampled_from(["", "", "not ", "never ", "no longer ", "不", "没", "不再"])
predicates = st.sampled_from(["likes coffee", "allergic to peanuts", "喜欢吃辣", "住在杭州", "has 3 cats",
                              "has 30 cats", "跑步5公里", "跑步五十公里", "flies at 9"])  # fmt: skip
tails = st.sampled_from(["", " every morning", " on Monday", "，不加糖", " pm", ", no", " or tea", "以前"])
sentence = st.builds(lambda *p: "".join(p), subjects, negations, predicates, tails)
member = st.lists(sentence, min_size=1, max_size=2).map(". ".join)


def _words(text: str) -> list[str]:
    return [w for w in _WORDS.findall(normalize(text)) if w not in ("a", "an", "the", "的", "了", "在")]


@settings(max_examples=300, deadline=None)
@given(st.lists(member, min_size=2, max_size=4))
@example(["喜欢吃辣 every morning", "喜欢吃辣. not 喜欢吃辣"])  # both said: the second sentence is its own
def test_no_merged_text_drops_a_member_sentences_fact(members: list[str]) -> None:
    """Each sentence of each member is said by a sentence of the merged text: its words in order, with
    its numbers, time words and negation, and not under a negation or another subject it lacks."""
    merged = merge_content(members[0], members[1:])
    said = [s for s in _SENTENCE.split(merged) if _words(s)]
    for text in members:
        for s in (s for s in _SENTENCE.split(text) if _words(s)):
            w, tokens = _words(s), {t for t in fact_tokens(s) if not t.startswith("name:")}
            homes = [k for k in said if any(_words(k)[i : i + len(w)] == w for i in range(len(_words(k))))]

            def says(k: str, w: list[str] = w, tokens: set[str] = tokens, s: str = s) -> bool:
                """``k`` says ``s``: its facts, and its words not under a negation ``s`` lacks (a member
                may say a thing and its negation: "喜欢吃辣. not 喜欢吃辣")."""
                kw = _words(k)
                if not tokens <= fact_tokens(k):
                    return False
                if kw == w or negated(s):
                    return True
                at = next(i for i in range(len(kw)) if kw[i : i + len(w)] == w)
                return not negated(" ".join(kw[:at]))

            assert any(says(k) for k in homes), (s, merged)
