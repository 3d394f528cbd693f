"""Does a memory say what a forget command names? The rule behind the agent's "forget X".

Search ranks what is *near* the payload; a forget command must erase only what *says* it. A memory
says what the payload names when it holds every word of the payload (words that only soften, stress
or date it dropped: "forget that I really like jazz music a lot" names "I like jazz music"), names
no one the payload does not (a relative, a friend, a pet: "forget that I live in Paris" does not
name "my sister lives in Paris"), and says it the same way, negated or not ("forget that I don't
like coffee" does not name "I like coffee"). A memory whose words merely fit inside a longer
payload is not named by it ("forget that my wife is allergic to peanuts" keeps "I am allergic to
peanuts": tokenizing drops "I" and "my", so a restatement rule erased the user's own). A payload word
the memory lacks is never a detail to overlook: either no memory holds it, and nothing says what
the user named ("forget that I like skiing" names nothing in a store of "I like jazz"), or other
memories hold it, and the user named those ("forget that I like tea" names "I prefer tea", not
"I like jazz"; "forget that my favourite colour was blue" not "my favourite colour is red").
Before the words are compared, what only says how the user refers to a memory is dropped ("what I
told you about", "the details of", 说过的, 关于, 的信息), and verbs of liking count as one word
("prefer", "love", "enjoy", "like"; 喜欢, 爱, 偏好), which is never enough alone: "I love it" is
not what "forget that I love jazz" names. Lexical, so synonyms beyond those are not matched
("forget my skiing hobby" does not name "I like skiing"): the reply then names the nearest memory,
and the user can say it as stored.

>>> names_it("I like skiing", ["I like jazz", "I love skiing"])  # forget that I like skiing
[False, True]
>>> names_it("我喜欢茶", ["我喜欢爵士乐", "我更喜欢喝茶"])  # 忘掉我喜欢茶
[False, True]
"""

from __future__ import annotations

import re

from ..text import tokenize

__all__ = ["names_it"]

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

# words that only soften, stress or date the payload ("forget that I really like jazz a lot", "...
# that I live in Paris now"): the memory need not hold them
_SOFT_EN = set(
    tokenize(
        "really truly actually quite totally absolutely definitely lot lots bit little much always still"
        " now currently these days anymore"
    )
)
_SOFT_ZH = re.compile(r"真的|非常|特别|超级|十分|一直|现在|目前")
# a negation is part of what a memory says: "forget that I don't like coffee" does not name "I like
# coffee" (tokenize drops not/no/don't as stopwords, so it is read from the text itself)
_NEG = re.compile(
    r"(?i)(?a:\b)(?:not|no|never|neither|nor|without|cannot)(?a:\b)|n't(?a:\b)|n’t(?a:\b)"
    r"|不(?![过错少但仅久管论同])|没|从未|别(?![的人])"
)
# other people (and pets): a memory about one is not what a payload that does not name them says
# ("forget that I live in Paris" does not name "my sister lives in Paris")
_PEOPLE = set(
    tokenize(
        "sister sisters brother brothers wife husband mother father mom mum dad son daughter friend"
        " friends boss colleague colleagues partner girlfriend boyfriend grandmother grandfather grandma"
        " grandpa aunt uncle cousin niece nephew child children kid kids baby parent parents neighbour"
        " neighbor roommate teacher doctor manager family dog cat",
        keep_stopwords=False,
    )
) | {  # Chinese: the words themselves (their single characters are in every other word: 公司, 同意)
    *"妹妹 姐姐 哥哥 弟弟 妻子 老婆 太太 丈夫 老公 妈妈 母亲 爸爸 父亲 儿子 女儿 朋友 同事 老板 孩子".split(),
    *"爷爷 奶奶 外婆 外公 邻居 室友 老师 医生 宠物 狗 猫".split(),
}

_LIKE = "like"  # the one word every verb of liking becomes, on both sides
# "forget that I love skiing" names "I like skiing", "forget that I like tea" names "I prefer tea"
_SAME = {w: _LIKE for w in tokenize("love loves loved enjoy enjoys enjoyed adore adores fond prefer prefers")}
# the Chinese verbs of liking, cut out as the one word before the text is split into characters and
# bigrams, so that 我喜欢茶 and 我更喜欢喝茶 share 茶 and no bigram spans the verb (欢茶, 欢喝); not
# the 爱 of 爱好 (hobby), 爱人 (spouse), 可爱 (cute), 恋爱 (romance), 亲爱 (dear)
_LIKE_ZH = re.compile(r"喜欢|喜爱|热爱|偏爱|偏好|(?<![可恋亲])爱(?![好人])")


def _words(text: str) -> set[str]:
    """The words a forget command compares: :func:`memkit.text.tokenize`'s, verbs of liking as one.

    >>> sorted(_words("我更喜欢喝茶")), sorted(_words("I preferred tea"))
    (['like', '喝', '喝茶', '我更', '更', '茶'], ['like', 'tea'])
    """
    words = tokenize(_LIKE_ZH.sub(f" {_LIKE} ", text), keep_stopwords=False)
    return {_SAME.get(w, w) for w in words}


def _payload_words(query: str) -> set[str]:
    """The words of a forget payload that name what to forget (:data:`_FILLER_EN`/``_ZH`` dropped;
    a Chinese filler phrase is cut out before tokenizing, so no bigram spans it)."""
    return _words(_SOFT_ZH.sub(" ", _FILLER_ZH.sub(" ", query))) - _FILLER_EN - _SOFT_EN


def names_it(query: str, texts: list[str]) -> list[bool]:
    """Does each of ``texts`` say what ``query`` (a forget payload) names? It holds every word of the
    query (more than a verb of liking), names no other person the query does not, and is negated
    exactly when the query is (the module docstring).

    Search's keyword score cannot decide this: it is scaled to the query words some memory contains
    (so that question words do not count), which made "I like" alone a full match for "I like
    skiing", and "我喜欢喝红茶" one for "我喜欢喝绿茶". Nor can a share of the words, however
    weighted: "I like jazz" holds half of "I like tea", and "I live in Hangzhou" more than half of
    "I live in Paris" where Paris is a common word; the word each lacks is what the user named.
    """
    words = _payload_words(query)
    if not words - {_LIKE}:  # nothing but "I like": names nothing
        return [False] * len(texts)
    negated, people = bool(_NEG.search(query)), words & _PEOPLE
    out = []
    for text in texts:
        own = _words(text)
        # every word the user named, no one the user did not name, and said the same way (negated or not)
        out.append(words <= own and own & _PEOPLE <= people and bool(_NEG.search(text)) == negated)
    return out
