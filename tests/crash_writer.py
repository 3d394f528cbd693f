"""A writer process for tests/test_crash.py (run as a script; importing it does nothing).

``python tests/crash_writer.py PATH SEED TRIAL`` opens the store at PATH and writes until it is killed: adds
(keyed and unkeyed), batches, deletes, consolidations, reinforcing searches, now and then a close and
reopen (a checkpoint), and imports when the store has them. After each call *returns*, it prints one
acknowledgement line and flushes, so every line the parent read is a write the store acknowledged:

    ADD <id> | MANY <id,id,...> | DEL <id> | MERGE <merged_id> <member,...> | IMPORT <ns> <n> <id,...>
    | SEARCH <now> <hit,...>

Each operation uses its own ``now`` (one second apart), so a test can group audit events by call. The
clock is simulated: trial ``t``'s step ``n`` runs at ``T0 + t·TRIAL_SPAN_S + n`` seconds, so every write
of a trial comes before ``T0 + (t + 1)·TRIAL_SPAN_S``, the instant the test checks the recovered file at.
"""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

BATCH = 5  # rows per add_many call: the test checks every batch is all there or not at all
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TRIAL_SPAN_S = 100_000  # simulated seconds per trial (a writer makes a few thousand steps at most)
TEXTS = [
    "the user lives in Hangzhou",
    "the user lives in Hangzhou",  # duplicates, so that consolidation has work
    "用户喜欢美式咖啡",
    "用户喜欢美式咖啡",
    "standup is at 9:30 every weekday",
    "the deploy url is prod.example.org",
]


def main(path: str, seed: int, trial: int) -> None:
    import polars as pl

    import memkit as mk

    rng = random.Random(seed)
    store = mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=64))
    alive: list[str] = [str(i) for i in store.frame()["id"]]
    export_dir = Path(path).with_suffix(".exports")
    export_dir.mkdir(exist_ok=True)
    step = 0

    def ack(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    ack("READY")
    while True:
        step += 1
        now = T0 + timedelta(seconds=trial * TRIAL_SPAN_S + step)
        op = rng.random()
        text = rng.choice(TEXTS) + ("" if rng.random() < 0.5 else f" #{rng.randrange(1000)}")
        if op < 0.35:
            key = rng.choice([None, None, "user.city", "user.drink"])
            m = store.add(
                text, namespace=rng.choice(["u1", "u'2"]), key=key, conflict_policy="supersede", now=now
            )
            alive.append(m.id)
            ack(f"ADD {m.id}")
        elif op < 0.55:
            frame = pl.DataFrame({"content": [rng.choice(TEXTS) for _ in range(BATCH)]})
            ids = store.add_many(frame, namespace="u1", now=now)["id"].to_list()
            alive.extend(ids)
            ack("MANY " + ",".join(ids))
        elif op < 0.65 and alive:
            mid = alive.pop(rng.randrange(len(alive)))
            try:
                store.delete(mid, now=now)
            except mk.NotFound:  # it went with a merge it belonged to (erasing a merge takes its members)
                continue
            ack(f"DEL {mid}")
        elif op < 0.78:
            plan = store.consolidate(rng.choice(["u1", "u'2", None]), now=now)
            for merged, members in zip(plan["merged_id"], plan["members"], strict=True):
                alive.append(merged)
                ack(f"MERGE {merged} {','.join(members)}")
        elif op < 0.9:  # deferred: its event and reinforcement reach the file at a later flush
            hits = store.search(text, namespace="u1", k=5, now=now)
            ack(f"SEARCH {now.isoformat()} {','.join(hits['id'])}")
        elif op < 0.95 and hasattr(store, "import_") and hasattr(store, "export"):
            src = export_dir / f"{trial}_{step}.jsonl"
            store.export(str(src), namespace="u1", now=now)
            report = store.import_(
                str(src), on_conflict="new_ids", namespace_map={"u1": f"imp{trial}_{step}"}, now=now
            )
            ids = [str(i) for i in report.filter(report["action"] != "skipped")["id"]]
            alive.extend(ids)
            ack(f"IMPORT imp{trial}_{step} {len(ids)} {','.join(ids)}")
        else:
            store.close()  # a checkpoint: DuckDB folds the WAL into the file
            store = mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=64))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
