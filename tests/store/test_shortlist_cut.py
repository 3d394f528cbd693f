"""The first pass's cut (memkit/store/cut.py ``missed``): the exact and int8 indexes score every
candidate approximately, rescore a shortlist exactly, and must still return what ranking every
candidate exactly returns, also where near-duplicate memories sit closer together than the first
pass's error (float32 rounding; int8 codes) and near ties rank newest first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit.store.index import SearchIndex
from tests.conftest import QueryVectors

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _stores(noise: float, kinds: tuple[str, ...], n: int = 3000, dim: int = 64, clusters: int = 5,
            queries: int = 12, seed: int = 3):  # fmt: skip
    """Stores of one kind each holding ``n`` memories in clusters (``noise`` around each centre)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim))
    x = centres[rng.integers(0, clusters, n)] + noise * rng.standard_normal((n, dim))
    q = centres[rng.integers(0, clusters, queries)] + 0.05 * rng.standard_normal((queries, dim))
    frame = pl.DataFrame(
        {
            "content": [f"m{i}" for i in range(n)],
            "embedding": x.astype(np.float32),
            "importance": rng.uniform(0.3, 1.0, n),
            "created_at": [NOW - timedelta(hours=float(h)) for h in rng.uniform(0, 24 * 30, n)],
        }
    )
    out = {}
    for kind in kinds:
        store = mk.MemoryStore(":memory:", index=kind, embedder=QueryVectors(q))
        store.add_many(frame, namespace="n", now=NOW)
        out[kind] = store
    return out


def _hits(store: mk.MemoryStore, i: int, w: mk.Weights) -> list[str]:
    kw = {"namespace": "n", "k": 10, "now": NOW, "reinforce": False, "weights": w}
    return store.search(f"q{i}", **kw)["content"].to_list()


WEIGHTS = [
    mk.Weights(similarity=1.0, importance=0.0, recency=0.0, keyword=0.0, neighbour=0.0, tie=0.0),
    mk.Weights(keyword=0.0, neighbour=0.0),  # near ties newest first
    mk.Weights(keyword=0.0),  # and neighbour expansion
]


@pytest.mark.parametrize("w", WEIGHTS)
def test_int8_returns_the_exact_hits_among_near_duplicates(w: mk.Weights) -> None:
    pytest.importorskip("numba")
    stores = _stores(0.02, ("exact", "int8"), n=1000)  # cosines within a cluster: ~0.9998
    try:
        for i in range(12):
            assert _hits(stores["int8"], i, w) == _hits(stores["exact"], i, w), i
    finally:
        for s in stores.values():
            s.close()


def test_int8_near_ties_across_a_step_boundary_rank_as_exact_ones() -> None:
    """Near ties rank newest first in steps of ``tie`` below the best score: a hit whose int8 score
    fell just past a step's edge lost to older memories in the pool (1 query in 60 here, 2 in 60
    at 20k memories), though exactly it is in the earlier step, so it ranks first."""
    pytest.importorskip("numba")
    stores = _stores(1.0, ("exact", "int8"), n=5000, dim=384, clusters=40, queries=60, seed=0)
    try:
        w = mk.Weights(keyword=0.0, neighbour=0.0)
        for i in range(60):
            assert _hits(stores["int8"], i, w) == _hits(stores["exact"], i, w), i
    finally:
        for s in stores.values():
            s.close()


@pytest.mark.parametrize("guess", [False, True])
def test_a_widened_pass_reads_only_the_rows_it_adds(guess: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The int8 index reads the pool's float32 rows from DuckDB (~0.25 ms a row at 1M); when the
    check of the cut adds rows, the pass again reads those alone, not the pool a second time —
    also after the likely misses were read with the pool (wider clusters: some searches still widen)."""
    pytest.importorskip("numba")
    import memkit.store.quantized as quantized

    if guess:
        store = _stores(0.3, ("int8",), n=5000, dim=384, seed=2)["int8"]
    else:
        monkeypatch.setattr(quantized.QuantizedIndex, "likely_sigmas", 0.0)  # no guess: the pass widens
        store = _stores(0.02, ("int8",), n=1000)["int8"]
    reads: list[list[str]] = []
    fetch = quantized.fetch_vectors

    def counting(con, ids, dim):
        reads[-1].append(list(ids))
        return fetch(con, ids, dim)

    monkeypatch.setattr(quantized, "fetch_vectors", counting)
    try:
        for w in WEIGHTS:
            for i in range(12):
                reads.append([])
                _hits(store, i, w)
    finally:
        store.close()
    assert any(len(r) > 1 for r in reads)  # some searches widened their pool
    for r in reads:
        ids = [i for ids in r for i in ids]
        assert len(ids) == len(set(ids)), r  # no row read twice in one search


def test_the_likely_misses_are_read_with_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows the check of the cut would likely add are guessed before the exact scores and read
    in the pool's DuckDB query: fewer queries (each ~5 ms cold at 1M), the same hits."""
    pytest.importorskip("numba")
    import memkit.store.quantized as quantized

    stores = _stores(1.0, ("exact", "int8"), n=5000, dim=384, clusters=40, queries=60, seed=0)
    queries = []
    fetch = quantized.fetch_vectors

    def counting(con, ids, dim):
        queries[-1] += 1
        return fetch(con, ids, dim)

    monkeypatch.setattr(quantized, "fetch_vectors", counting)
    w = mk.Weights(keyword=0.0)  # near ties newest first, neighbour expansion
    try:
        for sigmas in (0.0, quantized.QuantizedIndex.likely_sigmas):
            monkeypatch.setattr(stores["int8"]._index, "likely_sigmas", sigmas)
            queries.append(0)
            for i in range(60):
                assert _hits(stores["int8"], i, w) == _hits(stores["exact"], i, w), (sigmas, i)
    finally:
        for s in stores.values():
            s.close()
    assert queries[1] < queries[0], queries


@pytest.mark.parametrize("noise", [0.002, 0.3])
@pytest.mark.parametrize("w", WEIGHTS)
def test_the_exact_index_returns_what_scoring_every_candidate_returns(
    noise: float, w: mk.Weights, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _stores(noise, ("exact",))["exact"]
    try:
        got = [_hits(store, i, w) for i in range(12)]
        # the reference: a shortlist as long as the index, so every candidate is scored exactly
        monkeypatch.setattr(SearchIndex, "_first_pass_size", lambda self, k, shortlist: self.n)
        assert got == [_hits(store, i, w) for i in range(12)]
    finally:
        store.close()


@pytest.mark.parametrize("kind", ["exact", "int8"])
def test_thousands_of_identical_memories_are_rescored_a_bounded_number_of_times(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every identical row is within the error of every other: the check once added them all (an
    int8 search over 20k identical memories took 237 ms instead of 7; helper 63's review). It adds
    at most ``widen_at_most`` rows, once; no timing is asserted, the rows scored are counted."""
    if kind == "int8":
        pytest.importorskip("numba")
    queries = np.ones((1, 16))
    store = mk.MemoryStore(":memory:", index=kind, embedder=QueryVectors(queries))
    store.add_many(pl.DataFrame({"content": [f"m{i}" for i in range(5000)]}), namespace="n", now=NOW)
    scored: list[int] = []
    exact = SearchIndex._exact

    def counting(self, q, cand, *args):
        scored.append(len(cand))
        return exact(self, q, cand, *args)

    monkeypatch.setattr(SearchIndex, "_exact", counting)
    for w in WEIGHTS:
        _hits(store, 0, w)
    cap = store._index.widen_at_most
    assert len(scored) <= 2 * len(WEIGHTS) and max(scored) <= 64 + 1 + cap
    store.close()
