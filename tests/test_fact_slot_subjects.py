"""The user in the third person ("User lives in Boston", 用户住在杭州: what LLM extractors write) keys
the same slot as the first person; an imported chat carries the admission key as the agent does; MK011
compares the slot's value, not its lead; "I'm from Google" and 叫我马上 name no hometown and no name."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from admission_checks import admits_alike

import memkit as mk
from memkit.agent import EchoLLM, MemoryAgent
from memkit.analyze import analyze
from memkit.commands import admit
from memkit.commands.patterns import norm
from memkit.commands.subjects import first_person, first_person_expr
from memkit.portable.adapters import add_frame, chat_frame, import_file

NS = "user_87"

THIRD = [
    ("User lives in Boston", "fact.residence"),
    ("The user lives in Boston", "fact.residence"),
    ("User moved to Denver", "fact.residence"),
    ("The user currently lives in Denver.", "fact.residence"),
    ("Note: the user is based in Berlin", "fact.residence"),
    ("The user works at Acme", "fact.employer"),
    ("User got a job at Stripe", "fact.employer"),
    ("User's name is Ann", "fact.name"),
    ("The user goes by Bob", "fact.name"),
    ("The user is a nurse", "fact.job"),
    ("User works as a teacher", "fact.job"),
    ("User is 30 years old", "fact.age"),
    ("The user is married", "fact.relationship"),
    ("User's birthday is June 1", "fact.birthday"),
    ("The user is originally from Boston", "fact.hometown"),
    ("User studies at MIT", "fact.school"),
    ("User's wife's name is Ann", "fact.partner"),
    ("用户住在杭州", "fact.residence"),
    ("用户在腾讯工作", "fact.employer"),
    ("用户叫李明", "fact.name"),
    ("用户是一名老师", "fact.job"),
    ("用户搬到上海了", "fact.residence"),
    ("用户的名字是李明", "fact.name"),
]
# another person, not one user, the past, a wish, reported, a question, two slots
THIRD_UNKEYED = [
    "The user's mother lives in Paris",
    "User's friend works at Google",
    "Users live in Boston",
    "Each user lives in a different city",
    "Another user lives in Paris",
    "The other user moved to Denver",
    "User 2 lives in Denver",
    "The user said his boss lives in Denver",
    "User said he lives in Denver",
    "User used to live in Boston",
    "User wants to move to Denver",
    "Does the user live in Boston?",
    "User lives in Boston and works at Acme",
    "The user is a nurse and lives in Boston",
    "The user lives in Boston. The user is a nurse",
    "The user base lives in Europe",
    "The user name is Ann",
    "用户的妈妈住在杭州",
    "用户们住在杭州",
    "其他用户住在杭州",
    "很多用户住在杭州",
    "用户以前住在北京",
    "用户说他老板住在杭州",
    "用户名叫李明",
    "用户住在杭州，是一名老师",
    # no subject: in a chat it is the previous turn's topic ("And your sister?" "Lives in Boston.")
    "Lives in Boston.",
    "Works at Acme as a nurse",
]
HOMETOWN = ["I'm from Boston", "I'm from China", "I'm from the UK", "I'm from New York City",
            "I'm from a small town", "I'm from Springfield, Illinois", "I'm originally from Tulsa",
            "I grew up in Tulsa", "I was born in Shanghai", "My hometown is Austin", "我来自杭州",
            "我老家是湖南的"]  # fmt: skip
NOT_HOMETOWN = ["I'm from Google", "I'm from Mars", "I'm from Acme", "I'm from Acme, Inc",
                "I'm from Microsoft", "I'm from the IT department", "I'm from Boston University",
                "I'm from the Washington Post", "I'm from Boston Consulting Group",
                "I'm from Texas Instruments", "I'm from America's Test Kitchen"]  # fmt: skip
NAMES = [
    "我叫小王",
    "叫我小王",
    "我叫李明",
    "叫我老王",
    "我叫阿强",
    "我叫高翔",
    "我叫周杰",
    "My name is Legion",
]
NOT_NAMES = ["叫我马上", "你叫我马上", "我叫马上", "我叫高铁", "我叫外卖", "我叫老师", "叫我高兴", "我叫小心",
             "叫我小心点", "我叫白天", "我叫金额", "我叫黄牛", "我叫周末"]  # fmt: skip


def _agree(texts: list[str]) -> None:
    admits_alike(texts)


@pytest.mark.parametrize(("text", "key"), THIRD)
def test_the_user_in_the_third_person_keys_the_slot(text: str, key: str) -> None:
    assert admit(text).key == key


@pytest.mark.parametrize("text", THIRD_UNKEYED)
def test_another_person_or_no_subject_gets_no_key(text: str) -> None:
    assert admit(text).key is None


@pytest.mark.parametrize(("texts", "key"), [(HOMETOWN, "fact.hometown"), (NAMES, "fact.name")])
def test_a_place_and_a_name_are_still_keyed(texts: list[str], key: str) -> None:
    assert [admit(t).key for t in texts] == [key] * len(texts)


@pytest.mark.parametrize("text", NOT_HOMETOWN + NOT_NAMES)
def test_an_organization_or_a_common_word_is_no_hometown_and_no_name(text: str) -> None:
    assert admit(text).key is None


def test_admit_and_admit_many_agree_on_the_new_sentences() -> None:
    texts = [t for t, _ in THIRD] + THIRD_UNKEYED + HOMETOWN + NOT_HOMETOWN + NAMES + NOT_NAMES
    _agree(texts)
    rewritten = pl.select(t=first_person_expr(pl.Series([norm(t) for t in texts])))["t"].to_list()
    assert rewritten == [first_person(norm(t)) for t in texts]


def test_a_third_person_statement_supersedes_a_first_person_one(store, now: datetime) -> None:
    agent = MemoryAgent(store, EchoLLM(), NS, "assistant", now=now)
    agent.chat("I live in Boston")
    agent.chat("User moved to Denver", now=now + timedelta(minutes=1))
    assert (
        store.read("fact.residence", namespace=NS, now=now + timedelta(hours=1)).content
        == "User moved to Denver"
    )


def _chat_file(tmp_path: Path, messages: list[dict]) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return path


CHAT = [
    {"role": "user", "content": "I live in Boston"},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "我喜欢喝美式咖啡"},
    {"role": "user", "content": "I moved to Denver"},
    {"role": "user", "content": "我现在改喝拿铁了"},
]


def test_an_imported_chat_keys_its_facts_as_the_agent_does(store, tmp_path: Path, now: datetime) -> None:
    """The later statement supersedes the earlier one in conversation order; MK011 has nothing to say;
    importing the same chat again changes nothing."""
    path = _chat_file(tmp_path, CHAT)
    assert chat_frame(CHAT, namespace=NS)["key"].to_list() == [
        "fact.residence", None, "preference.drink", "fact.residence", "preference.drink"
    ]  # fmt: skip
    import_file(store, path, "chat", namespace=NS, now=now)
    before = store.frame(NS).select("id", "content", "key", "status").sort("id")
    assert store.read("fact.residence", namespace=NS, now=now).content == "I moved to Denver"
    assert store.read("preference.drink", namespace=NS, now=now).content == "我现在改喝拿铁了"
    assert before.filter(pl.col("status") == "superseded")["content"].sort().to_list() == [
        "I live in Boston", "我喜欢喝美式咖啡"
    ]  # fmt: skip
    assert store.analyze(NS, now=now).filter(pl.col("code") == "MK011").is_empty()
    again = import_file(store, path, "chat", namespace=NS, now=now + timedelta(days=1))
    assert "added" not in set(again["action"])
    assert store.frame(NS).select("id", "content", "key", "status").sort("id").equals(before)


def test_an_older_chat_does_not_replace_a_newer_fact(store, tmp_path: Path, now: datetime) -> None:
    """A message dated before the key's current version is kept without its key, not as the value."""
    store.add("I moved to Denver", namespace=NS, key="fact.residence", conflict_policy="supersede", now=now)
    old = [
        {"role": "user", "content": "I live in Boston", "created_at": (now - timedelta(days=30)).isoformat()}
    ]
    import_file(store, _chat_file(tmp_path, old), "chat", namespace=NS, now=now + timedelta(hours=1))
    assert (
        store.read("fact.residence", namespace=NS, now=now + timedelta(hours=2)).content
        == "I moved to Denver"
    )
    boston = store.frame(NS).filter(pl.col("content") == "I live in Boston")
    assert boston["key"].to_list() == [None] and boston["status"].to_list() == ["active"]


def test_a_key_the_requester_may_not_write_is_dropped_not_the_import(store, now: datetime) -> None:
    """As the agent's write falls back: another writer's private value of the key stays, the
    imported statement is kept as a plain memory."""
    store.add(
        "I live in Oslo", namespace=NS, key="fact.residence", requester="bob", access="private", now=now
    )
    frame = chat_frame([{"role": "user", "content": "I live in Boston"}], namespace=NS)
    report = add_frame(store, frame, requester="alice", now=now, conflict_policy="supersede")
    assert report["action"].to_list() == ["added"]
    assert store.get(report["id"][0], requester="alice").key is None
    with pytest.raises(mk.errors.ValidationError, match="conflict_policy"):
        add_frame(store, frame, conflict_policy="newest")


def _frame(rows: list[tuple[str, str | None]], t: datetime) -> pl.DataFrame:
    n = len(rows)
    return pl.DataFrame(
        {"id": [f"m{i}" for i in range(n)], "namespace": ["u"] * n, "key": [r[1] for r in rows],
         "content": [r[0] for r in rows], "value": [None] * n, "layer": ["long_term"] * n,
         "status": ["active"] * n, "access": ["public"] * n, "owner": ["x"] * n, "created_by": ["x"] * n,
         "importance": [0.6] * n, "half_life_hours": [2160.0] * n, "created_at": [t] * n,
         "valid_until": [None] * n, "access_count": [1] * n},
        schema_overrides={"key": pl.String, "value": pl.String, "valid_until": pl.Datetime("us", "UTC")},
    )  # fmt: skip


@pytest.mark.parametrize(
    "rows",
    [
        [("I live in Boston", None), ("I moved to Boston", None)],
        [("I live in Boston.", None), ("User moved to Boston now", None), ("I'm based in Boston, MA", None)],
        [("我住在杭州", None), ("我现在在杭州住", None), ("用户搬到杭州了", None)],
        [("I work at Google", None), ("I got a job at Google", "fact.employer")],
        [("I'm a nurse", None), ("I work as a nurse", None), ("The user is a nurse at St Mary's", None)],
        [("I'm 30 years old", None), ("I just turned 30", None), ("我今年30岁", None)],
        [("My name is Ann", None), ("call me Ann", None), ("I go by Ann", None)],
    ],
)
def test_mk011_reads_one_value_through_different_leads(
    rows: list[tuple[str, str | None]], now: datetime
) -> None:
    assert (
        analyze(_frame(rows, now), now, guard=mk.GuardParams(enabled=False))
        .filter(pl.col("code") == "MK011")
        .is_empty()
    )


@pytest.mark.parametrize(
    "rows",
    [
        [("I live in Boston", None), ("I live in Denver", None)],
        [("I live in Boston", None), ("User moved to Denver", None)],
        [("我住在杭州", None), ("我搬到上海了", None)],
        [("I work at Google", None), ("I got a job at Stripe", "fact.employer")],
        [("我叫小王", None), ("用户叫李明", None)],
    ],
)
def test_mk011_still_flags_two_values(rows: list[tuple[str, str | None]], now: datetime) -> None:
    got = analyze(_frame(rows, now), now, guard=mk.GuardParams(enabled=False)).filter(
        pl.col("code") == "MK011"
    )
    assert got["memory_id"].to_list() == [f"m{i}" for i, r in enumerate(rows) if r[1] is None]


def test_reimporting_after_a_newer_value_changes_nothing(store, tmp_path: Path, now: datetime) -> None:
    """A dated chat imported with its keys, then the user says something newer: the chat imported again
    is present (its keyed copies), not written again without keys."""
    chat = [
        {"role": "user", "content": "I live in Boston", "created_at": now.isoformat()},
        {
            "role": "user",
            "content": "I moved to Denver",
            "created_at": (now + timedelta(hours=1)).isoformat(),
        },
    ]
    path = _chat_file(tmp_path, chat)
    import_file(store, path, "chat", namespace=NS, now=now + timedelta(hours=2))
    store.add("I moved to Oslo", namespace=NS, key="fact.residence", conflict_policy="supersede",
              now=now + timedelta(days=1))  # fmt: skip
    before = store.frame(NS).select("id", "content", "key", "status").sort("id")
    again = import_file(store, path, "chat", namespace=NS, now=now + timedelta(days=2))
    assert again["action"].to_list() == ["present", "present"]
    assert store.frame(NS).select("id", "content", "key", "status").sort("id").equals(before)
