"""Per-call overhead: one ``add`` and one ``search``, against the cost of what they cannot avoid.

A notebook adds memories one at a time and searches a few thousand of them; there a fixed cost per
call dominates, not the scan. This measures medians (p50) over many calls, each against a baseline
measured in the same run on the same machine:

- ``add`` of one short text, in memory and on a file (a durable commit), against a bare DuckDB
  ``INSERT`` of one row of the same width in its own transaction (the floor of a durable write);
- ``search`` (top 5, default weights: similarity + BM25 keyword + neighbour expansion), with
  reinforcement (its event and reinforcement are deferred: journaled, written in batches) and
  without, against the bare numpy floor (``X @ q`` + ``argpartition`` top-5 over the same matrix);
- searches per second on one store from 1 and 2 threads at 100k memories, without and with
  reinforcement: rankings share the store's lock (``memkit/store/rwlock.py``), so two threads
  should answer more than one; with reinforcement each search also takes the lock alone, briefly,
  to journal its event.

Run from the repository root::

    .venv/bin/python benchmarks/overhead.py             # 10k memories
    .venv/bin/python benchmarks/overhead.py --quick     # 2k memories, fewer calls (CI)

No timing is asserted; this prints numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install

import memkit as mk  # noqa: E402

NOW = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = "tea coffee alice bob hangzhou deploy report meeting river running python rust".split()


def p50(fn: Callable[[int], object], calls: int) -> float:
    """Median wall time of ``fn(i)`` over ``calls`` calls, in milliseconds (after 5 warm-up calls)."""
    for i in range(5):
        fn(-1 - i)
    times = []
    for i in range(calls):
        t = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def text(i: int) -> str:
    """A short memory-like text, different for every ``i``."""
    return f"{WORDS[i % len(WORDS)]} with {WORDS[(i // 7) % len(WORDS)]} on day {i}"


def bare_insert(path: str, dim: int) -> Callable[[int], None]:
    """One row of the memories table's main columns, bound, in its own transaction: the floor."""
    con = duckdb.connect(path)
    con.execute(f"CREATE TABLE t (id VARCHAR, content VARCHAR, importance DOUBLE, tags VARCHAR[],"
                f" created_at TIMESTAMPTZ, embedding FLOAT[{dim}])")  # fmt: skip
    vec = np.ones(dim, np.float32).tolist()

    def run(i: int) -> None:
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", [str(i), text(i), 0.5, ["a"], NOW, vec])
        con.execute("COMMIT")

    return run


def add_overhead(calls: int, folder: Path) -> list[dict[str, object]]:
    """p50 of one add in memory and on a file, each against the bare insert in the same place."""
    rows = []
    for where in ("memory", "file"):
        db = ":memory:" if where == "memory" else str(folder / "add.duckdb")
        bare = ":memory:" if where == "memory" else str(folder / "bare.duckdb")
        with mk.MemoryStore(db, create=True) as store:
            ms = p50(lambda i, s=store: s.add(text(i), namespace="u", now=NOW + timedelta(seconds=i)), calls)
        floor = p50(bare_insert(bare, 384), calls)
        rows.append({"call": f"add ({where})", "p50 ms": ms, "baseline": "bare DuckDB insert + commit",
                     "baseline ms": floor, "ratio": ms / floor})  # fmt: skip
    return rows


def search_overhead(n: int, calls: int, folder: Path) -> list[dict[str, object]]:
    """p50 of one search at ``n`` memories, with and without reinforcement, against the numpy floor."""
    rng = np.random.default_rng(0)
    frame = pl.DataFrame({
        "content": [text(i) for i in range(n)],
        "created_at": [NOW - timedelta(hours=int(h)) for h in rng.integers(0, 24 * 90, n)],
        "importance": rng.uniform(0.3, 0.9, n),
    })  # fmt: skip
    rows = []
    with mk.MemoryStore(str(folder / "search.duckdb"), create=True) as store:
        store.add_many(frame, namespace="u", now=NOW)
        matrix = store._index.emb[: store._index.n].copy()  # the same vectors, for the floor
        queries = [f"{WORDS[i % len(WORDS)]} {WORDS[(i * 5) % len(WORDS)]}" for i in range(64)]
        vecs = [store._embed_query(q) for q in queries]

        def floor(i: int) -> None:
            s = matrix @ vecs[i % 64]
            np.argpartition(-s, 5)[:5]

        base = p50(floor, calls)
        for reinforce in (True, False):

            def one(i: int, r: bool = reinforce) -> None:
                store.search(queries[i % 64], namespace="u", now=NOW, reinforce=r)

            ms = p50(one, calls)
            rows.append({"call": f"search {n:,} (reinforce={reinforce})", "p50 ms": ms,
                         "baseline": "numpy X @ q + top-5", "baseline ms": base,
                         "ratio": ms / base})  # fmt: skip
    return rows


def rate(fn: Callable[[int], object], threads: int, seconds: float) -> float:
    """Calls per second of ``fn(i)`` from ``threads`` threads together, over ``seconds``."""
    import threading

    done = [0] * threads
    stop = time.perf_counter() + seconds

    def work(t: int) -> None:
        """Call until ``stop``, counting in ``done[t]`` (thread t takes calls t, t + threads, ...)."""
        i = t
        while time.perf_counter() < stop:
            fn(i)
            done[t] += 1
            i += threads

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return sum(done) / seconds


def throughput(n: int, folder: Path, seconds: float = 3.0) -> list[dict[str, object]]:
    """Searches per second on one store from 1 and from 2 threads, with reinforce=False and True,
    beside the bare numpy matvec's from 1 and 2 threads in the same run: what the machine lets
    two threads do at that moment (a busy shared machine may give them no second core)."""
    rng = np.random.default_rng(1)
    frame = pl.DataFrame({"content": [text(i) for i in range(n)],
                          "importance": rng.uniform(0.3, 0.9, n)})  # fmt: skip
    queries = [f"{WORDS[i % len(WORDS)]} {WORDS[(i * 5) % len(WORDS)]}" for i in range(64)]
    rows = []
    with mk.MemoryStore(str(folder / "threads.duckdb"), create=True) as store:
        store.add_many(frame, namespace="u", now=NOW)
        for q in queries:  # warm: query vectors cached, BM25 built
            store.search(q, namespace="u", now=NOW, reinforce=False)
        matrix = store._index.emb[: store._index.n].copy()
        vecs = [store._embed_query(q) for q in queries]
        for reinforce in (False, True, None):  # None: the bare matvec
            if reinforce is None:
                call, fn = "numpy X @ q", lambda i: matrix @ vecs[i % 64]
            else:
                call = f"search (reinforce={reinforce})"
                fn = lambda i, r=reinforce: store.search(queries[i % 64], namespace="u", now=NOW, reinforce=r)
            one, two = rate(fn, 1, seconds), rate(fn, 2, seconds)
            rows.append({"call": call, "1 thread /s": one, "2 threads /s": two, "x": two / one})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2k memories, fewer calls (for CI)")
    args = ap.parse_args()
    n, calls = (2_000, 40) if args.quick else (10_000, 300)
    n_threads = 2_000 if args.quick else 100_000
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "unset")  # numpy's BLAS threads: they matter (README)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()},"
          f" duckdb {duckdb.__version__}, numpy {np.__version__}, OPENBLAS_NUM_THREADS={blas}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        rows = add_overhead(calls, Path(tmp)) + search_overhead(n, calls, Path(tmp))
        scale = throughput(n_threads, Path(tmp), seconds=1.0 if args.quick else 3.0)
    table = pl.DataFrame(rows).with_columns(pl.col("p50 ms", "baseline ms", "ratio").round(2))
    with pl.Config(tbl_rows=20, tbl_width_chars=120, fmt_str_lengths=40):
        print(table)
        print(f"searches per second on one store at {n_threads:,} memories:")
        per_s = pl.col("1 thread /s", "2 threads /s")
        print(pl.DataFrame(scale).with_columns(per_s.round(0), pl.col("x").round(2)))


if __name__ == "__main__":
    main()
