"""memkit.commands: memory commands (Chinese and English) and the admission rule."""

from __future__ import annotations

import polars as pl
import pytest

import memkit as mk
from memkit.commands import Admission, Command, admit, admit_many, parse

POSITIVE = {
    "remember": [
        ("记住我喜欢美式咖啡", "我喜欢美式咖啡"),
        ("帮我记一下：明天下午三点开会", "明天下午三点开会"),
        ("请记住，我对花生过敏。", "我对花生过敏"),
        ("记住：我女儿叫小美", "我女儿叫小美"),
        ("你要记住我不吃香菜", "我不吃香菜"),
        ("请记得我周五不上班", "我周五不上班"),
        ("对了，记住我下周去上海", "我下周去上海"),
        ("記住我喜歡爵士樂", None),  # traditional characters are not folded: not a command (see below)
        ("remember that I'm allergic to peanuts", "I'm allergic to peanuts"),
        # a curly apostrophe matches as a straight one; the payload keeps it as written
        ("Remember that I’m allergic to peanuts", "I’m allergic to peanuts"),
        ("Please remember my wife's name is Anna", "my wife's name is Anna"),
        ("please remember: the standup moved to 10am", "the standup moved to 10am"),
        ("Remember I prefer aisle seats", "I prefer aisle seats"),
        ("ｒｅｍｅｍｂｅｒ ｔｈａｔ I live in Berlin", "I live in Berlin"),  # full-width Latin (NFKC)
        ("Keep in mind that I work remotely", "I work remotely"),
        ("Don't forget that my flight is on Monday", "my flight is on Monday"),
        ("Can you remember that I like jazz?", "I like jazz"),  # a polite request, not a recall question
        ("  REMEMBER THAT my locker is 42  ", "my locker is 42"),
    ],
    "forget": [
        ("忘了我喜欢美式咖啡这件事吧", "我喜欢美式咖啡"),
        ("忘掉我的地址", "我的地址"),
        ("好的，忘掉我的地址吧", "我的地址"),  # an acknowledgement first, as "OK, forget my address"
        ("嗯，忘了我喜欢美式咖啡这件事吧", "我喜欢美式咖啡"),
        ("不要记我的电话号码", "我的电话号码"),
        ("别记住我的生日", "我的生日"),
        ("请忘记我住在哪里", "我住在哪里"),
        ("把我的生日忘了吧", "我的生日"),
        ("你忘掉关于我前任的事", "我前任"),
        ("forget that I like coffee", "I like coffee"),
        ("Alright, forget my address", "my address"),  # an English acknowledgement first
        ("ok. forget my address", "my address"),
        ("Forget about my old address", "my old address"),
        ("don't remember my phone number", "my phone number"),
        ("Please forget my birthday.", "my birthday"),
        ("Do not store my address", "my address"),
        ("delete the memories about my ex", "my ex"),
    ],
    "delete_last": [
        "删除刚才那条",
        "删掉上一条",
        "删除刚才那条。",
        "把刚才那条删掉",
        "刚才那条删了吧",
        "别记住这个",  # "don't remember this": the thing just said
        "撤销",
        "delete the last memory",
        "Delete the most recent memory you saved",
        "remove the last one",
        "undo that",
        "Undo!",
        "scratch that",
        "forget what I just said",
        "don't remember that",
    ],
    "show": [
        "你记得我什么",
        "好的，你都记得我什么",  # an acknowledgement first
        "Alright, what do you know about me?",
        "你都记得我哪些事",
        "你都记得我哪些事？",
        "你知道我什么？",
        "关于我你记得什么",
        "你记得关于我的哪些事情",
        "查看我的记忆",
        "what do you remember about me",
        "What do you know about me?",
        "What have you stored about me?",
        "show my memories",
        "list all memories",
        "Please tell me what you know about me.",
        "ＷＨＡＴ ＤＯ ＹＯＵ ＫＮＯＷ ＡＢＯＵＴ ＭＥ？",
    ],
}

NEGATIVE = [
    "我忘了带钥匙",
    "Sure, I will remember that",
    "right, remember when we went to Paris",
    "Yes, remember that trip to Rome",  # an answer, then a recollection
    "Yeah forget about it, the weather is nice",
    "forget about it, the weather is nice",
    "Thanks, forget it",
    "OK, forget it",
    "好的，记住了",  # OK, noted
    "好，忘掉吧",  # never mind
    "嗯，我忘了带钥匙",
    "好的，忘了带伞",
    "忘了带伞",
    "忘记密码了怎么办",
    "我记住了",
    "记住了吗？",
    "记得我们上次去的那家店吗？",
    "你记得我喜欢什么吗？",  # a recall question: answered by recall, not a command
    "我不记得了",
    "别记错了",
    "不要忘记带伞",
    "删除这个文件",
    "我喜欢美式咖啡",
    "I forgot my keys",
    "do you remember the movie we saw?",  # a recall question, not a show-all command
    "Remember the Titans is a film",
    "Remember that movie we saw",
    "remember when we went to Paris",
    "remember me?",
    "I don't remember",
    "I can't remember",
    "I'll remember that",
    "forget it",
    "Forget it!",
    "What do you remember about my diet?",  # a question about one topic: ordinary recall
    "Do you know me?",
    "delete the file",
    "undo the git commit",
    "nobody will forget that day",
    "",
    "   ",
]


PAYLOADS = [(op, t, p) for op in ("remember", "forget") for t, p in POSITIVE[op]]


@pytest.mark.parametrize(("op", "text", "payload"), PAYLOADS)
def test_payload_commands(op: str, text: str, payload: str | None) -> None:
    cmd = parse(text)
    if payload is None:
        assert cmd is None
        return
    assert cmd == Command(op=op, text=payload, raw=text)
    assert cmd.query == payload


@pytest.mark.parametrize(("op", "text"), [(op, t) for op in ("delete_last", "show") for t in POSITIVE[op]])
def test_commands_without_payload(op: str, text: str) -> None:
    cmd = parse(text)
    assert cmd is not None and cmd.op == op and cmd.text == ""


@pytest.mark.parametrize("text", NEGATIVE)
def test_no_false_commands(text: str) -> None:
    assert parse(text) is None


def test_parse_rejects_non_text() -> None:
    for bad in (None, 3, b"remember that x", ["记住"]):
        with pytest.raises(mk.ValidationError, match="text"):
            parse(bad)  # type: ignore[arg-type]


def _all_texts() -> list[str]:
    pos = [t if isinstance(t, str) else t[0] for ts in POSITIVE.values() for t in ts]
    return pos + NEGATIVE + ["好的", "我喜欢喝美式咖啡", "I'll send it by Friday", "I met Alice at Acme"]


def test_admission_and_parse_agree_on_commands() -> None:
    """admit_many runs the command patterns as polars expressions; parse runs them in Python."""
    texts = _all_texts()
    frame = admit_many(texts)
    for text, reason in zip(texts, frame["reason"], strict=True):
        cmd = parse(text)
        expected = None if cmd is None else ("explicit remember" if cmd.op == "remember" else "command")
        assert (reason if reason in ("explicit remember", "command") else None) == expected, text


def test_admit_equals_admit_many_row() -> None:
    texts = _all_texts()
    frame = admit_many(texts)
    assert frame.columns == [
        "text",
        "role",
        "store",
        "layer",
        "kind",
        "importance",
        "protected",
        "reason",
        "key",
    ]
    assert frame.height == len(texts) and frame["text"].to_list() == texts
    for text, row in zip(texts, frame.iter_rows(named=True), strict=True):
        a = admit(text)
        assert a == Admission(**{f: row[f] for f in Admission.__dataclass_fields__})


@pytest.mark.parametrize(
    ("text", "store", "layer", "kind", "importance", "protected", "reason"),
    [
        ("记住我对花生过敏", True, "long_term", "fact", 0.9, True, "explicit remember"),
        ("remember that I prefer tea", True, "long_term", "preference", 0.9, True, "explicit remember"),
        ("记住我下周三之前要交报告", True, "long_term", "decision", 0.9, True, "explicit remember"),
        ("我喜欢喝美式咖啡，不加糖", True, "long_term", "preference", 0.7, False, "stated preference"),
        ("I prefer window seats", True, "long_term", "preference", 0.7, False, "stated preference"),
        ("我现在改喝拿铁了", True, "long_term", "preference", 0.7, False, "stated preference"),
        ("I'll send the report by Friday", True, "long_term", "decision", 0.7, False, "commitment"),
        ("下周三之前把方案发给老王", True, "long_term", "decision", 0.7, False, "commitment"),
        ("我打算明年去日本", True, "long_term", "decision", 0.7, False, "commitment"),
        ("我女儿叫小美", True, "long_term", "fact", 0.6, False, "personal fact"),
        ("I live in Berlin", True, "long_term", "fact", 0.6, False, "personal fact"),
        ("I met Alice at the station", True, "long_term", "fact", 0.5, False, "named entity"),
        ("最近在读《三体》", True, "long_term", "fact", 0.5, False, "named entity"),
        ("今天天气不错", True, "short_term", "event", 0.2, False, "ordinary turn"),
        ("the weather is nice today", True, "short_term", "event", 0.2, False, "ordinary turn"),
        ("我平时喜欢喝什么？", True, "short_term", "event", 0.2, False, "question"),
        ("Do you like jazz?", True, "short_term", "event", 0.2, False, "question"),
        ("你记得我什么", False, "short_term", "event", 0.0, False, "command"),
        ("忘掉我的地址", False, "short_term", "event", 0.0, False, "command"),
    ],
)
def test_admission_rules(
    text: str, store: bool, layer: str, kind: str, importance: float, protected: bool, reason: str
) -> None:
    a = admit(text)
    assert (a.store, a.layer, a.kind, a.importance, a.protected, a.reason) == (
        store, layer, kind, importance, protected, reason
    )  # fmt: skip


@pytest.mark.parametrize(
    "text",
    ["嗯", "嗯嗯", "好的", "好的！", "好的谢谢", "哈哈", "哈哈哈哈", "ok", "OK!", "ok thanks", "Thanks!",
     "thank you", "ｏｋ", "👍", "lol", "got it.", "收到～", "", "   ", "。。。"],
)  # fmt: skip
def test_filler_is_never_stored(text: str) -> None:
    a = admit(text)
    assert a.store is False and a.layer == "short_term" and a.reason in ("filler", "empty")


def test_filler_words_inside_a_sentence_are_not_filler() -> None:
    assert admit("ok, I'll call Bob tomorrow").reason == "commitment"
    assert admit("好的，我下周三之前交报告").reason == "commitment"


def test_preference_keys_name_the_topic() -> None:
    assert admit("我喜欢喝美式咖啡").key == admit("我现在更喜欢拿铁").key == "preference.drink"
    assert admit("I prefer window seats").key == "preference.seat"  # "seats" is not the word "eat"
    assert admit("I love jazz").key == "preference.music"
    assert admit("I like my replies short").key == "preference.reply_style"
    assert admit("我喜欢她").key is None  # a preference on no known topic: no key
    assert admit("I met Alice at Acme").key is None  # a fact on no known slot: no key


def test_roles() -> None:
    assert admit("I prefer tea", role="assistant").reason == "ordinary turn"  # not the user's preference
    assert admit("I'll remind you tomorrow", role="assistant").reason == "commitment"
    assert admit("You are a helpful assistant", role="system").store is False
    assert admit("记住我喜欢茶", role="tool").reason != "explicit remember"  # only the user commands
    frame = admit_many(["I prefer tea", "I prefer tea"], ["user", "assistant"])
    assert frame["reason"].to_list() == ["stated preference", "ordinary turn"]


def test_admission_bad_input() -> None:
    with pytest.raises(mk.ValidationError, match="role"):
        admit("hi", role="moderator")
    with pytest.raises(mk.ValidationError, match="text"):
        admit(None)  # type: ignore[arg-type]
    with pytest.raises(mk.ValidationError, match="texts"):
        admit_many("just one string")
    with pytest.raises(mk.ValidationError, match="texts: row 1"):
        admit_many(["a", 2])  # type: ignore[list-item]
    with pytest.raises(mk.ValidationError, match="roles"):
        admit_many(["a", "b"], ["user"])
    with pytest.raises(mk.ValidationError, match="roles: row 0"):
        admit_many(["a"], ["bot"])


def test_admit_many_accepts_a_series_and_empty_input() -> None:
    out = admit_many(pl.Series(["嗯", "我喜欢茶"]))
    assert out["store"].to_list() == [False, True]
    empty = admit_many([])
    assert empty.height == 0 and "reason" in empty.columns


@pytest.mark.parametrize(
    "text",
    ["哈" * 5000 + "x", "k" * 5000 + "!x", "嗯 " * 3000 + "x", "记住" + "很" * 20000, "《" * 5000,
     "我不" * 5000, "忘了" + " " * 20000 + "x", "remember that " + "x" * 50000, "吗 " * 10000],
)  # fmt: skip
def test_hostile_long_inputs_finish(text: str) -> None:
    """Near-misses of the repeated patterns: Python's re would backtrack exponentially on a nested
    repeat (this test would hang, not fail); both forms still agree."""
    a = admit(text)
    assert a == Admission(
        **{f: admit_many([text]).row(0, named=True)[f] for f in Admission.__dataclass_fields__}
    )
    parse(text)


def test_filler_repeats_and_mixes() -> None:
    assert admit("哈哈哈哈哈").store is False and admit("嗯嗯，好的好的～").store is False
    assert admit("kk ok okay!!").store is False and admit("hmm").store is False
    assert admit("哈哈哈哈哈x").store is True  # one real character makes it a message
