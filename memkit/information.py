"""How much a memory says: its distinct content words, in memkit's own tokens, counted vectorized.

Forgetting needs it to break ties (:mod:`memkit.forget`): when memories cost the same to forget —
the common case, every memory written with the default importance and never recalled — the one that
says least goes first ("Take care, bye!" before "Maria volunteers at a homeless shelter"), then the
oldest. On LoCoMo's conversations capacity then erases 5.3% of the turns the questions ask about
against 22.9% of the others; oldest first erased both alike (README, "Forgetting").

The count is taken on :func:`memkit.text.tokenize` with ``keep_stopwords=False``, the tokens BM25
and the hash embedder see::

    information = distinct Latin words and numbers (stemmed, stopwords out)
                + ½ · distinct CJK ideographs (stop characters and stop words out)
                + ⅓ · distinct kana and Hangul syllables

The tokenizer's CJK character *bigrams* are left out, and a CJK ideograph counts half: Chinese has
no spaces, and a word is usually two characters (:mod:`memkit.text`), so "User is allergic to
peanuts" (user, allergic, peanut: 3) and 用户对花生过敏 (7 characters: 3.5) say about as much, and a
namespace that mixes the two languages does not forget its English first. A pleasantry says little
in either: "Thanks, bye!" 2, 好的，谢谢！ 1 (好 and 谢; 的 is a stop character). A kana or a Hangul
syllable says less than an ideograph (a word takes about three: ありがとう 5 kana, 감사합니다 5
syllables), so each counts a third: ありがとう 5/3, 감사합니다 5/3, against "Thanks, bye!" 2.

Scripts written without spaces whose words are not CJK (Thai, Lao, Khmer, Burmese) are counted as the
tokenizer cuts them: a vowel or tone mark (a combining mark) ends a word, so a Thai text counts about
one per syllable or two (ผู้ใช้แพ้ถั่วลิสง, "the user is allergic to peanuts": 6; ขอบคุณมากครับ,
"thank you very much": 3). It is an approximation of their words, the same in both functions.

>>> information(["Take care, bye!", "Maria volunteers at a homeless shelter.", "好的，谢谢！",
...              "用户对花生过敏", "", "The", "감사합니다", "ขอบคุณมากครับ"]).round(2).to_list()
[3.0, 4.0, 1.0, 3.5, 0.0, 0.0, 1.67, 3.0]

It runs on whole columns: Latin words are found by one regex over the column and stemmed once per
distinct word (the vocabulary, not the memories: :func:`memkit.text.light_stem`); CJK characters are
exploded and a Chinese stop word (什么, 我们, 为什么 ...) is found by comparing each character with
its next one or two, as the tokenizer does. It agrees with :func:`information_of`, the per-text
reference on ``tokenize`` (a property test checks them on mixed English and Chinese, and on the
other scripts), up to one corner: it lowercases where ``tokenize`` case-folds (the same but for rare
letters such as the Greek final sigma; ``ß`` is folded to ``ss`` here too). A word character is a
letter or a digit (Unicode's L and N categories: Python's word characters less ``_``; polars' own
word class also takes combining marks, which made one word of a Thai or Devanagari text the
tokenizer cuts).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import polars as pl

from .errors import ValidationError
from .text import CJK, STOPWORDS, light_stem, normalize_expr, tokenize

__all__ = ["information", "information_of"]

# the Latin-word half of memkit.text's token pattern: a letter or digit, then letters, digits or
# combining accents (a CJK run is the other half)
_LETTER = rf"[\p{{L}}\p{{N}}&&[^{CJK}]]"  # Python's [^\W_] (polars' \w also takes combining marks)
_WORD = rf"{_LETTER}(?:{_LETTER}|[\u0300-\u036f])*"
_SYLLABIC = "\u3040-\u30ff\uac00-\ud7af"  # kana and Hangul: a third each (an ideograph: half)
_IS_SYLLABIC = re.compile(f"[{_SYLLABIC}]")
_IS_CJK = re.compile(rf"[{CJK}]+")
_CJK_STOP = {w for w in STOPWORDS if _IS_CJK.fullmatch(w)}  # 的 了 ... and 什么 我们 为什么 ...
_STOP_CHARS = sorted(w for w in _CJK_STOP if len(w) == 1)
_STOP_BIGRAMS = sorted(w for w in _CJK_STOP if len(w) == 2)
_STOP_TRIGRAMS = sorted(w for w in _CJK_STOP if len(w) == 3)
_STOP_WORDS = _STOP_BIGRAMS + _STOP_TRIGRAMS
_LATIN_STOP = sorted(w for w in STOPWORDS if not _IS_CJK.fullmatch(w))


def information_of(text: str) -> float:
    """The reference for one text, on :func:`memkit.text.tokenize` itself: distinct non-CJK tokens
    plus half the distinct CJK ideographs and a third of the distinct kana and Hangul syllables (single
    characters: its bigrams are not counted).

    >>> information_of("I painted, she paints: painting!"), information_of("我们住在杭州")
    (1.0, 1.5)
    """
    tokens = set(tokenize(text, keep_stopwords=False))
    cjk = {t for t in tokens if _IS_CJK.fullmatch(t)}
    syllabic = sum(len(t) == 1 and bool(_IS_SYLLABIC.match(t)) for t in cjk)
    ideographs = sum(len(t) == 1 for t in cjk) - syllabic
    # in sixths, divided once: the vectorized count does the same, so both agree to the last bit
    return (6 * len(tokens - cjk) + 3 * ideographs + 2 * syllabic) / 6


def information(texts: pl.Series | Sequence[str]) -> pl.Series:
    """:func:`information_of` of every text, vectorized -> ``Float64`` series named ``information``,
    aligned with ``texts`` (a null text says nothing: 0)."""
    if isinstance(texts, str) or not isinstance(texts, (pl.Series, Sequence)):
        raise ValidationError("texts", f"must be a sequence of str, got {type(texts).__name__}")
    s = texts if isinstance(texts, pl.Series) else pl.Series(list(texts))
    if s.dtype not in (pl.String, pl.Null):
        raise ValidationError("texts", f"must hold str, got {s.dtype}")
    frame = _normalized(s.cast(pl.String).fill_null(""))
    # rows with CJK characters only go through the character count (an English store skips it)
    cjk = frame.filter(pl.col("text").str.contains(f"[{CJK}]"))
    sixths = (
        frame.select("row")
        .join(_words(frame), on="row", how="left", maintain_order="left")
        .join(_chars(cjk), on="row", how="left", maintain_order="left")
        .select(
            6 * pl.col("words").fill_null(0)
            + 3 * pl.col("ideographs").fill_null(0)
            + 2 * pl.col("syllabic").fill_null(0)
        )
        .to_series()
        .to_numpy()
    )
    # subtle: divided by numpy, not polars (which multiplies by 1/6: 10/6 would differ in the last bit)
    return pl.Series("information", sixths.astype(np.float64) / 6)


def _normalized(s: pl.Series) -> pl.DataFrame:
    """``row, text``: ``s`` normalized as :func:`memkit.text.normalize` does (``ß`` folded to ``ss``,
    as casefold does). ASCII texts need lowercasing only: NFKC, the slow step, runs on the others."""
    frame = pl.DataFrame({"text": s}).with_row_index("row")
    other = frame.filter(pl.col("text").str.len_bytes() != pl.col("text").str.len_chars())
    text = s.str.to_lowercase()
    if not other.is_empty():
        folded = other.select(normalize_expr("text").str.replace_all("ß", "ss", literal=True))
        text = text.scatter(other["row"], folded.to_series())
    return frame.with_columns(text=text)


def _words(frame: pl.DataFrame) -> pl.DataFrame:
    """``row, words``: distinct stemmed non-stopword Latin words and numbers per row (rows with none
    are absent)."""
    ascii_ = pl.col("text").str.len_bytes() == pl.col("text").str.len_chars()
    found = pl.concat(  # the same words: in lowercase ASCII a word character is [a-z0-9] (5x faster)
        [frame.filter(ascii_).select("row", word=pl.col("text").str.extract_all("[a-z0-9]+")),
         frame.filter(~ascii_).select("row", word=pl.col("text").str.extract_all(_WORD))]
    ).explode("word").drop_nulls()  # fmt: skip
    vocab = found.select(pl.col("word").unique()).filter(~pl.col("word").is_in(_LATIN_STOP))
    # the only Python pass: once per distinct word (the vocabulary, not the memories), stems cached
    vocab = vocab.with_columns(stem=pl.Series([light_stem(w) for w in vocab["word"]], dtype=pl.String))
    return found.join(vocab, on="word").group_by("row").agg(words=pl.col("stem").n_unique())


def _chars(frame: pl.DataFrame) -> pl.DataFrame:
    """``row, ideographs, syllabic``: distinct CJK ideographs, and kana and Hangul syllables, per row
    that are neither stop characters nor inside a Chinese stop word (rows with none are absent)."""
    # each row's CJK runs, one space after each: no stop word spans two runs or two rows
    runs = pl.col("text").str.extract_all(f"[{CJK}]+").list.eval(pl.element() + " ").list.join("")
    c = frame.select("row", c=runs.str.split("")).explode("c")
    c = c.filter(pl.col("c") != "")  # (the spaces stay until the stop words are found: they break them)
    # subtle: a character inside any occurrence of a stop word goes, overlapping ones too (就是不是:
    # 就是 and 是不是), as tokenize's spans do: so not a regex replace, which takes one of the two
    stopped = frame.filter(pl.col("text").str.contains_any(_STOP_WORDS))["row"]
    if not stopped.is_empty():
        ch, nxt, nxt2 = pl.col("c"), pl.col("c").shift(-1), pl.col("c").shift(-2)
        bi = (ch + nxt).is_in(_STOP_BIGRAMS).fill_null(False)  # a stop word of two characters starts here
        tri = (ch + nxt + nxt2).is_in(_STOP_TRIGRAMS).fill_null(False)  # ... of three
        inside = bi | bi.shift(1) | tri | tri.shift(1) | tri.shift(2)
        some = c.filter(pl.col("row").is_in(stopped.implode())).filter(~inside.fill_null(False))
        c = pl.concat([c.filter(~pl.col("row").is_in(stopped.implode())), some])
    c = c.filter(pl.col("c") != " ", ~pl.col("c").is_in(_STOP_CHARS))
    c = c.unique(["row", "c"]).with_columns(syllabic=pl.col("c").str.contains(f"[{_SYLLABIC}]"))
    return c.group_by("row").agg(ideographs=(~pl.col("syllabic")).sum(), syllabic=pl.col("syllabic").sum())
