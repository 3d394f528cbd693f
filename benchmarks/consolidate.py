"""Consolidation speed and memory: ``plan_merges`` against the source articles' pairwise loop.

For each corpus size N it builds N synthetic memories in ONE group (one namespace, one layer, no key:
the worst case, every pair is a candidate) with random unit vectors (dim 384), of which 5% are noisy
copies of other rows (cosine ~0.93 to their source, planted near-duplicates), and reports:

- ``plan_merges``: wall time, peak traced memory (tracemalloc: numpy and Python allocations; polars'
  own buffers are not traced) and the process's peak RSS, plus how many planted copies it found; a
  copy says its source's text plus "again" (no number: the default fact rule, ``distinct_facts``,
  would hold "memory 7" and "memory 7000" apart) and the same plan with ``distinct_facts=False``
  times the fact rule's cost;
- ``articles' loop``: ``for i: for j > i: np.dot(a, b) / (norm(a) · norm(b))`` like the articles'
  ``consolidate``, timed on a subsample of the rows and **extrapolated quadratically** to N (pairs
  scale as N²/2); marked ``(extrapolated)`` in the table;
- the memory a full N×N float32 similarity matrix would need (not allocated).

Run from the repository root::

    .venv/bin/python benchmarks/consolidate.py                # 10k and 100k
    .venv/bin/python benchmarks/consolidate.py --quick        # 10k, loop on 1,000 rows
    .venv/bin/python benchmarks/consolidate.py --sizes 2000

No timing is asserted; this prints numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
import tracemalloc
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install

from memkit.consolidate import MergeParams, plan_merges  # noqa: E402
from memkit.facts import fact_tokens  # noqa: E402

DIM = 384
DUP_FRACTION = 0.05
NOISE = 0.02  # per-dimension noise of a copy: |noise| ~ 0.02·sqrt(384) = 0.39 -> cosine ~0.93
NOW = datetime(2026, 1, 1, tzinfo=UTC)
HEADER = f"{'N':>8}  {'method':<52} {'seconds':>10} {'peak MiB':>10} {'x plan_merges':>14}"


def make_corpus(n: int, seed: int = 0) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    """``n`` memories, their ``(n, 384)`` unit embeddings, and the source row of each planted copy."""
    rng = np.random.default_rng(seed)
    emb = rng.standard_normal((n, DIM), dtype=np.float32)
    k = int(n * DUP_FRACTION)
    source = rng.integers(0, n - k, k)  # the last k rows are copies of earlier rows
    emb[n - k :] = emb[source] + NOISE * rng.standard_normal((k, DIM), dtype=np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    frame = pl.DataFrame(
        {
            "id": [f"m{i}" for i in range(n)],
            "namespace": "bench",
            "layer": "long_term",
            "key": pl.Series([None] * n, dtype=pl.String),
            "content": [f"memory {_word(i)}" for i in range(n - k)]
            + [f"memory {_word(s)} again" for s in source],
            "importance": rng.uniform(0.3, 1.0, n),
            "created_at": NOW,
            "last_access_at": NOW,
            "access_count": 0,
            "status": "active",
            "protected": False,
        }
    )
    return frame, emb, source


def _word(i: int) -> str:
    """A lowercase word per row, no digit in it (0 -> "a", 26 -> "ba"): texts without fact tokens."""
    return chr(97 + i % 26) if i < 26 else _word(i // 26) + chr(97 + i % 26)


def articles_loop(emb: np.ndarray, threshold: float) -> int:
    """The articles' pairwise loop (pair detection only): pairs with cosine >= threshold."""
    found = 0
    n = len(emb)
    for i in range(n):
        a = emb[i]
        for j in range(i + 1, n):
            b = emb[j]
            sim = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-9))
            if sim >= threshold:
                found += 1
    return found


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench(n: int, subsample: int, params: MergeParams) -> list[tuple[str, float, float | None]]:
    frame, emb, source = make_corpus(n)
    tracemalloc.start()
    t0 = time.perf_counter()
    plan = plan_merges(frame, emb, params)
    seconds = time.perf_counter() - t0
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    k = len(source)
    found = {m for ms in plan["members"].to_list() for m in ms}
    recall = sum(f"m{n - k + i}" in found for i in range(k)) / max(k, 1)
    print(f"  N={n:,}: {plan.height:,} clusters; {recall:.1%} of {k:,} planted copies found; "
          f"peak RSS so far {peak_rss_mib():,.0f} MiB", flush=True)  # fmt: skip
    untraced = {}  # the fact rule's cost, both timed without tracemalloc (which slows Python code)
    for facts in (True, False):
        fact_tokens.cache_clear()  # (the traced run filled it)
        t0 = time.perf_counter()
        plan_merges(frame, emb, replace(params, distinct_facts=facts))
        untraced[facts] = time.perf_counter() - t0
    m = min(n, subsample)
    t0 = time.perf_counter()
    articles_loop(emb[:m], params.threshold)
    loop_seconds = (time.perf_counter() - t0) * (n * (n - 1)) / max(m * (m - 1), 1)
    loop_name = "articles' pairwise loop" + (f" (extrapolated from {m:,})" if m < n else "")
    return [
        ("plan_merges (blocked matmul + union-find)", seconds, traced / 2**20),
        ("  untraced, fact rule on (the default)", untraced[True], None),
        ("  untraced, distinct_facts=False (no fact rule)", untraced[False], None),
        (loop_name, loop_seconds, None),
        (f"full {n:,}x{n:,} float32 matrix (not run)", float("nan"), n * n * 4 / 2**20),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[10_000, 100_000],
                    help="comma-separated corpus sizes (default 10000,100000)")  # fmt: skip
    ap.add_argument("--subsample", type=int, default=2000, help="rows the Python loop really runs on")
    ap.add_argument("--quick", action="store_true", help="10k only, loop on 1,000 rows")
    args = ap.parse_args(argv)
    sizes, subsample = ([10_000], 1000) if args.quick else (args.sizes, args.subsample)
    params = MergeParams()
    print(f"consolidate benchmark: dim {DIM}, {DUP_FRACTION:.0%} planted copies, one group, "
          f"threshold {params.threshold}, block_size {params.block_size}")  # fmt: skip
    print(f"python {platform.python_version()}, numpy {np.__version__}, polars {pl.__version__}, "
          f"{os.cpu_count()} cpus")  # fmt: skip
    results = [(n, bench(n, subsample, params)) for n in sizes]
    print()
    print(HEADER)
    print("-" * len(HEADER))
    for n, rows in results:
        base = rows[0][1]
        for name, sec, mib in rows:
            s = "-" if sec != sec else f"{sec:,.2f}"  # NaN: not run
            r = "-" if sec != sec else f"{sec / base:,.1f}x"
            mem = "-" if mib is None else f"{mib:,.1f}"
            print(f"{n:>8,}  {name:<52} {s:>10} {mem:>10} {r:>14}")
    print("\n(extrapolated) rows time the loop on a subsample and scale by N(N-1) / (m(m-1)).")
    print("peak MiB of plan_merges is tracemalloc's (numpy + Python); the N×N row is what it would need.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
