"""The merge rule's parts that are not clustering: which member survives (:func:`by_survivor_rule`,
:func:`remerge`), what a merged memory says (:func:`merge_content`) and how strong it is
(:func:`capped_importance`, :func:`merged_importance`).

:mod:`memkit.consolidate` plans merges with them and ``store.consolidate`` writes merged memories (and
re-derives a merge an erasure took a member of) with them, so a plan and what it writes agree.

How strong a merged memory is
-----------------------------
A merged memory is dated by its oldest member (``created_at`` = min: the fact is as old as its first
telling) and decays as slowly as its slowest one (``half_life_hours`` = max). Its importance is the
members' max, **lowered if need be so that at ``now`` it is no stronger than its strongest member**::

    importance = min(max importance, max strength · 2^(age / half_life))   # age = now - created_at

So a merge never revives what ``forget()`` would drop: members all below the forgetting floor merge
into a memory below it (and it only decays from there), and consolidation is idempotent: a merged row
is weak exactly when its cluster was, so it links to nothing the first plan kept apart. Nor does a
merge weaken what it keeps: at ``now`` the merged memory is at least as strong as its oldest member
(the plain max is: as old, with at least its importance and half-life; the cap is the strongest
member's strength), and, decaying at the slowest half-life, stays so. When the members share one
half-life (one layer's default) the cap never binds: importance is the max, as before. The strengths
are those of :func:`memkit.decay.strength`, and the cap is checked with it to the last bit (a
rounding that would put the merged memory a hair above its strongest member lowers the importance by
one ulp), since :func:`memkit.decay.below_floor` compares exact strengths.

>>> imp = merged_importance([0.9, 0.05], [1.0, 100_000.0], [100.0, 1.0])  # two weak members
>>> round(imp, 5), round(float(strength(imp, 100.0, 100_000.0)), 5)  # not 0.9: as weak as the 2nd
(0.05003, 0.05)
>>> merged_importance([0.5, 0.8], [2160.0, 2160.0], [3.0, 1.0])  # one half-life: the max
0.8
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence

import numpy as np
import polars as pl

from .decay import strength
from .errors import ValidationError
from .facts import alters, fact_tokens, qualifies
from .text import CJK, normalize, tokenize

__all__ = ["by_survivor_rule", "capped_importance", "merge_content", "merged_importance", "remerge"]

# sentence ends, and the "; " / "；" a merged text joins its sentences with; keeps "3.10" whole
_SPLIT = re.compile(r"(?<=[。！？!?;；])|(?<=\.)(?=\s|$)|\n")
_END = re.compile(r"[。！？.!?；;，,\s]+$")
_PART = re.compile(r"[;；]")  # where a part of a sentence ends (a merged text's sentences)
_LEAD = re.compile(r"^(?:[；;，,。\s]|\.(?=\s|$))+")  # a separator before a sentence ("?; Lives in …")
_MARKS = "?？!！"  # end marks a sentence keeps in a merged text (a question stays a question)
# a question: a final "?" or 吗 / 呢 / 么 (a Chinese question's particle: 喜欢吃辣吗 does not say
# 喜欢吃辣), or 吗 ending a clause (喜欢吃辣吗，还是不喜欢)
_ASKS = re.compile(r"(?:[?？]|[吗呢么])[\s。.！!，,；;~～…]*$|吗(?=[\s，,：:、])")
_CJK_CHAR = re.compile(f"[{CJK}]")
_CLAUSE = re.compile(r"[,，;；:：、]")  # clause ends inside a sentence
_LATIN_WORD = re.compile(r"[A-Za-z]+")


# --------------------------------------------------------------------------------------- strength
def capped_importance(
    strongest: np.ndarray, importance: np.ndarray, half_life_hours: np.ndarray, age_hours: np.ndarray
) -> np.ndarray:
    """The merged importance of each cluster, vectorized over clusters (``(c,)`` arrays each):
    ``importance`` (the members' max), lowered so that a memory of that importance, ``half_life_hours``
    (the members' max) and ``age_hours`` (its oldest member's age at ``now``) is no stronger at ``now``
    than ``strongest`` (its strongest member's strength then) -> ``(c,)`` float64.

    >>> capped_importance(np.array([0.05, 0.5]), np.array([0.9, 0.5]), np.array([1e5, 10.0]),
    ...                   np.array([100.0, 10.0])).round(5).tolist()
    [0.05003, 0.5]
    """
    top, imp = np.asarray(strongest, np.float64), np.asarray(importance, np.float64)
    hl, age = np.asarray(half_life_hours, np.float64), np.maximum(np.asarray(age_hours, np.float64), 0.0)
    over = strength(imp, age, hl) > top  # (c,) the plain max would be stronger than any member
    if not over.any():
        return imp
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        capped = np.where(over, np.minimum(imp, top / np.exp2(-age / hl)), imp)  # (c,)
    capped = np.where(np.isfinite(capped), capped, imp)  # (an exp2 underflow is never `over`)
    while (bad := over & (strength(capped, age, hl) > top)).any():  # rounding: one ulp down at a time
        capped = np.where(bad, np.nextafter(capped, 0.0), capped)
    return capped


def merged_importance(
    importance: Sequence[float], half_life_hours: Sequence[float], age_hours: Sequence[float]
) -> float:
    """The importance of the memory merged from members of these importances, half-lives and ages at
    ``now`` (hours; the merged memory takes the max half-life and the max age): the members' max,
    capped so that it is no stronger at ``now`` than the strongest of them (module doc)."""
    imp, hl = np.asarray(importance, np.float64), np.asarray(half_life_hours, np.float64)
    age = np.asarray(age_hours, np.float64)
    top = strength(imp, age, hl).max(keepdims=True)  # (1,)
    return float(
        capped_importance(top, imp.max(keepdims=True), hl.max(keepdims=True), age.max(keepdims=True))[0]
    )


# ------------------------------------------------------------------------------------------ content
# words that never change what a sentence states (articles and Chinese particles): a sentence that only
# adds or drops them says nothing new. Every other word counts, as written (no stemming, stopwords too):
# "not", "don't", "am"/"pm", "he"/"she", "was"/"is", "lived"/"lives", "or"/"and", 他/她 change a fact.
_FILLER = frozenset("a an the 的 了 在 吗 呢 吧 啊".split())
_WORD = re.compile(f"[{CJK}]|[^\\W_{CJK}]+")  # a CJK character, or a run of other letters and digits


class _Sentence:
    """One sentence as coverage reads it: ``said``, its words (case and width folded, :data:`_FILLER`
    aside) as one ``\\x1f``-separated string (a run of words is a substring), where each word sits
    in ``text`` (normalized, case kept), in which clause and in which part (the text between two
    ";", as a merged text joins sentences), and whether that part ``asks`` (a question: :data:`_ASKS`)."""

    def __init__(self, sentence: str) -> None:
        self.text = normalize(sentence, casefold=False)
        words = [m for m in _WORD.finditer(self.text) if m[0].casefold() not in _FILLER]
        self.spans = [m.span() for m in words]
        folded = (m[0].casefold().replace("i\u0307", "i") for m in words)  # as normalize() folds a text
        self.said = "\x1f" + "\x1f".join(folded) + "\x1f"
        cuts = [0, *(m.end() for m in _CLAUSE.finditer(self.text)), len(self.text) + 1]
        self.clauses = list(zip(cuts, cuts[1:], strict=False))  # [start, end) of each clause
        self.clause_of = [bisect_right(cuts, s) - 1 for s, _ in self.spans]
        ends = [0, *(m.end() for m in _PART.finditer(self.text)), len(self.text) + 1]
        asks = [_ASKS.search(self.text[a:b]) is not None for a, b in zip(ends, ends[1:], strict=False)]
        self.part_of = [bisect_right(ends, s) - 1 for s, _ in self.spans]
        self.asks = [asks[p] for p in self.part_of]  # per word: is its part a question?

    def covers(self, run: _Sentence) -> bool:
        """Whether this sentence already says ``run``: ``run``'s words are a run of its words, and the
        words around that run do not change what it says: within the run's clauses no word before it
        or after it alters it (:func:`memkit.facts.alters`: a negation, another subject, a modal ...),
        and no other clause qualifies the whole sentence (:func:`memkit.facts.qualifies`: a bare "no",
        a condition). A question says only a question, and only its whole self ("?" and 吗 alike): a
        statement never says a question, nor a question a statement or a run of its words ("Is he
        vegan?" says neither "he vegan" nor "he vegan?"). No sentence covers one whose numbers, time
        words or negation it lacks (:func:`memkit.facts.fact_tokens`; "用户有三" is a run of "用户有三十个",
        not said; names aside: the run holds their words, only their case may differ)."""
        k = self.said.find(run.said)
        if k >= 0 and not _unnamed(run.text) <= _unnamed(self.text):
            return False
        n, part = len(self.spans), self.part_of
        for k in _occurrences(self.said, run.said):
            first = self.said.count("\x1f", 0, k)  # index of the run's first word
            last = first + run.said.count("\x1f") - 2
            if self.asks[first : last + 1] != run.asks:
                continue  # a statement's words in a question, or a question's in a statement
            if first == 0 and last == n - 1:
                return True  # the whole sentence: nothing around it
            whole = (first == 0 or part[first - 1] != part[first]) and (
                last == n - 1 or part[last + 1] != part[last]
            )
            if any(run.asks) and not whole:
                continue  # a run of a question's words
            c0, c1 = self.clause_of[first], self.clause_of[last]
            before = self.text[self.clauses[c0][0] : self.spans[first][0]]
            after = self.text[self.spans[last][1] : self.clauses[c1][1]]
            elsewhere = (self.text[a:b] for i, (a, b) in enumerate(self.clauses) if not c0 <= i <= c1)
            if not (alters(before, after) or any(map(qualifies, elsewhere))):
                return True
        return False


def _occurrences(text: str, sub: str) -> Iterator[int]:
    """Where ``sub`` starts in ``text``, each place (overlapping ones too)."""
    k = text.find(sub)
    while k >= 0:
        yield k
        k = text.find(sub, k + 1)


def _unnamed(text: str) -> frozenset[str]:
    """The fact tokens of ``text`` but names (numbers, negation, time words)."""
    return frozenset(t for t in fact_tokens(text) if not t.startswith("name:"))


def merge_content(survivor: str, others: list[str]) -> str:
    """The survivor's text plus the sentences of ``others`` (in order) not yet said: a sentence is
    covered when its words, in order, are a run of the words of a sentence already in the text and
    the words around that run do not change what it says (:meth:`_Sentence.covers`). A "; " or "；"
    ends a sentence (a member that is itself a merge repeats nothing), and a sentence a later one
    covers is dropped, the survivor's too, so each is said once whatever the merge history. The sentences
    are joined by "; " (Chinese: "；"), each keeping its own "?" or "!", and the survivor's final "."
    or "。" ends the text unless its last sentence ends in a "?" or "!".

    >>> merge_content("用户喜欢用Python写脚本。", ["用户喜欢用Python写脚本", "Python3.10以上最好。"])
    '用户喜欢用Python写脚本；Python3.10以上最好。'
    >>> merge_content("Lives in Hangzhou.", ["lives in Hangzhou!", "Works at a bank. Lives in Hangzhou."])
    'Lives in Hangzhou; Works at a bank.'
    >>> merge_content("I like coffee.", ["I don't like coffee.", "Flight at 9 am.", "Flight at 9 pm."])
    "I like coffee; I don't like coffee; Flight at 9 am; Flight at 9 pm."
    >>> merge_content("Not allergic to peanuts", ["Allergic to peanuts"])  # a run, but negated there
    'Not allergic to peanuts; Allergic to peanuts'
    >>> merge_content("不喜欢吃辣", ["喜欢吃辣"]), merge_content("Gina likes tea.", ["likes tea"])
    ('不喜欢吃辣；喜欢吃辣', 'Gina likes tea; likes tea.')
    >>> merge_content("Is he vegan?", ["he vegan.", "Lives in Paris"])  # each keeps its "?" or not
    'Is he vegan?; he vegan; Lives in Paris'
    >>> merge_content("喜欢吃辣吗", ["喜欢吃辣"]), merge_content("住在杭州以后", ["住在杭州"])
    ('喜欢吃辣吗；喜欢吃辣', '住在杭州以后；住在杭州')
    """
    if not isinstance(survivor, str):
        raise ValidationError("survivor", f"must be a str, got {type(survivor).__name__}")
    if isinstance(others, (str, bytes)) or not hasattr(others, "__iter__"):
        raise ValidationError("others", f"must be a list of str, got {type(others).__name__}")
    others = list(others)  # (a list, or a polars Series of a plan's texts)
    if not all(isinstance(t, str) for t in others):
        raise ValidationError("others", "must be a list of str")
    kept: list[tuple[str, _Sentence, bool]] = []  # (sentence, as coverage reads it, the survivor's?)
    told = 0  # the survivor's sentences that say something
    for text, own in ((survivor, True), *((t, False) for t in others)):
        for sentence in _SPLIT.split(text):
            run = _Sentence(sentence)
            told += own and run.said != "\x1f\x1f"
            if run.said == "\x1f\x1f" or any(s.covers(run) for _, s, _ in kept):  # said already
                continue
            kept = [k for k in kept if not run.covers(k[1])]  # what this one says, it says: once
            kept.append((_marked(_LEAD.sub("", sentence.strip())), run, own))
    mine = [text for text, _, own in kept if own]
    added = [text for text, _, own in kept if not own]
    if len(mine) == told:  # (the survivor's sentences, each read once above)
        if not added:
            return survivor  # a duplicate adds nothing, not even a separator
        mine = [_marked(survivor)]  # the survivor's text as written, when all of it stays
    cjk = len(_CJK_CHAR.findall(survivor)) > len(_LATIN_WORD.findall(survivor))
    tail = survivor[len(_END.sub("", survivor)) :]
    end = "" if kept[-1][0][-1:] in tuple(_MARKS) else next((c for c in tail if c in "。."), "")
    return ("；" if cjk else "; ").join(mine + added) + end


def _marked(sentence: str) -> str:
    """``sentence`` without the punctuation and spaces that end it, but its "?" and "!" marks."""
    core = _END.sub("", sentence)
    return core + "".join(c for c in sentence[len(core) :] if c in _MARKS)


# ----------------------------------------------------------------------------------------- survivor
def by_survivor_rule(members: pl.DataFrame, *first: str) -> pl.DataFrame:
    """Members sorted so each cluster's survivor comes first (within the columns ``first``): most
    distinct tokens, then highest importance, newest ``created_at``, first text in code-point order,
    then the order of ``members`` (a stable sort: the first written, when they come in the order
    written, as from ``store.frame()``; never the id, which is random: the same memories written the
    same way merge the same way in every run)."""
    tokens = pl.Series([len(set(tokenize(c))) for c in members["content"]], dtype=pl.Int64)
    return members.with_columns(_tokens=tokens).sort(
        *first,
        "_tokens",
        "importance",
        "created_at",
        "content",
        descending=[False] * len(first) + [True, True, True, False],
        maintain_order=True,
    )


def remerge(members: pl.DataFrame) -> tuple[str, str]:
    """The survivor and merged content of one cluster's ``members`` (``id, content, importance,
    created_at``, in the order written: it settles what one instant's members leave open) by the
    merge rule: what a merged memory becomes when one of its members is erased.

    >>> from datetime import datetime, timezone
    >>> t = [datetime(2026, 1, d, tzinfo=timezone.utc) for d in (1, 2)]
    >>> remerge(pl.DataFrame({"id": ["a", "b"], "content": ["Tea.", "Tea at 3pm."],
    ...                       "importance": [0.5, 0.5], "created_at": t}))
    ('b', 'Tea at 3pm.')
    """
    ordered = by_survivor_rule(members.with_row_index("_written"))
    survivor = ordered.row(0, named=True)
    others = ordered[1:].sort("created_at", "_written")["content"].to_list()  # one instant's: as written
    return survivor["id"], merge_content(survivor["content"], others)
