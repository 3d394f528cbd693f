"""memkit/store/quantized.py: the int8 index gives the exact index's hits and scores (masks,
namespaces, filters, neighbour expansion, erasures, status changes, appends, reloads), keeps no
float32 matrix, and recalls the exact top 10; ``index=`` is validated. No timing is asserted."""

from __future__ import annotations

import sys
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit.store import int8_kernels
from memkit.store.quantized import QuantizedIndex, quantize

pytest.importorskip("numba")  # the extra memkit[int8]; `make test` installs it with [dev]

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
WORDS = "tea coffee garden river mountain city train music book paper window lamp chair dog cat".split()
SCORES = ["score", "similarity", "importance", "strength", "recency"]


def _frame(rng: np.random.Generator, m: int, start: int = 0) -> pl.DataFrame:
    """``m`` memories of random words, with varied importance, times, layers, kinds, tags, access."""
    return pl.DataFrame(
        {
            "content": [f"{i} " + " ".join(rng.choice(WORDS, 5)) for i in range(start, start + m)],
            "importance": rng.uniform(0.05, 1.0, m),  # some below the default floor
            "created_at": [NOW - H * float(h) for h in rng.uniform(0, 24 * 60, m)],
            "layer": rng.choice(["short_term", "long_term"], m).tolist(),
            "kind": rng.choice(["fact", "event"], m).tolist(),
            "tags": [[str(t)] for t in rng.choice(["a", "b", "c"], m)],
            "access": rng.choice(["public", "protected", "private"], m).tolist(),
        }
    )


def _pair(tmp_path=None, m: int = 300) -> dict[str, mk.MemoryStore]:
    """An exact and an int8 store holding the same memories in two namespaces (written by alice)."""
    stores = {}
    for kind in ("exact", "int8"):
        path = ":memory:" if tmp_path is None else str(tmp_path / f"{kind}.duckdb")
        s = mk.MemoryStore(path, index=kind, embedder=mk.HashEmbedder(dim=64))
        rng = np.random.default_rng(7)
        for ns in ("n1", "n2"):
            s.add_many(_frame(rng, m), namespace=ns, requester="alice", now=NOW)
        stores[kind] = s
    return stores


def _same(stores: dict[str, mk.MemoryStore], query: str, **kw) -> pl.DataFrame:
    """Search both stores -> the exact store's hits, after asserting the int8 ones are identical."""
    kw = {"namespace": "n1", "k": 10, "now": NOW, "reinforce": False} | kw
    exact, int8 = (stores[k].search(query, **kw) for k in ("exact", "int8"))
    cols = ["content", *SCORES] + [c for c in ("keyword", "neighbour") if c in exact.columns]
    assert exact.height > 0
    assert int8.select(cols).equals(exact.select(cols)), (query, kw)
    return exact


WEIGHTS = [
    mk.Weights(),  # keyword, neighbour expansion, near ties
    mk.Weights(similarity=1.0, keyword=0.0, neighbour=0.0, tie=0.0),
    mk.Weights(similarity=0.6, importance=0.3, recency=0.1, keyword=0.0, neighbour=0.0),
    mk.Weights(similarity=0.5, importance=0.2, keyword=0.3, neighbour=0.5, tie=0.0),
    mk.Weights(similarity=0.5, importance=0.2, keyword=0.3, neighbour=0.5, tie=0.05, neighbour2=0.8),
]


@pytest.mark.parametrize("w", WEIGHTS)
def test_int8_gives_the_exact_hits_and_scores(w: mk.Weights) -> None:
    stores = _pair()
    try:
        assert isinstance(stores["int8"]._index, QuantizedIndex)
        for query in ("tea garden", "train city music", "dog", "window lamp chair book"):
            _same(stores, query, weights=w)
            _same(stores, query, weights=w, namespace="n2", k=3)
            _same(stores, query, weights=w, k=40)  # a pool above the default 64
            _same(stores, query, weights=w, requester="bob")  # masks: only public / protected
            _same(stores, query, weights=w, layer="long_term", tags=["a", "b"])  # sparse candidates
            _same(stores, query, weights=w, kind="event", min_strength=0.3)  # another floor
            _same(stores, query, weights=w, now=NOW - 24 * 30 * H)  # validity: written before then
    finally:
        for s in stores.values():
            s.close()


def test_int8_follows_appends_status_changes_erasures_and_reloads(tmp_path) -> None:
    stores = _pair(tmp_path)
    try:
        for s in stores.values():  # appends past the index's first capacity (1024 rows)
            s.add_many(_frame(np.random.default_rng(8), 900, start=1000), namespace="n1", now=NOW)
        for query in ("tea garden", "river mountain"):
            top = _same(stores, query)
            for s in stores.values():  # the best hit of each query: erased in both stores
                gone = s.search(query, namespace="n1", k=1, now=NOW, reinforce=False)["id"][0]
                s.delete(gone, namespace="n1", now=NOW)
            after = _same(stores, query)
            assert top["content"][0] not in after["content"].to_list()
        for s in stores.values():  # status changes: a keyed memory superseded by a newer value
            s.add("tea garden tea garden", namespace="n1", key="k", value=1, now=NOW)
            s.add("tea garden river", namespace="n1", key="k", value=2, conflict_policy="supersede", now=NOW)
        _same(stores, "tea garden")
        for kind in list(stores):  # reload: the int8 codes are rebuilt from the file
            stores[kind].close()
            stores[kind] = mk.MemoryStore(str(tmp_path / f"{kind}.duckdb"), index=kind,
                                          embedder=mk.HashEmbedder(dim=64))  # fmt: skip
        for w in WEIGHTS:
            _same(stores, "tea garden", weights=w)
            _same(stores, "dog cat", weights=w, namespace="n2", requester="bob")
    finally:
        for s in stores.values():
            s.close()


def test_int8_keeps_no_float32_matrix_and_reads_exact_rows_from_the_store() -> None:
    stores = _pair(m=100)
    try:
        ix8, ix = stores["int8"]._index, stores["exact"]._index
        assert not hasattr(ix8, "emb") and ix8.codes.dtype == np.int8
        assert ix8.nbytes() / ix.nbytes() < 0.35
        rows = np.array([5, 0, 150, 5])  # any order, repeats
        assert np.array_equal(ix8.vectors(rows), ix.vectors(rows))  # the same rows, same order
        assert ix8.vectors(rows).dtype == np.float32
    finally:
        for s in stores.values():
            s.close()


def test_recall_at_10_on_random_unit_vectors() -> None:
    rng = np.random.default_rng(0)
    n, dim = 5000, 64
    emb = rng.standard_normal((n, dim)).astype(np.float32)
    frame = pl.DataFrame({"content": [f"m{i}" for i in range(n)], "embedding": emb})
    stores = {k: mk.MemoryStore(index=k, embedder=mk.HashEmbedder(dim=dim)) for k in ("exact", "int8")}
    try:
        for s in stores.values():
            s.add_many(frame, namespace="n", now=NOW)
        w = mk.Weights(similarity=1.0, keyword=0.0, neighbour=0.0, tie=0.0)
        gate = stores["exact"]._gate("n", None, statuses=("active",), valid_at=NOW)
        now_us = int(NOW.timestamp() * 1e6)
        found = []
        for q in rng.standard_normal((30, dim)).astype(np.float32):
            q /= np.linalg.norm(q)
            tops = [s._index.rank(q, "", gate, now_us, floor=s.decay.min_strength, weights=w, k=10,
                                  decay=s.decay, keyword=s.keyword)[0] for s in stores.values()]  # fmt: skip
            found.append(len(set(tops[0].tolist()) & set(tops[1].tolist())) / 10)
        assert np.mean(found) >= 0.99
    finally:
        for s in stores.values():
            s.close()


def test_quantize_error_is_within_half_a_step() -> None:
    x = np.random.default_rng(1).standard_normal((50, 33)).astype(np.float32)
    codes, scale = quantize(x)
    assert codes.dtype == np.int8 and np.abs(codes).max() == 127
    assert np.all(np.abs(x - scale[:, None] * codes) <= scale[:, None] / 2 + 1e-7)
    zero_codes, zero_scale = quantize(np.zeros((2, 4), np.float32))  # an erased row
    assert not zero_codes.any() and not zero_scale.any()


@pytest.mark.parametrize("bad", ["int4", "", None, 8, ["int8"]])
def test_a_bad_index_names_the_field(bad: object) -> None:
    with pytest.raises(mk.ValidationError, match="index"):
        mk.MemoryStore(index=bad)


def test_without_numba_int8_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(int8_kernels, "_KERNELS", {})
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` raises ImportError
    with pytest.raises(mk.MissingDependency, match=r"memkit\[int8\]"):
        mk.MemoryStore(index="int8")
    assert mk.MemoryStore().search("x", namespace="n").height == 0  # the exact index needs nothing


def test_without_numba_an_int8_store_on_a_new_path_leaves_no_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A failed open changes nothing: the dependency is checked before the file is created."""
    monkeypatch.setattr(int8_kernels, "_KERNELS", {})
    monkeypatch.setitem(sys.modules, "numba", None)
    path = tmp_path / "new.duckdb"
    with pytest.raises(mk.MissingDependency, match=r"memkit\[int8\]"):
        mk.MemoryStore(path, index="int8")
    assert list(tmp_path.iterdir()) == []


def test_compiling_lets_no_warning_escape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(int8_kernels, "_KERNELS", {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernels = int8_kernels.compile_kernels()
    assert int8_kernels.jit_seconds() == kernels["seconds"] >= 0


def test_search_guard_true_on_an_int8_store_reads_the_hits_vectors() -> None:
    """``search(guard=True)`` compares the hits' vectors with the lessons: an int8 index keeps no
    float32 matrix, so they come from the index's ``vectors`` (read from DuckDB)."""
    pytest.importorskip("numba")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with mk.MemoryStore(index="int8") as store:
        for t in ("green tea with Alice", "black coffee with Bob", "green tea at the river"):
            store.add(t, namespace="u", now=now)
        plain = store.search("green tea", namespace="u", now=now, reinforce=False)
        guarded = store.search("green tea", namespace="u", now=now, reinforce=False, guard=True)
        assert guarded["id"].to_list() == plain["id"].to_list()
        assert "lesson_similarity" in guarded.columns


def test_an_int8_search_after_a_delete_in_the_same_transaction_works() -> None:
    """Regression: the rescoring read the open transaction's DELETE and raised KeyError."""
    pytest.importorskip("numba")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with mk.MemoryStore(index="int8") as store:
        ms = [store.add(f"green tea note {i}", namespace="u", now=now) for i in range(5)]
        with store.transaction():
            store.delete(ms[0].id, namespace="u", now=now)
            hits = store.search("green tea", namespace="u", now=now)
        assert len(hits) >= 1


def test_searches_alternating_requesters_reuse_the_int32_adjacency() -> None:
    # the review of d7e621c: one cached copy was rebuilt (four int64 -> int32 copies) whenever searches
    # alternated between the operator and a requester who may not read every row (another adjacency)
    stores = _pair()
    try:
        ix = stores["int8"]._index
        kw = {"namespace": "n1", "k": 10, "now": NOW, "reinforce": False}
        made: list[tuple[int, ...]] = []
        for who in ("bob", None, "bob", None, "bob"):
            stores["int8"].search("tea garden", requester=who, **kw)
            made.append(tuple(id(g[3][0]) for g in ix._adj32))
        assert len(set(made[1:])) == 1 and len(made[-1]) == 2  # both copies made once, then reused
        for w in WEIGHTS:  # and the hits are still the exact index's, for both
            _same(stores, "tea garden", weights=w, requester="bob")
            _same(stores, "tea garden", weights=w)
    finally:
        for s in stores.values():
            s.close()
