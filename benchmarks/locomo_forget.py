"""Forgetting on LoCoMo: how much of what the questions ask about does a forgetting policy erase?

Each conversation's turns go in a store as ``benchmarks/locomo.py --store`` loads them (one namespace
per conversation, ``add_many`` with the defaults: importance 0.5, long-term memory, 90-day
half-life, no strength floor for search). A policy's forget pass runs at the conversation's last
session (``store.forget(dry_run=True)``, the plan a pass applies), or a quarter later (``+90 d``: the
store kept three more months without a new turn). For each policy:

- ``evidence dropped``: the share of the evidence turns of LoCoMo's questions (categories 1-4) it
  erases, against the share of the other turns (a policy blind to usefulness erases both alike);
- ``questions losing all``: the questions none of whose evidence turns is left;
- ``R@5``: recall@5 of the questions (default ``Weights()``, ``store.search(now=last session)``)
  over a store holding only the turns the policy keeps (1.0 = every question's evidence in the top
  5), against 61.8 when nothing is forgotten.

``oldest first on ties`` is memkit's order before forgetting broke ties by what a memory says (the
same plan computed without the ``content`` column: every turn then costs 2 · 0.5 = 1.0 and only age
is left). With the default importance and no recall every turn costs the same, so the tie order
decides everything capacity drops.

    python benchmarks/locomo_forget.py [--data ../shared/data/locomo]
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benchmark's loader
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install

from locomo import DEFAULT_DATA, conversation_store  # noqa: E402

import memkit as mk  # noqa: E402
from memkit import evaluate as ev  # noqa: E402

QUARTER = timedelta(days=90)
# (label, policy, by content: False = the old order, days after the last session)
ARTICLES, NO_FLOOR = mk.ForgetParams(min_strength=0.1), mk.ForgetParams(min_strength=0.0)
POLICIES = [
    ("nothing forgotten", None, True, 0),
    ("before: capacity 500, floor 0.1, oldest first on ties", ARTICLES, False, 0),
    ("capacity 500, floor 0.1, fewest words first on ties", ARTICLES, True, 0),
    ("ForgetParams(): capacity 500, floor 0.05, fewest words first", mk.ForgetParams(), True, 0),
    ("capacity 500, floor 0, fewest words first", NO_FLOOR, True, 0),
    ("floor 0.1 alone (no capacity limit)", mk.ForgetParams(capacity=100_000, min_strength=0.1), True, 0),
    ("+90 d: capacity 500, floor 0.1, fewest words first", ARTICLES, True, 90),
    ("+90 d: ForgetParams() (floor 0.05)", mk.ForgetParams(), True, 90),
    ("+90 d: capacity 500, floor 0, fewest words first", NO_FLOOR, True, 90),
]


def dropped(
    store: mk.MemoryStore, last: dict[str, datetime], policy: mk.ForgetParams, by_content: bool, days: int
) -> tuple[set[str], dict[str, int]]:
    """The turn ids (``key``) a forget pass with ``policy`` drops from every conversation, ``days``
    after its last session, and how many for each reason."""
    gone: set[str] = set()
    reasons: dict[str, int] = {}
    for c, at in last.items():
        at = at + timedelta(days=days)
        frame = store.frame(c)
        if by_content:
            plan = store.forget(c, now=at, policy=policy, dry_run=True)
        else:  # the same pure plan without the text: ties by age alone
            plan = mk.forget.plan_forget(frame.drop("content"), policy, at)
        gone |= set(frame.filter(pl.col("id").is_in(plan["id"].implode()))["key"].to_list())
        for r, n in plan["reason"].value_counts().rows():
            reasons[r] = reasons.get(r, 0) + n
    return gone, reasons


def recall5(memories: pl.DataFrame, queries: pl.DataFrame, gone: set[str]) -> float:
    """Recall@5 (%) of ``queries`` over a store of the turns not in ``gone``."""
    store, last = conversation_store(memories.filter(~pl.col("id").is_in(list(gone))))
    rows = []
    for q in queries.iter_rows(named=True):
        c = q["conversation"]
        hits = store.search(q["question"], namespace=c, k=5, now=last[c], reinforce=False)
        rows += [(q["query_id"], i + 1, key) for i, key in enumerate(hits["key"].to_list())]
    store.close()
    schema = {"query_id": pl.String, "rank": pl.Int64, "id": pl.String}
    return 100 * float(ev.score_rankings(pl.DataFrame(rows, schema=schema, orient="row"), queries, ks=(5,))[
        "recall@5"].mean())  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with locomo10.json")
    p.add_argument("--no-recall", action="store_true", help="skip the R@5 column (the slow part)")
    args = p.parse_args(argv)
    if not (args.data / "locomo10.json").exists():
        print(f"skip: LoCoMo not found at {args.data} (see ../shared/data/README.md)")
        return 0
    t0 = time.perf_counter()
    memories, queries = ev.load_locomo(args.data / "locomo10.json")
    queries = queries.filter(pl.col("category") <= 4, pl.col("relevant").list.len() > 0)
    evidence = set(queries["relevant"].explode().to_list())
    others = memories.height - len(evidence)
    print(f"LoCoMo: {memories.height} turns ({len(evidence)} evidence turns), {queries.height} questions "
          f"in categories 1-4; forget at each conversation's last session")  # fmt: skip
    store, last = conversation_store(memories)
    spans = [(at - store.frame(c)["created_at"].min()).days for c, at in last.items()]
    print(f"conversations span {min(spans)}-{max(spans)} days; turns per conversation "
          f"{memories.group_by('conversation').len()['len'].min()}-"
          f"{memories.group_by('conversation').len()['len'].max()}")  # fmt: skip
    rows = []
    for label, policy, by_content, days in POLICIES:
        gone, reasons = dropped(store, last, policy, by_content, days) if policy else (set(), {})
        lost = len(gone & evidence)
        row = {
            "policy": label,
            "dropped": len(gone),
            "reasons": ", ".join(f"{r} {n}" for r, n in sorted(reasons.items())) or "-",
            "evidence dropped %": round(100 * lost / len(evidence), 1),
            "other turns dropped %": round(100 * len(gone - evidence) / others, 1),
            "questions losing all": sum(set(r) <= gone for r in queries["relevant"].to_list()),
        }
        if not args.no_recall:
            row["R@5"] = round(recall5(memories, queries, gone), 1)
        rows.append(row)
        print(row, flush=True)
    store.close()
    table = pl.DataFrame(rows).with_columns(
        (100 * pl.col("questions losing all") / queries.height).round(1).alias("questions losing all %")
    )
    with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200):
        print(table)
    print(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
