"""Why many pairs of texts state different facts, at once: :func:`memkit.facts.fact_difference` for
every pair of a list, with each text tokenized once and the pairs compared in polars.

:func:`memkit.consolidate.held_apart` names the difference of every pair above the merge threshold it
leaves unlinked. Templated memories ("Item 7 budget is 1014 yuan", ...) make those pairs many: 5,000
memories in 50 templates hold 247,500 pairs, and one :func:`~memkit.facts.fact_difference` a pair took
3.8 s of CPU (6-10 s on this loaded 2-core machine); now the whole of ``held_apart`` takes 0.7 s, 0.25
of them finding the pairs (a small timing script; README "Consolidation"). Each text's tokens are read once
(:func:`~memkit.facts.fact_tokens`, cached), numbered in the order the words name them, and the pairs'
tokens set against each other by sorting numbers; only a pair whose tokens agree (a relative time
word written on other days: a few) goes through :func:`~memkit.facts.fact_difference`.
The words are the same, to the character.

>>> fact_differences(["预算是5000元", "预算是8000元", "Not allergic"], np.array([0, 0]), np.array([1, 2]))
['numbers 5000 ≠ 8000', 'negation: only in the second; numbers 5000 ≠ —']
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import polars as pl

from .facts import TOKEN_KINDS, fact_difference, fact_tokens

__all__ = ["fact_differences"]

_NONE = "—"


def fact_differences(
    texts: Sequence[str], u: np.ndarray, v: np.ndarray, written: Sequence[datetime | None] | None = None
) -> list[str]:
    """:func:`memkit.facts.fact_difference` of ``texts[u[k]]`` and ``texts[v[k]]`` for each ``k`` ->
    ``(e,)`` strings (``""`` where they state the same facts); ``written`` (when each text was
    written) counts only for relative time words, as there."""
    u, v = np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)
    if u.size == 0:
        return []
    touched = np.zeros(max(u.max(), v.max()) + 1, dtype=bool)
    touched[u] = touched[v] = True
    rows = np.flatnonzero(touched)  # (r,) the rows the pairs name, each tokenized once
    said = texts.gather(rows).to_list() if isinstance(texts, pl.Series) else [texts[int(i)] for i in rows]
    sets = [fact_tokens(t) for t in said]
    order = {"neg": 0} | {prefix: k for k, (prefix, _) in enumerate(TOKEN_KINDS, 1)}
    vocab = sorted({t for s in sets for t in s}, key=lambda t: (order[_kind(t)], t))  # by kind, then text
    tid = {t: k for k, t in enumerate(vocab)}  # (a token's number, in that order)
    kind_of = np.array([order[_kind(t)] for t in vocab], dtype=np.int64)  # (V,)
    word_of = np.array([t.split(":", 1)[-1] for t in vocab], dtype=object)  # (V,)
    size = np.zeros(rows[-1] + 2, dtype=np.int64)
    size[rows + 1] = [len(s) for s in sets]
    start = np.cumsum(size)  # tokens of row i: flat[start[i] : start[i + 1]]
    flat = np.array([tid[t] for s in sets for t in s], dtype=np.int64)  # (T,)
    # every (pair, token, side) of both sides; a token on one side only is a difference
    p, tok, side = [], [], []
    for s, rows_of in enumerate((u, v)):
        n = start[rows_of + 1] - start[rows_of]  # (e,) tokens per pair on this side
        p.append(np.repeat(np.arange(u.size), n))
        tok.append(flat[np.repeat(start[rows_of] - np.cumsum(n) + n, n) + np.arange(n.sum())])
        side.append(np.full(n.sum(), s, dtype=np.int64))
    p, tok, side = np.concatenate(p), np.concatenate(tok), np.concatenate(side)
    key = p * len(vocab) + tok
    by_key = np.argsort(key, kind="stable")
    k = key[by_key]
    once = np.ones(k.size, dtype=bool)
    once[1:] &= k[1:] != k[:-1]
    once[:-1] &= k[:-1] != k[1:]
    sel = by_key[once]
    p, tok, side = p[sel], tok[sel], side[sel]
    kind = kind_of[tok]
    o = np.lexsort((tok, side, kind, p))  # (p, kind, side, token)
    p, tok, side, kind = p[o], tok[o], side[o], kind[o]
    # words of each (pair, kind, side), joined by " " (most hold one)
    g = _starts((p * 8 + kind) * 2 + side)
    gp, gk, gs = p[g], kind[g], side[g]
    gw = _joined(word_of[tok], g, " ")
    # one part per (pair, kind): "numbers 5000 ≠ 8000", or the negation's
    pk = _starts(gp * 8 + gk)
    first = np.zeros(g.size, dtype=bool)
    first[pk] = True
    pk_of = np.cumsum(first) - 1  # each group's (pair, kind)
    w0, w1 = np.full(pk.size, _NONE, dtype=object), np.full(pk.size, _NONE, dtype=object)
    w0[pk_of[gs == 0]], w1[pk_of[gs == 1]] = gw[gs == 0], gw[gs == 1]
    names = np.array(["", *(w for _, w in TOKEN_KINDS)], dtype=object)
    kp, kk = gp[pk], gk[pk]
    part = np.array([f"{n} {a} ≠ {b}" for n, a, b in zip(names[kk], w0, w1, strict=True)], dtype=object)
    neg = kk == 0
    part[neg] = np.where(w0[neg] != _NONE, "negation: only in the first", "negation: only in the second")
    # the parts of each pair, joined by "; "
    pp = _starts(kp)
    out = np.full(u.size, "", dtype=object)
    out[kp[pp]] = _joined(part, pp, "; ")
    out = out.tolist()
    for k in (k for k, x in enumerate(out) if not x):  # tokens agree: relative dates of other days, if any
        when = (None, None) if written is None else (written[int(u[k])], written[int(v[k])])
        out[k] = fact_difference(texts[int(u[k])], texts[int(v[k])], *when)
    return out


def _kind(token: str) -> str:
    """``"n:5000"`` -> ``"n:"``; ``"neg"`` -> ``"neg"``."""
    return token.split(":", 1)[0] + ":" if ":" in token else token


def _starts(key: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted ``key`` starts -> indices."""
    return np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]])) if key.size else key


def _joined(words: np.ndarray, starts: np.ndarray, sep: str) -> np.ndarray:
    """``words`` (object) joined with ``sep`` within each run beginning at ``starts`` -> one per run.
    Most runs hold one word (a pair differs in one number): only the others are joined."""
    out = words[starts]
    ends = np.append(starts[1:], words.size)
    for r in np.flatnonzero(ends - starts > 1):
        out[r] = sep.join(words[starts[r] : ends[r]])
    return out
