"""Does a memory say what a forget command names? The rule behind the agent's "forget X".

Search ranks what is *near* the payload; a forget command must erase only what *says* it, and an
erasure is final, so the rule errs on keeping. A payload is one of two kinds:

- a **topic**, said in so many words ("forget my doctor's details", "forget what I told you about
  skiing", "forget everything about my sister", 忘掉关于拿铁的事, 忘掉我妹妹的信息): every memory
  holding all its words, whoever it is about;
- anything else is a **statement** ("forget that I like tea", "forget my birthday is June 1",
  忘掉我住在杭州): it names a memory that says the same thing — the same words in the same order once
  what only stresses or dates it is dropped on both sides ("forget that I really like jazz a lot"
  names "I like jazz"; "now", 真的, "User …", 用户…), the same pronouns for other people, negated
  alike. So it never names what says more ("Bob likes jazz", "I like big dogs" for "... little
  dogs", "she lives in Paris"), less ("I am allergic to peanuts" for "forget that my wife is allergic
  to peanuts"), or the same words otherwise ("Bob lent me 50 dollars" for "I lent Bob 50 dollars");
  nor what lacks a word the user said ("forget that I like skiing" names nothing in a store of "I
  like jazz"). A bare word ("forget tea") is a statement too: it names a memory "tea", and otherwise
  the reply names the nearest memory for the user to say as stored.

What only says how the user refers to a memory is dropped first ("what I told you about", "the
details of", 说过的, 关于, 的信息), and verbs of liking count as one word ("prefer", "love",
"enjoy", "like"; 喜欢, 更喜欢, 爱, 偏好), never enough alone. Lexical, so synonyms beyond those are
not matched ("forget my skiing hobby" does not name "I like skiing"): the reply then names the
nearest memory, and the user can say it as stored.

>>> names_it("I like skiing", ["I like jazz", "I love skiing"])  # forget that I like skiing
[False, True]
>>> names_it("我喜欢喝茶", ["我喜欢爵士乐", "我更喜欢喝茶", "小明喜欢喝茶"])  # 忘掉我喜欢喝茶
[False, True, False]
>>> names_it("the stuff about my sister", ["my sister Anna lives in Paris", "I like tea"])
[True, False]
"""

from __future__ import annotations

import re

from ..text import CJK, tokenize

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

# words that only stress or date what is said ("forget that I really like jazz a lot", "... that I
# live in Paris now"), the user's own name for the user ("User likes tea", 用户喜欢喝茶): dropped
# from both sides. Nothing that can carry meaning ("still water", "little dogs", "3 days")
_SOFT_EN = set(
    tokenize("really truly actually quite totally absolutely definitely lot lots now currently user")
)
_SOFT_ZH = re.compile(r"真的|非常|特别|现在|目前|用户")
# a negation is part of what a memory says: "forget that I don't like coffee" does not name "I like
# coffee" (tokenize drops not/no/don't as stopwords, so it is read from the text itself)
_NEG = re.compile(
    r"(?i)(?a:\b)(?:not|no|never|neither|nor|without|cannot)(?a:\b)|n't(?a:\b)|n’t(?a:\b)"
    r"|不(?![过错少但仅久管论同])|没|从未|别(?![的人])"
)
# someone else, named by a pronoun (which tokenize drops as a stopword): "she lives in Paris" is not
# what "forget that I live in Paris" names; any other word (a name, 我妈, grandson) differs anyway
_OTHERS = re.compile(
    r"(?i)(?a:\b)(?:he|she|they|him|her|his|hers|them|their|theirs|you|your|yours|we|our|ours|us)(?a:\b)"
    r"|他们|她们|咱们|我们|你们|他|她|它|您|你"
)
# what makes a payload a topic to forget whole, said in so many words and never guessed from its
# shape: command words the parser took off ("forget about tea", "forget everything about X", 忘掉关于
# 拿铁的事) or a referring phrase around the payload ("the stuff about my sister", "what I told you
# about skiing", "my doctor's details", 我妹妹的信息, 跟我妹妹有关, 我说过的关于滑雪的话); not a word
# inside a statement ("I care about my health", 我有关节炎)
_TOPIC = re.compile(
    r"(?i)(?a:\b)(?:about|regarding|concerning|everything|anything|details?|stuff)(?a:\b)"
    r"|关于|有关|相关|的信息|的事|说过的|提到的|提过的|的资料|的内容|所有|一切|全部"
)
_FACT = re.compile(r"(?i)^\s*(?:the\s+)?fact\s+that\s+")
_GENERIC = {"like", "我的", "我们", "你的", "自己"}  # never enough for a topic
_REFERS = re.compile(
    r"(?i)^\s*(?:(?:the\s+)?(?:stuff|things?|details?|information|info|notes?|memories)\s+(?:about|of|on|regarding|concerning)"
    r"|(?:all|everything|anything)\s+(?:about|regarding|concerning)"
    r"|(?:(?:everything|anything)\s+)?what\s+(?:i|you)(?a:\b).*?(?a:\b)about"
    r"|everything\s+(?:i|you)\s+(?:told|said|mentioned|know)(?:\s+(?:you|me))?(?:\s+about)?)(?a:\b)"
    r"|(?:'s|’s|^\s*(?:my|our))\s+(?:details|information|info|stuff|notes)\s*$"
    r"|^\s*(?:关于|有关|(?:跟|和|与).+有关|我?(?:说过|提到过?|提过)的)|的(?:信息|资料|内容|事情?|一切|所有)\s*$"
)

# the stopwords a statement may drop: articles, forms of "be" and "do", the user's own pronouns,
# contractions' tails and particles. The others carry meaning there ("before"/"after", "for"/
# "against", "more", "only", "off", modal verbs) and must be the same, in the same place
_LIGHT = set(
    tokenize(
        "a an the am is are was were be been being do does did i me my myself mine d ll m re s ve that"
        " this these those just so very oh hey yeah it its itself have has having had",
        keep_stopwords=True,
    )
)
# negation, kept where it is and spelled one way: "do not" / "don't" / "never" -> not, "can't" /
# "cannot" -> can not ("I'm sure I don't want kids" is not "I'm not sure I want kids")
_NOT = dict.fromkeys(tokenize("not no never nor neither t", keep_stopwords=True), "not") | {
    "don": "", "doesn": "", "didn": "", "isn": "", "aren": "", "wasn": "", "weren": "", "won": "will",
    "wouldn": "would", "couldn": "could", "shouldn": "should", "cannot": "can not",
}  # fmt: skip
_CJK_RUN = re.compile(f"[{CJK}]+")
_MINE = {"my", "mine"}  # whose a topic is ("my car", not "Bob's car"): kept in a topic's phrase
_LIGHT_ZH = re.compile(r"自己|就是|[了的是吧呢啊吗]|我(?!们)")  # cut out before the text is split

_LIKE = "like"  # the one word every verb of liking becomes, on both sides
# "forget that I love skiing" names "I like skiing", "forget that I like tea" names "I prefer tea"
# (更喜欢, "like more", is 喜欢's "prefer")
_SAME = {w: _LIKE for w in tokenize("love loves loved enjoy enjoys enjoyed adore adores fond prefer prefers")}
# the Chinese verbs of liking, cut out as the one word before the text is split into characters and
# bigrams, so that 我喜欢茶 and 我更喜欢喝茶 share 茶 and no bigram spans the verb (欢茶, 欢喝); not
# the 爱 of 爱好 (hobby), 爱人 (spouse), 可爱 (cute), 恋爱 (romance), 亲爱 (dear)
_LIKE_ZH = re.compile(r"更喜欢|更爱|喜欢|喜爱|热爱|偏爱|偏好|(?<![可恋亲])爱(?![好人])")


def _words(text: str) -> set[str]:
    """The words a forget command compares: :func:`memkit.text.tokenize`'s, verbs of liking as one.

    >>> sorted(_words("我更喜欢喝茶")), sorted(_words("I preferred tea"))
    (['like', '喝', '喝茶', '茶'], ['like', 'tea'])
    """
    words = tokenize(_LIKE_ZH.sub(f" {_LIKE} ", text), keep_stopwords=False)
    return {_SAME.get(w, w) for w in words}


def _tokens(text: str, light: set[str]) -> list[str]:
    """``text``'s words in order as a forget command compares them: what only stresses or dates it
    and the ``light`` words dropped, verbs of liking as one, negation as ``not`` where it stands."""
    plain = _LIGHT_ZH.sub(" ", _LIKE_ZH.sub(f" {_LIKE} ", _SOFT_ZH.sub(" ", text)))
    out = []
    for w in tokenize(plain, keep_stopwords=True):
        for v in _NOT.get(w, w).split():
            if v not in _SOFT_EN and v not in light:
                out.append(_SAME.get(v, v))
    return out


def _said(text: str) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """A statement's words in order (:func:`_tokens`; only what carries no meaning there dropped:
    articles, "be", "do", the user's own pronouns), its pronouns for other people and whether it is
    negated: what two statements must share to say the same thing ("I lent Bob 50 dollars" is not
    "Bob lent me 50 dollars", "before dinner" not "after dinner")."""
    kept = _tokens(text, _LIGHT)
    people = tuple(sorted(m.lower() for m in _OTHERS.findall(text)))
    return tuple(kept), people, bool(_NEG.search(text))


def _holds(text: str, topic: str) -> bool:
    """Whether ``topic`` stands in ``text`` whole: its words next to each other, "my" included ("my
    wife" is not in "my ex-wife …" nor "Bob's wife …"); Chinese, as a run of characters (no words
    to tell apart: 姐 is in 姐夫)."""
    if _CJK_RUN.search(topic):
        cjk = "".join(_CJK_RUN.findall(_LIGHT_ZH.sub("", _LIKE_ZH.sub(_LIKE, topic))))
        return cjk in "".join(_CJK_RUN.findall(_LIGHT_ZH.sub("", _LIKE_ZH.sub(_LIKE, text))))
    seq, phrase = _tokens(text, _LIGHT - _MINE), _tokens(topic, _LIGHT - _MINE)
    return any(seq[i : i + len(phrase)] == phrase for i in range(len(seq) - len(phrase) + 1))


def _payload_words(query: str) -> set[str]:
    """The words of a forget payload that name what to forget (:data:`_FILLER_EN`/``_ZH`` dropped;
    a Chinese filler phrase is cut out before tokenizing, so no bigram spans it)."""
    return _words(_SOFT_ZH.sub(" ", _FILLER_ZH.sub(" ", query))) - _FILLER_EN - _SOFT_EN


def names_it(query: str, texts: list[str], *, said: str | None = None) -> list[bool]:
    """Does each of ``texts`` say what ``query`` (a forget payload) names? ``said``: the whole
    message, whose command words may make it a topic ("forget everything about X": the payload is X).

    - a **topic**, said in so many words ("what I told you about skiing", "my doctor's details",
      关于拿铁的事, 我妹妹的信息): every memory in which it stands whole (:func:`_holds`), with the
      same pronouns for other people and negation;
    - anything else is a **statement** ("I like tea", "my birthday is June 1", 我住在杭州): it names a
      memory that says the same — the same words in the same order, only what carries no meaning
      there dropped on both sides (:func:`_said`), the same pronouns for other people.

    Search's keyword score cannot decide this: it is scaled to the query words some memory contains
    (so that question words do not count), which made "I like" alone a full match for "I like
    skiing", and "我喜欢喝红茶" one for "我喜欢喝绿茶". Nor can a share of the words, however
    weighted ("I like jazz" holds half of "I like tea"), nor containment for a statement, either way:
    a memory holding every word may say more ("Bob likes jazz", "my wife's birthday is May 3" for
    "my birthday"), one inside a longer payload says less ("I am allergic to peanuts" inside "my wife
    is allergic to peanuts"), and the same words may say the opposite ("I like tea but not coffee").
    """
    words = _payload_words(query)
    if not words - {_LIKE}:  # nothing but "I like": names nothing
        return [False] * len(texts)
    outside = (said or "").replace(query, " ", 1)  # the command words around the payload
    fact = _FACT.match(query)  # "forget about the fact that I smoke": a statement
    if not fact and (_TOPIC.search(outside) or _REFERS.search(query)):  # a topic: all said of it...
        if not words - _GENERIC:  # ...which must be more than "me" (忘掉我的所有事情: 我的)
            return [False] * len(texts)
        topic = _FILLER_ZH.sub(" ", _REFERS.sub(" ", query))  # what it is about, and only that
        how = _said(topic)[1:]  # ...the same way: pronouns for others, negation...
        return [
            words <= _payload_words(text) and _said(text)[1:] == how and _holds(text, topic)
            for text in texts
        ]  # fmt: skip
    query = query[fact.end() :] if fact else query
    mine = _said(query)
    return [_said(text) == mine for text in texts]
