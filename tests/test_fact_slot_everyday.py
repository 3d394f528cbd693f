"""Everyday sentences that share a slot's lead but state no value of it get no key (a wrong key
replaces the user's true fact), and a text that states two slots gets none (a later change of one
would supersede the whole memory and lose the other). Review h134 items 1, 2 and 9."""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl
import pytest
from admission_checks import admits_alike

import memkit as mk
from memkit.agent import EchoLLM, MemoryAgent
from memkit.commands import admit, admit_many

EVERYDAY = [
    "My name is on the lease", "my name's on the list", "My name is not Bob", "I go by bike",
    "I go by train to work", "I'm called into meetings all day", "Call me an Uber", "Call me a taxi please",
    "Call me in the morning", "call me crazy", "我叫妈妈来", "我叫我妈来接我", "我叫错了名字", "我叫停了项目",
    "我叫做饭", "叫我起床", "叫我一声", "我的名字是爸爸取的",
    "My job is boring", "My job is done", "my job is to review PRs", "I work as hard as I can",
    "I'm working as fast as I can", "我是老师的儿子", "我是学生家长", "我是医生推荐来的",
    "我在地铁上工作", "我在飞机上工作", "我在路上工作", "我在床上工作", "我在高铁上上班", "我在开会工作",
    "我在考虑工作", "My birthday is next week", "My birthday is coming up", "I was born on a farm",
    "I turned 3 pages", "I'm seeing someone about the roof", "I'm single minded about this",
    "I moved to PostgreSQL", "I moved to ChatGPT", "I moved to Next.js", "I moved to Obsidian",
    "I live in Jupyter notebooks", "I live in the Moment app", "我住在酒店", "我住在宾馆里", "我住在医院里",
    "我搬到新办公室了", "我搬到三楼了", "我搬到了B栋", "我来自技术部", "I'm studying at Starbucks",
    "I study at Home",
    # review h137 H2-H4: a job noun that does not end the clause, a workplace location, a numbered thing
    "I'm a huge Doctor Who fan", "I'm a Doctor Who superfan", "I'm a teacher's pet",
    "I'm an Uber driver's daughter", "I'm a Student Ambassador for the hackathon", "I'm a student of life",
    "我在地铁里工作", "我在飞机里工作",
    "我在咖啡馆里工作", "我在会议室工作", "我在电脑前工作了一天", "我在星巴克工作了一下午", "我在厕所里上班",
    "I moved to Plan B", "I moved to Level 5 in the game", "I moved to Chapter 3 of the book",
    "I moved to Google Drive", "I live in Minecraft most weekends",
]  # fmt: skip
STILL_KEYED = [
    ("I'm a nurse now", "fact.job"),  # a time word may follow the job
    ("I'm a teacher too", "fact.job"),
    ("My name is Ann", "fact.name"), ("I go by Sam", "fact.name"), ("Please call me Liz", "fact.name"),
    ("我叫王小明", "fact.name"), ("我的名字是张伟", "fact.name"), ("My job is teacher", "fact.job"),
    ("my job is a software engineer", "fact.job"), ("我现在是产品经理了", "fact.job"),
    ("我的职业是医生", "fact.job"), ("My birthday is May 3", "fact.birthday"),
    ("I was born on the 3rd of May", "fact.birthday"), ("我生日是农历八月十五", "fact.birthday"),
    ("I live in McAllen", "fact.residence"), ("I study at Stanford", "fact.school"),
    ("I'm seeing someone", "fact.relationship"),
    ("I'm a nurse", "fact.job"), ("I'm a nurse at St Mary's", "fact.job"), ("I'm a teacher.", "fact.job"),
    ("I'm a senior engineer in Berlin", "fact.job"), ("我在咖啡馆工作", "fact.employer"),
    ("我以前在百度工作，现在在腾讯工作", "fact.employer"), ("I moved to New York", "fact.residence"),
    ("I moved to Washington D.C.", "fact.residence"), ("我以前住在北京，现在搬到上海了", "fact.residence"),
    ("I used to live in Boston, now I live in Denver", "fact.residence"),
]  # fmt: skip
TWO_SLOTS = [
    "I'm married and I work at Google, I live in Boston", "My name is Ann and I live in Boston",
    "我叫小王，在腾讯工作", "I moved to Denver last year and I'm a nurse",
    # the second clause without a subject of its own (review h137 H1)
    "我叫李明，住在北京", "我今年28岁了，住在杭州", "我是程序员，在腾讯工作", "我结婚了，住在上海",
    "I moved to Denver and started a job at Acme", "I live in Boston and work at Acme",
]  # fmt: skip


@pytest.mark.parametrize("text", EVERYDAY + TWO_SLOTS)
def test_no_key_without_a_value_of_the_slot_or_with_two_slots(text: str) -> None:
    assert admit(text).key is None
    admits_alike([text])


@pytest.mark.parametrize(("text", "key"), STILL_KEYED)
def test_a_value_that_looks_like_the_slots_is_still_keyed(text: str, key: str) -> None:
    assert admit(text).key == key
    admits_alike([text])


def test_admit_many_agrees_on_a_whole_column() -> None:
    texts = EVERYDAY + TWO_SLOTS + [t for t, _ in STILL_KEYED]
    assert admit_many(texts)["key"].to_list() == [admit(t).key for t in texts]


@pytest.mark.parametrize(("first", "later"), [("My name is Ann", "I go by bike"), ("我叫小王", "叫我起床")])
def test_an_everyday_sentence_does_not_replace_the_name(store, now: datetime, first: str, later: str) -> None:
    agent = MemoryAgent(store, EchoLLM(), "u", "assistant", now=now)
    agent.chat(first)
    agent.chat(later, now=now + timedelta(minutes=1))
    agent.end_session(now=now + timedelta(hours=1))
    assert store.read("fact.name", namespace="u", now=now + timedelta(days=1)).content == first


def test_a_two_slot_memory_survives_a_change_of_one_slot(store, now: datetime) -> None:
    agent = MemoryAgent(store, EchoLLM(), "u", "assistant", now=now)
    agent.chat("I'm married and I work at Google, I live in Boston")
    agent.end_session(now=now + timedelta(hours=1))
    agent.chat("I moved to Denver", now=now + timedelta(days=1))
    agent.end_session(now=now + timedelta(days=1, hours=1))
    active = store.frame().filter((pl.col("status") == "active") & (pl.col("namespace") == "u"))
    assert "I'm married and I work at Google, I live in Boston" in active["content"].to_list()
    assert isinstance(store, mk.MemoryStore)


@pytest.mark.parametrize(
    "text",
    ["我叫" + "王" * 5000, "我在" + "上" * 5000 + "工作", "我住在" + "楼" * 5000,
     "I live in " + "Ab " * 5000 + "app",
     "我是" + "老师" * 3000, "my birthday is " + "the " * 5000, "我叫小王，" * 3000 + "在腾讯工作"],
)  # fmt: skip
def test_hostile_near_misses_of_the_new_values_finish(text: str) -> None:
    admits_alike([text])


# review h137 M1-M3: a birthday is a calendar date; a passive "called X by", "at Home", "married to the
# idea"; a seat, the heart or a dream is no home, and 住了 + a duration is a past stay
NO_VALUE_H137 = [
    "My birthday is 10 days away", "My birthday is 3 weeks away",
    "I was born on the 4th floor of the hospital", "I'm called Daddy by my kids sometimes",
    "I'm called Daddy by my kids", "I work at Home", "I'm working at Home today", "I got married to the idea",
    "我搬到了新的座位", "我住在心里", "我住在靠窗的座位",
    "我在北京住了三年", "我在北京住了三年，现在在上海工作",
]  # fmt: skip
KEYED_H137 = [
    ("My birthday is May 3rd", "fact.birthday"), ("My birthday is 3/5", "fact.birthday"),
    ("My birthday is on the 3rd", "fact.birthday"), ("I was born on 3 May", "fact.birthday"),
    ("I was born on the 4th of July", "fact.birthday"), ("我的生日是5月3日", "fact.birthday"),
    ("I'm called Ann", "fact.name"), ("I work at Home Depot", "fact.employer"),
    ("I got married to a doctor", "fact.relationship"), ("我住在上海", "fact.residence"),
]  # fmt: skip


@pytest.mark.parametrize("text", NO_VALUE_H137)
def test_no_calendar_date_no_name_no_place_gets_no_key(text: str) -> None:
    assert admit(text).key is None
    admits_alike([text])


@pytest.mark.parametrize(("text", "key"), KEYED_H137)
def test_a_calendar_date_a_name_a_place_are_still_keyed(text: str, key: str) -> None:
    assert admit(text).key == key
    admits_alike([text])


@pytest.mark.parametrize(
    "text",
    ["I'm called " + "Ab " * 5000 + "x", "我在" + "北" * 5000 + "住了三年", "My birthday is " + "1" * 5000],
)
def test_hostile_near_misses_of_the_h137_values_finish(text: str) -> None:
    admits_alike([text])
