"""Retrieval scores, pure and vectorized: cosine, BM25 keyword score, the hybrid score, neighbours.

The near-tie order and top-k (:func:`tie_order`, :func:`top_k`) are :mod:`memkit.ties`'s,
re-exported here.

The hybrid score of DESIGN.md (the articles' formula, plus a lexical term)::

    score = w.similarity · cosine + w.importance · importance + w.recency · recency + w.keyword · keyword

>>> from memkit.params import Weights
>>> round(float(hybrid(0.9, 0.8, 1.0, Weights.articles())), 4)      # 0.6·0.9 + 0.3·0.8 + 0.1·1.0
0.88

``keyword`` is Okapi BM25 over :mod:`memkit.text`'s tokens (stemmed words, CJK uni/bigrams, no
stopwords) over the candidates only (their document frequencies and average length), divided by the
query's ideal score (each matchable term once, in a memory of average length), clipped to [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import ValidationError
from .params import KeywordParams, Weights
from .text import tokenize
from .ties import tie_order, top_k  # the near-tie rule, re-exported (its old home)

__all__ = ["NEIGHBOUR_WINDOW_HOURS", "KeywordIndex", "adjacent", "bm25", "cosine", "hybrid", "top_k",
           "neighbour_score", "scale_unit", "second_neighbours", "similar_pairs", "tie_order"]  # fmt: skip


def cosine(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine similarity of L2-normalized rows to an L2-normalized query: ``(n, dim) @ (dim,) -> (n,)``."""
    return matrix @ query


def hybrid(
    similarity: np.ndarray | float,
    importance: np.ndarray | float | None,
    recency: np.ndarray | float | None,
    weights: Weights,
    keyword: np.ndarray | float | None = 0.0,
    *,
    dtype: type = np.float64, out: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """The hybrid score: the weighted sum of the components (arrays broadcast together).

    The one implementation of the formula: search (both passes), :func:`memkit.evaluate.rank` and
    :class:`memkit.views.Reranker` call it. ``dtype=np.float32``: a search's first pass.
    ``weights`` fields may be arrays (a grid of weightings at once): ``(g, 1)`` by ``(c,)`` -> ``(g, c)``.
    A component given as None is left out (not even its weight times 0 is added). ``out``: where to
    write the score (its shape and ``dtype``; it may be ``similarity``)."""
    if not all(hasattr(weights, f) for f in ("similarity", "importance", "recency", "keyword")):
        raise ValidationError("weights", f"must be a memkit.Weights, got {type(weights).__name__}")
    dt, terms = np.dtype(dtype), [(weights.importance, importance), (weights.recency, recency)]
    w_kw = weights.keyword  # (a float's truth is np.any's, without an array: a hot path)
    if keyword is not None and (bool(w_kw) if isinstance(w_kw, float) else np.any(w_kw)):
        terms.append((weights.keyword, keyword))
    terms = [(w, x) for w, x in terms if x is not None]  # left out: the first pass's terms of weight 0
    try:  # numpy checks the components' types and shapes (no pass over the values: a hot path)
        score = np.multiply(weights.similarity, similarity, dtype=dt, out=out)
        for w, x in terms:
            t = np.multiply(w, x, dtype=dt)  # one allocation per term, in the target dtype
            same = t.shape == score.shape or not t.shape  # (most terms: no broadcast_shapes call)
            if same or score.shape == np.broadcast_shapes(score.shape, t.shape):
                score += t
            else:
                score = score + t
    except (TypeError, ValueError) as e:
        raise ValidationError("similarity", f"(or another component) must be numbers that fit: {e}") from None
    return score


def scale_unit(scores: np.ndarray) -> np.ndarray:
    """Divide by the maximum so the best is 1 (all zeros stay zeros): ``[2, 1, 0] -> [1, .5, 0]``."""
    return scores / top if (top := float(scores.max()) if scores.size else 0.0) > 0 else np.zeros_like(scores)


NEIGHBOUR_WINDOW_HOURS = 24.0  # two memories written further apart are never neighbours


def adjacent(
    group: np.ndarray, written: np.ndarray, window: float, keep: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each memory's neighbours -> ``(prev, next)``: the memory of the same ``group`` (namespace,
    conversation) written just before / just after it, in ``(written, position)`` order, or ``-1``
    when there is none or the two were written more than ``window`` apart. With ``keep`` (a mask),
    only those memories are paired: the others are not there (``-1``, and nobody's neighbour).

    >>> prev, nxt = adjacent(np.array([0, 0, 1, 0]), np.array([1.0, 2.0, 2.0, 99.0]), 24.0)
    >>> prev.tolist(), nxt.tolist()
    ([-1, 0, -1, -1], [1, -1, -1, -1])
    >>> keep = np.array([True, False, True])                          # the middle one is not there
    >>> [a.tolist() for a in adjacent(np.zeros(3), np.array([1.0, 2.0, 3.0]), 24.0, keep)]
    [[-1, -1, 0], [2, -1, -1]]
    """
    n = len(group)
    live = np.arange(n) if keep is None else np.flatnonzero(keep)  # (m,) the rows paired, in order
    order = live[np.lexsort((live, written[live], group[live]))]
    g, w = group[order], written[order]
    ok = (g[1:] == g[:-1]) & (w[1:] - w[:-1] <= window)
    prev, nxt = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    prev[order[1:][ok]] = order[:-1][ok]
    nxt[order[:-1][ok]] = order[1:][ok]
    return prev, nxt


def neighbour_score(base: np.ndarray, prev: np.ndarray, nxt: np.ndarray, second: float = 0.0,
                    far: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:  # fmt: skip
    """The better base score of each memory's two neighbours (``prev``/``next`` index the last axis
    of ``base``; ``-1``, a non-candidate ``-inf`` and a negative score count 0), plus ``second`` ×
    the better of the two memories two places away (``far``; default :func:`second_neighbours`).

    Neighbour expansion adds ``weights.neighbour ·`` this to the hybrid score: a turn near a
    strong hit (the answer after the question, the detail after the topic) rises with it.

    >>> neighbour_score(np.array([0.9, 0.1, -np.inf]), np.array([-1, 0, 1]), np.array([1, 2, -1])).tolist()
    [0.1, 0.9, 0.1]
    >>> neighbour_score(np.array([0.9, 0.1, 0.0]), np.array([-1, 0, 1]), np.array([1, 2, -1]), 0.5).tolist()
    [0.1, 0.9, 0.55]
    """
    s0 = np.empty((*base.shape[:-1], base.shape[-1] + 1), base.dtype)  # the last column: "no neighbour"
    s0[..., -1] = 0  # (the rest is written next: no pass of zeros first)
    np.fmax(base, 0, out=s0[..., :-1])  # -inf (no candidate), NaN, negatives: 0 (a masked copy: 3x slower)
    if s0.max(initial=0) == np.inf:  # rarely: +inf is no score either
        s0[np.isposinf(s0)] = 0
    near = _near(s0, prev, nxt)  # -1 reads the appended 0
    if not np.any(second):
        return near
    p2, n2 = far if far is not None else second_neighbours(prev, nxt)
    return near + second * _near(s0, p2, n2)


def _near(s0: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``max(s0[..., a], s0[..., b])``, by ``take`` (indices in ``[-1, len)``: -1 is the last
    column either way), a quarter of the time of the fancy index with its ellipsis."""
    near = s0.take(a, axis=-1, mode="wrap")
    return np.maximum(near, s0.take(b, axis=-1, mode="wrap"), out=near)


def second_neighbours(prev: np.ndarray, nxt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The memories two places away -> ``(prev[prev], next[next])``, ``-1`` where there is none."""
    return tuple(np.where(a >= 0, a[np.maximum(a, 0)], -1) for a in (prev, nxt))  # type: ignore[return-value]


def bm25(tf: np.ndarray, doc_len: np.ndarray, df: np.ndarray, n_docs: int, avg_len: float,
         params: KeywordParams = KeywordParams()) -> np.ndarray:  # fmt: skip
    """Okapi BM25 contribution of each posting: ``idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avg))``.

    All array arguments are aligned per posting (``df`` is the document frequency of the posting's
    term). idf is the non-negative ``log(1 + (N − df + 0.5) / (df + 0.5))``.
    """
    return _bm25(_idf(df, n_docs), tf, doc_len, avg_len, params)


def _idf(df: np.ndarray, n_docs: int) -> np.ndarray:
    """BM25's non-negative idf of document frequencies ``df`` among ``n_docs``."""
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


def _bm25(
    idf: np.ndarray, tf: np.ndarray, doc_len: np.ndarray, avg_len: float, params: KeywordParams
) -> np.ndarray:
    """:func:`bm25` from each posting's ``idf`` (:func:`_idf`, computed once per term by a query)."""
    norm = params.k1 * (1.0 - params.b + params.b * doc_len / max(avg_len, 1e-9))
    return idf * tf * (params.k1 + 1.0) / (tf + norm)


class KeywordIndex:
    """An inverted index of token postings, appended to as memories are written.

    Postings are kept in flat numpy arrays ``(term, row, tf)``; they are re-sorted by term lazily
    (only when a query comes after new writes), so a query reads each of its terms' postings with two
    ``searchsorted`` calls and no Python loop over memories.
    """

    def __init__(self) -> None:
        """An empty index; :meth:`add` appends memories' texts, tokenized as queries are."""
        self.vocab: dict[str, int] = {}  # term -> id; a term no memory holds any more is removed
        self._dropped = 0  # ids removed from vocab: a new id is len(vocab) + this, never one in use
        self._terms: list[np.ndarray] = []
        self._rows: list[np.ndarray] = []
        self._tfs: list[np.ndarray] = []
        self.doc_len = np.zeros(0, dtype=np.float32)  # (n_rows,) tokens per memory
        self._sorted: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._total: int | None = None  # every length's sum (_avg_len), after a change: None

    def __len__(self) -> int:
        """How many documents are indexed."""
        return len(self.doc_len)

    def add(self, texts: Sequence[str], start_row: int) -> None:
        """Index ``texts`` as rows ``start_row, start_row + 1, ...`` (rows must be appended in order)."""
        if start_row != len(self.doc_len):
            raise ValueError(f"rows must be appended in order: expected {len(self.doc_len)}")
        terms: list[int] = []
        rows: list[int] = []
        lens = np.zeros(len(texts), dtype=np.float32)
        for i, text in enumerate(texts):  # tokenizing is per text, done once at write time
            toks = tokenize(text, keep_stopwords=False)
            lens[i] = len(toks)
            terms.extend(self.vocab.setdefault(t, len(self.vocab) + self._dropped) for t in toks)
            rows.extend([start_row + i] * len(toks))
        if terms:
            pairs = np.stack([np.asarray(terms, np.int64), np.asarray(rows, np.int64)])
            uniq, tf = np.unique(pairs, axis=1, return_counts=True)  # (2, p) unique (term, row)
            self._terms.append(uniq[0].astype(np.int32))
            self._rows.append(uniq[1].astype(np.int32))
            self._tfs.append(tf.astype(np.float32))
            self._sorted = None
        self.doc_len = np.concatenate([self.doc_len, lens])
        self._total = None  # (_avg_len's sum of every length)

    def drop_rows(self, rows: np.ndarray) -> None:
        """Remove the postings of ``rows`` (erased memories), and every word no other row holds."""
        terms, r, f = self._postings()
        keep = ~np.isin(r, rows)
        gone = set(np.setdiff1d(terms[~keep], terms[keep]).tolist())  # ids only the erased rows used
        self.vocab = {t: i for t, i in self.vocab.items() if i not in gone} if gone else self.vocab
        self._dropped += len(gone)  # (erasures are rare: rebuilding the dict is fine)
        self._terms, self._rows, self._tfs = [terms[keep]], [r[keep]], [f[keep]]
        self._sorted = (terms[keep], r[keep], f[keep])
        self.doc_len[rows] = 0.0
        self._total = None

    def _postings(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every posting sorted by term, as parallel arrays ``(term id, document row, term frequency)``;
        the appended batches are concatenated and sorted once, on the first query after a change."""
        if self._sorted is None:
            if self._terms:
                t = np.concatenate(self._terms)
                r = np.concatenate(self._rows)
                f = np.concatenate(self._tfs)
                order = np.argsort(t, kind="stable")
                t, r, f = t[order], r[order], f[order]
                self._terms, self._rows, self._tfs = [t], [r], [f]
            else:
                t = r = np.zeros(0, np.int32)
                f = np.zeros(0, np.float32)
            self._sorted = (t, r, f)
        return self._sorted

    def scores(
        self,
        query: str,
        candidates: np.ndarray,
        params: KeywordParams = KeywordParams(),
        *,
        n_docs: int | None = None,
    ) -> np.ndarray:
        """BM25 of every row against ``query``, over the corpus of rows where ``candidates`` is True.

        Returns ``(n_rows,)`` float64 in [0, 1], zero outside the candidates. The scale is the
        query's own: 1.0 is what a memory of average length containing once every query term that
        occurs among the candidates would score (the sum of their idf). A memory sharing only a
        common word with the query stays low instead of being stretched to 1 as dividing by the best
        hit would; short or repeated matches are clipped at 1. ``n_docs``: how many candidates are
        True, when the caller knows it (it is not checked).
        """
        out = self.matches(query, candidates, params, n_docs=n_docs)
        return np.zeros(len(self.doc_len), dtype=np.float64) if out is None else out

    def matches(
        self, query: str, candidates: np.ndarray, params: KeywordParams = KeywordParams(), *,
        n_docs: int | None = None,
    ) -> np.ndarray | None:  # fmt: skip
        """:meth:`scores`, or None when every score is 0 (no candidate contains a term of ``query``):
        a search then adds nothing instead of a pass over zeros."""
        n = len(self.doc_len)
        if n_docs is None:  # (a search passes the count it has)
            n_docs = int(np.count_nonzero(candidates) if candidates.dtype == bool else candidates.sum())
        asked = self._query(query) if n_docs else None
        if asked is None:  # no candidate, no query term, or none occurs anywhere
            return None
        n_terms, p_rows, p_tf, p_term = asked
        avg_len = self._avg_len(candidates, n_docs)
        keep = candidates[p_rows]
        p_rows, p_term = p_rows[keep], p_term[keep]  # the candidates' postings
        df = np.bincount(p_term, minlength=n_terms)  # (q,) doc freq within the candidates
        idf = _idf(df, n_docs)  # (q,): per term, the numbers bm25() computes per posting
        contrib = _bm25(idf[p_term], p_tf[keep], self.doc_len[p_rows], avg_len, params)
        out = np.bincount(p_rows, weights=contrib, minlength=n)  # the sums add.at made, ~5x faster
        seen = df > 0  # terms no candidate contains (question words: 什么, where) cannot be matched
        if not seen.any():
            return None
        ideal = float(idf[seen].sum())
        return np.minimum(np.divide(out, ideal, out=out), 1.0, out=out)  # in place; only 1 clips (>= 0)

    def _avg_len(self, candidates: np.ndarray, n_docs: int) -> float:
        """The candidates' mean length, ``float(doc_len[candidates].mean())``. The lengths are whole
        numbers: while all of them sum below 2**24, float32 sums them exactly in any order, so one
        dot product gives the very sum (and the same float32 division) without gathering them."""
        total = self._total
        if total is None:  # (every length, as integers: after a change, once)
            total = self._total = int(self.doc_len.astype(np.int64).sum())
        if candidates.dtype != bool or total >= 2**24:
            return float(self.doc_len[candidates].mean())
        s = np.float32(np.dot(self.doc_len, candidates.view(np.uint8).astype(np.float32)))
        return float(s.dtype.type(s / n_docs))  # np.mean's own final division

    def _query(self, query: str) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
        """The postings of ``query``'s terms -> ``(how many terms, rows, tfs, which term each is)``,
        or None when no term of it is indexed."""
        terms, rows, tfs = self._postings()
        q_tokens = sorted(set(tokenize(query, keep_stopwords=False)))
        qt = [self.vocab.get(t, -1) for t in q_tokens]  # -1: unseen
        known = [t for t in qt if t >= 0]
        if not known:  # no query term occurs anywhere
            return None
        # where each known term's postings start and end (the start of the next id), in one call and in
        # the postings' own dtype (searchsorted would otherwise convert the whole term array per call)
        m = len(known)
        at = np.searchsorted(terms, np.asarray(known + [t + 1 for t in known], terms.dtype)).tolist()
        bounds = zip(at[:m], at[m:], strict=True)
        spans = [next(bounds) if t >= 0 else (0, 0) for t in qt]
        # each query term's postings are one slice: concatenated (a loop over the query's few terms)
        p_rows = np.concatenate([rows[a:b] for a, b in spans])
        p_tfs = np.concatenate([tfs[a:b] for a, b in spans])
        return len(qt), p_rows, p_tfs, np.repeat(np.arange(len(qt)), [b - a for a, b in spans])  # (p,) term


def similar_pairs(emb: np.ndarray, threshold: float, block: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of rows of ``emb`` (unit vectors) whose cosine is at least ``threshold`` -> local
    indices ``(i, j)`` with ``i < j``. Computed in ``block x block`` tiles of the upper triangle, so
    memory stays at one tile however many rows there are: consolidation's near-duplicates and the
    conflict graph's "similar but different" edges both come from here.

    >>> e = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> [a.tolist() for a in similar_pairs(e, 0.9)]
    [[0], [1]]
    """
    n = len(emb)
    found_i, found_j = [], []
    for i0 in range(0, n, block):
        rows = emb[i0 : i0 + block]  # (b, dim)
        for j0 in range(i0, n, block):  # upper triangle of tiles: each pair is scored once
            sim = rows @ emb[j0 : j0 + block].T  # (b, dim) @ (dim, c) -> (b, c)
            if j0 == i0:
                np.fill_diagonal(sim, -np.inf)  # a row is not its own duplicate
            hit = sim >= threshold
            if hit.any():
                i, j = np.nonzero(hit)
                keep = i0 + i < j0 + j  # subtle: the diagonal tile holds both (i, j) and (j, i)
                found_i.append(i0 + i[keep])
                found_j.append(j0 + j[keep])
    if not found_i:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(found_i).astype(np.int64), np.concatenate(found_j).astype(np.int64)
