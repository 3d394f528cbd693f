"""Neighbour expansion of a dense first pass computed for the rows in reach only
(memkit/store/reach.py): the same shortlist, in the same order, with the same float32 scores as
expanding every row, on scores built to sit near its bound (exact ties, narrow spreads, one strong
row among noise, masks, second neighbours, near-tie steps of every width)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit.scoring import adjacent, neighbour_score, second_neighbours
from memkit.store import index as index_module
from memkit.store import reach
from memkit.store.cut import Hours
from memkit.ties import top_k_best
from tests.conftest import QueryVectors

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    n = int(rng.choice([reach.AT_LEAST, 30_000, 60_000]))
    shape = seed % 5
    if shape == 0:  # similarity-like noise
        score = rng.normal(0, 0.05, n)
    elif shape == 1:  # a few strong rows (keyword hits) among noise
        score = np.where(rng.random(n) < 0.01, rng.random(n), rng.normal(0, 0.02, n))
    elif shape == 2:  # many exact ties
        score = np.round(rng.normal(0.1, 0.05, n), 2)
    elif shape == 3:  # all positive, narrow: most rows in reach
        score = np.abs(rng.normal(0, 0.05, n)) + 0.3
    else:
        score = rng.exponential(0.05, n)
    score = score.astype(np.float32)
    score[rng.random(n) < rng.choice([0.0, 0.1, 0.5])] = -np.inf  # off the mask
    ns = rng.integers(0, int(rng.choice([1, 5, 50])), n)
    created = rng.integers(0, int(rng.choice([1, 1000, 10**9])), n).astype(np.int64)
    prev, nxt = adjacent(ns, created, int(rng.choice([10**6, 10**12])), rng.random(n) > 0.05)
    adj = (prev, nxt, *second_neighbours(prev, nxt))
    lam, lam2 = float(rng.choice([0.8, 0.1, 1.0, 0.35])), float(rng.choice([0.0, 0.0, 0.5]))
    size, tie = int(rng.choice([16, 40, 64, 200])), float(rng.choice([0.1, 0.0, 0.2, 0.005]))
    return score, adj, created, lam, lam2, size, tie


def test_the_rows_in_reach_give_the_full_passs_shortlist() -> None:
    used = 0
    for seed in range(120):
        score, adj, created, lam, lam2, size, tie = _case(seed)
        now = int(created.max()) + 10**6
        boost = neighbour_score(score, adj[0], adj[1], lam2, adj[2:])
        boost *= lam
        full = score + boost  # the full pass: every row expanded
        c = int(np.isfinite(score).sum())
        want = top_k_best(full, size, n_valid=c, age=Hours(now, created, None), tie=tie)
        near = reach.neighbour_reach(score, adj, lam, lam2, size, tie)
        if near is None:
            continue
        used += 1
        rows, final = near
        assert np.array_equal(final, full[rows]), seed  # bit for bit
        short, top = top_k_best(final, size, n_valid=len(rows), age=Hours(now, created, rows), tie=tie)
        assert rows[short].tolist() == want[0].tolist() and int(rows[top]) == want[1], seed
    assert used >= 80  # the bound narrows most of these (it gives up on wide, flat ones)


def test_a_run_lifted_by_its_second_neighbours_is_kept() -> None:
    """Middling rows in a run, each lifted by its neighbours one and two places away (1 + λ(1 + λ₂)
    times its score), above isolated strong rows: the bound must grow by the second neighbours too."""
    n = reach.AT_LEAST
    score = np.random.default_rng(2).normal(0, 0.01, n).astype(np.float32)
    score[::32] = 0.95  # isolated strong rows
    score[1001:1021] = 0.4  # a run: 0.4 · (1 + 1 · (1 + 1)) = 1.2 after expansion
    prev, nxt = adjacent(np.zeros(n, np.int64), np.arange(n), 10**6, np.ones(n, bool))
    adj = (prev, nxt, *second_neighbours(prev, nxt))
    boost = neighbour_score(score, prev, nxt, 1.0, adj[2:])
    full = score + boost
    near = reach.neighbour_reach(score, adj, 1.0, 1.0, 16, 0.0)
    assert near is not None
    rows, final = near
    age = np.arange(n, 0, -1).astype(np.float64)  # hours since written: the run's turns tie on score
    want = top_k_best(full, 16, n_valid=n, age=age, tie=0.0)[0]
    assert set(want.tolist()) <= set(range(1001, 1021))  # the run is what ranks first
    assert rows[top_k_best(final, 16, n_valid=len(rows), age=age[rows], tie=0.0)[0]].tolist() == want.tolist()


def test_it_gives_up_where_the_bound_says_nothing() -> None:
    n = reach.AT_LEAST
    adj = (np.full(n, -1), np.full(n, -1), np.full(n, -1), np.full(n, -1))

    def near(score: float, rows: int = n) -> object:
        return reach.neighbour_reach(np.full(rows, score, np.float32), adj, 0.8, 0.0, 64, 0.1)

    assert near(-0.5) is None  # no positive score
    assert near(0.5) is None  # every row in reach
    assert near(0.5, n - 1) is None  # too few rows to try


def test_neighbours_are_symmetric() -> None:
    """The bound finds the rows a high row boosts as the high row's own neighbours: prev and next
    (and those two places away) must point at each other."""
    rng = np.random.default_rng(5)
    n = 5000
    prev, nxt = adjacent(rng.integers(0, 7, n), rng.integers(0, 500, n), 30, rng.random(n) > 0.2)
    for a, b in ((prev, nxt), second_neighbours(prev, nxt)):
        has = np.flatnonzero(a >= 0)
        assert np.array_equal(b[a[has]], has) and np.array_equal(a[b[b >= 0]], np.flatnonzero(b >= 0))


@pytest.mark.parametrize(
    "w",
    [mk.Weights(keyword=0.0), mk.Weights(keyword=0.0, neighbour2=0.5, tie=0.0), mk.Weights(importance=0.4)],
)
def test_a_search_returns_what_expanding_every_row_returns(
    w: mk.Weights, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conversation-like store (turns one minute apart, in clusters of topics) above the size where
    the bound is tried: every search's hits and scores equal those of the full expansion."""
    rng = np.random.default_rng(11)
    n, dim = reach.AT_LEAST + 4000, 32
    centres = rng.standard_normal((40, dim))
    topic = np.repeat(rng.integers(0, 40, n // 20 + 1), 20)[:n]  # runs of 20 turns on one topic
    x = centres[topic] + 0.8 * rng.standard_normal((n, dim))
    queries = centres[rng.integers(0, 40, 8)] + 0.1 * rng.standard_normal((8, dim))
    store = mk.MemoryStore(":memory:", embedder=QueryVectors(queries))
    frame = pl.DataFrame(
        {
            "content": [f"turn {i}" for i in range(n)],
            "embedding": x.astype(np.float32),
            "importance": rng.uniform(0.2, 1.0, n),
            "created_at": [NOW - timedelta(minutes=n - i) for i in range(n)],
        }
    )
    store.add_many(frame, namespace="c", now=NOW)
    used: list[int] = []
    real = reach.neighbour_reach

    def spy(*args):
        near = real(*args)
        used.append(near is not None)
        return near

    monkeypatch.setattr(index_module, "neighbour_reach", spy)
    kw = {"namespace": "c", "k": 10, "now": NOW, "reinforce": False, "weights": w}
    try:
        got = [store.search(f"q{i}", **kw).drop("last_access_at") for i in range(8)]
        assert sum(used) >= 6  # the bound was used
        monkeypatch.setattr(reach, "AT_LEAST", 10**12)  # the reference: every row expanded
        for i, hits in enumerate(got):
            assert hits.equals(store.search(f"q{i}", **kw).drop("last_access_at")), i
    finally:
        store.close()


def test_neighbours_that_cannot_be_shortlisted_are_left_out() -> None:
    """Without second neighbours, a neighbour of a high row whose own score is noise cannot reach the
    shortlist: it is left out (far fewer rows than the high rows and all their neighbours), and the
    shortlist, its order, the best row and the final scores are still the full pass's."""
    rng = np.random.default_rng(3)
    n = 60_000
    prev, nxt = adjacent(rng.integers(0, 3, n), rng.permutation(n), 10**6, np.ones(n, bool))
    adj = (prev, nxt, *second_neighbours(prev, nxt))
    created = rng.integers(0, 10**9, n).astype(np.int64)
    now = int(created.max()) + 1
    for seed in range(6):
        score = (0.3 * np.random.default_rng(seed).normal(0, 0.05, n)).astype(np.float32)
        score[np.random.default_rng(seed).random(n) < 0.1 * (seed % 2)] = -np.inf  # a mask, or none
        h = float(np.quantile(score[np.isfinite(score)], 0.97))
        every, _ = reach._around(score, adj, h, 0.8, 0.0)  # the high rows and all their neighbours
        rows, final, top = reach._pruned(score, adj, h, 0.8, 64, 0.1, 1.8)
        assert top == score.max() and set(rows.tolist()) <= set(every.tolist())
        assert len(rows) < 0.5 * len(every)  # most neighbours of the high rows left out
        boost = neighbour_score(score, prev, nxt)
        boost *= 0.8
        full = score + boost
        assert np.array_equal(final, full[rows])  # bit for bit
        c = int(np.isfinite(score).sum())
        want = top_k_best(full, 64, n_valid=c, age=Hours(now, created, None), tie=0.1)
        short, best = top_k_best(final, 64, n_valid=len(rows), age=Hours(now, created, rows), tie=0.1)
        assert rows[short].tolist() == want[0].tolist() and int(rows[best]) == want[1], seed
        assert reach.neighbour_reach(score, adj, 0.8, 0.0, 64, 0.1) is not None  # (the bound holds here)
