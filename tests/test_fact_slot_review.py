"""A review of the user in the third person and of imported chats' keys (helper 144): the sentence set
(traps: another person next to "user", two users, a transcript with another speaker's turn, the future,
a negation; extractor styles), two users' chats in one namespace, a chat file listed newest first, and
the supersede check reading only the keys' rows."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from admission_checks import admits_alike

from memkit.commands import admit
from memkit.portable.adapters import import_file

NS = "user_144"

# the user's own fact, in the third person, the first person, or an extractor's list
KEYED = [
    ("User lives in Boston", "fact.residence"),
    ("The user lives in Denver.", "fact.residence"),
    ("User moved to Seattle last month", "fact.residence"),
    ("The user works at Google", "fact.employer"),
    ("User is a nurse", "fact.job"),
    ("The user's name is Ann", "fact.name"),
    ("User currently lives in Austin", "fact.residence"),
    ("用户住在杭州", "fact.residence"),
    ("用户叫李明", "fact.name"),
    ("用户在阿里巴巴工作", "fact.employer"),
    ("User is 34 years old", "fact.age"),
    ("The user is married", "fact.relationship"),
    ("User grew up in Ohio", "fact.hometown"),
    ("User studies at MIT", "fact.school"),
    ("用户是一名护士", "fact.job"),
    ("用户搬到了上海", "fact.residence"),
    ("[user] lives in Boston", "fact.residence"),
    ("- User lives in Boston", "fact.residence"),
    ("* The user works at Acme", "fact.employer"),
    ("I live in Boston", "fact.residence"),
    ("我住在北京", "fact.residence"),
    ("I work at Acme", "fact.employer"),
    ("• 用户住在杭州", "fact.residence"),
    ("[user]'s name is Ann", "fact.name"),
    ("Note: the user is based in Berlin", "fact.residence"),
]
# another person, not one user, a transcript, the future or a wish, a negation: no key
UNKEYED = [
    "User's manager lives in Chicago",
    "The user's wife works at Microsoft",
    "The user and his wife live in Boston",
    "User and Bob live in Paris",
    "User group lives in Boston",
    "User 42 lives in Boston",
    "User #42 lives in Boston",
    "User A lives in Boston",
    "User-agent is Mozilla",
    "User experience is a designer's job",
    "User story: a nurse logs in",
    "User interface is called Atlas",
    "用户反馈说他住在北京",
    "用户反馈：住在北京的客户投诉多",
    "用户的妈妈住在杭州",
    "用户群住在北京",
    "用户们住在上海",
    "用户张三住在北京",
    "用户名叫admin",
    "用户体验是设计师的工作",
    "用户说他住在北京",
    "The user mentioned that Bob works at Acme",
    "The user said Bob lives in Denver",
    "The user mentioned Bob works at Acme",
    "User's friend Bob is a nurse",
    "User's dog is called Rex",
    "User's company is called Acme",
    "The user's son is 5 years old",
    "User's sister moved to Paris",
    "User 1 lives in Boston. User 2 lives in Denver.",
    "User: I live in Boston. Assistant: I live in the cloud.",
    "User: hi. Assistant: My name is Claude.",
    "Assistant: I am a doctor. User: ok",
    "User: where? Assistant: I work at OpenAI",
    "The user is asking whether I live in Boston",
    "The user is a fan of Boston",
    "User is from Google",
    "The user is from Mars",
    "user is called by the system",
    "The user is named in the ticket",
    "User has moved to Python 3",
    "User's current city: Boston",
    "User — lives in Boston",
    "User: lives in Boston",
    "The user will live in Boston",
    "User plans to move to Denver",
    "User is going to move to Denver",
    "The user wants to live in Paris",
    "The user would like to work at Google",
    "If the user moves to Paris, remind them",
    "用户打算搬到上海",
    "用户下个月要搬到上海",
    "用户将搬到深圳",
    "User is moving to Denver next month",
    "User might work at Google",
    "User is about to move to Boston",
    "User will start at Google in May",
    "The user no longer lives in Boston",
    "User doesn't work at Acme anymore",
    "User does not live in Boston",
    "The user doesn't live in Denver",
    "User isn't a nurse",
    "User is not a nurse",
    "User never lived in Boston",
    "用户不再住在北京",
    "用户不住在北京",
    "用户没有在阿里工作",
    "用户不是护士",
    "I don't live in Boston",
    "I no longer work at Acme",
    "I'm not a nurse",
    "我不住在北京",
    "我不再住在北京了",
    "我没在阿里工作",
    "I do not work at Google",
    "I never lived in Boston",
    "I'm no longer married",
    "我不是老师",
    "I don't work at Acme anymore",
    "I didn't move to Denver",
    "助手：我住在云端",
    "Assistant (GPT-4): I live in Paris",
    "My mom is asking whether I live in Boston",
    "- The user's mother lives in Paris",
    "- 用户们住在杭州",
]


@pytest.mark.parametrize(("text", "key"), KEYED)
def test_the_users_own_fact_is_keyed(text: str, key: str) -> None:
    assert admit(text).key == key


@pytest.mark.parametrize("text", UNKEYED)
def test_a_trap_gets_no_key(text: str) -> None:
    assert admit(text).key is None


def test_admit_and_admit_many_agree_on_the_review_set() -> None:
    texts = [t for t, _ in KEYED] + UNKEYED
    admits_alike(texts)


def _chat(tmp_path: Path, messages: list[dict], name: str = "chat.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return path


def _rows(store) -> list[tuple]:
    return store.frame(NS).select("content", "key", "status").sort("content").rows()


def test_another_users_chat_does_not_replace_a_users_fact(store, tmp_path: Path, now: datetime) -> None:
    """Two users' chats in one namespace: bob's "I live in Denver" is his, not a new value of alice's
    residence (her public value stays current; his is kept without the key)."""
    alice = _chat(tmp_path, [{"role": "user", "content": "I live in Boston"}], "alice.json")
    bob = _chat(tmp_path, [{"role": "user", "content": "I live in Denver"}], "bob.json")
    import_file(store, alice, "chat", namespace=NS, requester="alice", now=now)
    import_file(store, bob, "chat", namespace=NS, requester="bob", now=now + timedelta(hours=1))
    assert _rows(store) == [
        ("I live in Boston", "fact.residence", "active"), ("I live in Denver", None, "active")
    ]  # fmt: skip
    # alice's own newer chat still supersedes her value
    later = _chat(tmp_path, [{"role": "user", "content": "I moved to Austin"}], "later.json")
    import_file(store, later, "chat", namespace=NS, requester="alice", now=now + timedelta(hours=2))
    assert store.read(
        "fact.residence", namespace=NS, requester="alice", now=now + timedelta(hours=3)
    ).content == ("I moved to Austin")


def test_a_chat_listed_newest_first_keeps_its_newest_value(store, tmp_path: Path, now: datetime) -> None:
    """A dated message listed after a later one of the same key is not the value: the latest stays."""
    chat = [
        {
            "role": "user",
            "content": "I moved to Denver",
            "created_at": (now + timedelta(hours=2)).isoformat(),
        },
        {"role": "user", "content": "I live in Boston", "created_at": (now + timedelta(hours=1)).isoformat()},
    ]
    import_file(store, _chat(tmp_path, chat), "chat", namespace=NS, now=now + timedelta(days=1))
    assert (
        store.read("fact.residence", namespace=NS, now=now + timedelta(days=1)).content == "I moved to Denver"
    )
    assert _rows(store) == [
        ("I live in Boston", None, "active"), ("I moved to Denver", "fact.residence", "active")
    ]  # fmt: skip
    again = import_file(store, _chat(tmp_path, chat), "chat", namespace=NS, now=now + timedelta(days=2))
    assert again["action"].to_list() == ["present", "present"]


def test_the_supersede_check_reads_only_the_keys_rows(
    store, tmp_path: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chat import into a large namespace reads the keys' versions, never the whole namespace."""
    store.add("I live in Boston", namespace=NS, key="fact.residence", now=now)
    whole = []
    frame = store.frame

    def spy(*args, **kwargs):
        if kwargs.get("contents") is None:
            whole.append(args)
        return frame(*args, **kwargs)

    monkeypatch.setattr(store, "frame", spy)
    chat = [{"role": "user", "content": "I moved to Denver"}, {"role": "user", "content": "我喜欢喝美式咖啡"}]
    import_file(store, _chat(tmp_path, chat), "chat", namespace=NS, now=now + timedelta(hours=1))
    monkeypatch.undo()
    assert whole == []
    assert (
        store.read("fact.residence", namespace=NS, now=now + timedelta(hours=2)).content
        == "I moved to Denver"
    )
    assert len(_rows(store)) == 3
