"""Bulk ingestion: ``add_many`` against the Arrow insert it ends in, in one run.

For each size N this builds N short memory-like texts and N random unit vectors (dim 384), then times:

- **the floor**: the same rows, already complete (ids, defaults, timestamps, content hashes,
  embeddings) as one Arrow table, inserted by DuckDB into a copy of the ``memories`` table (its
  primary key and checks included) — what any bulk write must at least pay;
- ``add_many`` with an ``embedding`` column (the embedder is skipped; the guard screens every row);
- ``add_many`` without it (the offline ``HashEmbedder`` embeds every text);

and reports memories per second, the ratio to the floor, and the peak of memory allocated by Python
and numpy during each call (``tracemalloc``; DuckDB's own buffers are not counted) against the
float32 embedding matrix. Each call runs on a fresh in-memory store.

    .venv/bin/python benchmarks/ingest.py                    # N = 10k, 100k
    .venv/bin/python benchmarks/ingest.py --sizes 1000000    # the 1M row (a few GB of RAM)
    .venv/bin/python benchmarks/ingest.py --quick            # N = 2k (CI)

No timing is asserted anywhere; this prints numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install

import memkit as mk  # noqa: E402
from memkit.embed import content_hash  # noqa: E402

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DIM = 384
WORDS = np.array(
    "tea coffee alice bob hangzhou deploy report meeting river running python rust".split()
    + ["杭州", "咖啡", "会议", "报告"]
)


def frame(n: int, seed: int = 0) -> pl.DataFrame:
    """``content`` (6 words and a number, English and Chinese) and ``embedding`` (unit vectors)."""
    rng = np.random.default_rng(seed)
    words = WORDS[rng.integers(0, len(WORDS), (n, 6))]
    texts = [" ".join(w) + f" #{i}" for i, w in enumerate(words)]
    emb = rng.standard_normal((n, DIM), dtype=np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    return pl.DataFrame({"content": texts, "embedding": emb})


def timed(make, call) -> tuple[float, int]:
    """``call(make())`` twice on fresh stores -> (seconds of the first, the peak bytes Python and
    numpy allocated during the second: tracemalloc slows allocations, so it never runs timed)."""
    with make() as store:
        t = time.perf_counter()
        call(store)
        took = time.perf_counter() - t
    with make() as store:
        tracemalloc.start()
        call(store)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return took, peak


def floor(data: pl.DataFrame) -> float:
    """Seconds DuckDB takes to insert the complete rows as one Arrow table (no memkit in between)."""
    n = data.height
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM)) as store:
        con = store._con  # the bare connection: a copy of the memories table, its key and checks included
        ddl = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = 'memories'").fetchone()[0]
        con.execute(ddl.replace("memories", "floor", 1))
        at, none, empty = NOW, pl.lit(None, pl.String), pl.lit([], pl.List(pl.String))
        ts = pl.lit(None, pl.Datetime("us", "UTC"))
        rows = data.select(
            pl.Series("id", [f"{i:016x}" for i in range(n)]), namespace=pl.lit("bench"), key=none,
            content="content", value=none, layer=pl.lit("long_term"), kind=pl.lit("fact"),
            importance=pl.lit(0.5), half_life_hours=pl.lit(2160.0), source=pl.lit("user"), owner=none,
            created_by=none, access=pl.lit("public"), tags=empty, status=pl.lit("active"),
            protected=pl.lit(False), valid_from=ts, valid_until=ts, created_at=pl.lit(at),
            updated_at=pl.lit(at), last_access_at=pl.lit(at), access_count=pl.lit(0, pl.Int32),
            version=pl.lit(1, pl.Int32), supersedes=none, merged_from=empty,
            content_hash=pl.Series([content_hash(t) for t in data["content"]]), embedding="embedding",
            findings=none,
        )  # fmt: skip
        table = rows.to_arrow()
        con.register("_floor", table)
        t = time.perf_counter()
        con.execute("INSERT INTO floor SELECT * FROM _floor")
        took = time.perf_counter() - t
        con.unregister("_floor")
    return took


def run(n: int) -> list[dict[str, object]]:
    data = frame(n)
    matrix = n * DIM * 4
    out = [
        {"N": n, "step": "floor: DuckDB inserts the complete rows (Arrow)", "seconds": floor(data), "peak": 0}
    ]
    for label, f in (
        ("add_many, embeddings given", data),
        ("add_many, HashEmbedder embeds", data.drop("embedding")),
    ):

        def call(store: mk.MemoryStore, f: pl.DataFrame = f) -> None:
            store.add_many(f, namespace="bench", now=NOW)
            assert store.count() == n

        took, peak = timed(lambda: mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM)), call)
        out.append({"N": n, "step": label, "seconds": took, "peak": peak})
    base = out[0]["seconds"]
    for r in out:
        r["per_s"] = n / r["seconds"]
        r["x_floor"] = r["seconds"] / base
        r["peak_x_matrix"] = r["peak"] / matrix
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000", help="comma-separated N")
    p.add_argument("--quick", action="store_true", help="N = 2,000 only (CI)")
    args = p.parse_args(argv)
    sizes = [2000] if args.quick else [int(s) for s in args.sizes.split(",")]
    rows = [r for n in sizes for r in run(n)]
    table = pl.DataFrame(rows).select(
        "N", "step",
        (pl.col("seconds") * 1e3).round(1).alias("ms"),
        pl.col("per_s").round(0).cast(pl.Int64).alias("memories/s"),
        pl.col("x_floor").round(2).alias("× floor"),
        pl.col("peak_x_matrix").round(2).alias("peak / float32 matrix"),
    )  # fmt: skip
    with pl.Config(tbl_rows=-1, tbl_width_chars=160, fmt_str_lengths=60, tbl_hide_dataframe_shape=True):
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
