"""Text normalization and tokenization shared by the embedder and the keyword (BM25) score.

Chinese and English are both first class. After Unicode NFKC normalization (so full-width
``ＡＢＣ１２３`` becomes ``abc123``) and case folding, a text is split into

- Latin-script words and numbers: ``"Where do I live?" -> ["where", "do", "i", "live"]``
- CJK runs, as character unigrams *and* bigrams, because Chinese has no spaces and a word is
  usually two characters: ``"住在杭州" -> ["住", "在", "杭", "州", "住在", "在杭", "杭州"]``

English words are reduced by Harman's "S" stemmer (plural endings only: ``lives -> live``,
``stories -> story``), the lightest stemmer that still lets ``live`` find ``lives``.

>>> tokenize("我住在杭州 near West Lake")
['我', '住', '在', '杭', '州', '我住', '住在', '在杭', '杭州', 'near', 'west', 'lake']
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["STOPWORDS", "normalize", "s_stem", "tokenize"]

# CJK unified ideographs (+ extension A), kana and hangul: scripts written without spaces.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_TOKEN = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)", re.UNICODE)

# Function words that carry no lexical signal for retrieval. Kept short on purpose: the embedder
# and BM25 both down-weight frequent tokens anyway (idf), this only removes the worst noise.
STOPWORDS: frozenset[str] = frozenset(
    "a an the is are was were be been am do does did i me my you your he she it we they "
    "of to in on at for and or but with as by that this what which who whom how".split()
    + list("的了是我你他她它们在吗呢吧啊")
)


def normalize(text: str) -> str:
    """NFKC-normalize and case-fold: ``"ＰＹＴＨＯＮ ３" -> "python 3"``."""
    return unicodedata.normalize("NFKC", text).casefold()


def s_stem(word: str) -> str:
    """Harman's S stemmer (1991): strip English plural endings, nothing else.

    >>> [s_stem(w) for w in ["lives", "stories", "cats", "glass", "status", "goes"]]
    ['live', 'story', 'cat', 'glass', 'status', 'goe']
    """
    if len(word) <= 3 or not word.isascii():
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def tokenize(text: str, *, keep_stopwords: bool = True) -> list[str]:
    """Split text into word tokens (Latin) and character uni/bigrams (CJK), in order of appearance.

    With ``keep_stopwords=False`` the words in :data:`STOPWORDS` are dropped (single CJK characters that
    are stopwords are dropped as unigrams only; bigrams containing them stay, since 我的 / 住在 still
    carry meaning together).
    """
    out: list[str] = []
    for cjk, word in _TOKEN.findall(normalize(text)):
        if word:
            if keep_stopwords or word not in STOPWORDS:
                out.append(s_stem(word))
            continue
        out.extend(c for c in cjk if keep_stopwords or c not in STOPWORDS)
        out.extend(cjk[i : i + 2] for i in range(len(cjk) - 1))
    return out
