"""Does a memory say what a forget command names? The rule behind the agent's "forget X".

Search ranks what is *near* the payload; a forget command must erase only what *says* it. A memory
says what the payload names when it holds most of the payload's weight of words (each weighted by
its rarity among the namespace's memories, BM25's idf, so a word no memory holds weighs most:
"forget that I like skiing" names nothing in a store of "I like jazz", "I like coffee"), or when the
payload restates all of it ("forget that I really like jazz music a lot" names "I like jazz music");
the words it holds must include the payload's rarest ("forget that my favourite colour was blue" does
not name "my favourite colour is red").
Before the words are weighed, what only says how the user refers to a memory is dropped ("what I
told you about", "the details of", 说过的, 关于, 的信息), and liking verbs count as one word ("love",
"enjoy", "like"). Lexical, so synonyms beyond those are not matched ("forget my skiing hobby" does
not name "I like skiing"): the reply then says nothing matched, and the user can say it as stored.

>>> names_it("forget that I like skiing", ["I like jazz", "I love skiing"], ["I like jazz", "I love skiing"])
[False, True]
"""

from __future__ import annotations

import math
import re

from ..text import tokenize

__all__ = ["names_it"]

_COVERAGE = 0.5  # the share of the payload's word weight a memory must hold to be what it names

# words that say how the user refers to a memory, not what it says: "forget what I told you about my
# sister", "forget the details of my doctor", 忘掉我说过的关于滑雪的话, 忘掉我妹妹的信息
_FILLER_EN = set(
    tokenize(
        "anything everything something said say told tell mentioned mention stuff thing things memory"
        " memories detail details information info regarding related note notes fact facts"
    )
)
_FILLER_ZH = re.compile(
    r"说过的|说过|提到的|提到过的|提过的|跟|有关的|有关|相关的|相关|关于|的话|的事情|的事|事情"
    r"|的信息|信息|的资料|资料|的内容|内容|所有的|所有|一切|全部"
)

# one word for a liking, on both sides ("forget that I love skiing" names "I like skiing")
_SAME = {w: "like" for w in tokenize("love loves loved enjoy enjoys enjoyed adore adores fond")}


def _words(text: str) -> set[str]:
    """The words a forget command compares: :func:`memkit.text.tokenize`'s, liking verbs as one."""
    return {_SAME.get(w, w) for w in tokenize(text, keep_stopwords=False)}


def _payload_words(query: str) -> set[str]:
    """The words of a forget payload that name what to forget (:data:`_FILLER_EN`/``_ZH`` dropped;
    a Chinese filler phrase is cut out before tokenizing, so no bigram spans it)."""
    return _words(_FILLER_ZH.sub(" ", query)) - _FILLER_EN


def names_it(query: str, texts: list[str], corpus: list[str]) -> list[bool]:
    """Does each of ``texts`` say what ``query`` names? Either it holds most of the query's weight of
    words (each word weighted by its rarity in ``corpus``, where a word no memory has weighs most:
    "forget that I like skiing" names nothing a store of "I like jazz" holds), or the query restates
    all of it ("forget that I really like jazz music a lot" names "I like jazz music").

    Search's keyword score cannot decide this: it is scaled to the query words some memory contains
    (so that question words do not count), which made "I like" alone a full match for "I like
    skiing", and "我喜欢喝红茶" one for "我喜欢喝绿茶".
    """
    words = _payload_words(query)
    if not words:
        return [False] * len(texts)
    docs = [_words(t) for t in corpus]  # a user command, not a hot path
    df = {w: sum(w in d for d in docs) for w in words}  # how many memories hold each word
    idf = {w: math.log1p((len(docs) - k + 0.5) / (k + 0.5)) for w, k in df.items()}  # BM25's idf
    total = sum(idf.values())
    rarest = {w for w, x in idf.items() if x == max(idf.values())}  # what sets the payload apart
    out = []
    for text in texts:
        own = _words(text)
        restated = bool(own) and own <= words
        # most of the weight, and the rarest word among it: "forget that my favourite colour was blue"
        # does not name "my favourite colour is red", though "favourite colour" is most of the words
        said = sum(idf[w] for w in words & own) >= _COVERAGE * total and bool(rarest & own)
        out.append(restated or said)
    return out
