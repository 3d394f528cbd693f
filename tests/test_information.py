"""How much a memory says (memkit.information): the vectorized count equals the reference on
memkit's own tokenizer, in English, Chinese and both, and in Thai, Devanagari, Japanese and Korean."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit.information import information, information_of


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Thanks, bye!", 2.0),  # thank, bye
        ("Painted, painting, paints", 1.0),  # one stem
        ("The weather is what it is", 1.0),  # only "weather" is not a stopword
        ("用户对花生过敏", 3.5),  # 7 characters, half a word each
        ("好的，谢谢！", 1.0),  # 好 谢 (的 is a stop character)
        ("我们住在哪里", 0.5),  # 我们 and 哪里 are stop words, 在 a stop character: 住
        ("就是不是", 0.0),  # 就是 and 是不是 overlap: every character is inside one
        ("跑步5公里 every morning", 5.0),  # 跑 步 公 里 (4 characters: 2) + 5, every, morning (3)
        ("ＦＵＬＬ　ｗｉｄｔｈ", 2.0),  # NFKC: "full width"
        # h126 F7: a Thai text was one "word" in the vectorized count (polars' \w takes its marks)
        ("ผู้ใช้แพ้ถั่วลิสง", 6.0),  # "the user is allergic to peanuts": cut at its marks, as tokenize does
        ("ขอบคุณมากครับ", 3.0),  # "thank you very much"
        ("नमस्ते दुनिया", 5.0),  # Devanagari: the same cut
        ("감사합니다", 5 / 3),  # a Hangul syllable counts a third ("thanks": one word, 5 syllables)
        ("ありがとう", 5 / 3),  # ... a kana too
        ("ユーザーは花", 0.5 + 4 / 3),  # 花 an ideograph; ユ ー ザ は: 4 kana
    ],
)
def test_information_counts_content_words(text: str, said: float) -> None:
    assert information_of(text) == said
    assert information([text]).to_list() == [said]


_ALPHABET = (
    list("abcxyz019 ,.!?'-_éü")
    + list("的了是我们在吗什么哪里为就不好用户花生过敏杭州")
    + ["\u200b", "Ａ", "İ"]
    + list("ผู้ใช้แพ้ถั่วลิสงนมสतेदुनियाありがとうユーザー감사합니다")  # scripts with combining marks, kana, Hangul
)
_WORDS = ["the", "running", "painted", "went", "Paris", "don't", "3pm", "STRASSE", "straße", "über"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_ALPHABET) | st.sampled_from(_WORDS), max_size=30), max_size=8))
def test_the_vectorized_count_equals_the_reference(parts: list[list[str]]) -> None:
    texts = ["".join(p) for p in parts]
    assert information(texts).to_list() == [information_of(t) for t in texts]


def test_thirds_agree_to_the_last_bit() -> None:
    # 5/3 as polars divides (10 * 1/6) differs from Python's 10/6 in the last bit: both count in sixths
    texts = ["ありがとう", "감사합니다 ok", "ありがとう 用户"]
    assert information(texts).to_list() == [information_of(t) for t in texts] == [10 / 6, 16 / 6, 16 / 6]


def test_information_takes_a_series_and_aligns_with_it() -> None:
    s = pl.Series("content", ["ok", None, "用户住在杭州", "Hi there Bob"])
    got = information(s)
    assert got.name == "information" and got.dtype == pl.Float64
    assert got.to_list() == [1.0, 0.0, 2.5, 2.0]  # a null says nothing; 用 户 住 杭 州: 5 characters
    assert information([]).to_list() == []


@pytest.mark.parametrize("bad", ["a str", 3, [1, 2], pl.Series([1, 2])])
def test_information_rejects_what_is_not_texts(bad) -> None:
    with pytest.raises(mk.ValidationError, match="^texts:"):
        information(bad)
