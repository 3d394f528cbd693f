"""Command phrases in both languages (review h185): courtesy around a command, the "don't forget"
phrasings, and a sentence-final particle.

- Thanks or "please" closing a command, and 请 / 麻烦 / please / pls / kindly opening it, are no part of
  it, for every op: 撤销，谢谢 and "undo that, thanks" undo (before, the closing words made them ordinary
  turns, saved as memories).
- 别忘了… / 不要忘记… / 千万记得… / 记得… before a statement of the user's own remember it, as "Don't forget
  that …" does; 记得带伞 / 不要忘记带伞 / 别忘了我的伞 remind, and are no command.
- A closing particle 吧 / 哈 / 哦 / 啊 / 呀 / 啦 is no part of any payload (记住我住在杭州吧 stores
  我住在杭州), but a word ending in the character keeps it (酒吧, 哈哈).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import memkit as mk
from memkit.agent import EchoLLM, MemoryAgent
from memkit.commands import admit_many, parse

UNDO = [
    "撤销，谢谢",
    "撤销吧，谢谢！",
    "把刚才那条删掉，谢谢",
    "删掉上一条，麻烦了",
    "撤销谢谢",
    "麻烦撤销一下，谢谢",
    "请，撤销",
    "撤销啊",
    "undo that, thanks",
    "Undo that, thank you!",
    "scratch that please",
    "delete the last memory, thanks",
    "kindly undo that",
    "pls, undo that",
    "please undo that, thanks",
    "oops, undo that",
    "这条别记了",
    "算了不用记了",
    "算了，不用记了",
    "不用记了",
]
SHOW = [
    "你记得我什么，谢谢",
    "你记得我什么呀",
    "what do you know about me, thanks",
    "what do you know about me please",
    "kindly show my memories",
    "麻烦列出我的记忆",
]
# (message, op, payload)
PAYLOADS = [
    # a courtesy tail and lead, every payload op
    ("记住我对花生过敏，谢谢", "remember", "我对花生过敏"),
    ("kindly remember that I'm vegan", "remember", "I'm vegan"),
    ("remember that I'm vegan please", "remember", "I'm vegan"),
    ("忘了咖啡的事吧，谢谢", "forget", "咖啡"),
    ("把我的生日忘了吧，谢谢", "forget", "我的生日"),
    ("kindly forget my address", "forget", "my address"),
    ("forget my address, thanks", "forget", "my address"),
    # ... unless the word is what was said
    ("remember that she never says please", "remember", "she never says please"),
    ("remember that my dog is called Thanks", "remember", "my dog is called Thanks"),
    # "don't forget" in Chinese, before the user's own statement
    ("别忘了我对花生过敏", "remember", "我对花生过敏"),
    ("不要忘记我周五要交报告", "remember", "我周五要交报告"),
    ("不要忘了我不吃香菜", "remember", "我不吃香菜"),
    ("千万别忘了我对青霉素过敏", "remember", "我对青霉素过敏"),
    ("千万记得我对青霉素过敏", "remember", "我对青霉素过敏"),
    ("记得我不吃香菜", "remember", "我不吃香菜"),
    ("别忘了我的生日是五月三日", "remember", "我的生日是五月三日"),
    ("别忘了：周五交报告", "remember", "周五交报告"),
    ("好的，别忘了我对花生过敏，谢谢", "remember", "我对花生过敏"),
    ("remember, I live in Paris", "remember", "I live in Paris"),
    ("can u remember that I'm vegan", "remember", "I'm vegan"),
    # a closing particle, every payload op
    ("记住我住在杭州吧", "remember", "我住在杭州"),
    ("记住我住在杭州哦～", "remember", "我住在杭州"),
    ("记住我住在杭州啦，谢谢", "remember", "我住在杭州"),
    ("帮我记一下明天开会呀", "remember", "明天开会"),
    ("忘掉我的地址哈", "forget", "我的地址"),
    ("忘掉我的地址吧", "forget", "我的地址"),
    # ... but not the end of a word
    ("记住我常去的酒吧", "remember", "我常去的酒吧"),
    ("忘掉我常去的酒吧", "forget", "我常去的酒吧"),
    ("记住我的狗叫哈哈", "remember", "我的狗叫哈哈"),
    # the payload is still the user's own words (full-width kept), minus the particle
    ("记住：Ｂ栋３０２室吧！", "remember", "Ｂ栋３０２室"),
]
NOT_COMMANDS = [
    "不要忘记带伞",
    "别忘了带伞",
    "记得带伞",
    "千万记得带伞",
    "别忘了我的伞",
    "别忘了我的生日",
    "别忘了我",
    "别忘了我们",
    "别忘了我啊",
    "记得我吗",
    "记得我喜欢什么",
    "你还记得我住在哪吗",
    "你记得带伞了吗",
    "don't forget to bring an umbrella",
    "never mind the weather, how are you?",
    "forget it please",
    "forget it, thanks",
    "忘掉吧，谢谢",
    "好的，谢谢",
    "thanks",
    "谢谢",
    "please",
    "别记错了，谢谢",
]


@pytest.mark.parametrize("text", UNDO)
def test_a_courteous_undo_is_an_undo(text: str) -> None:
    cmd = parse(text)
    assert cmd is not None and (cmd.op, cmd.text) == ("delete_last", "")


@pytest.mark.parametrize("text", SHOW)
def test_a_courteous_show_is_a_show(text: str) -> None:
    cmd = parse(text)
    assert cmd is not None and (cmd.op, cmd.text) == ("show", "")


@pytest.mark.parametrize(("text", "op", "payload"), PAYLOADS)
def test_payload_commands_in_both_languages(text: str, op: str, payload: str) -> None:
    cmd = parse(text)
    assert cmd is not None and (cmd.op, cmd.text, cmd.raw) == (op, payload, text)


@pytest.mark.parametrize("text", NOT_COMMANDS)
def test_reminders_and_courtesy_alone_are_no_commands(text: str) -> None:
    assert parse(text) is None


def test_admit_many_agrees_with_parse() -> None:
    """admit_many strips the courtesy tail as parse does, in polars."""
    texts = UNDO + SHOW + [t for t, _, _ in PAYLOADS] + NOT_COMMANDS
    frame = admit_many(texts)
    for text, reason in zip(texts, frame["reason"], strict=True):
        cmd = parse(text)
        expected = None if cmd is None else ("explicit remember" if cmd.op == "remember" else "command")
        assert (reason if reason in ("explicit remember", "command") else None) == expected, text


@pytest.mark.parametrize(
    ("undo", "said"),
    [("撤销，谢谢", "记住我喜欢喝拿铁"), ("undo that, thanks", "remember that I like green tea")],
)
def test_agent_undo_with_thanks_erases_the_last_memory(
    store: mk.MemoryStore, now: datetime, undo: str, said: str
) -> None:
    agent = MemoryAgent(store, EchoLLM(), "u", "assistant", now=now)
    agent.chat(said)
    agent.chat(undo, now=now + timedelta(minutes=1))
    frame = store.frame("u")
    assert undo not in frame["content"].to_list()  # not saved as a memory
    assert frame.filter(status="active").height == 0  # the remembered one is gone


def test_agent_stores_what_dont_forget_names(store: mk.MemoryStore, now: datetime) -> None:
    agent = MemoryAgent(store, EchoLLM(), "u", "assistant", now=now)
    agent.chat("别忘了我对花生过敏")
    agent.chat("记住我住在杭州吧", now=now + timedelta(minutes=1))
    rows = store.frame("u").filter(status="active")
    assert sorted(rows["content"].to_list()) == ["我住在杭州", "我对花生过敏"]
    assert set(rows["layer"].to_list()) == {"long_term"}
