"""Shared by the PII tests: what ``add``, ``add_many`` and a JSONL import store for the same texts."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl

import memkit as mk


def stored_by_every_path(
    texts: list[str], guard: mk.GuardParams, d: Path, now: datetime
) -> dict[str, tuple[str, str, str]]:
    """Each of ``texts`` -> what ``add``, ``add_many`` (past the 64-row threshold: fillers are added)
    and an import of an unguarded store's export stored, under ``guard``."""
    rows = texts + [f"filler note {i}" for i in range(max(0, 80 - len(texts)))]
    with mk.MemoryStore(guard=guard) as store:
        one = {t: store.add(t, namespace="a", now=now).content for t in texts}
        ids = store.add_many(pl.DataFrame({"content": rows}), namespace="b", now=now)["id"].to_list()
        with mk.MemoryStore(guard=mk.GuardParams(enabled=False)) as raw:
            raw_ids = raw.add_many(pl.DataFrame({"content": rows}), namespace="c", now=now)["id"].to_list()
            raw.export(d / "c.jsonl", "c")
        report = store.import_(d / "c.jsonl", now=now)
        by_id = dict(
            zip(*store.frame().select("id", "content").to_dict(as_series=False).values(), strict=True)
        )
        imported = dict(zip(report["source_id"], report["id"], strict=True))
        return {t: (one[t], by_id[ids[k]], by_id[imported[raw_ids[k]]]) for k, t in enumerate(texts)}
