"""Forgetting's speed: the plan with ties broken by what memories say, against ties by age alone.

N synthetic memories in one namespace (half English, half Chinese, 2-20 words or characters), all
with the default importance and never recalled, so every one costs the same to forget and a capacity
of 500 puts all of them in the tie the words decide: the worst case for the information count
(:func:`memkit.information.information`), which is computed only for a namespace over capacity and
only in the cost band where its cut falls. Timed in the same run:

- ``plan_forget`` on the frame without its ``content`` column: ties by age alone, the order before
  the words broke them (the baseline);
- ``plan_forget`` on the whole frame (ties by words, then age);
- the same with room for every memory (no namespace over capacity: nothing to count);
- ``store.forget(dry_run=True)``, the store's preview (reads the frame, then plans).

Process CPU time and wall time, best of ``--repeats``. The machine is shared: compare within a run.

    python benchmarks/forget.py [--sizes 10000,100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install

import memkit as mk  # noqa: E402

NOW = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = ("the user likes coffee tea lives in hangzhou works at a bank on weekdays runs five km every morning "
         "thanks bye see you later great idea maria volunteers shelter").split()  # fmt: skip
HANZI = "用户住在杭州滨江区喜欢喝美式咖啡每天早上跑步五公里谢谢好的再见我们什么"


def memories(n: int, seed: int = 0) -> pl.DataFrame:
    """``n`` memories ``content, created_at``: even rows Chinese, odd rows English, an hour apart."""
    rng = np.random.default_rng(seed)
    texts = [
        "".join(rng.choice(list(HANZI), rng.integers(3, 21))) if i % 2 == 0
        else " ".join(rng.choice(WORDS, rng.integers(2, 15))) + f" {i % 3000}"
        for i in range(n)
    ]  # fmt: skip
    return pl.DataFrame({"content": texts, "created_at": [NOW - timedelta(hours=i) for i in range(n)]})


def best(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds), each the best of ``repeats`` calls of ``fn``."""
    cpu = wall = float("inf")
    for _ in range(repeats):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c), min(wall, time.perf_counter() - w)
    return cpu, wall


def timings(n: int, repeats: int) -> list[dict]:
    """The four cases on ``n`` memories -> one row each."""
    store = mk.MemoryStore(embedder=mk.HashEmbedder(dim=64))
    store.add_many(memories(n), namespace="u", now=NOW)
    frame = store.frame("u")
    over, room = mk.ForgetParams(), mk.ForgetParams(capacity=100_000)
    cases = {
        "plan, ties by age (no content: the order before)": lambda: mk.forget.plan_forget(
            frame.drop("content"), over, NOW
        ),
        "plan, ties by words then age": lambda: mk.forget.plan_forget(frame, over, NOW),
        "plan, under capacity (nothing to count)": lambda: mk.forget.plan_forget(frame, room, NOW),
        "store.forget(dry_run=True), ties by words": lambda: store.forget("u", now=NOW, dry_run=True),
    }
    rows, base = [], None
    for label, fn in cases.items():
        cpu, wall = best(fn, repeats)
        base = base or cpu
        rows.append({"N": n, "case": label, "cpu s": round(cpu, 3), "wall s": round(wall, 3),
                     "x baseline (cpu)": round(cpu / base, 2)})  # fmt: skip
    store.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000", help="comma-separated N")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    rows = [r for n in args.sizes.split(",") for r in timings(int(n), args.repeats)]
    with pl.Config(tbl_rows=-1, fmt_str_lengths=60, tbl_width_chars=160):
        print(pl.DataFrame(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
