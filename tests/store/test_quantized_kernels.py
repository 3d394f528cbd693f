"""memkit/store/int8_kernels.py through the int8 index: the scan computes every term of the hybrid
score with its weight over the read gate's mask, neighbour expansion and the pool follow the exact
index's rules, the prefetch hint changes no result, and the whole ranking equals the exact index's
on random indexes with namespaces, statuses, erasures, validity, expiry and access levels. No
timing."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import numpy as np
import pytest

from memkit.decay import recency
from memkit.params import DecayParams, KeywordParams, Weights
from memkit.schema import ACCESS, STATUSES
from memkit.scoring import hybrid, neighbour_score, top_k
from memkit.store import int8_kernels as kern
from memkit.store.gate import Gate
from memkit.store.index import SearchIndex
from memkit.store.quantized import QuantizedIndex

pytest.importorskip("numba")  # the extra memkit[int8]

NOW = datetime(2026, 1, 1, tzinfo=UTC)
NOW_US = int(NOW.timestamp() * 1e6)
HOUR = 3_600_000_000  # µs
OPEN_START, OPEN_END = np.iinfo(np.int64).min, np.iinfo(np.int64).max
WORDS = "tea coffee garden river mountain city train music book paper".split()
NAMES = ["alice", "bob", None]
DECAY, KEYWORD = DecayParams(), KeywordParams()


def _indexes(seed: int, m: int = 2000, dim: int = 32) -> tuple[SearchIndex, QuantizedIndex]:
    """An exact and an int8 index holding the same ``m`` random rows: three namespaces, every status
    and access level, owners and creators, strengths around the floor, open and closed validity,
    rows written after ``NOW``, some erased rows; near-duplicate vectors (ties)."""
    rng = np.random.default_rng(seed)
    emb = rng.standard_normal((m, dim)).astype(np.float32)
    emb[m // 2 : m // 2 + 40] = emb[m // 2]  # 40 identical vectors: exact ties
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    created = NOW_US - (rng.uniform(-48, 3000, m) * HOUR).astype(np.int64)  # some in the future
    bound = lambda lo, hi, open_: np.where(  # noqa: E731
        rng.random(m) < 0.7, open_, NOW_US + (rng.uniform(lo, hi, m) * HOUR).astype(np.int64)
    )
    cols = {
        "id": [f"m{i}" for i in range(m)],
        "content": [" ".join(rng.choice(WORDS, 4)) for _ in range(m)],
        "key": [None] * m,
        "tags": [None] * m,
        "namespace": rng.choice(["a", "b", "c"], m).tolist(),
        "owner": [NAMES[i] for i in rng.integers(0, 3, m)],
        "created_by": [NAMES[i] for i in rng.integers(0, 3, m)],
        "status": rng.choice(STATUSES, m).tolist(),
        "access": rng.choice(ACCESS, m).tolist(),
        "layer": ["long_term"] * m,
        "kind": ["fact"] * m,
        "importance": rng.uniform(0.02, 1.0, m),  # some below the floor from the start
        "half_life_h": rng.uniform(10, 2000, m),
        "created_us": created,
        "last_access_us": created + (rng.uniform(0, 500, m) * HOUR).astype(np.int64),
        "valid_from_us": bound(-100, 100, OPEN_START),
        "valid_until_us": bound(-100, 100, OPEN_END),
        "access_count": np.zeros(m, np.int64),
    }
    exact = SearchIndex(dim, 0.1)
    int8 = QuantizedIndex(dim, 0.1, source=lambda ids: emb[[int(i[1:]) for i in ids]])
    for ix in (exact, int8):
        ix.append(cols, emb)
        ix.erase([f"m{i}" for i in range(0, m, 97)])
    return exact, int8


GATES = [
    Gate(ns, req, st, at)
    for ns, req, st, at in itertools.product(
        [None, "a", "zz"], [None, "alice", "carol"], [None, ("active",), ("active", "conflict")], [None, NOW]
    )
    if not (ns is None and req is not None)  # the namespace rule: a requester names a namespace
]


WEIGHTS = [
    Weights(similarity=1.0, importance=0.0, recency=0.0, keyword=0.0, neighbour=0.0, tie=0.0),
    Weights(similarity=0.0, importance=1.0, recency=0.0, keyword=0.0, neighbour=0.0, tie=0.0),
    Weights(similarity=0.0, importance=0.0, recency=1.0, keyword=0.0, neighbour=0.0, tie=0.0),
    Weights(similarity=0.0, importance=0.0, recency=0.0, keyword=1.0, neighbour=0.0, tie=0.0),
    Weights(similarity=0.2, importance=0.3, recency=0.4, keyword=0.5, neighbour=0.6, tie=0.05),
    Weights(),  # keyword, neighbour expansion, near ties
    Weights.articles(),
]


@pytest.mark.parametrize("w", WEIGHTS)
def test_the_fused_scan_scores_every_term_with_its_weight(w: Weights) -> None:
    exact, int8 = _indexes(2)
    gate = Gate("a", None, ("active",), NOW)
    q = exact.vectors(np.array([5]))[0]
    mask = exact.mask(gate, NOW_US)
    kw = int8.keyword_index().scores("tea river", mask, KEYWORD) if w.keyword else None
    got = mask.copy()
    score, _ = int8._scan(q, got, kw, w, DECAY, NOW_US)
    n = int8.n
    cos = (int8.codes[:n] @ q.astype(np.float64)) * int8.scale[:n]  # the dequantized cosine
    rec = recency((NOW_US - int8.last_access_us[:n]) / HOUR, DECAY.time_scale_hours)
    want = np.where(mask, hybrid(cos, int8.importance[:n], rec, w, kw), -np.inf)
    assert np.array_equal(np.isfinite(score), mask)
    assert np.allclose(score[mask], want[mask], atol=2e-5, rtol=1e-5)  # float32, int16 query
    if w.neighbour:  # the second pass: + λ · the neighbour term (-inf and negatives count 0)
        adj = int8.adjacency()
        for lam2 in (0.0, w.neighbour2, 0.7):  # and the memories two places away
            out = np.empty(n, np.float32)
            int8._kernels["neighbours"](score, *adj, w.neighbour, lam2, n, out)
            ref = score + w.neighbour * neighbour_score(score, adj[0], adj[1], lam2)
            assert np.array_equal(np.isfinite(out), mask)
            assert np.allclose(out[mask], ref[mask], atol=1e-6)


@pytest.mark.parametrize("tie", [0.0, 0.05, 0.3])
def test_the_pool_is_top_k_under_the_tie_rule(tie: float) -> None:
    exact, int8 = _indexes(3)
    rng = np.random.default_rng(0)
    score = rng.normal(size=int8.n).astype(np.float32)
    score[rng.random(int8.n) < 0.3] = -np.inf
    score[100:130] = score[100]  # exact ties at some rank
    for size in (10, 64, 200):
        got, _ = int8._pool(score, (None,) * 4, (0.0, 0.0), NOW_US, tie, size)
        age = (NOW_US - int8.created_us[: int8.n]) / HOUR
        want = np.sort(top_k(score, size, age=age, tie=tie))
        assert np.array_equal(got, want), size
    heap = np.full(7, -np.inf, np.float32)
    int8._kernels["top_values"](score, int8.n, heap)
    assert sorted(heap.tolist()) == sorted(np.sort(score)[-7:].tolist())


def _rank(ix: SearchIndex, gate: Gate, q: np.ndarray, text: str, w: Weights, **kw):
    return ix.rank(q, text, gate, NOW_US, floor=kw.pop("floor", 0.1), weights=w, k=kw.pop("k", 10),
                   decay=DECAY, keyword=KEYWORD, **kw)  # fmt: skip


@pytest.mark.parametrize("seed", [4, 5])
def test_int8_ranking_equals_the_exact_ranking_on_random_indexes(seed: int) -> None:
    exact, int8 = _indexes(seed, m=3000)
    rng = np.random.default_rng(seed)
    for gate, w in itertools.product(GATES[::3], WEIGHTS):
        q = exact.vectors(rng.integers(0, exact.n, 1))[0] + rng.normal(0, 0.05, 32).astype(np.float32)
        text = " ".join(rng.choice(WORDS, 2))
        for extra in ({}, {"k": 3}, {"floor": 0.3}, {"kind": ["fact"]}):
            rows_e, comp_e = _rank(exact, gate, q, text, w, **extra)
            rows_8, comp_8 = _rank(int8, gate, q, text, w, **extra)
            assert np.array_equal(rows_e, rows_8), (gate, w, extra)
            assert comp_e.keys() == comp_8.keys()
            for c in comp_e:  # the exact float64 rescoring: bit-identical
                assert np.array_equal(comp_e[c], comp_8[c]), (gate, w, extra, c)


def test_the_query_never_overflows_int32() -> None:
    for dim in (3, 384, 1536, 20000):
        codes, scale = kern.quantize_query(np.ones(dim, np.float32), dim)
        assert int(np.abs(codes.astype(np.int64)).sum()) * 127 < 2**31
        assert scale > 0


@pytest.mark.parametrize("n", [1, 3, 4, 5, kern.AHEAD + 1, 1003, kern.CHUNK + 6, 2 * kern.CHUNK + 1])
def test_the_scan_scores_each_row_it_is_asked_and_no_other(n: int) -> None:
    """Each row of the mask gets its own dot product, exactly (int32), whatever the rows around it
    (the scan asks memory for a row ahead only when the mask lets it through; chunks of CHUNK rows);
    every other row -inf."""
    kr = kern.compile_kernels()
    rng = np.random.default_rng(n)
    dim = 37  # not a multiple of any vector width
    codes = rng.integers(-127, 128, (n, dim), dtype=np.int8)
    scale = rng.uniform(0.001, 0.01, n).astype(np.float32)
    q, qscale = kern.quantize_query(rng.standard_normal(dim).astype(np.float32), dim)
    mask = rng.random(n) < 0.5
    mask[: min(n, 8)] = [True, False, False, True, False, False, False, False][: min(n, 8)]  # mixed; none
    w = np.array([1.0, 0.0, 0.0, 0.0, 1.0])
    out = np.full(n, np.nan, np.float32)
    z = np.zeros(n)
    count = kr["scan"](codes, scale, q, qscale, z, np.zeros(n, np.int64), z, w, 0, n, mask.copy(), out)
    acc = codes.astype(np.int64) @ q.astype(np.int64)  # exact
    want = (acc * scale.astype(np.float64) * qscale).astype(np.float32)
    assert count == mask.sum()
    assert np.array_equal(np.isneginf(out), ~mask)
    assert np.allclose(out[mask], want[mask], rtol=1e-6, atol=0)


def _dots(numba, hint) -> tuple[np.ndarray, np.ndarray]:
    """``_dot_rows`` compiled with ``hint`` over 50 random rows -> (its dot products, the exact ones)."""
    rng = np.random.default_rng(9)
    n, dim = 50, 70
    codes = rng.integers(-127, 128, (n, dim), dtype=np.int8)
    q, _ = kern.quantize_query(rng.standard_normal(dim).astype(np.float32), dim)
    mask = rng.random(n) < 0.6
    out = np.full(n, -1, np.int32)
    kept = kern._prefetch
    try:
        kern._prefetch = hint  # resolved when the loop below compiles
        assert numba.njit(kern._dot_rows)(0, n, codes, q, mask, out) == mask.sum()
    finally:
        kern._prefetch = kept
    return out, np.where(mask, codes.astype(np.int64) @ q.astype(np.int64), 0)


def test_the_prefetch_hint_compiles_and_changes_no_result() -> None:
    """The dot product asks memory for rows ahead (llvm.prefetch, a numba intrinsic): the kernels
    are built with it, and it gives the same dot products, bit for bit, as the loop without it."""
    numba = kern.require_numba()
    assert kern.compile_kernels()["prefetch"] is True
    for hint in (kern._prefetch_hint(numba), numba.njit(kern._no_prefetch)):
        got, want = _dots(numba, hint)
        assert np.array_equal(got, want)


def test_kernels_whose_hint_fails_to_compile_run_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A numba whose internals the hint's code generation no longer fits: the kernels are built
    without the hint (a warning; not cached, so a later process with a working hint compiles its
    own) and score as before."""
    numba = kern.require_numba()
    kern.compile_kernels()
    for name in ("_KERNELS", "_dot", "_score", "_prefetch"):  # restored after the test
        monkeypatch.setattr(kern, name, getattr(kern, name))
    monkeypatch.setattr(kern, "_KERNELS", {})

    def broken(numba_):
        raise numba.core.errors.LoweringError("the intrinsic's API moved")

    monkeypatch.setattr(kern, "_prefetch_hint", broken)
    with pytest.warns(UserWarning, match="without the prefetch hint"):
        kr = kern.compile_kernels()
    assert kr["prefetch"] is False
    n, dim = 9, 5
    codes = np.arange(n * dim, dtype=np.int8).reshape(n, dim)
    q, qscale = kern.quantize_query(np.ones(dim, np.float32), dim)
    out, ones = np.empty(n, np.float32), np.ones(n, bool)
    z, scale = np.zeros(n), np.ones(n, np.float32)
    assert kr["scan"](codes, scale, q, qscale, z, np.zeros(n, np.int64), z, np.array([1.0, 0, 0, 0, 1]), 0, n,
                      ones, out) == n  # fmt: skip
    want = codes.astype(np.int64).sum(axis=1) * q[0] * qscale
    assert np.allclose(out, want, rtol=1e-6)
