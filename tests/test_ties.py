"""memkit.ties: the near-tie rule decides a score on a step's edge the same way at any weight scale and
in float32 or float64 (a property test), and the exact top-k of a matrix of queries equals the full
order however many memories share the first step and their writing time."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit.scoring import adjacent, hybrid, neighbour_score
from memkit.ties import tie_order, tie_step, tie_steps, top_k, top_k_rows

FAST = settings(max_examples=200, deadline=None, database=None)

# components and weights on a grid of tenths: many scores then lie exactly on a step's edge (a memory
# scoring 0, or only through a neighbour: 0.8 = 1 - 2 x 0.1), the case that used to flip
tenth = st.integers(0, 10).map(lambda i: i / 10)
SCALES = (0.1, 0.3, 0.5, 0.7, 2.0, 3.0, 7.0, 10.0)


def _scores(sim: np.ndarray, kw: np.ndarray, w: mk.Weights, dtype: type = np.float64) -> np.ndarray:
    """The store's formula over a chain of memories written one after another: hybrid, plus
    neighbour expansion (``w.neighbour`` times the better neighbour's score)."""
    n = len(sim)
    base = hybrid(sim, 0.0, 0.0, w, kw, dtype=dtype)
    prev, nxt = adjacent(np.zeros(n), np.arange(n, dtype=np.float64), 24.0)
    return base + dtype(w.neighbour) * neighbour_score(base, prev, nxt, float(w.neighbour2))


@FAST
@given(
    st.lists(st.tuples(tenth, tenth), min_size=2, max_size=12),
    st.tuples(tenth, tenth).filter(lambda w: sum(w) > 0),
    st.sampled_from([0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0]),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.sampled_from([0.05, 0.1, 0.2]),
    st.sampled_from(SCALES),
    st.randoms(use_true_random=False),
)
def test_scaling_every_weight_never_changes_a_ranking(
    rows: list, w: tuple, lam: float, lam2: float, tie: float, scale: float, rnd
) -> None:
    """Property: ``Weights`` times any factor (and ``normalized()``) rank alike, in float64 and in
    float32 (evaluate's precision): the step of a score on an edge is decided by the rule, not by
    rounding. Ages are distinct, so within a step the order is the newer first, and a wrong step
    shows."""
    sim, kw = (np.array(c, dtype=np.float64) for c in zip(*rows, strict=True))
    age = np.array(rnd.sample(range(1000), len(rows)), dtype=np.float64)  # hours, all different
    weights = mk.Weights(similarity=w[0], importance=0.0, recency=0.0, keyword=w[1], neighbour=lam, tie=tie,
                         neighbour2=lam2)  # fmt: skip
    scaled = dataclasses.replace(weights, similarity=w[0] * scale, keyword=w[1] * scale)
    want = tie_order(_scores(sim, kw, weights), age, tie).tolist()
    for other in (scaled, weights.normalized()):
        assert tie_order(_scores(sim, kw, other), age, tie).tolist() == want
        assert tie_order(_scores(sim, kw, other, np.float32), age, tie).tolist() == want
    for k in (1, 3, len(rows)):  # top_k cuts by the same rule
        assert top_k(_scores(sim, kw, scaled), k, age=age, tie=tie).tolist() == want[:k]


def test_a_score_on_a_step_edge_is_in_the_step_the_edge_begins() -> None:
    # 0.8 = 1 - 2 x 0.1: computed, (best - score) / width is 1.9999999999999996 in float64
    for best in (1.0, 0.6, 0.3, 7.0):
        s = np.array([best, 0.8 * best, 0.0])
        for dtype in (np.float64, np.float32):
            assert tie_steps(s.astype(dtype), 0.1).tolist() == [0.0, 2.0, 10.0]
    assert tie_step(1.0, 0.8, 0.1) == 2.0 and tie_step(1.0, 0.81, 0.1) == 1.0  # (1.9: step 1)


@FAST
@given(
    st.integers(1, 6),
    st.lists(st.integers(0, 4), min_size=1, max_size=60),
    st.sampled_from([0.0, 0.05, 0.5]),
    st.integers(1, 8),
    st.randoms(use_true_random=False),
)
def test_top_k_rows_is_the_full_order_cut_at_k(q: int, levels: list, tie: float, k: int, rnd) -> None:
    """Property: every row's top k equals tie_order over all columns, cut at k (-1 past the finite
    scores), with exact ties, near ties, equal ages and non-candidates in any mix."""
    n = len(levels)
    scores = np.array([[rnd.choice(levels) / 4 + rnd.choice([0.0, 0.01]) for _ in range(n)]
                       for _ in range(q)])  # fmt: skip
    scores[np.array([[rnd.random() < 0.2 for _ in range(n)] for _ in range(q)])] = -np.inf
    age = np.array([rnd.choice([0.0, 1.0, 5.0]) for _ in range(n)])
    got = top_k_rows(scores, k, age, tie)
    for r in range(q):
        order = tie_order(scores[r], age, tie)[: min(k, n)]
        want = np.where(np.isfinite(scores[r][order]), order, -1)
        assert got[r].tolist() == want.tolist()


def test_more_same_time_memories_in_the_first_step_than_any_shortlist() -> None:
    # 100 memories written at one time, all within the first 10% step: the best-scoring must lead
    # (the shortlist of 64 by newness that evaluate used cut them by row number instead)
    scores = np.linspace(0.90, 0.999, 100)[None, :]
    assert top_k_rows(scores, 5, np.zeros(100), 0.1).tolist() == [[99, 98, 97, 96, 95]]


@pytest.mark.parametrize("seed", range(6))
def test_top_k_over_many_near_ties_orders_only_what_it_returns_and_returns_the_full_orders_first(
    seed: int,
) -> None:
    """Many rows in the k-th's step (a bulk load: one importance, one write time, default weights):
    top_k narrows them key by key (step, age, -score, index) instead of ordering them all, and returns
    exactly the first k of the full order."""
    rng = np.random.default_rng(seed)
    n, k = 5000, int(rng.integers(1, 50))
    scores = rng.choice(np.round(rng.uniform(0.5, 0.52, 9), 4), n)  # few values: exact ties
    if seed % 2:
        scores = rng.uniform(0.5, 0.52, n)
    age = rng.choice([0.0, 2.0, 7.0], n) if seed % 3 else np.zeros(n)
    full = tie_order(scores, age, 0.05)
    assert top_k(scores, k, age=age, tie=0.05).tolist() == full[:k].tolist()


def test_top_k_over_many_near_ties_with_unknown_ages_still_returns_k_rows() -> None:
    """Regression: a NaN age (the Reranker's, when a candidate's created_at is null) made the narrowing
    key by key compare nothing equal to a NaN k-th value and return fewer than k rows, even none;
    the full order puts NaN ages last, alike, as lexsort does."""
    rng = np.random.default_rng(0)
    n = 5000
    scores = rng.choice([0.5, 0.51, 0.52], n)
    for age in (np.full(n, np.nan), np.where(rng.random(n) < 0.5, np.nan, rng.choice([0.0, 2.0], n))):
        full = tie_order(scores, age, 0.05)
        for k in (1, 7, 40):
            assert top_k(scores, k, age=age, tie=0.05).tolist() == full[:k].tolist()


@pytest.mark.parametrize("n_valid", [None, 6])
def test_top_k_without_ages_breaks_a_tie_at_the_cut_by_the_lower_row(n_valid: int | None) -> None:
    """Equal scores straddling the k-th place: the lower rows go in, as the docstring says (a
    partition alone keeps any of them)."""
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.5, 0.5], dtype=np.float32)
    assert top_k(scores, 3, n_valid).tolist() == [1, 0, 2]
    with_nan = np.array([0.1, np.nan, 0.5, -np.inf, 0.5], dtype=np.float32)  # NaN: never ranked
    assert top_k(with_nan, 3, 3).tolist() == top_k(with_nan, 3).tolist() == [2, 4, 0]
    many = np.full(1000, 0.25)
    many[[700, 900]] = 0.75
    assert top_k(many, 6).tolist() == [700, 900, 0, 1, 2, 3]
