"""The score formulas, checked end to end through a MemoryStore against numbers worked out by hand.

tests/test_decay.py and tests/test_scoring.py hold the pure functions to their formulas; these tests
hold the *store* to them, so a formula changed or bypassed anywhere on the search path (the index's
float32 pre-ranking, the exact float64 re-scoring, the retrieval floor, reinforcement) fails here.
Every expected number is computed in this file from DESIGN.md's formulas, never by calling memkit's:

    strength = importance · 0.5^(age_hours / half_life_hours)
    recency  = exp(-hours_since_last_access / 168)
    score    = w_sim · cosine + w_imp · importance + w_rec · recency  (+ w_kw · keyword)

The embedder maps each known text to a unit vector chosen here, so every cosine is known: the query
is (1, 0, 0) and the memories sit at cosine 0.8, 0.6 and 0.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

import memkit as mk

T0 = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
QUERY = "where does the user live"
HANGZHOU = "the user lives in Hangzhou"  # cosine 0.8 with the query
COFFEE = "the user drinks americano"  # cosine 0.6
CAT = "the user has a cat"  # cosine 0.0


class TableEmbedder:
    """Known texts -> unit vectors chosen by the test (dim 3); an unknown text is a test bug."""

    name = "table-3"
    dim = 3
    VECTORS = {
        QUERY: (1.0, 0.0, 0.0),
        HANGZHOU: (0.8, 0.6, 0.0),
        COFFEE: (0.6, 0.8, 0.0),
        CAT: (0.0, 0.0, 1.0),
        "hangzhou": (1.0, 0.0, 0.0),  # the keyword example's query
        "hangzhou west lake": (0.6, 0.8, 0.0),
        "green tea": (0.8, 0.6, 0.0),
    }

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([self.VECTORS[t] for t in texts], dtype=np.float32).reshape(len(texts), 3)


@pytest.fixture
def store():
    # the articles' retrieval floor, 0.1 (DESIGN's worked examples; memkit's default is 0, see README)
    with mk.MemoryStore(embedder=TableEmbedder(), decay=mk.DecayParams(min_strength=0.1)) as s:
        yield s


def strength(importance: float, age_h: float, half_life_h: float) -> float:
    return importance * 0.5 ** (age_h / half_life_h)


def recency(idle_h: float) -> float:
    return math.exp(-idle_h / 168.0)


def by_content(hits: pl.DataFrame) -> dict[str, dict]:
    return {r["content"]: r for r in hits.to_dicts()}


# ------------------------------------------------------------------------------------ the score
def _three(store: mk.MemoryStore) -> None:
    """Three memories, searched at T0: written 24 h, 4 h and 7 days before, last used 24 h, 1 h, 7 d."""
    store.add_many(
        pl.DataFrame(
            {
                "content": [HANGZHOU, COFFEE, CAT],
                "importance": [0.8, 0.6, 0.9],
                "half_life_hours": [2160.0, 2.0, 720.0],
                "created_at": [T0 - 24 * H, T0 - 4 * H, T0 - 168 * H],
                "last_access_at": [T0 - 24 * H, T0 - 1 * H, T0 - 168 * H],
                "access_count": [0, 3, 0],
            }
        ),
        namespace="u",
        now=T0 - 168 * H,
    )


def test_default_weights_score_by_hand(store: mk.MemoryStore) -> None:
    _three(store)
    w = mk.Weights.articles()
    hits = store.search(QUERY, namespace="u", k=3, weights=w, now=T0, reinforce=False)
    assert hits["content"].to_list() == [HANGZHOU, COFFEE, CAT]
    assert "keyword" not in hits.columns  # no keyword weight, no keyword column
    want = {  # content: (similarity, importance, strength, recency)
        HANGZHOU: (0.8, 0.8, strength(0.8, 24, 2160), recency(24)),
        COFFEE: (0.6, 0.6, strength(0.6, 4, 2), recency(1)),
        CAT: (0.0, 0.9, strength(0.9, 168, 720), recency(168)),
    }
    got = by_content(hits)
    for content, (sim, imp, stren, rec) in want.items():
        row = got[content]
        assert row["similarity"] == pytest.approx(sim, abs=1e-6)
        assert row["importance"] == pytest.approx(imp, abs=1e-12)
        assert row["strength"] == pytest.approx(stren, abs=1e-12)
        assert row["recency"] == pytest.approx(rec, abs=1e-12)
        assert row["score"] == pytest.approx(0.6 * sim + 0.3 * imp + 0.1 * rec, abs=1e-6)
    # the same numbers written out: 0.48 + 0.24 + 0.1·e^(-1/7); 0.36 + 0.18 + 0.1·e^(-1/168); 0.27 + 0.1/e
    assert hits["score"].to_list() == pytest.approx([0.806688, 0.639407, 0.306788], abs=1e-6)
    assert hits["recency"].to_list() == pytest.approx([0.866878, 0.994065, 0.367879], abs=1e-6)
    assert hits["strength"].to_list() == pytest.approx([0.793863, 0.15, 0.765601], abs=1e-6)


def test_recency_heavy_weights_reorder_by_last_use(store: mk.MemoryStore) -> None:
    _three(store)
    w = mk.Weights(similarity=0.2, importance=0.1, recency=0.7, keyword=0.0, neighbour=0.0, tie=0.0)
    hits = store.search(QUERY, namespace="u", k=3, weights=w, now=T0, reinforce=False)
    # 0.2·0.6 + 0.1·0.6 + 0.7·e^(-1/168) = 0.875846 beats 0.2·0.8 + 0.1·0.8 + 0.7·e^(-1/7) = 0.846815
    assert hits["content"].to_list() == [COFFEE, HANGZHOU, CAT]
    assert hits["score"].to_list() == pytest.approx(
        [0.18 + 0.7 * recency(1), 0.24 + 0.7 * recency(24), 0.09 + 0.7 * recency(168)], abs=1e-6
    )
    assert hits["score"].to_list() == pytest.approx([0.875846, 0.846815, 0.347516], abs=1e-6)


def test_keyword_weight_adds_scaled_bm25(store: mk.MemoryStore) -> None:
    # two candidates, written now (recency 1): "hangzhou west lake" (3 tokens, cosine 0.6) and "green
    # tea" (2 tokens, cosine 0.8). BM25 (k1 0.3, b 0.4) of the one query term "hangzhou" in the first:
    # idf · 1·1.3 / (1 + 0.3·(0.6 + 0.4·3/2.5)); the ideal score is idf (df 1 of N 2, same idf), so
    # keyword = 1.3 / 1.324 = 0.981873; "green tea" has no query term: 0.
    for text in ("hangzhou west lake", "green tea"):
        store.add(text, namespace="kw", importance=0.5, now=T0)
    kw = 1.3 / (1 + 0.3 * (0.6 + 0.4 * 3 / 2.5))
    plain = mk.Weights.articles()
    hits = store.search("hangzhou", namespace="kw", k=2, weights=plain, now=T0, reinforce=False)
    assert hits["content"].to_list() == ["green tea", "hangzhou west lake"]
    assert hits["score"].to_list() == pytest.approx([0.48 + 0.15 + 0.1, 0.36 + 0.15 + 0.1], abs=1e-6)

    lexical = dataclasses.replace(mk.Weights.articles(), keyword=0.5)
    hits = store.search("hangzhou", namespace="kw", k=2, weights=lexical, now=T0, reinforce=False)
    assert hits["content"].to_list() == ["hangzhou west lake", "green tea"]  # the keyword rescues it
    assert hits["keyword"].to_list() == pytest.approx([kw, 0.0], abs=1e-6)  # BM25 runs in float32
    assert hits["keyword"][0] == pytest.approx(0.981873, abs=1e-6)
    assert hits["score"].to_list() == pytest.approx([0.61 + 0.5 * kw, 0.73], abs=1e-6)


# ------------------------------------------------------------------ DESIGN.md's worked examples
def test_design_example_long_term_memory_one_day_old(store: mk.MemoryStore) -> None:
    # importance 0.80, half-life 90 days, 1 day old -> strength 0.7939
    store.add(HANGZHOU, namespace="u", importance=0.8, half_life_hours=90 * 24.0, now=T0)
    hits = store.search(QUERY, namespace="u", now=T0 + 24 * H, reinforce=False)
    assert hits["strength"][0] == pytest.approx(0.7939, abs=1e-4)
    assert hits["strength"][0] == pytest.approx(0.8 * 0.5 ** (1 / 90), abs=1e-12)
    assert hits["recency"][0] == pytest.approx(math.exp(-24 / 168), abs=1e-12)


def test_design_example_short_term_memory_fades_below_the_floor(store: mk.MemoryStore) -> None:
    # importance 0.60, half-life 2 h: 0.15 after 4 h (recalled, >= 0.1); it reaches the default floor
    # 0.1 after 2·log2(0.6/0.1) = 5.17 h, so it is recalled at 5.16 h and not at 5.18 h or 5.5 h
    m = store.add(COFFEE, namespace="u", importance=0.6, half_life_hours=2.0, now=T0)
    assert 2 * math.log2(6) == pytest.approx(5.17, abs=0.005)

    def recalled(hours: float) -> list[float]:
        hits = store.search(QUERY, namespace="u", now=T0 + timedelta(hours=hours), reinforce=False)
        assert hits["id"].to_list() in ([m.id], [])
        return hits["strength"].to_list()

    assert recalled(4.0) == pytest.approx([0.15], abs=1e-12)
    assert recalled(5.16) == pytest.approx([0.6 * 0.5 ** (5.16 / 2)], abs=1e-12)
    assert recalled(5.16)[0] == pytest.approx(0.100345, abs=1e-6)
    assert recalled(5.18) == [] and recalled(5.5) == []  # 0.099651 and 0.089191: below the floor


# --------------------------------------------------------------------------- the retrieval floor
def test_floor_recalls_strength_equal_to_it_and_nothing_below(store: mk.MemoryStore) -> None:
    # importance 0.2, half-life 1 h: strength 0.1 exactly at 1 h (recalled: the rule is >= floor),
    # 0.100019 one second before, 0.099981 one second after (not recalled)
    m = store.add(CAT, namespace="u", importance=0.2, half_life_hours=1.0, now=T0)
    for at, want in [(H - timedelta(seconds=1), [m.id]), (H, [m.id]), (H + timedelta(seconds=1), [])]:
        hits = store.search(QUERY, namespace="u", now=T0 + at, reinforce=False)
        assert hits["id"].to_list() == want, at
    hits = store.search(QUERY, namespace="u", now=T0 + H, reinforce=False)
    assert hits["strength"].to_list() == [0.1]


def test_explicit_min_strength_is_a_floor_too(store: mk.MemoryStore) -> None:
    store.add(COFFEE, namespace="u", importance=0.6, half_life_hours=2.0, now=T0)  # 0.15 at 4 h
    at = T0 + 4 * H
    for floor, n in [(0.149, 1), (0.15, 1), (0.151, 0), (0.0, 1)]:
        hits = store.search(QUERY, namespace="u", now=at, min_strength=floor, reinforce=False)
        assert hits.height == n, floor
    # at 5.5 h it is below the default floor (0.089) but above an explicit 0.05
    later = T0 + timedelta(hours=5.5)
    assert store.search(QUERY, namespace="u", now=later, reinforce=False).is_empty()
    hits = store.search(QUERY, namespace="u", now=later, min_strength=0.05, reinforce=False)
    assert hits["strength"].to_list() == pytest.approx([0.6 * 0.5**2.75], abs=1e-12)


# --------------------------------------------------------------------------- reinforcement
def test_a_hit_is_reinforced_and_the_next_score_uses_it(store: mk.MemoryStore) -> None:
    # all three written a day before T0 (long-term: 90-day half-life); only the top 2 are returned
    top = store.add(HANGZHOU, namespace="u", importance=0.998, now=T0 - 24 * H)
    cof = store.add(COFFEE, namespace="u", importance=0.8, now=T0 - 24 * H)
    cat = store.add(CAT, namespace="u", importance=0.5, now=T0 - 24 * H)
    w = mk.Weights.articles()
    hits = store.search(QUERY, namespace="u", k=2, weights=w, now=T0)  # reinforce=True by default
    assert hits["id"].to_list() == [top.id, cof.id]
    assert hits["importance"].to_list() == pytest.approx([0.998, 0.8], abs=1e-12)  # scored before the hit

    after = {r["id"]: r for r in store.frame("u").to_dicts()}
    assert after[top.id]["importance"] == 1.0  # 0.998 + 0.005, capped at 1
    assert after[cof.id]["importance"] == pytest.approx(0.805, abs=1e-12)
    assert [after[i]["access_count"] for i in (top.id, cof.id, cat.id)] == [1, 1, 0]
    assert [after[i]["last_access_at"] for i in (top.id, cof.id, cat.id)] == [T0, T0, T0 - 24 * H]
    assert after[cat.id]["importance"] == 0.5  # not returned: untouched

    # a day later the hits score with their new importance and a recency counted from T0
    hits = store.search(QUERY, namespace="u", k=3, weights=w, now=T0 + 24 * H, reinforce=False)
    got = by_content(hits)
    assert got[COFFEE]["importance"] == pytest.approx(0.805, abs=1e-12)
    assert got[COFFEE]["recency"] == pytest.approx(math.exp(-24 / 168), abs=1e-12)
    assert got[COFFEE]["score"] == pytest.approx(0.36 + 0.3 * 0.805 + 0.1 * math.exp(-1 / 7), abs=1e-6)
    assert got[CAT]["recency"] == pytest.approx(math.exp(-48 / 168), abs=1e-12)
    # strength keeps counting from creation: reinforcement raises importance, it does not rejuvenate
    assert got[COFFEE]["strength"] == pytest.approx(0.805 * 0.5 ** (48 / 2160), abs=1e-12)

    # a search dated earlier (a replay) counts the access but never moves last access backwards
    store.search(QUERY, namespace="u", k=1, weights=w, now=T0 - 12 * H)
    row = store.frame("u").filter(pl.col("id") == top.id).row(0, named=True)
    assert (row["access_count"], row["last_access_at"], row["importance"]) == (2, T0, 1.0)
