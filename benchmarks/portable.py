"""Portable format speed: export and import of N memories, against ``add_many`` of the same rows.

For each size N it bulk-loads N synthetic bilingual memories (tags, keys on 10%, random unit
embeddings of dim 384 given to ``add_many``, so no embedder runs) into a file database, then times:

- ``add_many`` (the baseline: the store's own bulk insert of the same rows and vectors);
- ``export`` without and with embeddings (file size reported);
- ``import_`` of each file into a fresh file database: without embeddings the HashEmbedder
  recomputes every vector (the "other embedder" path); with them they are reused;
- a check that the imported ``frame()`` equals the original (printed, not asserted).

Run from the repository root::

    .venv/bin/python benchmarks/portable.py                 # 10k and 100k
    .venv/bin/python benchmarks/portable.py --sizes 2000

No timing is asserted; this prints numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install

import memkit as mk  # noqa: E402

NOW = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = ["用户", "喜欢", "咖啡", "住在", "杭州", "tea", "Berlin", "project", "deadline", "猫", "🎉"]


def corpus(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    words = np.array(WORDS)
    texts = [" ".join(words[rng.integers(0, len(WORDS), 8)]) + f" #{i}" for i in range(n)]
    emb = rng.standard_normal((n, 384), dtype=np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    return pl.DataFrame(
        {
            "content": texts,
            "key": [f"k.{i}" if i % 10 == 0 else None for i in range(n)],
            "importance": rng.uniform(0, 1, n),
            "tags": [["bench", WORDS[i % len(WORDS)]] for i in range(n)],
            "created_at": [NOW - timedelta(minutes=int(m)) for m in rng.integers(0, 10**6, n)],
            "embedding": emb,
        },
        schema_overrides={"embedding": pl.Array(pl.Float32, 384)},
    )


def timed(fn):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def run(n: int, tmp: Path) -> None:
    frame = corpus(n)
    src = mk.MemoryStore(str(tmp / f"src{n}.duckdb"))
    base, _ = timed(lambda: src.add_many(frame, namespace="bench", requester="r", now=NOW))
    rows = [("add_many (baseline)", base, None)]
    for emb in (False, True):
        path = tmp / f"m{n}{'e' if emb else ''}.jsonl"
        sec, _ = timed(lambda p=path, e=emb: src.export(p, "bench", include_embeddings=e, now=NOW))
        rows.append((f"export{' +embeddings' if emb else ''}", sec, path.stat().st_size))
        db = tmp / f"dst{n}{int(emb)}.duckdb"
        dst = mk.MemoryStore(str(db))
        sec, _ = timed(lambda d=dst, p=path: d.import_(p, now=NOW))
        label = "import_ (embeddings reused)" if emb else "import_ (HashEmbedder recomputes)"
        rows.append((label, sec, None))
        same = dst.frame("bench").equals(src.frame("bench"))
        dst.close()
        rows[-1] = (rows[-1][0] + ("" if same else "  FRAME DIFFERS"), sec, None)
    src.close()
    for label, sec, size in rows:
        mib = f"{size / 2**20:8.1f} MiB" if size else ""
        print(f"{n:>8}  {label:<40} {sec:8.2f} s {sec / base:8.2f}x add_many  {mib}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cpus, duckdb file databases, dim 384")
    print(f"{'N':>8}  {'step':<40} {'time':>10} {'ratio':>17}  file")
    with tempfile.TemporaryDirectory() as d:
        for n in args.sizes:
            run(n, Path(d))


if __name__ == "__main__":
    main()
