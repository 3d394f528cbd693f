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
    # a time clause: the run is when something else happens, not a fact of its own (以前 / 以后 / 的时候
    # after it; in English the word comes first: after, before, until, when)
    ("住在杭州以后", "住在杭州"),
    ("用户住在杭州之后", "用户住在杭州"),
    ("以后住在杭州", "住在杭州"),
    ("住在杭州的时候", "住在杭州"),
    ("住在杭州的时候，喜欢吃辣", "喜欢吃辣"),
    ("After moving to Paris", "moving to Paris"),
    ("Before moving to Paris", "moving to Paris"),
    ("Until moving to Paris", "moving to Paris"),
    ("Likes coffee when tired", "Likes coffee"),
    ("When it rains, cancel the picnic", "cancel the picnic"),
    ("Will move to Paris", "move to Paris"),
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


# a question and a statement of the same words: neither says the other (吗 / 呢 / 么 end a question too)
QUESTIONS = [
    ("he vegan?", "he vegan"),
    ("Likes coffee?", "likes coffee."),
    ("喜欢吃辣吗", "喜欢吃辣"),
    ("喜欢吃辣吗？", "喜欢吃辣。"),
    ("喜欢吃辣呢", "喜欢吃辣"),
    ("喜欢吃辣么", "喜欢吃辣"),
    ("喜欢吃辣吗，还是不喜欢", "喜欢吃辣"),
]


@pytest.mark.parametrize(("question", "statement"), QUESTIONS)
def test_a_question_and_a_statement_never_say_each_other(question: str, statement: str) -> None:
    """ "he vegan?" + "he vegan" merged into the question alone, and "喜欢吃辣吗" (吗 read as a filler
    word) into whichever survived: a question does not state its words, nor a statement ask them."""
    for survivor, other in ((question, statement), (statement, question)):
        parts = re.split("；|; ", merge_content(survivor, [other]))
        assert sorted(p.rstrip("。.") for p in parts) == sorted([question, statement.rstrip("。.")])


# each sentence keeps its own question or exclamation mark; a final "." or "。" stays at the very end
MARKS = [
    ("Are you coming?", ["Lives in Paris"], "Are you coming?; Lives in Paris"),
    ("Lives in Paris.", ["Are you coming?"], "Lives in Paris; Are you coming?"),
    ("Lives in Paris!", ["Works at a bank."], "Lives in Paris!; Works at a bank"),
    (
        "Flight at 9 am.",
        ["Are you coming?", "Lives in Paris"],
        "Flight at 9 am; Are you coming?; Lives in Paris.",
    ),
    ("你来吗？", ["用户住在巴黎。"], "你来吗？；用户住在巴黎"),
    ("用户住在巴黎。", ["太好了！", "你来吗？"], "用户住在巴黎；太好了！；你来吗？"),
    ("用户住在巴黎。", ["你来吗？用户在银行工作。"], "用户住在巴黎；你来吗？；用户在银行工作。"),
]


@pytest.mark.parametrize(("survivor", "others", "merged"), MARKS)
def test_each_sentence_keeps_its_own_end_mark(survivor: str, others: list[str], merged: str) -> None:
    """The survivor's final "?" or "!" moved to the merged text's end ("Are you coming; Lives in
    Paris?"): a statement became a question and the question a statement. Merged again with its
    members, the merged text adds nothing."""
    assert merge_content(survivor, others) == merged
    assert merge_content(merged, [survivor, *others]) == merged


_SENTENCE = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s|$)|\n|；|; ")
_CLAUSE = re.compile(r"[,，;；:：、]")
_WORDS = re.compile(r"[\u4e00-\u9fff]|[^\W_\u4e00-\u9fff]+")
# what may stand before a member sentence's words in the sentence that says them: the user, whom a sentence
# with no subject is about ("likes coffee" is said by "User likes coffee", not by "Gina likes coffee")
_SELF = frozenset(("user", "i", "用", "户", "我"))
# words after them that make them an alternative, a condition or a time clause: not said
_ALTERNATIVE = frozenset(("or", "either", "if", "unless", "whether", "when", "whenever"))
_ZH_ALTERNATIVE = ("或", "还是", "如果", "以前", "之前", "以后", "之后", "时候")
# a question: a final "?" or 吗 / 呢 / 么 (a Chinese question's particle, no word of what it asks), or 吗
# ending a clause
_ASKS = re.compile(r"(?:[?？]|[吗呢么])[\s。.！!，,；;]*$|吗(?=[\s，,：:、])")
# words a bare negation after them may end with: "…, not really", "… no longer", "…，不是"
_DEGREE = frozenset("really at all quite so longer more anymore any 再 是 太 也 都".split())


_SKIP = frozenset("a an the 的 了 在 吗 呢".split())  # (吗 / 呢 mark a question: _ASKS)


def _words(text: str) -> list[str]:
    return [w for w in _WORDS.findall(normalize(text)) if w not in _SKIP]


def _said_by(s: str, merged: str) -> bool:
    """Whether a sentence of ``merged`` (a "home") says the member sentence ``s``: it holds ``s``'s
    numbers, time words and negation (its fact tokens but names), and ``s``'s words in order, with
    before them nothing but the user or words of ``s`` (no negation, no other subject: a name, she,
    用户的妈妈), and after them no alternative, condition or time clause ("or tea", "以前") and no clause
    ending in a negation (", no", " not really"). A question (a final "?", 吗 / 呢 / 么) says only a
    question. A member may say a
    thing and its negation ("喜欢吃辣. not 喜欢吃辣"): each has a home of its own."""
    w, tokens = _words(s), {t for t in fact_tokens(s) if not t.startswith("name:")}
    question = bool(_ASKS.search(s))
    for k in _SENTENCE.split(merged):
        clauses = [_words(c) for c in _CLAUSE.split(k)]
        kw, clause_of = [x for c in clauses for x in c], [j for j, c in enumerate(clauses) for _ in c]
        if not kw or not tokens <= fact_tokens(k) or bool(_ASKS.search(k)) != question:
            continue
        for at in (i for i in range(len(kw) - len(w) + 1) if kw[i : i + len(w)] == w):
            end = at + len(w)
            after = kw[end:]
            tails = [
                [x for x, j in zip(after, clause_of[end:], strict=True) if j == c]
                for c in range(len(clauses))
            ]
            if (
                set(kw[:at]) <= _SELF | set(w)
                and not _ALTERNATIVE & set(after)
                and not any(z in "".join(after) for z in _ZH_ALTERNATIVE)
                and not any(_ends_negated(t) for t in tails)
            ):
                return True
    return False


def _ends_negated(clause: list[str]) -> bool:
    """Whether the words of a clause end in a negation, degree words aside ("no", "not at all", 不是)."""
    while clause and clause[-1] in _DEGREE:
        clause = clause[:-1]
    return bool(clause) and negated(clause[-1])


# (member sentence, merged text): its only home does not say it
NOT_A_HOME = [
    ("喜欢吃辣", "喜欢吃辣, no"),
    ("喜欢吃辣", "用户喜欢吃辣，不是"),
    ("likes coffee", "likes coffee, not really"),
    ("likes coffee", "likes coffee every morning, no"),
    ("Likes coffee", "Likes coffee no longer"),
    ("has 3 cats", "User has 3 cats: none"),
    ("likes coffee", "Gina likes coffee"),
    ("likes coffee", "she likes coffee"),
    ("likes coffee", "Her mother likes coffee"),
    ("喜欢吃辣", "用户的妈妈喜欢吃辣"),
    ("用户喜欢吃辣", "用户的妈妈喜欢吃辣"),
    ("喜欢吃辣", "他喜欢吃辣"),
    ("likes coffee", "likes coffee or tea"),
    ("coffee after lunch", "Tea or coffee after lunch"),
    ("喜欢喝咖啡", "喜欢喝咖啡或者茶"),
    ("住在杭州", "住在杭州以前"),
    ("住在杭州", "用户住在杭州之前"),
    ("住在杭州", "住在杭州的时候"),
    ("喜欢吃辣", "喜欢吃辣吗"),
    ("喜欢吃辣吗", "喜欢吃辣"),
    ("喜欢吃辣", "喜欢吃辣呢"),
    ("likes coffee", "likes coffee?"),
    ("likes coffee?", "likes coffee"),
    ("likes coffee?", "likes coffee; has 3 cats?"),
    ("likes coffee", "likes coffee when tired"),
    ("cancel the picnic", "cancel the picnic if it rains"),
    ("he vegan", "Is he vegan?"),
    ("likes coffee", "not likes coffee"),
    ("喜欢吃辣", "不喜欢吃辣"),
    ("用户有三", "用户有三十个"),
    ("has 3 cats", "has 30 cats"),
    ("flies at 9 pm", "flies at 9"),
    ("likes coffee", "Gina likes coffee; she likes coffee, no"),
    ("likes coffee", ""),
]
# ... and a home that does
A_HOME = [
    ("likes coffee", "likes coffee"),
    ("Likes coffee.", "likes coffee!"),
    ("likes coffee every morning", "likes coffee every morning"),
    ("likes coffee", "likes coffee every morning"),
    ("likes coffee", "User likes coffee on Monday"),
    ("like coffee", "I like coffee, but not tea"),
    ("Likes coffee", "Likes coffee without sugar"),
    ("喜欢吃辣", "用户喜欢吃辣，不加糖"),
    ("flies at 9", "User flies at 9 pm"),
    ("Gina likes coffee", "Gina likes coffee every morning"),
    ("用户有三十个苹果", "用户有三十个苹果"),
    ("喜欢吃辣", "not 喜欢吃辣; 喜欢吃辣 every morning"),  # a member says a thing and its negation
    ("not 喜欢吃辣", "喜欢吃辣 every morning; not 喜欢吃辣"),
    ("likes coffee", "喜欢吃辣。User likes coffee every morning."),
    ("喜欢吃辣吗", "喜欢吃辣？"),
    ("likes coffee?", "has 3 cats; likes coffee?"),
]


@pytest.mark.parametrize(("s", "merged"), NOT_A_HOME)
def test_the_checker_rejects_a_merge_whose_only_home_does_not_say_it(s: str, merged: str) -> None:
    assert not _said_by(s, merged)


@pytest.mark.parametrize(("s", "merged"), A_HOME)
def test_the_checker_accepts_a_home_that_says_it(s: str, merged: str) -> None:
    assert _said_by(s, merged)


subjects = st.sampled_from(["", "User ", "用户", "Gina ", "She ", "用户的妈妈", "After ", "When "])
negations = st.sampled_from(["", "", "not ", "never ", "no longer ", "不", "没", "不再"])
predicates = st.sampled_from(["likes coffee", "allergic to peanuts", "喜欢吃辣", "住在杭州", "has 3 cats",
                              "has 30 cats", "跑步5公里", "跑步五十公里", "flies at 9"])  # fmt: skip
tails = st.sampled_from(["", " every morning", " on Monday", "，不加糖", " pm", ", no", " or tea", "以前",
                         "以后", "之后", "的时候", "吗", "?", " when tired"])  # fmt: skip
parts = (subjects, negations, predicates)


@st.composite
def merges(draw: st.DrawFn) -> list[str]:
    """2-4 members of 1-2 sentences each, on one or two subjects, negations and predicates (often with
    no tail): so that one member's sentence is often a run of another's, under another subject, negation
    or tail."""
    pool = [st.sampled_from(draw(st.lists(part, min_size=1, max_size=2))) for part in parts]
    sentence = st.builds(lambda *p: "".join(p), *pool, st.one_of(st.just(""), tails))
    return draw(st.lists(st.lists(sentence, min_size=1, max_size=2).map(". ".join), min_size=2, max_size=4))


@settings(max_examples=300, deadline=None)
@given(merges())
@example(["喜欢吃辣 every morning", "喜欢吃辣. not 喜欢吃辣"])  # both said: the second sentence is its own
def test_no_merged_text_drops_a_member_sentences_fact(members: list[str]) -> None:
    """Each sentence of each member is said by a sentence of the merged text: its words in order, with
    its numbers, time words and negation, and not under a negation or another subject it lacks
    (:func:`_said_by`)."""
    merged = merge_content(members[0], members[1:])
    for text in members:
        for s in (s for s in _SENTENCE.split(text) if _words(s)):
            assert _said_by(s, merged), (s, merged)
