"""Fact tokens (memkit/facts.py): spellings of one fact agree, different facts differ, in English and
Chinese; the words around a run that change what it says."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memkit.facts import alters, fact_difference, fact_key, fact_tokens, negated, qualifies, same_facts

SAME = [  # one fact, two spellings: equal tokens
    ("用户买电脑的预算是5,000元", "用户买电脑的预算是五千元"),
    ("预算３万", "预算30000"),
    ("Has 2 cats", "Has two cats"),
    ("Ran twenty-five km", "Ran 25 km"),
    ("用户的生日是6月1日", "用户的生日是六月一号"),
    ("my birthday is on June 1", "生日是6月1日"),
    ("二〇一九年搬家", "2019年搬家"),
    ("例会在周三", "例会在星期三"),
    ("The standup is on Wednesday", "站会在周三"),
    ("每天早上跑步", "每天早晨跑步"),
    ("用户是一名工程师", "用户是工程师"),  # 一 as an article
    ("我们一起跑步", "我们跑步"),
    ("非常喜欢吃辣", "喜欢吃辣"),  # 非常 negates nothing
    ("用户对花生过敏", "用户对花生过敏。"),
    ("No one called", "Nobody called"),
    ("I am a teacher", "I'm a teacher"),  # "am" after no number is no time word
    ("User lives in Boston", "User's home is in Boston"),
    # h126 F1/F2: a sign, a currency, a scale word, a spoken Chinese short form, an ordinal
    ("Took 3-5 days", "Took 3 to 5 days"),  # a hyphen between numbers is a range, no sign
    ("Budget is 5 million", "Budget is five million"),
    ("Budget is $5000", "Budget is 5000 USD"),
    ("预算三千五", "预算3500"),
    ("两百五十块", "两百五块"),
    ("两万五", "25000"),
    ("Lives on the third floor", "Lives on the 3rd floor"),
    ("It is 5°C", "It is 5℃"),
]
DIFFERENT = [  # one word apart, two facts: tokens differ (kind, a, b)
    ("number", "用户买电脑的预算是5000元", "用户买电脑的预算是8000元"),
    ("number", "Has 2 cats", "Has 3 cats"),
    ("number", "每天跑步5公里", "每天跑步10公里"),
    ("number", "Has 2 cats", "Has cats"),
    ("number", "用户有三只猫", "用户有猫"),
    ("number", "２０１９年搬到深圳", "2021年搬到深圳"),
    ("number", "用户的生日是6月1日", "用户的生日是6月11日"),
    ("date", "Moved in June", "Moved in July"),
    ("date", "周三下午开会", "周四下午开会"),
    ("date", "Meeting on Monday", "Meeting on Tuesday"),
    ("date", "Flight at 9 am", "Flight at 9 pm"),
    ("date", "明天去北京", "昨天去北京"),
    ("date", "早上跑步", "晚上跑步"),
    ("negation", "I like coffee", "I don't like coffee"),
    ("negation", "Allergic to peanuts", "Not allergic to peanuts"),
    ("negation", "Drinks coffee", "Never drinks coffee"),
    ("negation", "Works at Google", "No longer works at Google"),
    ("negation", "用户对花生过敏", "用户对花生不过敏"),
    ("negation", "喜欢吃辣", "不喜欢吃辣"),
    ("negation", "用户喜欢喝咖啡", "用户不再喜欢喝咖啡了"),
    ("negation", "用户去过北京", "用户没去过北京"),
    ("negation", "咖啡加糖", "咖啡别加糖"),
    ("name", "Gina's favorite dance style is contemporary", "Jon's favorite dance style is contemporary"),
    ("name", "Alice decided to learn Rust", "Alice decided to learn Go"),
    ("name", "Bob 住在上海", "Alice 住在上海"),
    # h126 F1/F2: each was one key (and a merge dropped the other sentence, or joined the two)
    ("currency", "Budget is $5000", "Budget is €5000"),
    ("currency", "预算5000美元", "预算5000欧元"),
    ("number", "Temperature is -5 degrees", "Temperature is 5 degrees"),
    ("number", "Temperature is −5 degrees", "Temperature is 5 degrees"),
    ("symbol", "I love 🐶", "I love 🐱"),
    ("number", "Budget is 5 million", "Budget is 5 thousand"),
    ("number", "Costs 3 billion", "Costs 3"),
    ("number", "预算三千五", "预算三千零五"),
    ("number", "两百五", "两百零五"),
    ("number", "Lives on the third floor", "Lives on the fourth floor"),
    ("number", "Finished twenty-first", "Finished twenty-second"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_spellings_of_one_fact_have_the_same_tokens(a: str, b: str) -> None:
    assert fact_tokens(a) == fact_tokens(b)
    assert fact_difference(a, b) == ""


@pytest.mark.parametrize(("kind", "a", "b"), DIFFERENT)
def test_facts_one_word_apart_have_different_tokens(kind: str, a: str, b: str) -> None:
    assert fact_tokens(a) != fact_tokens(b)
    reason = fact_difference(a, b)
    assert {
        "number": "numbers",
        "date": "time words",
        "negation": "negation",
        "name": "names",
        "currency": "currencies",
        "symbol": "symbols",
    }[kind] in reason


def test_the_tokens_read_as_a_reader_would() -> None:
    assert sorted(fact_tokens("Gina's flight leaves at 9:30 pm on June 1, not on Monday")) == [
        "n:1", "n:9:30", "name:gina", "neg", "t:Jun", "t:Mon", "t:pm",
    ]  # fmt: skip
    assert sorted(fact_tokens("下周三晚上8点，预算两千五百元")) == [
        "n:2500", "n:8", "t:Wed", "t:next week", "t:night",
    ]  # fmt: skip
    assert fact_tokens("Likes green tea") == {"name:likes"}  # a capitalized first word reads as a name
    assert fact_tokens("likes green tea") == frozenset()
    assert fact_difference("预算是5000元", "预算是8000元") == "numbers 5000 ≠ 8000"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I don't like coffee", True), ("He doesnt smoke", True), ("Coffee without sugar", True),
        ("用户没有车", True), ("未婚", True), ("别加糖", True), ("不过敏", True),
        ("非常喜欢", False), ("味道不错", False), ("别人的车", False), ("未来去北京", False),
        ("不过我喜欢茶", False), ("I like it", False), ("Nothing", True),
    ],
)  # fmt: skip
def test_negation_in_both_languages(text: str, expected: bool) -> None:
    assert negated(text) is expected


def test_a_relative_time_word_counts_from_the_day_it_was_written() -> None:
    july, october = datetime(2023, 7, 8, 12, tzinfo=UTC), datetime(2023, 10, 1, 12, tzinfo=UTC)
    a, b = "Andrew plans a hike next month", "Andrew plans a hike next month"
    assert fact_key(a, july) != fact_key(b, october)  # "next month" is August, then November
    assert fact_key(a, july) == fact_key(b, july.replace(hour=20))  # the same day: the same month
    assert fact_key("Has 2 cats", july) == fact_key("Has 2 cats", october)  # nothing relative: no day
    assert "other days" in fact_difference(a, b, july, october)


def test_same_facts_compares_only_the_rows_the_pairs_name() -> None:
    texts = ["Has 2 cats", "Has two cats", "Has 3 cats", "never read: " + "x" * 10]
    got = same_facts(texts, np.array([0, 0, 1]), np.array([1, 2, 2]))
    assert got.tolist() == [True, False, False]
    assert same_facts(texts, np.empty(0, np.int64), np.empty(0, np.int64)).tolist() == []


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("Not ", "", True), ("", " no", True), ("不", "", True), ("用户的妈妈", "", True),
        ("She ", "", True), ("Gina ", "", True), ("Wants to ", "", True), ("以前", "", True),
        ("", " or tea", True), ("If it rains, ", "", True),
        ("", " without sugar", False), ("User ", "", False), ("用户", "", False), ("", " every day", False),
    ],
)  # fmt: skip
def test_alters_reads_the_words_around_a_run(before: str, after: str, expected: bool) -> None:
    assert alters(before, after) is expected


def test_qualifies_reads_the_other_clauses() -> None:
    assert qualifies(" no") and qualifies(" not at all") and qualifies("不是") and qualifies("如果下雨")
    assert not qualifies(" but not tea") and not qualifies("加一点奶")


# a sentence's first word is capitalized because it starts the sentence: a verb there is no name
VERB_FIRST = [  # one fact: the first word capitalized in one only (it used to be "name:discussed")
    ("Discussed the budget with Jon on Monday", "discussed the budget with Jon on Monday"),
    ("Reviewing the PRD with Gina", "reviewing the PRD with Gina"),
    ("Helped her move the sofa.", "helped her move the sofa"),
    ("Fixed my bike. Visited the zoo with the kids!", "fixed my bike; visited the zoo with the kids"),
    ("- Ordered a new laptop for work", "ordered a new laptop for work"),
    ('"Loves his dog Max"', "loves his dog Max"),
]
NAME_FIRST = [  # a name at a sentence's start is still one: two facts
    ("Gina likes the new studio", "Jon likes the new studio"),
    ("Gina's sister lives in Ohio", "Jon's sister lives in Ohio"),
    ("Gina and Jon went to the zoo", "Gina and Ann went to the zoo"),
    ("We met. Gina took the kids to the zoo", "We met. Jon took the kids to the zoo"),
    ("Discussed the budget with Jon", "Discussed the budget with Gina"),
    ("Gina the dancer moved to Ohio", "Jon the dancer moved to Ohio"),  # an appositive, no comma
    ("Max the dog is sick", "Rex the dog is sick"),
    ("Ahmed the engineer called", "Saeed the engineer called"),  # names that end as a past form
]
KEPT_AS_NAMES = [  # a bare verb before an article reads as a name: a duplicate missed, never a fact lost
    ("Keep the door locked at night", "keep the door locked at night"),
    ("Fixed the car", "fixed the car"),
]


@pytest.mark.parametrize(("a", "b"), KEPT_AS_NAMES)
def test_a_short_or_bare_verb_before_an_article_errs_on_a_name(a: str, b: str) -> None:
    assert fact_difference(a, b).startswith("names ")


@pytest.mark.parametrize(("a", "b"), VERB_FIRST)
def test_a_verb_capitalized_only_to_start_a_sentence_is_no_name(a: str, b: str) -> None:
    assert fact_tokens(a) == fact_tokens(b) and fact_difference(a, b) == ""
    verb = a.strip('-" ').split()[0].casefold()
    assert f"name:{verb}" not in fact_tokens(a)


@pytest.mark.parametrize(("a", "b"), NAME_FIRST)
def test_a_name_starting_a_sentence_still_holds_two_facts_apart(a: str, b: str) -> None:
    assert fact_tokens(a) != fact_tokens(b) and fact_difference(a, b).startswith("names ")


def test_a_word_capitalized_inside_a_sentence_too_stays_a_name() -> None:
    # "Rose the ..." reads as a verb first, but "Rose" inside the sentence is a name
    assert "name:rose" in fact_tokens("Rose the next morning and called Rose")
    assert fact_tokens("Fixed my car with Ann") == {"name:ann"}
