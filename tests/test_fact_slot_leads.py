"""One table of leads for both readers of a fact slot (memkit.commands.slot_leads): every lead that
keys a statement also cuts its value for the analyzer's MK011, and the words saying a statement holds
now are one list. Review h156."""

from __future__ import annotations

import itertools
import re

import polars as pl
import pytest

from memkit.analyze import _same_value
from memkit.commands import admit, admit_many
from memkit.commands.patterns import norm
from memkit.commands.slot_leads import LEAD_EN, LEAD_ZH, LEADS, NOW_EN, slot_value_expr
from memkit.commands.slots import SLOTS, slot_key
from memkit.commands.subjects import first_person_expr

# what comes before an English lead (the user, and what a lead's verb needs), and a value of each slot
SUBJECT = {
    ("residence", "moved"): "I", ("residence", "live"): "I", ("residence", "living"): "I'm",
    ("employer", "work"): "I", ("employer", "working"): "I'm", ("employer", "job"): "I got a new",
    ("job", "work"): "I", ("job", "working"): "I'm", ("school", "study"): "I", ("school", "studying"): "I'm",
    ("hometown", "originally"): "I'm", ("hometown", "grew"): "I", ("hometown", "born"): "I was",
    ("hometown", "from"): "I'm", ("birthday", "born"): "I was", ("birthday", "my"): "my",
}  # fmt: skip
VALUE_EN = {"residence": "Boston", "employer": "Acme", "job": "a nurse", "school": "MIT", "hometown": "Ohio",
            "birthday": "May 3"}  # fmt: skip
VALUE_ZH = {
    "residence": "杭州",
    "employer": "字节",
    "school": "北大",
    "hometown": "成都",
    "birthday": "5月3日",
}


def _spell(lead: str) -> list[str]:
    """Every wording of a lead regex of the table: (?:a|b) groups expanded, an optional letter both ways."""
    lead = lead.replace(r"\b", "")
    parts = re.split(r"(\(\?:[^()]*\)|.\?)", lead)
    choices = [
        p[3:-1].split("|") if p.startswith("(?:") else [p[0], ""] if p.endswith("?") and len(p) == 2 else [p]
        for p in parts
    ]
    return ["".join(c) for c in itertools.product(*choices)]


def _top(alternation: str) -> list[str]:
    """The top-level alternatives of a regex (住在|定居在?|老家(?:是|在) -> 住在, 定居在?, 老家(?:是|在))."""
    out, depth, cur = [], 0, ""
    for ch in alternation:
        depth += (ch == "(") - (ch == ")")
        if ch == "|" and depth == 0:
            out, cur = [*out, cur], ""
        else:
            cur += ch
    return [*out, cur]


def _statements() -> list[tuple[str, str]]:
    """(slot, statement) for every wording of every lead of the table, English and Chinese."""
    out = []
    for slot, leads in LEAD_EN.items():
        for name, lead in leads.items():
            who = SUBJECT.get((slot, name), "")
            out += [(slot, f"{who} {w} {VALUE_EN[slot]}".strip()) for w in _spell(lead)]
    for slot, zh in LEAD_ZH.items():
        out += [(slot, f"我{w}{VALUE_ZH[slot]}") for v in _top(zh.get("verbs", "")) if v for w in _spell(v)]
        out += [
            (slot, f"我在{VALUE_ZH[slot]}{w}") for c in _top(zh.get("closers", "")) if c for w in _spell(c)
        ]
    return [(s, t.replace("我生日", "我的生日")) for s, t in out]


STATEMENTS = _statements()


def _cut(texts: list[str], slots: list[str]) -> list[str | None]:
    me = pl.select(first_person_expr(pl.Series([norm(t) for t in texts], dtype=pl.String))).to_series()
    return pl.select(v=slot_value_expr(me, pl.Series(slots, dtype=pl.String)))["v"].to_list()


def test_every_slot_has_leads_to_cut_its_value() -> None:
    assert {name for name, _ in SLOTS} == set(LEADS)


@pytest.mark.parametrize(("slot", "text"), STATEMENTS)
def test_every_lead_of_the_table_is_keyed_and_cut(slot: str, text: str) -> None:
    # a lead added to the table is keyed (slots.SLOTS) and its value cut (slot_leads.LEADS): the two
    # read one table, so they cannot drift apart
    assert slot_key(norm(text)) == f"fact.{slot}", text
    assert admit_many([text])["key"][0] == admit(text).key == f"fact.{slot}", text
    value = VALUE_EN.get(slot, "").lower().removeprefix("a ").replace(" ", "")
    got = _cut([text], [f"fact.{slot}"])[0]
    assert got is not None and got.replace(" ", "") in {value, VALUE_ZH.get(slot), "5月3日"}, (text, got)


def test_the_table_has_many_wordings() -> None:
    assert len(STATEMENTS) > 60 and {s for s, _ in STATEMENTS} == set(LEAD_EN) | set(LEAD_ZH)


# where the two old tables disagreed: a lead keyed but not cut, cut but not keyed, or keyed with no value
@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("我跳槽到美团了", "fact.employer"), ("我跳槽到了美团", "fact.employer"),  # keyed after 以前 only
        ("我以前在阿里工作，现在就职于百度", "fact.employer"),
        ("我以前住在北京，现在落户上海", "fact.residence"),
        ("我住在", None), ("我搬到了", None), ("我出生在", None), ("我来自", None), ("我住在，很好", None),
    ],
)  # fmt: skip
def test_a_lead_is_keyed_where_it_is_cut(text: str, key: str | None) -> None:
    assert slot_key(norm(text)) == admit_many([text])["key"][0] == key


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I'm working by Acme", "fact.employer", "acme"),  # keyed, and now cut
        ("我住在了北京", "fact.residence", "北京"), ("我跳槽到了美团", "fact.employer", "美团"),
        ("我在北京定居了", "fact.residence", "北京"),  # the closer with 了 is no value of its own
    ],
)  # fmt: skip
def test_a_keyed_lead_cuts_its_value(text: str, slot: str, value: str) -> None:
    assert slot_key(norm(text)) == slot
    assert _cut([text], [slot]) == [value]


def test_a_whole_text_drops_the_same_words_that_hold_now() -> None:
    texts = ["Boston, actually", "Boston recently", "boston originally", "杭州现在"]
    assert pl.select(v=_same_value(pl.Series(texts)))["v"].to_list() == ["boston", "boston", "boston", "杭州"]


def test_a_chinese_word_that_holds_now_leaves_no_space() -> None:
    """Chinese is written without spaces: dropping 现在 from 我现在住在北京 gave "我 住在北京", another
    text than 我住在北京 for MK011's whole-text comparison."""
    texts = ["我现在住在北京", "我住在北京", "I now live in Boston", "I live in Boston"]
    got = pl.select(v=_same_value(pl.Series(texts)))["v"].to_list()
    assert got[0] == got[1] and got[2] == got[3]


def test_the_third_person_reads_every_holds_now_word_the_first_person_takes() -> None:
    """subjects.py kept its own list of adverbs: "User these days lives in Boston" stayed unkeyed
    while "I these days live in Boston" was keyed. Both lists now come from NOW_EN."""
    for word in NOW_EN:
        assert admit(f"User {word} lives in Boston").key == admit(f"I {word} live in Boston").key, word
        assert admit(f"User {word} lives in Boston").key == "fact.residence", word
