"""Fact tokens: the few words that make two near-identical sentences state different facts.

A cosine cannot tell "预算是5000元" from "预算是8000元", "Has 2 cats" from "Has 3 cats", "Flight at 9 am"
from "9 pm", 周三 from 周四, "I like coffee" from "I don't like coffee" or "Gina's favorite dance style"
from "Jon's": one word differs. The offline HashEmbedder even drops not / no / never as stopwords, so
such pairs score 0.85-1.0 while real paraphrases score 0.5-0.8 (README, "Consolidation").
:func:`fact_tokens` lists those words of a text, each canonical, so that spellings of one fact agree
and different facts differ:

- ``n:`` **numbers**: ASCII and full-width digits (``5,000`` = ``5000``) with their sign (``-5``) and
  scale word (``5 million``), Chinese numerals (``二十五``, ``两千``, ``3万``, ``二〇一九``, ``三千五`` =
  3500) and English number words and ordinals (``twenty-five``, ``third``); a Chinese 一 used as an
  article (``一名``, ``一个``) or in a word (``一起``, ``统一``) is no number
  (:func:`memkit.fact_numbers.numbers`);
- ``cur:`` **currencies**: ``$ € £ ¥ ...`` and the words of the common ones (``USD``, ``euros``,
  ``美元``), each as its sign; ``sym:`` **symbols**: an emoji or another symbol character (``🐶``,
  ``★``), each itself (:mod:`memkit.fact_numbers`);
- ``neg`` **negation**: not, no, never, nor, none, nothing, without, cannot, the ``n't`` forms;
  不 没 没有 别 未 无 非 勿 莫 不再 (but not inside 非常, 不错, 别人, 未来, 除非, ...);
- ``t:`` **time words**: am / pm after a number, month and weekday names (``June`` = ``6月`` =
  ``六月``; ``Wednesday`` = ``周三`` = ``星期三``), parts of the day (morning = 早上 = 早晨 = 上午, night =
  晚上 ...), today / tomorrow / yesterday (今天 明天 昨天 后天 前天), next / last week, month, year;
- ``name:`` **names**: a Latin-script word written capitalized (anywhere, the first word too: "Gina
  likes ..." is a name) and never lowercase in the same text, and not a stopword (``The``, ``I``,
  ``My``), ``User`` or one of the words above; nor a word capitalized only to start a sentence and
  followed there by a possessive or object pronoun, or by an article after a past or -ing form, which
  reads as a verb ("Fixed my bike", "Helped her", "Discussed the budget": no name follows so). It is
  read in each text alone, so "Helped Jon", "Moved to Berlin", "Keep the door" and "Gina the dancer"
  (no comma) still start with a name.

A difference in any of them is a different fact: "Budget is $5000" / "€5000", "-5 degrees" / "5
degrees", "I love 🐶" / "I love 🐱" are never linked.

>>> sorted(fact_tokens("Gina's flight leaves at 9:30 pm on June 1, not on Monday"))
['n:1', 'n:9:30', 'name:gina', 'neg', 't:Jun', 't:Mon', 't:pm']
>>> fact_tokens("预算5,000元") == fact_tokens("预算五千元"), fact_difference("周三开会", "星期四开会")
(True, 'time words Wed ≠ Thu')

Two memories state the same facts when their tokens are equal (:func:`same_facts`): an equivalence,
so a cluster whose every link joins equal tokens has one token set throughout (see
:func:`memkit.consolidate.cluster_labels`). What it does not see: a Chinese name (小雨 / 小雪 carry no
capital), a pronoun (he / she: on LoCoMo's observations they vetoed true duplicates), and any other
content word (home / office). :func:`alters` and :func:`qualifies` are the merge text's side: whether
the words around a sentence's run change what it says (:func:`memkit.merge_rule.merge_content`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache

import numpy as np

from .fact_numbers import CURRENCY_WORDS, NUMBER_WORDS, ZH_DIGIT, currencies, numbers, symbols, zh_number
from .text import CJK, STOPWORDS, normalize
from .verb_forms import is_verb_form

__all__ = [
    "TOKEN_KINDS", "alters", "fact_difference", "fact_key", "fact_tokens", "negated", "qualifies",
    "same_facts",
]  # fmt: skip

# ------------------------------------------------------------------------------------------ words
_EN_NEG = frozenset("not no never nor none nobody nothing nowhere neither cannot without".split())
_EN_NEG_BARE = frozenset(  # n't forms written without the apostrophe (or split by it)
    "dont doesnt didnt isnt arent wasnt werent cant couldnt wouldnt shouldnt havent hasnt hadnt aint".split()
)
_ZH_NEG = "不没未无非别勿莫毋甭"
_ZH_NEG_CHAR = re.compile(f"[{_ZH_NEG}]")
_ZH_NOT_NEG = re.compile(  # words holding a negation character that negate nothing (不过敏 does)
    "非常|非洲|南非|除非|是非|莫斯科|未来|别人|别的|特别|分别|区别|告别|级别|性别|类别|差别|识别|别墅|个别|不过(?!敏)"
    "|不错|不少|不断|不仅|不但|不管|不论|无论|不久|差不多|不得不|要不|不然|没错|不好意思|了不起|对不起"
)
_MONTHS = "january february march april may june july august september october november december".split()
_MONTH_OF = {m: i for i, m in enumerate(_MONTHS, 1)} | {m[:3]: i for i, m in enumerate(_MONTHS, 1)}
_MONTH_OF["sept"] = 9
_CAPITAL_ONLY = frozenset("march may mar jan jun aug oct nov dec sept".split())  # lowercase: another word
_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_WEEKDAYS = {d: i for i, d in enumerate(_DAYS, 1)}
_WEEKDAY_NAMES = ("", *(d[:3].capitalize() for d in _DAYS))
_MONTH_NAMES = ("", *(m[:3].capitalize() for m in _MONTHS))
# parts of the day and days around today -> their token(s), English then Chinese
_EN_TIME = {
    w: w for w in "morning noon afternoon evening night midnight weekend today tomorrow yesterday".split()
}
_EN_TIME |= {"midday": "noon", "tonight": "today,night"}
_ZH_TIME = {word: tags for tags, words in (
    ("morning", "早上 早晨 清晨 上午"), ("noon", "中午"), ("afternoon", "下午"), ("evening", "傍晚"),
    ("night", "晚上 夜里 夜晚 深夜"), ("midnight", "半夜 凌晨"), ("weekend", "周末"), ("today", "今天 今日"),
    ("today,night", "今晚"), ("tomorrow", "明天 明日"), ("tomorrow,night", "明晚"),
    ("yesterday", "昨天 昨日"), ("yesterday,night", "昨晚"), ("in 2 days", "后天"), ("2 days ago", "前天"),
    ("this year", "今年"), ("last year", "去年"), ("next year", "明年"), ("2 years ago", "前年"),
    ("in 2 years", "后年"),
) for word in words.split()}  # fmt: skip
_ZH_TIME_WORD = re.compile("|".join(_ZH_TIME))
_REL = {"上": "last", "下": "next", "本": "this", "这": "this", "past": "last", "coming": "next"}
# time words that count from the day they were written: "next month" said on 8 July and on 1 October are
# two months (fact_key adds the day a memory was written when it holds one)
_RELATIVE = re.compile(r"t:(?:today|tomorrow|yesterday|in 2 \w+|2 \w+ ago|(?:this|next|last) \w+)$")
_NOT_NAMES = frozenset(("user", "users")) | _EN_NEG | NUMBER_WORDS | CURRENCY_WORDS
# what makes a longer sentence not imply a run of its words (merge_rule): besides a negation, a change
# of subject (he / she ...), a modal or hypothetical, a shift in time, a report, a disjunction
_EN_ALTERS = frozenset(
    """he she him his her hers they them their theirs might may maybe perhaps probably possibly could would
    should wants want wanted wanting plans plan planned planning hopes hope hoped hoping wish wishes wished
    considering consider considers intends intend intended trying tries tried almost nearly hardly barely
    rarely seldom used former formerly previously ex pretend pretends pretended allegedly supposedly
    reportedly likely unlikely doubt doubts says said thinks thought believes believed claims claimed or
    either mother mom father dad wife husband son daughter brother sister friend boss colleague partner
    boyfriend girlfriend parents kids children will""".split()
)
_ZH_ALTERS = """他 她 它 可能 也许 或许 大概 应该 想 打算 计划 准备 希望 考虑 尝试 试图
    差点 几乎 曾 以前 之前 以后 之后 原来 原本 本来 过去 假装 据说 听说 好像 似乎 怀疑 认为 觉得
    以为 说 或 还是 妈 爸 母亲 父亲 妻子 丈夫 老婆 老公 儿子 女儿 哥 姐 弟 妹 朋友
    同事 老板 孩子 爷爷 奶奶 外公 外婆""".split()
_CEASED = re.compile(r"\bany ?more\b|\bno (?:longer|more)\b|不再|再也不|已经不|不.{0,4}了")  # "not anymore"
_BARE = re.compile(  # what a bare negation holds besides the negation: "not at all", "no, not really", 不是
    r"\b(?:not|no|nope|never|none|nothing|at|all|really|quite|so|is|it|that|i|do|does)\b|n't"
    r"|[不没未无非别有是了再太]"
)
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|whether|when|whenever)\b|如果|假如|要是|除非|万一|是否|是不是|(?<!有)时候"
)
# before a run, a time clause's first word: "After moving to Paris" (after a run, "… after lunch" says it)
_EN_TIME_CLAUSE = frozenset("after before until till once while".split())

# ---------------------------------------------------------------------------------------- patterns
_LATIN = re.compile(rf"[^\W\d_{CJK}]+(?:'[a-z]+)?")  # a word, with an n't / 's ending
# a capitalized word, whether it starts a sentence (the text's start, or after . ! ? ; : or a line's
# end, with quotes, brackets or a bullet between), and the lowercase word after it, if a space only parts them
_SENTENCE_WORD = re.compile(
    rf"(?P<start>(?:^|(?<=[.!?;:\n。！？；：]))[\s\"'“‘(\[*•\-]*)?(?<![^\W\d_{CJK}])(?P<word>[A-Z][^\W\d_{CJK}]*)\b"
    r"(?:(?!')(?= +(?P<next>[a-z]+)\b))?"
)
# an object pronoun no name is followed by ("Helped her"); a possessive one may be ("Ahmed my brother")
_OBJECTS = frozenset("her him them me us it".split())
_POSSESSIVES = frozenset("my your his its our their".split())  # a verb before them only by the list
_ARTICLES = frozenset(("the", "a", "an"))  # "Gina the dancer": a name can be; a past or -ing form cannot
_VERB_FORM = re.compile(r"[a-z]{4,}ed|[a-z]{3,}ing")  # Discussed, Reviewed, Bringing; not Ahmed, Ming
_AMPM = re.compile(r"(?<=\d)\s*([ap])\.?m\b\.?|\b(?:one|two|three|four|five|six|seven|eight|nine|ten"
                   r"|eleven|twelve)\s+([ap])\.?m\b\.?", re.IGNORECASE)  # fmt: skip
_ZH_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
_ZH_RELATIVE = re.compile(r"([上下本这])个?(周|星期|礼拜|月)")
_ZH_MONTH = re.compile(r"(?<!\d)(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月")
_EN_RELATIVE = re.compile(r"\b(next|last|this|coming|past)\s+(week|weekend|month|year)\b", re.IGNORECASE)


def negated(text: str) -> bool:
    """Whether ``text`` holds a negation (the ``neg`` fact token).

    >>> negated("I don't like coffee"), negated("用户不再喜欢喝咖啡"), negated("非常喜欢，不错")
    (True, True, False)
    """
    t = normalize(text, collapse=True)  # (also ’ -> ')
    return _negated(t, _LATIN.findall(t))


def _negated(low: str, words: list[str]) -> bool:
    """:func:`negated` of a normalized, casefolded text and its Latin words."""
    if any(w in _EN_NEG or w in _EN_NEG_BARE or w.endswith("n't") for w in words):
        return True
    return bool(_ZH_NEG_CHAR.search(low)) and bool(_ZH_NEG_CHAR.search(_ZH_NOT_NEG.sub(" ", low)))


@lru_cache(maxsize=1 << 16)  # a pure function of one text; a plan asks for the same endpoints again
def fact_tokens(text: str) -> frozenset[str]:
    """The fact tokens of ``text`` (module doc): a frozenset of ``n:...``, ``cur:...``, ``sym:...``,
    ``neg``, ``t:...`` and ``name:...`` strings.

    >>> sorted(fact_tokens("2019年6月1日周三早上，一名同事没来"))
    ['n:1', 'n:2019', 'neg', 't:Jun', 't:Wed', 't:morning']
    """
    raw = normalize(text, casefold=False, collapse=True)  # (also ’ -> ')
    low = normalize(raw)  # (casefolded as negated() reads it)
    words = _LATIN.findall(raw)
    out: set[str] = {"neg"} if _negated(low, [w.casefold() for w in words]) else set()
    out.update(_time_tokens(low))  # (and out of `low` go their numerals: 周三, 6月 are no numbers)
    for pattern in (_ZH_WEEKDAY, _ZH_RELATIVE, _ZH_MONTH):
        low = pattern.sub(" ", low)
    out.update(f"n:{n}" for n in numbers(low))
    out.update({f"cur:{c}" for c in currencies(low)} | {f"sym:{c}" for c in symbols(raw)})
    lower_used = {w.split("'")[0].casefold() for w in words if w[0].islower()}
    common = _verb_first(raw)  # capitalized at a sentence's start only, a verb: "Keep the door ..."
    for w in words:  # English months, weekdays, parts of the day; then names
        base = w.split("'")[0]  # Gina's -> Gina
        key, capital = base.casefold(), base[:1].isupper()
        one = key[:-1] if key.endswith("s") else key  # mondays, mornings
        if key in _MONTH_OF and (capital or key not in _CAPITAL_ONLY):
            out.add(f"t:{_MONTH_NAMES[_MONTH_OF[key]]}")
        elif one in _WEEKDAYS:
            out.add(f"t:{_WEEKDAY_NAMES[_WEEKDAYS[one]]}")
        elif one in _EN_TIME:
            out.update(f"t:{t}" for t in _EN_TIME[one].split(","))
        elif capital and key not in lower_used | common and key not in STOPWORDS and key not in _NOT_NAMES:
            out.add(f"name:{key}")
    return frozenset(out)


def _verb_first(raw: str) -> set[str]:
    """The casefolded words of ``raw`` capitalized only because they start a sentence, and read as
    a verb there: the next word (after a space only) is an object pronoun ("Helped her"), which no
    name at a sentence's start is followed by ("Gina likes", "Jon's", "Gina and Jon"), or a possessive
    after a verb of :mod:`memkit.verb_forms` ("Fixed my bike"; "Ahmed my brother" stays a name), or an
    article after a past or -ing form of five letters before its ending that is such a verb
    ("Discussed the budget", "Reviewed a PRD"): "Gina the dancer", "Max the dog", "Mohammed the
    intern", "Xiaoming the intern" stay names, and so do "Keep the door", "Fixed the car" (a missed
    merge, never a wrong one). Unless the word is also
    capitalized inside a sentence (then it is a name there: "Will the ... Will")."""
    starts, inside = set(), set()
    for m in _SENTENCE_WORD.finditer(raw):
        key = m["word"].casefold()
        if m["start"] is None:
            inside.add(key)
        elif m["next"] in _OBJECTS or (m["next"] in _POSSESSIVES and is_verb_form(key)):
            starts.add(key)
        elif m["next"] in _ARTICLES and _VERB_FORM.fullmatch(key) and is_verb_form(key):
            starts.add(key)
    return starts - inside


def _time_tokens(low: str) -> set[str]:
    """The time tokens of a casefolded text but English names of months, weekdays and parts of the day
    (:func:`fact_tokens` reads those with their case): am / pm, Chinese time words, relative dates."""
    out = {f"t:{(m[1] or m[2])}m" for m in _AMPM.finditer(low)}
    for word in _ZH_TIME_WORD.findall(low):
        out.update(f"t:{t}" for t in _ZH_TIME[word].split(","))
    for m in _ZH_WEEKDAY.finditer(low):
        out.add(f"t:{_WEEKDAY_NAMES[7 if m[1] in '日天' else ZH_DIGIT[m[1]]]}")
    for m in _ZH_RELATIVE.finditer(low):
        out.add(f"t:{_REL[m[1]]} {'month' if m[2] == '月' else 'week'}")
    for m in _EN_RELATIVE.finditer(low):
        out.add(f"t:{_REL.get(m[1], m[1])} {m[2]}")
    for m in _ZH_MONTH.finditer(low):
        out.add(f"t:{_MONTH_NAMES[int(m[1]) if m[1].isdigit() else zh_number(m[1])]}")
    return out


def fact_key(text: str, written: datetime | None = None) -> str:
    """:func:`fact_tokens` as one sorted string: equal keys, equal facts (a column to compare). With
    ``written`` (when the memory was written), a text holding a relative time word (today, next
    month, 明天) adds that day (UTC): "next month" said in July and in October differ.

    >>> day = datetime(2023, 7, 8, tzinfo=UTC)
    >>> fact_key("Has 2 cats"), fact_key("Hike next month", day).split(chr(31))
    ('n:2', ['name:hike', 't:next month', '@2023-07-08'])
    """
    tokens = sorted(fact_tokens(text))
    if written is not None and any(_RELATIVE.match(t) for t in tokens):
        tokens.append(f"@{written.astimezone(UTC).date().isoformat()}")
    return "\x1f".join(tokens)


TOKEN_KINDS = (
    ("n:", "numbers"),
    ("cur:", "currencies"),
    ("sym:", "symbols"),
    ("t:", "time words"),
    ("name:", "names"),
)
"""The kinds of fact token but ``neg`` (prefix, word), in the order :func:`fact_difference` names them."""


def fact_difference(
    a: str, b: str, written_a: datetime | None = None, written_b: datetime | None = None
) -> str:
    """Why ``a`` and ``b`` state different facts, in words (``""`` when their keys are equal; the
    days they were written count when they hold a relative time word, as in :func:`fact_key`).

    >>> fact_difference("预算是5000元", "预算是8000元"), fact_difference("Allergic", "Not allergic")
    ('numbers 5000 ≠ 8000', 'negation: only in the second; names allergic ≠ —')
    """
    ta, tb = fact_tokens(a), fact_tokens(b)
    parts = []
    if ("neg" in ta) != ("neg" in tb):
        parts.append(f"negation: only in the {'first' if 'neg' in ta else 'second'}")
    for prefix, kind in TOKEN_KINDS:
        xa = " ".join(sorted(t.removeprefix(prefix) for t in ta - tb if t.startswith(prefix)))
        xb = " ".join(sorted(t.removeprefix(prefix) for t in tb - ta if t.startswith(prefix)))
        if xa or xb:
            parts.append(f"{kind} {xa or '—'} ≠ {xb or '—'}")
    if not parts and (ka := fact_key(a, written_a)) != (kb := fact_key(b, written_b)):
        parts.append(f"relative time words written on other days: {ka[-10:]} ≠ {kb[-10:]}")
    return "; ".join(parts)


def same_facts(
    texts: Sequence[str], u: np.ndarray, v: np.ndarray, written: Sequence[datetime] | None = None
) -> np.ndarray:
    """For each pair ``(u[k], v[k])`` of row indices into ``texts``: do the two state the same facts
    (equal :func:`fact_key`, with the day each was ``written`` when given)? -> ``(e,)`` bool. Only the
    rows the pairs name are tokenized (a plan's candidate pairs are few), each once.

    >>> texts = ["Has 2 cats", "Has two cats", "Has 3 cats"]
    >>> same_facts(texts, np.array([0, 0]), np.array([1, 2])).tolist()
    [True, False]
    """
    rows = np.unique(np.concatenate([u, v]))  # (r,) the rows the pairs touch
    said, days = ([None] * len(rows) if x is None else _gather(x, rows) for x in (texts, written))
    keys = np.array([fact_key(t, w) for t, w in zip(said, days, strict=True)], dtype=object)  # (r,)
    pos_u, pos_v = np.searchsorted(rows, u), np.searchsorted(rows, v)  # (e,) each into rows
    return keys[pos_u] == keys[pos_v]


def _gather(items: Sequence, rows: np.ndarray) -> list:
    """``items[rows]`` as a list; a polars Series at once (its items one by one are slow)."""
    return items.gather(rows).to_list() if hasattr(items, "gather") else [items[int(i)] for i in rows]


def alters(before: str, after: str) -> bool:
    """Whether the words ``before`` and ``after`` a run, in the run's clause of a longer sentence,
    change what the run says, so that the longer sentence does not imply it: a negation before it
    (after it, only a bare one: "Likes coffee without sugar" still says "Likes coffee"), a subject
    (a name before it; he / she / his / her, 他 / 她, a relative: mother, 妈妈), a modal or
    hypothetical (might, wants, 可能, 打算), a shift in time (used to, former, will, 以前, 曾经, 以后,
    之后), a fact that has ceased (not anymore, no longer, 不再), a time clause (after, before,
    until, while, once before it: "After moving to …"; "… after lunch" still says it), a report
    (says, 听说), a disjunction (or, 或者) or a condition (if, when, 如果, 的时候).

    >>> alters("Not ", ""), alters("", " without sugar"), alters("", " no"), alters("Gina ", "")
    (True, False, True, True)
    >>> alters("After ", ""), alters("", " after lunch"), alters("", "以后"), alters("", " when tired")
    (True, False, True, True)
    >>> alters("用户", ""), alters("用户的妈妈", ""), alters("", " every morning"), alters("", " no longer")
    (False, True, False, True)
    """
    t = normalize(f"{before} \x1f {after}", collapse=True)
    if negated(before) or qualifies(after) or _CONDITIONAL.search(t) or _CEASED.search(t):
        return True
    if any(w in _EN_ALTERS for w in _LATIN.findall(t)) or any(word in t for word in _ZH_ALTERS):
        return True
    if any(w in _EN_TIME_CLAUSE for w in _LATIN.findall(normalize(before))):  # before the run only
        return True
    return any(tok.startswith("name:") for tok in fact_tokens(before))


def qualifies(clause: str) -> bool:
    """Whether ``clause``, another clause of a sentence, changes what the whole sentence says: a bare
    negation ("Allergic to peanuts: no", "…，不是"), a condition ("If it rains, …", "When …", "如果…，",
    "…的时候，"; not 有时候, "sometimes") or a fact that has ceased ("but not anymore", 不再, 不…了).

    >>> qualifies(" not really"), qualifies("不"), qualifies(" but not tea"), qualifies(" but not anymore")
    (True, True, False, True)
    """
    t = normalize(clause, collapse=True)
    if _CONDITIONAL.search(t) or _CEASED.search(t):  # (or the fact has ceased: "but not anymore", 不再)
        return True
    rest = _BARE.sub(" ", t)
    return negated(clause) and not re.search(rf"[{CJK}]|[^\W_{CJK}]", rest)
