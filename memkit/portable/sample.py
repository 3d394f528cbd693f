"""The bundled bilingual sample set (``data/demo_memories.jsonl``), for the demo, notebooks and tests.

Three users (``user_87`` in Chinese, ``alice`` in English, ``bob`` in both) with ~90 days of facts,
preferences, keyed slots, episodic events and short-term notes. :data:`SAMPLE_NOW` is the day after
the last memory: the natural ``now=`` for exploring it.

>>> frame = load_sample()
>>> sorted(frame["namespace"].unique().to_list())
['alice', 'bob', 'user_87']
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from ..errors import FormatError, NotFound
from .lines import numbered

__all__ = ["SAMPLE_NOW", "SAMPLE_PATH", "load_sample", "load_into"]

# subtle: the set is in the repository's data/ folder, two levels above this package (not inside it)
SAMPLE_PATH = Path(__file__).resolve().parents[2] / "data" / "demo_memories.jsonl"
SAMPLE_NOW = datetime(2026, 1, 1, tzinfo=UTC)  # the day after the last memory of the set


def load_sample(path: str | Path | None = None) -> pl.DataFrame:
    """Read the sample JSONL -> one row per memory, ``created_at`` as UTC datetimes.

    The lines are ``add_many`` records (``content``, ``kind``, ``importance``, ``key``, ``tags``, ...)
    plus their ``namespace``: sample data, not a portable export, so no ids and no header.
    """
    p = Path(path) if path is not None else SAMPLE_PATH
    if not p.exists():
        raise NotFound(f"sample set not found at {p} (it ships in the repository's data/ folder)")
    rows = []
    for i, line, _ in numbered(p.read_bytes(), file=p.name):  # JSONL: split on "\n" only
        try:
            rec = json.loads(line)
            rec["created_at"] = datetime.fromisoformat(rec["created_at"]).astimezone(UTC)
        except (ValueError, KeyError, TypeError) as e:
            raise FormatError(f"{p.name} line {i}", str(e)) from None
        rows.append(rec)
    return pl.DataFrame(rows, infer_schema_length=None)


def load_into(
    store: object, frame: pl.DataFrame | None = None, *, now: datetime = SAMPLE_NOW
) -> pl.DataFrame:
    """Load the sample (or ``frame``) into a store, one ``add_many`` per namespace -> ids frame
    ``id, status, namespace``. The memories are written by ``importer`` at ``now``, through the
    store's write pipeline like any other write (guard and version plan included)."""
    frame = load_sample() if frame is None else frame
    parts = []
    for (ns,), part in frame.group_by("namespace", maintain_order=True):
        ids = store.add_many(part.drop("namespace"), namespace=ns, requester="importer", now=now)  # type: ignore[attr-defined]
        parts.append(ids.with_columns(pl.lit(ns).alias("namespace")))
    return pl.concat(parts)
