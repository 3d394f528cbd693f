"""A search's fixed cost, third round, changes no result: the tie rule's top k and the best row
from one partition equal the old code's (and ``np.argmax``), ordering without an index key is the
same order (lexsort is stable), the unchecked strength and recency are the checked ones bit for
bit, the mask leaves out the floor's compare only when no row can fade (a floor of 0), and
neighbour expansion's buffer without zeros scores as before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit import ties
from memkit.decay import recency, recency_of, strength, strength_of
from memkit.scoring import neighbour_score

FAST = settings(max_examples=200, deadline=None, database=None)
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _old_ordered(scores: np.ndarray, steps: np.ndarray, age: np.ndarray) -> np.ndarray:
    """The order as it was computed before: with the index as the last key."""
    index = np.arange(scores.shape[-1])
    if scores.ndim > 1 or np.shape(age) != scores.shape:
        index, age = np.broadcast_to(index, scores.shape), np.broadcast_to(age, scores.shape)
    return np.lexsort((index, -np.where(np.isfinite(scores), scores, -np.inf), age, steps), axis=-1)


def _old_top_k(scores: np.ndarray, k: int, age: np.ndarray, tie: float) -> np.ndarray:
    """top_k with ages as it was: the negated partition, the checked steps, the index key."""
    n_ok = int(np.count_nonzero(np.isfinite(scores)))
    k = min(k, n_ok)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    if n_ok == len(scores) <= 2048:
        steps = ties.tie_steps(scores, tie)
        part = np.flatnonzero(steps <= np.partition(steps, k - 1)[k - 1])
        return part[_old_ordered(scores[part], steps[part], age[part])][:k]
    top = -np.partition(-scores, k - 1)[:k] if k < len(scores) else scores
    last, best = float(ties.tie_steps(top, tie).max()), float(top.max())
    width = tie * abs(best)
    if width > 0:
        reach = (last + 1.0) * width
        part = np.flatnonzero(scores >= best - reach * (1.0 + 1e-4) - 1e-6 * abs(best) - 1e-30)
    else:
        part = np.flatnonzero(np.isfinite(scores) & (scores >= -last))
    top = scores[part]
    steps = ties.tie_steps(top, tie)
    keep = steps <= last
    part, steps = part[keep], steps[keep]
    return part[_old_ordered(top[keep], steps, age[part])][:k]


@FAST
@given(st.integers(0, 2**31), st.sampled_from([50, 3000]), st.sampled_from([1, 5, 64, 300]),
       st.sampled_from([0.0, 0.005, 0.1]), st.sampled_from([0.0, 0.3, 0.9]), st.booleans())  # fmt: skip
def test_top_k_and_its_best_row_are_the_old_ones(
    seed: int, n: int, k: int, tie: float, masked: float, coarse: bool
) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.random(n).astype(np.float32)
    if coarse:  # many exact and near ties
        scores = (np.round(scores * 20) / 20).astype(np.float32)
    scores[rng.random(n) < masked] = -np.inf
    age = rng.integers(0, 5, n).astype(np.float64)
    valid = int(np.isfinite(scores).sum())
    rows, best = ties.top_k_best(scores, k, valid, age=age, tie=tie)
    assert rows.tolist() == _old_top_k(scores, k, age, tie).tolist()
    assert rows.tolist() == ties.top_k(scores, k, age=age, tie=tie).tolist()
    assert best == int(np.argmax(scores))  # the first row of the best score, as np.argmax gives


def test_top_k_best_without_a_superset_falls_back_to_argmax() -> None:
    scores = np.array([0.5, 0.9, 0.9, 0.1])
    rows, best = ties.top_k_best(scores, 2)
    assert rows.tolist() == [1, 2] and best == 1
    rows, best = ties.top_k_best(np.array([-np.inf, -np.inf]), 2, age=np.zeros(2))
    assert rows.tolist() == [] and best == 0


@FAST
@given(st.integers(0, 2**31), st.integers(1, 60), st.sampled_from([0.0, 0.05, 0.5]))
def test_order_without_an_index_key_is_the_same(seed: int, n: int, tie: float) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, n).astype(np.float64) / 4  # exact ties in every key
    scores[rng.random(n) < 0.2] = -np.inf
    age = rng.integers(0, 2, n).astype(np.float64)
    steps = ties.tie_steps(scores, tie)
    assert ties._ordered(scores, steps, age).tolist() == _old_ordered(scores, steps, age).tolist()
    grid = np.stack([scores, scores[::-1]])
    g_steps = ties.tie_steps(grid, tie)
    assert ties._ordered(grid, g_steps, age).tolist() == _old_ordered(grid, g_steps, age).tolist()


@FAST
@given(st.integers(0, 2**31))
def test_unchecked_strength_and_recency_are_the_checked_ones(seed: int) -> None:
    rng = np.random.default_rng(seed)
    imp, age = rng.random(40), rng.normal(100, 300, 40)  # some ages below 0 ("in the future")
    hl = rng.uniform(0.5, 5000, 40)
    assert strength_of(imp, age, hl).tobytes() == strength(imp, age, hl).tobytes()
    for h in (rng.normal(50, 200, 40), rng.normal(50, 200, 40).astype(np.float32)):
        for scale in (168.0, 1.0, 2160.0):
            a, b = recency_of(h, scale), recency(h, scale)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_the_checked_forms_still_refuse_bad_input() -> None:
    with pytest.raises(mk.ValidationError, match="half_life_hours"):
        strength(0.5, 1.0, 0.0)
    with pytest.raises(mk.ValidationError, match="time_scale_hours"):
        recency(1.0, -1.0)
    assert recency(np.array([0.0, 1.0]), np.array([1.0, 2.0])).shape == (2,)  # a scale per row still works


@FAST
@given(st.integers(0, 2**31), st.booleans())
def test_neighbour_score_is_the_old_one(seed: int, second: bool) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 50))
    base = rng.normal(0.3, 0.4, n).astype(np.float32)
    base[rng.random(n) < 0.2] = -np.inf
    prev, nxt = rng.integers(-1, n, n), rng.integers(-1, n, n)
    s0 = np.zeros(n + 1, np.float32)  # the old buffer: zeros, then the scores
    np.fmax(base, 0, out=s0[:-1])
    old = np.maximum(s0[prev], s0[nxt])
    if second:
        p2, n2 = rng.integers(-1, n, n), rng.integers(-1, n, n)
        old = old + 0.5 * np.maximum(s0[p2], s0[n2])
        new = neighbour_score(base, prev, nxt, 0.5, (p2, n2))
    else:
        new = neighbour_score(base, prev, nxt)
    assert new.tobytes() == old.tobytes()


@pytest.mark.parametrize("floor", [0.0, 0.3])
def test_the_floor_compare_is_left_out_only_when_no_row_can_fade(floor: float) -> None:
    """At the store's floor 0 every row's expiry is "never" (so the mask needs no compare); at a
    floor above 0 a memory faded below it is still not found, by the default floor's compare."""
    store = mk.MemoryStore(decay=mk.DecayParams(min_strength=floor))
    old = store.add("tea with alice", namespace="u", importance=0.4, half_life_hours=1.0,
                    now=NOW - timedelta(days=30))  # fmt: skip
    store.add("tea with bob", namespace="u", importance=0.9, now=NOW)
    ix = store._index
    if floor == 0.0:
        assert (ix.expire_us[: ix.n] == np.iinfo(np.int64).max).all()
    hits = store.search("tea", namespace="u", now=NOW, reinforce=True)
    assert (old.id in hits["id"].to_list()) is (floor == 0.0)
    store.search("tea", namespace="u", now=NOW)  # reinforced rows keep "never" at floor 0
    if floor == 0.0:
        assert (ix.expire_us[: ix.n] == np.iinfo(np.int64).max).all()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("n", [3, 3001])
def test_top_k_ranks_only_finite_scores(bad: float, n: int) -> None:
    """The k largest *finite* scores: a partition sorts NaN last, into "the k best", and the superset
    of the tie rule came out empty (np.argmax of nothing); +inf failed the same way before."""
    scores = np.random.default_rng(n).random(n)
    scores[n // 2] = bad
    age = np.zeros(n)
    clean = np.where(np.isfinite(scores), scores, -np.inf)
    want = ties.top_k(clean, 3, age=age, tie=0.1)
    assert ties.top_k(scores, 3, age=age, tie=0.1).tolist() == want.tolist()
    rows, best = ties.top_k_best(scores, 3, age=age, tie=0.1)
    assert rows.tolist() == want.tolist() and best == int(np.argmax(clean))
