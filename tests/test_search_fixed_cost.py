"""A search's cheaper fixed cost changes no result: BM25's mean length by one dot product (and the
sum of every length it keeps) follows every write, the query's postings by slices equal the old
ranges, the tie rule over a few scores equals its superset path, and reinforcement by the rows the
ranking found touches the hits it returned, nothing else."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit import ties
from memkit.params import KeywordParams
from memkit.scoring import KeywordIndex, bm25, tokenize
from memkit.store.rowmap import RowMap

FAST = settings(max_examples=150, deadline=None, database=None)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = "tea coffee alice bob river 我 喜欢 喝 茶 the".split()


def _texts(rng: np.random.Generator, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS, rng.integers(0, 9))) for _ in range(n)]


def _reference(kw: KeywordIndex, query: str, mask: np.ndarray, params: KeywordParams) -> np.ndarray:
    """BM25 as it was computed before: every posting's idf, the gathered mean, a pass over every row."""
    terms, rows, tfs = kw._postings()
    ids = np.asarray(
        [kw.vocab.get(t, -1) for t in sorted(set(tokenize(query, keep_stopwords=False)))], dtype=terms.dtype
    )
    out = np.zeros(len(kw.doc_len))
    if not mask.any() or not (ids >= 0).any():
        return out
    lo, hi = np.searchsorted(terms, ids, "left"), np.searchsorted(terms, ids, "right")
    hi = np.where(ids >= 0, hi, lo)
    sel = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)]).astype(np.int64)
    p_rows, p_tf, p_term = rows[sel], tfs[sel], np.repeat(np.arange(len(ids)), hi - lo)
    keep = mask[p_rows]
    p_rows, p_term, n_docs = p_rows[keep], p_term[keep], int(mask.sum())
    df = np.bincount(p_term, minlength=len(ids))
    avg = float(kw.doc_len[mask].mean())
    out = np.bincount(p_rows, weights=bm25(p_tf[keep], kw.doc_len[p_rows], df[p_term], n_docs, avg, params),
                      minlength=len(kw.doc_len))  # fmt: skip
    seen = df > 0
    if seen.any():
        ideal = float(np.log1p((n_docs - df[seen] + 0.5) / (df[seen] + 0.5)).sum())
        out = np.minimum(out / ideal, 1.0)
    return out


@FAST
@given(st.integers(0, 2**31), st.sampled_from([0.01, 0.3, 1.0]), st.booleans())
def test_bm25_scores_are_the_old_ones_bit_for_bit(seed: int, share: float, erase: bool) -> None:
    rng = np.random.default_rng(seed)
    kw = KeywordIndex()
    kw.add(_texts(rng, int(rng.integers(1, 300))), 0)
    for _ in range(3):  # writes between queries: the kept sum of lengths follows each
        mask = rng.random(len(kw)) < share
        params = KeywordParams(k1=float(rng.choice([0.5, 1.2])), b=float(rng.choice([0.0, 0.75])))
        query = " ".join(rng.choice([*WORDS, "unseen"], rng.integers(1, 4)))
        assert kw.scores(query, mask, params).tobytes() == _reference(kw, query, mask, params).tobytes()
        if mask.any():
            assert kw._avg_len(mask, int(mask.sum())) == float(kw.doc_len[mask].mean())
        kw.add(_texts(rng, 5), len(kw))
        if erase:
            kw.drop_rows(rng.choice(len(kw), 3, replace=False))


def test_the_sum_of_lengths_follows_appends_and_erasures() -> None:
    kw = KeywordIndex()
    kw.add(["tea and bob", "coffee"], 0)
    kw.scores("tea", np.ones(2, bool))
    assert kw._total == int(kw.doc_len.sum()) == 3
    kw.add(["alice drinks tea daily"], 2)  # a stale sum would still say 3
    kw.scores("tea", np.ones(3, bool))
    assert kw._total == int(kw.doc_len.sum()) == 7
    kw.drop_rows(np.array([0]))
    kw.scores("tea", np.ones(3, bool))
    assert kw._total == int(kw.doc_len.sum()) == 5


def test_past_2_24_tokens_the_mean_is_gathered_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    kw = KeywordIndex()
    kw.add(["tea " * 7 + "coffee", "tea"], 0)
    kw.scores("tea", np.ones(2, bool))
    monkeypatch.setattr(kw, "_total", 2**24)  # float32 would no longer sum every length exactly
    called = []
    monkeypatch.setattr(np, "dot", lambda *a: called.append(a))
    mask = np.array([True, False])
    assert kw._avg_len(mask, 1) == float(kw.doc_len[mask].mean()) and not called


@FAST
@given(
    st.lists(st.integers(-8, 8), min_size=1, max_size=60),
    st.integers(1, 70),
    st.sampled_from([0.0, 0.05, 0.1, 0.2]),
    st.sampled_from([np.float32, np.float64]),
    st.integers(0, 2**31),
)
def test_top_k_over_few_scores_is_the_superset_paths(
    ints: list, k: int, tie: float, dtype: type, seed: int
) -> None:
    scores = (np.asarray(ints) / 10).astype(dtype)  # many exact ties and step edges
    age = np.random.default_rng(seed).choice([0.0, 1.0, 5.0], len(scores))
    few = ties.top_k(scores, k, age=age, tie=tie)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ties, "_FEW", 0)  # every call takes the partition and the superset by score
        assert few.tolist() == ties.top_k(scores, k, age=age, tie=tie).tolist()


def test_reinforcement_touches_the_ranked_rows_without_looking_ids_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with mk.MemoryStore(str(tmp_path / "s.duckdb"), create=True) as store:
        for i in range(80):
            store.add(
                f"tea note {i}" if i % 2 else f"coffee note {i}", namespace="u", now=NOW + timedelta(hours=i)
            )
        ix = store._index
        before = ix.access_count[: ix.n].copy()

        def refuse(self: RowMap, ids: object) -> None:
            raise AssertionError("a search's reinforcement looked its ids up")

        monkeypatch.setattr(RowMap, "find", refuse)
        later = NOW + timedelta(days=10)
        hits = store.search("tea", namespace="u", k=5, now=later)
        monkeypatch.undo()
        rows = ix.rows(hits["id"].to_list())
        changed = np.flatnonzero(ix.access_count[: ix.n] != before)
        assert sorted(changed.tolist()) == sorted(rows.tolist())  # the hits, and nothing else
        assert (ix.last_access_us[rows] == int(later.timestamp() * 1e6)).all()
        with store.transaction():  # mirrored at the commit: the rows are looked up then, as before
            again = store.search("tea", namespace="u", k=5, now=later + timedelta(hours=1))
        assert (ix.access_count[ix.rows(again["id"].to_list())] >= 2).all()
    with mk.MemoryStore(str(tmp_path / "s.duckdb")) as store:  # the file agrees with the index
        counts = store.frame().filter(pl.col("id").is_in(hits["id"].to_list()))["access_count"].to_list()
        assert len(counts) == 5 and min(counts) >= 1
