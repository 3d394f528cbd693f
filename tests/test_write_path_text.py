"""Three write paths that disagreed with the others (probe h170): the agent's "remember" stored a
normalized copy of the user's words (F1); text of invisible characters only was "not empty" (F2); an
all-zero given embedding was refused by import but not by ``add_many`` (F3)."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import NOW, assert_unchanged, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit.commands import parse
from memkit.commands import patterns as _in
from memkit.commands.parser import _ALONE, _as_written, _mark
from memkit.text import normalize


# --------------------------------------------------------------- F1: the payload as the user wrote it
@pytest.mark.parametrize(
    ("message", "op", "payload"),
    [
        ("remember that the formula is E=mc² and step ① comes first", "remember",
         "the formula is E=mc² and step ① comes first"),
        ("记住我喜欢喝茶，不喜欢咖啡！", "remember", "我喜欢喝茶，不喜欢咖啡"),  # the closing ！ is trimmed
        ("remember that my office is Ｂ栋３０２室", "remember", "my office is Ｂ栋３０２室"),
        ("请记住：我的分机是（８０２）。", "remember", "我的分机是（８０２）"),
        ("ｒｅｍｅｍｂｅｒ ｔｈａｔ my office is Ｂ栋３０２室。", "remember", "my office is Ｂ栋３０２室"),
        ("Remember that ﬁsh and chips cost ￡5", "remember", "ﬁsh and chips cost ￡5"),  # NFKC: ﬁ -> fi
        ("remember that I   like\u3000tea  ", "remember", "I   like\u3000tea"),  # spaces inside stay
        ("记住\u200b我喜欢茶", "remember", "我喜欢茶"),  # an invisible character before it is no part of it
        ("remember that my cat is called ❤️", "remember", "my cat is called ❤️"),  # its variation selector
        ("remember that I like caf\u0065\u0301", "remember", "I like caf\u0065\u0301"),  # decomposed é
        ("remember that \u1112\u1161\u11ab is my name", "remember", "\u1112\u1161\u11ab is my name"),  # jamo
        ("remember that ｶﾞﾗｽ is glass", "remember", "ｶﾞﾗｽ is glass"),  # half-width kana: 4 chars, 3 in NFKC
        ("记住Ｉ’ｍ ｖｅｇａｎ，谢谢", "remember", "Ｉ’ｍ ｖｅｇａｎ"),  # the thanks closing it is not
        ("忘掉我喜欢拿铁，谢谢！", "forget", "我喜欢拿铁"),
        ("忘了我住在Ｂ栋这件事吧", "forget", "我住在Ｂ栋"),
        ("forget that I like ｃｏｆｆｅｅ", "forget", "I like ｃｏｆｆｅｅ"),
        ("Please forget my birthday ①.", "forget", "my birthday ①"),
    ],
)  # fmt: skip
def test_the_payload_is_the_users_own_words(message: str, op: str, payload: str) -> None:
    cmd = parse(message)
    assert cmd is not None and (cmd.op, cmd.text, cmd.raw) == (op, payload, message)
    assert cmd.text in message


@pytest.mark.parametrize(
    ("said", "payload"),
    [
        ("remember that the formula is E=mc² and step ① comes first",
         "the formula is E=mc² and step ① comes first"),
        ("记住我喜欢喝茶，不喜欢咖啡！", "我喜欢喝茶，不喜欢咖啡"),
        ("remember that my office is Ｂ栋３０２室", "my office is Ｂ栋３０２室"),
        ("请记住：ＡＰＩ网关在３号机房", "ＡＰＩ网关在３号机房"),
        ("remember that 我的生日是１２月３日", "我的生日是１２月３日"),
    ],
)  # fmt: skip
def test_the_agent_stores_what_add_stores_for_the_same_words(said: str, payload: str) -> None:
    with mk.MemoryStore() as s, mk.MemoryStore() as t:
        agent = mk.MemoryAgent(s, lambda p: "ok", "u", "bob", now=NOW)
        reply = agent.chat(said, now=NOW)
        assert s.frame("u")["content"].to_list() == [t.add(payload, namespace="u", now=NOW).content]
        english = said.startswith("remember")  # the reply is in the language of the command words
        assert reply.text == (f"OK, I'll remember: {payload}" if english else f"好的，我记住了：{payload}")


_ALPHABET = list("ab 记住,.!?。，！？~～…\t\n’'ＢＩ３") + [
    "\u200b", "\u00ad", "\ufeff", "\u3000", "\u00a0", "ﬁ", "①", "²", "e\u0301", "\u0301", "\u0316", "가",
    "\u1100", "\u1161", "\u11a8", "❤", "\ufe0f", "㍿", "¨", "\u0344", "ｶ", "ﾞ", "\u09c7", "\u09be", "ㄱ", "ㅏ",
]  # fmt: skip


def _flat(text: str) -> str:
    """:func:`normalize` with whitespace runs as one space, not stripped (a piece of norm's form)."""
    return re.sub(r"\s+", " ", normalize(text, casefold=False).replace("\u2019", "'"))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET), max_size=14).map("".join))
def test_every_normalized_character_maps_back_to_the_text(text: str) -> None:
    """NFKC changes lengths, reorders and composes marks, joins jamo: the span of the whole normalized
    text still normalizes to it, and any piece of it comes from a span that holds it."""
    norm = _in.norm(text)
    if not norm:
        return
    whole = _as_written(text, norm, 0, len(norm))
    assert whole is not None and _in.norm(whole) == norm
    for start in range(len(norm)):
        part = _as_written(text, norm, start, 1)
        assert part is not None and norm[start] in _flat(part)


def test_characters_read_alone_never_attach_to_what_precedes_them() -> None:
    """The shortcut of the offset map: no character of ``_ALONE`` is a mark, nor normalizes to the
    second of a canonical composition (nor is a Hangul vowel or final jamo)."""
    seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(0x30000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<") and len(parts := d.split()) == 2:
            seconds.add(int(parts[1], 16))
    alone = [chr(cp) for cp in range(0x30000) if _ALONE.match(chr(cp))]
    assert len(alone) > 39_000
    bad = [c for c in alone if _mark(c) or ord(unicodedata.normalize("NFKC", c)[:1] or " ") in seconds]
    assert bad == []


# ------------------------------------------------------------- F2: invisible characters only are empty
BLANK = ["\u200b\u2060\ufeff\u00ad", "\u200b", " \u200b\n", "\u3000\u200b\u3000", "\u3164", "\uffa0\u115f"]


@pytest.mark.parametrize("content", BLANK)
def test_add_refuses_invisible_text_as_it_refuses_spaces(store: mk.MemoryStore, content: str) -> None:
    before = snapshot(store)
    for text in (" ", content):
        with pytest.raises(mk.ValidationError, match="^content: must not be empty$"):
            store.add(text, namespace="u", now=NOW)
    assert_unchanged(store, before)


@pytest.mark.parametrize("content", BLANK)
@pytest.mark.parametrize("extra", [{}, {"value": [1] * 1000}])  # the columns' path, the rows' path
def test_add_many_refuses_a_blank_row_and_writes_nothing(
    store: mk.MemoryStore, content: str, extra: dict
) -> None:
    texts = [f"user note {i}" for i in range(1000)]
    texts[500] = content
    before = snapshot(store)
    with pytest.raises(mk.ValidationError, match=r"^content\[row 500\]: must not be empty$"):
        store.add_many(pl.DataFrame({"content": texts, **extra}), namespace="u", now=NOW)
    assert_unchanged(store, before)


@pytest.mark.parametrize("content", ["杭\u200b州", "\u200bhi", "a\u3164b", "中\u00ad"])
def test_text_with_something_visible_is_kept_as_written(store: mk.MemoryStore, content: str) -> None:
    assert store.add(content, namespace="u", now=NOW).content == content
    out = store.add_many(pl.DataFrame({"content": [content, "tea"]}), namespace="u", now=NOW)
    assert out["status"].to_list() == ["active", "active"]


@pytest.mark.parametrize("content", [" ", *BLANK])
def test_import_refuses_a_blank_line_content(store: mk.MemoryStore, tmp_path: Path, content: str) -> None:
    store.add("User prefers tea", namespace="u1", now=NOW)
    store.export(tmp_path / "a.jsonl", now=NOW)
    lines = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    lines[1]["content"] = content
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with mk.MemoryStore() as dst:
        before = snapshot(dst)
        with pytest.raises(mk.FormatError, match="^line 2: content: must not be empty$"):
            dst.import_(tmp_path / "b.jsonl", now=NOW)
        assert_unchanged(dst, before)


@pytest.mark.parametrize("blank", [" ", *BLANK])
def test_search_and_the_agent_refuse_a_blank_as_they_refuse_spaces(store: mk.MemoryStore, blank: str) -> None:
    with pytest.raises(mk.ValidationError, match="^query: must not be empty$"):
        store.search(blank, namespace="u", now=NOW)
    agent = mk.MemoryAgent(store, lambda p: "ok", "u", "bob", now=NOW)
    with pytest.raises(mk.ValidationError, match="^message: must not be empty$"):
        agent.chat(blank, now=NOW)


@pytest.mark.parametrize("content", BLANK)
def test_mcp_add_memory_refuses_invisible_text(store: mk.MemoryStore, content: str) -> None:
    pytest.importorskip("mcp")
    from memkit.integrations.mcp import _MemoryTools

    tools = _MemoryTools(store, "u", None, lambda: NOW)
    before = snapshot(store)
    for text in ("   ", content):
        with pytest.raises(mk.ValidationError, match="^content: must not be empty$"):
            tools.add_memory(text)
    assert_unchanged(store, before)


@pytest.mark.parametrize("blank", BLANK)
def test_langgraph_reads_invisible_text_as_blank(store: mk.MemoryStore, blank: str) -> None:
    """LangGraph skips a blank string of a value (a value with no text is stored as its JSON) and
    lists for a blank query: invisible characters only are blank there too."""
    pytest.importorskip("langgraph")
    from memkit.integrations.langgraph import MemkitStore

    lg = MemkitStore(store, now=NOW)
    lg.put(("u",), "a", {"t": blank, "u": "I like tea"})
    lg.put(("u",), "b", {"t": blank})
    lg.put(("u",), "c", {"t": " "})
    assert sorted(store.frame("u")["content"].to_list()) == sorted(
        ["I like tea", json.dumps({"t": blank}, ensure_ascii=False), '{"t": " "}']
    )
    assert len(lg.search(("u",), query=blank)) == len(lg.search(("u",), query=" ")) == 3


# -------------------------------------------------------- F3: a given vector that points nowhere
def _frame(store: mk.MemoryStore, texts: list[str], extra: dict | None = None) -> pl.DataFrame:
    emb = store.embedder.embed(texts).astype(np.float32)
    return pl.DataFrame({"content": texts, **(extra or {})}).with_columns(
        pl.Series("embedding", emb, dtype=pl.Array(pl.Float32, store.embedder.dim))
    )


@pytest.mark.parametrize("vector", [0.0, 1e-30])  # all zeros; so small its squares vanish
@pytest.mark.parametrize("extra", [{}, {"value": [1] * 1000}])
def test_add_many_refuses_a_zero_embedding_where_the_text_has_a_direction(
    store: mk.MemoryStore, vector: float, extra: dict
) -> None:
    store.add("User prefers tea", namespace="u", now=NOW)
    frame = _frame(store, [f"user note number {i}" for i in range(1000)], extra)
    emb = frame["embedding"].to_numpy().copy()
    emb[500] = vector
    frame = frame.with_columns(pl.Series("embedding", emb, dtype=frame["embedding"].dtype))
    before = snapshot(store)
    says = r"^embedding\[row 500\]: is all zeros .* would match nothing"
    with pytest.raises(mk.ValidationError, match=says):
        store.add_many(frame, namespace="u", now=NOW)
    assert_unchanged(store, before)


def test_a_zero_embedding_for_a_text_without_words_is_kept_as_import_keeps_it(
    store: mk.MemoryStore, tmp_path: Path
) -> None:
    """The embedder gives "!!!" no direction either: import accepts that line, so add_many does."""
    assert not store.embedder.embed(["!!!"]).any()
    frame = _frame(store, ["User prefers tea", "!!!"])
    emb = frame["embedding"].to_numpy().copy()
    emb[1] = 0.0
    frame = frame.with_columns(pl.Series("embedding", emb, dtype=frame["embedding"].dtype))
    assert store.add_many(frame, namespace="u", now=NOW)["status"].to_list() == ["active", "active"]
    stored = store.frame("u", include_embedding=True)
    assert not np.asarray(stored.filter(pl.col("content") == "!!!")["embedding"][0]).any()
    store.export(tmp_path / "a.jsonl", include_embeddings=True, now=NOW)
    with mk.MemoryStore() as dst:
        assert dst.import_(tmp_path / "a.jsonl", now=NOW)["action"].to_list() == ["added"] * 2
