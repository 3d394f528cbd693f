"""Search latency of memkit against its floors and the usual alternatives.

For each corpus size N it builds N memories with random unit vectors (dim 384), loads them with
``MemoryStore.add_many`` (an ``embedding`` column, so the embedder is skipped), and reports the
median latency of one top-10 query for:

- ``memkit search``: ``store.search(..., reinforce=False)`` and with the default ``reinforce=True``
  (one batched UPDATE + an audit event);
- ``(a) bare matvec``: numpy ``emb @ q`` + ``argpartition`` top-10 over the store's own float32
  matrix, the memory-bandwidth floor every ratio is measured against;
- ``(a') numpy pipeline``: the same plus the decay floor, recency and the hybrid score;
- ``(b) duckdb SQL``: the hybrid ranking as one SQL query (the issue's query, and one with the same
  namespace / status / decay-floor filter as memkit);
- ``(c) python loop``: a per-row loop like the source articles' code, timed on a subsample and
  extrapolated linearly to N (marked as such);
- ``int8 index`` (``MemoryStore(index="int8")``, needs ``memkit[int8]``): the same rows copied into an
  int8 store; its ranking time against the exact index's (similarity only, and default weights) and
  the floor, recall@10 against the exact index over random unit queries, and its memory against the
  float32 matrix. Then LoCoMo turns (HashEmbedder) in an exact and an int8 store: recall@10 of int8
  against exact, and R@5 of both against the evidence (skipped when LoCoMo is absent).

Run from the repository root::

    .venv/bin/python benchmarks/search.py                 # 10k, 100k, 1M
    .venv/bin/python benchmarks/search.py --quick         # 10k only (LoCoMo: 200 questions)
    .venv/bin/python benchmarks/search.py --sizes 1000000 --int8-only   # the int8 rows at 1M
    .venv/bin/python benchmarks/search.py --sizes 2000 --repeats 2

No timing is asserted; this prints numbers.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install

import duckdb  # noqa: E402

import memkit  # noqa: E402
from memkit.params import DecayParams, Weights  # noqa: E402
from memkit.store import quantized  # noqa: E402

DIM = 384
K = 10
NOW = datetime(2026, 1, 1, tzinfo=UTC)
SPREAD_DAYS = 90
NAMESPACE = "bench"
QUERIES = (
    "where does the user live",
    "favourite tea in the afternoon",
    "project deadline next friday",
    "allergic to peanuts",
    "用户住在哪里",
)
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10.json"
SIM_ONLY = Weights(similarity=1.0, importance=0.0, recency=0.0, keyword=0.0, neighbour=0.0, tie=0.0)
HEADER = f"{'N':>9}  {'method':<62} {'median ms':>11} {'x matvec':>9}"


# ------------------------------------------------------------------------------------------ corpus
def make_frame(rng: np.random.Generator, start: int, m: int) -> pl.DataFrame:
    """Rows ``start .. start+m``: content, importance in [0.3, 1], created_at over 90 days, unit vectors."""
    emb = rng.standard_normal((m, DIM), dtype=np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    age_s = rng.uniform(0, SPREAD_DAYS * 86400, m)
    created = np.datetime64(NOW.replace(tzinfo=None), "us") - (age_s * 1e6).astype("timedelta64[us]")
    return pl.DataFrame(
        {
            "content": [f"memory {i}" for i in range(start, start + m)],
            "importance": rng.uniform(0.3, 1.0, m),
            "created_at": pl.Series(created).dt.replace_time_zone("UTC"),
            "embedding": pl.Series("embedding", emb),  # pl.Array(pl.Float32, 384)
        }
    )


def build_store(n: int, seed: int, chunk: int) -> tuple[memkit.MemoryStore, dict[str, float]]:
    """A ``:memory:`` store with ``n`` memories, ingested by add_many in chunks of ``chunk`` rows."""
    rng = np.random.default_rng(seed)
    store = memkit.MemoryStore(":memory:")
    t_frame = t_add = 0.0
    calls = 0
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        t0 = time.perf_counter()
        frame = make_frame(rng, start, m)
        t1 = time.perf_counter()
        store.add_many(frame, namespace=NAMESPACE, now=NOW)
        t2 = time.perf_counter()
        t_frame += t1 - t0
        t_add += t2 - t1
        calls += 1
        del frame
        if n > chunk:
            print(f"    add_many chunk {calls}: {m:,} rows in {t2 - t1:.1f} s", flush=True)
    return store, {"frame_s": t_frame, "add_many_s": t_add, "calls": calls}


# ------------------------------------------------------------------------------------------ methods
def bare_matvec(emb: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(a) the floor: one float32 matvec and an O(n) top-k."""
    s = emb @ q
    part = np.argpartition(-s, K - 1)[:K]
    return part[np.argsort(-s[part])]


def _hours(ix, name: str, n: int) -> np.ndarray:
    """A time column of the index (int64 epoch microseconds) in epoch hours."""
    return getattr(ix, f"{name}_us")[:n] / 3.6e9


def numpy_pipeline(ix, n: int, q: np.ndarray, now_h: float, decay: DecayParams, w: Weights) -> np.ndarray:
    """(a') matvec + decay floor + recency + hybrid + top-k, straight numpy on the index's arrays."""
    sim = ix.emb[:n] @ q
    imp = ix.importance[:n]
    st = imp * np.exp2(-np.maximum(now_h - _hours(ix, "created", n), 0.0) / ix.half_life_h[:n])
    rec = np.exp(-np.maximum(now_h - _hours(ix, "last_access", n), 0.0) / decay.time_scale_hours)
    score = w.similarity * sim + w.importance * imp + w.recency * rec
    score[st < decay.min_strength] = -np.inf
    part = np.argpartition(-score, K - 1)[:K]
    return part[np.argsort(-score[part])]


SQL_ISSUE = f"""
SELECT id FROM memories
ORDER BY 0.6 * array_inner_product(embedding, ?::FLOAT[{DIM}]) + 0.3 * importance
       + 0.1 * exp(-(epoch(?::TIMESTAMPTZ) - epoch(last_access_at)) / 3600 / 168) DESC
LIMIT {K}"""

SQL_FAIR = f"""
SELECT id FROM memories
WHERE namespace = ? AND status = 'active'
  AND importance * pow(0.5, greatest(epoch(?::TIMESTAMPTZ) - epoch(created_at), 0) / 3600
                            / half_life_hours) >= 0.1
ORDER BY 0.6 * array_inner_product(embedding, ?::FLOAT[{DIM}]) + 0.3 * importance
       + 0.1 * exp(-greatest(epoch(?::TIMESTAMPTZ) - epoch(last_access_at), 0) / 3600 / 168) DESC
LIMIT {K}"""


def sql_issue(con: duckdb.DuckDBPyConnection, q: list[float]) -> list:
    return con.execute(SQL_ISSUE, [q, NOW]).fetchall()


def sql_fair(con: duckdb.DuckDBPyConnection, q: list[float]) -> list:
    return con.execute(SQL_FAIR, [NAMESPACE, NOW, q, NOW]).fetchall()


def python_rows(store: memkit.MemoryStore, m: int) -> list[dict]:
    """The first ``m`` memories as plain Python records, like the source articles keep them."""
    ix = store._index
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    created, last = _hours(ix, "created", m), _hours(ix, "last_access", m)
    return [
        {
            "id": ix.ids[i],
            "embedding": ix.emb[i].tolist(),
            "vec": ix.emb[i].copy(),
            "importance": float(ix.importance[i]),
            "half_life_hours": float(ix.half_life_h[i]),
            "created_at": epoch + timedelta(hours=float(created[i])),
            "last_access_at": epoch + timedelta(hours=float(last[i])),
        }
        for i in range(m)
    ]


def _strength_recency(r: dict, now: datetime) -> tuple[float, float]:
    age_h = max((now - r["created_at"]).total_seconds() / 3600, 0.0)
    strength = r["importance"] * 0.5 ** (age_h / r["half_life_hours"])
    since_h = max((now - r["last_access_at"]).total_seconds() / 3600, 0.0)
    return strength, math.exp(-since_h / 168.0)


def python_loop_lists(rows: list[dict], q: list[float], now: datetime) -> list[str]:
    """(c) per-row loop, pure-Python cosine over lists."""
    qn = math.sqrt(sum(x * x for x in q))
    scored = []
    for r in rows:
        strength, rec = _strength_recency(r, now)
        if strength < 0.1:
            continue
        v = r["embedding"]
        dot = sum(a * b for a, b in zip(q, v, strict=True))
        cos = dot / (qn * math.sqrt(sum(b * b for b in v)))
        scored.append((0.6 * cos + 0.3 * r["importance"] + 0.1 * rec, r["id"]))
    scored.sort(reverse=True)
    return [i for _, i in scored[:K]]


def python_loop_npdot(rows: list[dict], q: np.ndarray, now: datetime) -> list[str]:
    """(c') per-row loop with np.dot per row."""
    qn = float(np.linalg.norm(q))
    scored = []
    for r in rows:
        strength, rec = _strength_recency(r, now)
        if strength < 0.1:
            continue
        v = r["vec"]
        cos = float(np.dot(q, v)) / (qn * float(np.linalg.norm(v)))
        scored.append((0.6 * cos + 0.3 * r["importance"] + 0.1 * rec, r["id"]))
    scored.sort(key=lambda t: t[0], reverse=True)
    return [i for _, i in scored[:K]]


# ------------------------------------------------------------------------------------------ timing
def median_ms(fn: Callable[[int], object], repeats: int, warmup: int = 2) -> float:
    """Median wall time (ms) of ``fn(i)`` over ``repeats`` calls after ``warmup`` calls."""
    for i in range(warmup):
        fn(i)
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def interleaved(
    fns: dict[str, Callable[[int], object]], repeats: int, settle: dict[str, float] | None = None
) -> dict[str, list[float]]:
    """Wall times (ms) of each of ``fns`` called in turn, ``repeats`` rounds after one warm-up round,
    so a change of the machine's load hits them alike. ``settle[name]``: seconds to wait, untimed,
    before each call of ``name`` (:data:`BLAS_SPIN_S`)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for i in range(-1, repeats):
        for name, fn in fns.items():
            if settle and settle.get(name):
                time.sleep(settle[name])
            t0 = time.perf_counter()
            fn(i)
            if i >= 0:
                times[name].append((time.perf_counter() - t0) * 1e3)
    return times


# OpenBLAS's worker threads spin for ~0.1 s after each call (its THREAD_TIMEOUT, 2**28 cycles), holding
# the second core: a pass over 384 MB with two numba threads took 30 ms within 50 ms of a 1M matvec
# and 14 ms after 100 ms. The int8 index calls no BLAS, so its calls are timed once those threads
# went idle, as they would run in a process that does not interleave them with float32 matvecs
BLAS_SPIN_S = 0.2  # (printed with the int8 rows when it applies)


def machine_info() -> str:
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
        mem = f", RAM {kb / 2**20:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    cpu = platform.processor() or platform.machine()
    return (
        f"machine: {platform.system()} {cpu}, cpu_count {os.cpu_count()} (usable {affinity}){mem}\n"
        f"python {platform.python_version()}, numpy {np.__version__}, polars {pl.__version__}, "
        f"duckdb {duckdb.__version__}, memkit {getattr(memkit, '__version__', '?')}"
    )


# ---------------------------------------------------------------------------------------- int8
def copy_store(store: memkit.MemoryStore, index: str) -> memkit.MemoryStore:
    """A ``:memory:`` store with ``index=`` holding the same memories (same ids) as ``store``."""
    other = memkit.MemoryStore(":memory:", index=index, embedder=store.embedder)
    other._con.register("_copy", store._con.sql("SELECT * FROM memories").to_arrow_table())
    other._con.execute("INSERT INTO memories SELECT * FROM _copy")
    other._con.unregister("_copy")
    other._load_index()
    return other


def rank_fn(
    store: memkit.MemoryStore, weights: Weights, k: int = K
) -> Callable[[np.ndarray, str], np.ndarray]:
    """``(q, text) -> rows``: the index's ranking alone (no query embedding, frame or audit event);
    ``text`` is the query's text, for the keyword score."""
    gate = store._gate(NAMESPACE, None, statuses=("active",), valid_at=NOW)
    now_us = int(NOW.timestamp() * 1e6)

    def rank(q: np.ndarray, text: str = "") -> np.ndarray:
        return store._index.rank(
            q, text, gate, now_us, floor=store.decay.min_strength, weights=weights, k=k,
            decay=store.decay, keyword=store.keyword,
        )[0]  # fmt: skip

    return rank


SCAN = "int8 scan + top-64 + exact rescoring (no masks)"


_EVERY: dict[int, np.ndarray] = {}  # N -> an all-True mask of N rows, allocated once


def int8_scan(ix: quantized.QuantizedIndex, q: np.ndarray) -> np.ndarray:
    """The int8 index's similarity search alone, like the floor: the compiled scan over every row
    (no gate, similarity only), the best 64 by approximate cosine (the kernels' heap), their float32
    rows from DuckDB, the exact top 10 of those."""
    every = _EVERY.setdefault(ix.n, np.ones(ix.n, bool))  # no gate: every row
    score, _ = ix._scan(q, every, None, SIM_ONLY, DecayParams(), 0)  # (n,)
    pool, _ = ix._pool(score, (None,) * 4, (0.0, 0.0), 0, 0.0, 64)  # (64,) rows, every score
    exact = ix.vectors(pool) @ q  # (64, dim) @ (dim,) -> (64,)
    return pool[np.argsort(-exact)[:K]]


def recall(exact: list[np.ndarray], approx: list[np.ndarray]) -> float:
    """Mean share of each exact top-k found in the approximate top-k."""
    return float(np.mean([len(set(e.tolist()) & set(a.tolist())) / max(len(e), 1)
                          for e, a in zip(exact, approx, strict=True)]))  # fmt: skip


def int8_size(store: memkit.MemoryStore, n: int, matvec: float, args: argparse.Namespace) -> list:
    """The int8 rows at size ``n`` (``matvec``: the floor's median ms, measured in this run)."""
    t0 = time.perf_counter()
    s8 = copy_store(store, "int8")
    load_s = time.perf_counter() - t0
    rows: list[tuple[int, str, float]] = []
    ratios: dict[str, float] = {}  # median over repeats of (this call / the floor's call just before)
    try:
        rng = np.random.default_rng(args.seed + 1)
        qs = rng.standard_normal((args.recall_queries, DIM), dtype=np.float32)
        qs /= np.linalg.norm(qs, axis=1, keepdims=True)
        nq, r = len(qs), args.repeats
        # a scan on both cores waits for OpenBLAS's threads to go idle (BLAS_SPIN_S), and so, for the
        # same conditions, does every call it is compared with; one on the calling thread alone does
        # not wait (a pause leaves what a search reads cold: an int8 rank at 10k, 17 against 3 ms)
        settle = BLAS_SPIN_S if n * DIM >= quantized._PARALLEL_BYTES else 0.0
        floor_ms = []  # the floor again, interleaved with the ranks: on a shared machine the load
        texts = [(store._embed_query(t), t) for t in QUERIES]  # default weights: the keyword score too
        for label, w in (("similarity only", SIM_ONLY), ("default Weights()", Weights())):  # changes
            ex, q8 = rank_fn(store, w), rank_fn(s8, w)
            query = (lambda i: (qs[i % nq], "")) if w is SIM_ONLY else (lambda i: texts[i % len(texts)])
            fns = {"floor": lambda i: bare_matvec(store._index.emb[:n], query(i)[0]),  # noqa: B023
                   "exact": lambda i: ex(*query(i)), "int8": lambda i: q8(*query(i))}  # noqa: B023  # fmt: skip
            if w is SIM_ONLY:  # the int8 scan alone, no masks or hybrid score: the floor's own terms
                fns["int8 scan"] = lambda i: int8_scan(s8._index, qs[i % nq])
            times = interleaved(fns, r, settle=dict.fromkeys(fns, settle))
            floor_ms += times["floor"]
            for kind in [k for k in times if k != "floor"]:
                ms = statistics.median(times[kind])
                ratio = statistics.median(a / b for a, b in zip(times[kind], times["floor"], strict=True))
                rows.append((n, f"{kind} index rank, {label}" if kind != "int8 scan" else SCAN, ms))
                ratios[f"{kind} {label}"] = ratio
        ex, q8 = rank_fn(store, SIM_ONLY), rank_fn(s8, SIM_ONLY)
        rec = recall([ex(q) for q in qs], [q8(q) for q in qs])
        rec_scan = recall(
            [bare_matvec(store._index.emb[:n], q) for q in qs], [int8_scan(s8._index, q) for q in qs]
        )
        # the whole search (default weights, a text query), interleaved with the floor as the ranks are:
        # timed back to back instead, its codes stay in the cache between searches (0.64x where
        # interleaved ranks took 0.89x)
        times = interleaved({
            "floor": lambda i: bare_matvec(store._index.emb[:n], qs[i % nq]),
            "int8 search": lambda i: s8.search(QUERIES[i % len(QUERIES)], namespace=NAMESPACE, k=K, now=NOW,
                                               reinforce=False),
        }, r, settle={"floor": settle, "int8 search": settle})  # fmt: skip
        floor_ms += times["floor"]
        search_ms = statistics.median(times["int8 search"])
        rows.append((n, "memkit search, int8 index (reinforce=False)", search_ms))
        ratios["int8 search (default weights)"] = statistics.median(
            a / b for a, b in zip(times["int8 search"], times["floor"], strict=True)
        )
        mem = s8._index.nbytes() / store._index.nbytes()
    finally:
        s8.close()
    for _, name, ms in rows:
        print(f"  {name:<60} {ms:10.2f} ms", flush=True)
    if settle:
        print(f"  each call above and the floor's timed after a {settle:.1f} s pause (OpenBLAS's"
              " threads spin ~0.1 s after each call, holding the int8 scan's second core)")  # fmt: skip
    print(f"  interleaved with the ranks, the floor took {statistics.median(floor_ms):.1f} ms (median);"
          " per-call ratios to it (median):")  # fmt: skip
    for name, ratio in ratios.items():
        print(f"    {name:<40} {ratio:.2f}x")
    print(f"  int8: rank / floor = {ratios['int8 similarity only']:.2f}x, scan alone / floor ="
          f" {ratios['int8 scan similarity only']:.2f}x (target <= 0.6x); recall@10 vs exact {rec:.4f}"
          f" (scan alone vs the floor's top 10: {rec_scan:.4f}) over {nq} random unit queries"
          f" (target >= 0.99); memory {mem:.3f}x float32"
          f" (target <= 0.35x); index load {load_s:.1f} s; numba JIT {quantized.jit_seconds():.2f} s"
          f" (first use in this process; numba caches it on disk)", flush=True)  # fmt: skip
    return rows


def locomo_int8(args: argparse.Namespace) -> None:
    """LoCoMo turns (HashEmbedder) in an exact and an int8 store: recall@10 of int8 vs exact over
    every question against all turns (one namespace, similarity only and default weights), and R@5
    of each against the evidence (each question in its own conversation, default weights)."""
    if not LOCOMO.exists() or args.locomo_questions <= 0:
        print(f"\nLoCoMo: skipped ({'--locomo-questions 0' if LOCOMO.exists() else f'{LOCOMO} not found'})")
        return
    from memkit import evaluate as ev

    memories, queries = ev.load_locomo(LOCOMO)
    queries = queries.filter((pl.col("category") <= 4) & (pl.col("relevant").list.len() > 0))
    if args.locomo_questions < queries.height:
        queries = queries.sample(args.locomo_questions, seed=args.seed)
    free = DecayParams(min_strength=0.0)  # the LoCoMo protocol: no strength floor
    stores = {kind: memkit.MemoryStore(":memory:", index=kind, decay=free) for kind in ("exact", "int8")}
    turns = memories.select("id", "content", "created_at", "conversation")
    try:
        name: dict[str, dict[str, str]] = {}  # per store: its memory id -> the LoCoMo turn id
        for kind, s in stores.items():
            name[kind] = {}
            parts = [
                ("all", turns),
                *((str(c), p) for (c,), p in turns.group_by("conversation", maintain_order=True)),
            ]
            for ns, part in parts:
                out = s.add_many(part.select("content", "created_at"), namespace=ns, now=NOW)
                name[kind].update(zip(out["id"].to_list(), part["id"].to_list(), strict=True))
        results: dict[str, dict[str, list]] = {kind: {"sim": [], "def": [], "r5": []} for kind in stores}
        t0 = time.perf_counter()
        for q, conv, relevant in queries.select("question", "conversation", "relevant").iter_rows():
            for kind, s in stores.items():
                for key, w in (("sim", SIM_ONLY), ("def", Weights())):
                    hits = s.search(q, namespace="all", k=K, weights=w, now=NOW, reinforce=False)
                    results[kind][key].append(np.array([name[kind][i] for i in hits["id"]], dtype=object))
                hits = s.search(q, namespace=str(conv), k=5, now=NOW, reinforce=False)
                found = {name[kind][i] for i in hits["id"]}
                results[kind]["r5"].append(len(found & set(relevant)) / len(relevant))
        took = time.perf_counter() - t0
    finally:
        for s in stores.values():
            s.close()
    ex, q8 = results["exact"], results["int8"]
    print(f"\nLoCoMo (HashEmbedder, {memories.height} turns, {queries.height} questions, {took:.0f} s):")
    print(
        f"  recall@10 int8 vs exact, all turns in one namespace: similarity only"
        f" {recall(ex['sim'], q8['sim']):.4f}, default Weights() {recall(ex['def'], q8['def']):.4f}"
    )
    print(
        f"  R@5 (own conversation, default Weights()): exact {100 * np.mean(ex['r5']):.2f},"
        f" int8 {100 * np.mean(q8['r5']):.2f}"
    )


def run_size(n: int, args: argparse.Namespace) -> list[tuple[int, str, float]]:
    print(f"\n== N = {n:,}", flush=True)
    store, ing = build_store(n, args.seed, args.chunk)
    chunked = f" in {ing['calls']} add_many calls of <= {args.chunk:,} rows" if ing["calls"] > 1 else ""
    print(
        f"  ingest: add_many {n / ing['add_many_s']:,.0f} memories/s ({ing['add_many_s']:.1f} s{chunked});"
        f" frame generation {ing['frame_s']:.1f} s",
        flush=True,
    )
    rows: list[tuple[int, str, float]] = []
    try:
        ix = store._index
        emb = ix.emb[:n]  # the same float32 matrix memkit searches
        qs = [store._embed_query(t) for t in QUERIES]  # (dim,) each; cached, as in search()
        qlists = [q.tolist() for q in qs]
        now_h = NOW.timestamp() / 3600.0
        w, decay = Weights(), store.decay
        nq = len(QUERIES)
        r = args.repeats

        def search(reinforce: bool) -> Callable[[int], object]:
            return lambda i: store.search(
                QUERIES[i % nq], namespace=NAMESPACE, k=K, now=NOW, reinforce=reinforce
            )

        matvec = median_ms(lambda i: bare_matvec(emb, qs[i % nq]), r)
        rows.append((n, "(a) bare numpy matvec + argpartition", matvec))
        rows.append((n, "memkit search (reinforce=False)", median_ms(search(False), r)))
        if args.int8 != "skip":  # before any reinforcement, so both indexes hold the same rows
            rows += int8_size(store, n, matvec, args)
        if args.int8_only:
            return rows
        rows.append((n, "(a') numpy pipeline (decay+hybrid+top10)",
                     median_ms(lambda i: numpy_pipeline(ix, n, qs[i % nq], now_h, decay, w), r)))  # fmt: skip
        sql_ms = median_ms(lambda i: sql_issue(store._con, qlists[i % nq]), r)
        rows.append((n, "(b) duckdb SQL (issue query)", sql_ms))
        rows.append((n, "(b') duckdb SQL + ns/status/floor filter",
                     median_ms(lambda i: sql_fair(store._con, qlists[i % nq]), r)))  # fmt: skip
        sub = min(n, args.loop_rows)
        recs = python_rows(store, sub)
        lr = max(1, min(r, args.loop_repeats))
        scale = n / sub
        tag = f" [x{scale:g} extrapolated from {sub:,}]" if scale != 1 else f" [measured on {sub:,}]"
        ms = median_ms(lambda i: python_loop_lists(recs, qlists[i % nq], NOW), lr, warmup=1) * scale
        rows.append((n, "(c) python loop, list cosine" + tag, ms))
        ms = median_ms(lambda i: python_loop_npdot(recs, qs[i % nq], NOW), lr, warmup=1) * scale
        rows.append((n, "(c') python loop, np.dot per row" + tag, ms))
        # last: reinforce=True writes back (importance, last access) and would shift later rankings
        rows.append((n, "memkit search (reinforce=True, default)", median_ms(search(True), r)))
    finally:
        store.close()  # the caller collects the store once this frame (and its closures) are gone
    for _, name, ms in rows:
        print(f"  {name:<60} {ms:10.2f} ms", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated corpus sizes")
    p.add_argument("--quick", action="store_true", help="10k only; LoCoMo on 200 questions")
    p.add_argument("--repeats", type=int, default=20, help="timed repeats per method (after warm-up)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--chunk", type=int, default=250_000, help="rows per add_many call")
    p.add_argument("--loop-rows", type=int, default=10_000, help="subsample for the Python loops")
    p.add_argument("--loop-repeats", type=int, default=5, help="repeats for the (slow) Python loops")
    p.add_argument("--recall-queries", type=int, default=50, help="random queries for int8 recall@10")
    p.add_argument("--int8-only", action="store_true", help="only the floor, search and the int8 rows")
    p.add_argument(
        "--locomo-questions",
        type=int,
        default=None,
        help="LoCoMo questions for the int8 rows (default: all when N reaches 100k, else 200)",
    )
    args = p.parse_args(argv)
    try:
        quantized.new_index("int8", DIM, 0.1, lambda: None)  # compiles the kernels: numba present?
        args.int8 = "run"
    except memkit.MissingDependency as e:
        print(f"int8 index skipped: {e}")
        args.int8 = "skip"
    sizes = [10_000] if args.quick else [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    if not sizes or min(sizes) < K + 1 or args.repeats < 1 or args.chunk < 1:
        p.error(f"sizes must be > {K}, repeats and chunk >= 1")
    if args.locomo_questions is None:  # a quick run stays quick
        args.locomo_questions = 10**9 if max(sizes) >= 100_000 else 200

    print(machine_info())
    print(f"dim {DIM}, k {K}, now {NOW.isoformat()}, repeats {args.repeats} (+2 warm-up), seed {args.seed}")
    table: list[tuple[int, str, float]] = []
    for n in sizes:
        table += run_size(n, args)
        gc.collect()  # free the closed store's index before building the next size

    floor = {n: ms for n, name, ms in table if name.startswith("(a) ")}
    print("\n" + HEADER)
    print("-" * len(HEADER))
    for n, name, ms in table:
        print(f"{n:>9,}  {name:<62} {ms:>11.2f} {ms / floor[n]:>8.2f}x")
    print("\n(c)/(c') rows marked 'extrapolated' were timed on the subsample and scaled linearly to N.")
    for n in sizes:
        get = {name: ms for m, name, ms in table if m == n}
        nf = get["memkit search (reinforce=False)"] / floor[n]
        if not args.int8_only:
            full = get["memkit search (reinforce=True, default)"] / floor[n]
            print(f"N={n:,}: memkit search / bare matvec = {nf:.2f}x (reinforce=False), "
                  f"{full:.2f}x (full pipeline, reinforce=True); target <= 1.3x at 1M")  # fmt: skip
        if args.int8 != "skip":
            i8 = get["int8 index rank, similarity only"] / floor[n]
            print(
                f"N={n:,}: int8 index rank / bare matvec = {i8:.2f}x (similarity only; target <= 0.6x at 1M)"
            )
    if args.int8 != "skip":
        locomo_int8(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
