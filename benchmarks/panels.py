"""How long a slider move takes in the widget panels, beside the store call it replaces.

Builds N memories in one namespace (random texts over a 3,000-word vocabulary, HashEmbedder), then
times, as medians of 7 moves in the same run:

- ``weights_tuner``: a weight slider move (re-rank 4 queries from cached components + redraw two
  charts), the re-rank alone, and a ``store.search`` per move (what a naive panel would do);
- ``merge_explorer``: a threshold move (re-plan only the memories with a partner above it) beside
  ``store.consolidate(dry_run=True)``;
- ``time_machine``: a date move (``frame(as_of=)``, forget plan, states, timeline chart);
- ``recall_tuner`` (lesson 09's panel): a weight move re-ranks every question of a benchmark; here
  the same N memories as 10 "conversations" with 400 questions (each's relevant ids drawn at random),
  so the cost is that of N memories, not of LoCoMo's 5,882.

    python benchmarks/panels.py [--n 10000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import timedelta

import numpy as np
import polars as pl

import memkit as mk
from memkit import widgets
from memkit.portable.sample import SAMPLE_NOW as NOW


def median_ms(fn: Callable[[int], object], reps: int = 7) -> float:
    times = []
    for i in range(reps):
        t = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000, help="memories in the namespace")
    n = p.parse_args().n
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(3000)] + ["deploy", "python", "coffee", "berlin", "kafka", "tea"]
    frame = pl.DataFrame(
        {
            "content": [" ".join(rng.choice(words, 8)) + f" note {i}" for i in range(n)],
            "importance": rng.uniform(0.2, 0.9, n),
            "created_at": [NOW - timedelta(hours=float(h)) for h in rng.uniform(0, 2000, n)],
        }
    )
    store = mk.MemoryStore()
    store.add_many(frame, namespace="big", now=NOW)
    queries = ["deploy python", "coffee in berlin", "kafka", "tea"]
    weights = [0.1, 0.9, 0.3, 0.7, 0.2, 0.8, 0.5]

    t = time.perf_counter()
    tuner = widgets.weights_tuner(store, queries, namespace="big", now=NOW)
    build = (time.perf_counter() - t) * 1e3
    move = median_ms(lambda i: setattr(tuner.sliders["similarity"], "value", weights[i]))
    rerank = median_ms(lambda i: tuner.reranker.rank(queries[0], mk.Weights(similarity=weights[i]), 5))
    search = median_ms(
        lambda i: store.search(queries[0], namespace="big", k=5, weights=mk.Weights(similarity=weights[i]),
                               now=NOW, reinforce=False)
    )  # fmt: skip
    print(f"weights_tuner, {n} memories: build {build:.0f} ms; slider move {move:.0f} ms "
          f"(re-rank {rerank:.2f} ms, the rest is two Altair charts); "
          f"a store.search per move {search:.1f} ms")  # fmt: skip

    thresholds = [0.6, 0.9, 0.7, 0.8, 0.65, 0.95, 0.75]
    t = time.perf_counter()
    merge = widgets.merge_explorer(store, "big", now=NOW)
    build = (time.perf_counter() - t) * 1e3
    move = median_ms(lambda i: setattr(merge.sliders["threshold"], "value", thresholds[i]))
    dry = median_ms(lambda i: store.consolidate("big", threshold=thresholds[i], now=NOW, dry_run=True), 3)
    print(f"merge_explorer, {n} memories: build {build:.0f} ms; slider move {move:.0f} ms; "
          f"store.consolidate(dry_run=True) {dry:.0f} ms")  # fmt: skip

    t = time.perf_counter()
    machine = widgets.time_machine(store, "big", start=NOW - timedelta(days=30), end=NOW + timedelta(days=30))
    build = (time.perf_counter() - t) * 1e3
    options = [o[1] for o in machine.sliders["at"].options]
    move = median_ms(lambda i: setattr(machine.sliders["at"], "value", options[(i * 7) % len(options)]))
    print(f"time_machine, {n} memories (timeline draws 300): build {build:.0f} ms; slider move {move:.0f} ms")

    # lesson 09's panel at N memories: 10 groups, 40 questions each, prepared once (embedded, BM25)
    mem = frame.with_columns(id=pl.int_range(n).cast(pl.String), conversation=pl.int_range(n) % 10)
    qs = pl.DataFrame(
        {
            "query_id": [f"q{i}" for i in range(400)],
            "question": [" ".join(rng.choice(words, 4)) for _ in range(400)],
            "relevant": [[str(x) for x in rng.choice(n, 2)] for _ in range(400)],
            "category": [int(c) for c in rng.integers(1, 5, 400)],
        }
    ).with_columns(conversation=pl.col("relevant").list.first().cast(pl.Int64) % 10)
    t = time.perf_counter()
    prepared = mk.evaluate.prepare(mem, qs, now=NOW)
    prep_ms = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    tuner = widgets.recall_tuner(prepared)
    build = (time.perf_counter() - t) * 1e3
    move = median_ms(lambda i: setattr(tuner.sliders["keyword"], "value", weights[i]))
    print(f"recall_tuner, {n} memories, {qs.height} questions: prepare {prep_ms:.0f} ms, build {build:.0f} ms"
          f"; slider move {move:.0f} ms (re-rank + recall@5 {tuner.millis:.0f} ms of it)")  # fmt: skip


if __name__ == "__main__":
    main()
