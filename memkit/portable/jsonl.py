"""The portable format: memories as versioned JSONL, written and read without loss.

A file is one header line and then one memory per line::

    {"format": "memkit", "version": 1, "embedder": {"name": "hash-v1-384-tw0.5", "dim": 384},
     "exported_at": "2026-01-01T00:00:00.000000Z", "namespace": "user_87",
     "counts": {"memories": 2, "events": 0}, "fields": ["id", "namespace", ...]}
    {"id": "9f…", "namespace": "user_87", "content": "用户住在杭州", "tags": ["address"], ...}

``fields`` is whatever the store's ``memories`` table holds (the store passes its columns in), so a
column added by a later migration travels without a change here. Timestamps are ISO-8601 UTC with
microseconds (exact round-trip); ``value`` is embedded as JSON, not as a string; embeddings, when
included, are the little-endian float32 bytes in base64 (exact and 4x smaller than decimal text).

Reading is strict, because an import must be all or nothing: every line is decoded as UTF-8, parsed
with duplicate keys, ``NaN``/``Infinity`` and overflowing numbers rejected, and every field checked by
the validators of :mod:`memkit.schema`. Any problem raises :class:`~memkit.errors.FormatError`
naming the line and the field. Only :mod:`memkit.store` touches the database (see
``MemoryStore.export`` / ``MemoryStore.import_``); this module is files and plain values.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from ..embed import content_hash
from ..errors import FormatError, ValidationError
from ..schema import check_choice, check_name
from .fields import (
    EVENT_FIELDS,
    MISSING_VALUE,
    Column,
    arrow_type,
    default,
    fail,
    loads,
    parse_embedding,
    parse_events,
    parse_time,
    polars_type,
    validator,
)

__all__ = ["FORMAT", "ON_CONFLICT", "VERSION", "Column", "Parsed", "read", "write"]

FORMAT = "memkit"
VERSION = 1
EMBEDDING_ENCODING = "f32le-base64"
ON_CONFLICT = ("skip", "overwrite", "new_ids", "error")
_TS_FORMAT = "%Y-%m-%dT%H:%M:%S%.6fZ"  # polars strftime: microseconds, UTC designator


@dataclass
class Parsed:
    """A validated file: its header, the memories as columns (``{field: [values]}``), the line of
    each memory, its embeddings ``(n, dim)`` float32 (or None) and its audit events
    ``(row, ts, op, requester, detail_json)``."""

    header: dict[str, Any]
    columns: dict[str, list[Any]]
    lines: list[int]
    embeddings: np.ndarray | None = None
    events: list[tuple[int, datetime, str, str | None, str | None]] = field(default_factory=list)


# ----------------------------------------------------------------------------------------- writing
def write(
    path: str | Path,
    frame: pl.DataFrame,
    columns: Sequence[Column],
    *,
    embedder: tuple[str, int],
    now: datetime,
    namespace: str | None = None,
    embeddings: np.ndarray | None = None,
    events: pl.DataFrame | None = None,
) -> dict[str, Any]:
    """Write ``frame`` (one row per memory, every column of ``columns``) to ``path`` -> the header.

    ``embeddings`` is ``(n, dim)`` row-aligned with ``frame``; ``events`` has ``memory_id, ts, op,
    requester, detail`` (detail as JSON text). The file is written next to ``path`` and renamed into
    place, so a reader never sees half a file.
    """
    names = [c.name for c in columns]
    for c in columns:
        polars_type(c)  # fail early on a column type the format cannot carry
    times = [c.name for c in columns if c.sql_type.upper().startswith("TIMESTAMP")]
    out = frame.select(names).with_columns(pl.col(times).dt.strftime(_TS_FORMAT))
    json_cols = [c.name for c in columns if c.sql_type.upper() == "JSON"]
    per_memory: dict[str, list[dict[str, Any]]] = {}
    if events is not None:
        ev = events.with_columns(pl.col("ts").dt.strftime(_TS_FORMAT))
        for e in ev.iter_rows(named=True):  # export writes per line anyway
            detail = None if e["detail"] is None else json.loads(e["detail"])
            per_memory.setdefault(e["memory_id"], []).append(
                {**{k: e[k] for k in EVENT_FIELDS}, "detail": detail}
            )
    header = {
        "format": FORMAT,
        "version": VERSION,
        "embedder": {"name": embedder[0], "dim": int(embedder[1])},
        "exported_at": now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "namespace": namespace,
        "counts": {"memories": out.height, "events": sum(map(len, per_memory.values()))},
        "fields": names,
        "embedding_encoding": EMBEDDING_ENCODING if embeddings is not None else None,
        "events": events is not None,
    }
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(_dumps(header) + "\n")
            for i, row in enumerate(out.iter_rows(named=True)):
                for c in json_cols:
                    if row[c] is not None:
                        row[c] = json.loads(row[c])
                if embeddings is not None:
                    row["embedding"] = base64.b64encode(embeddings[i].astype("<f4").tobytes()).decode("ascii")
                if events is not None:
                    row["events"] = per_memory.get(row["id"], [])
                f.write(_dumps(row) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return header


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


# ----------------------------------------------------------------------------------------- reading
def _header(obj: Any, columns: Sequence[Column]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise fail(1, "header", "must be a JSON object")
    if obj.get("format") != FORMAT:
        raise fail(1, "format", f"must be {FORMAT!r}, got {obj.get('format')!r} (not a memkit export?)")
    v = obj.get("version")
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise fail(1, "version", f"must be a positive int, got {v!r}")
    if v > VERSION:
        raise fail(1, "version", f"{v} is newer than this memkit reads ({VERSION}); upgrade memkit")
    emb = obj.get("embedder")
    if not (isinstance(emb, dict) and isinstance(emb.get("name"), str) and type(emb.get("dim")) is int):
        raise fail(1, "embedder", "must be {'name': str, 'dim': int}")
    counts = obj.get("counts")
    if not (isinstance(counts, dict) and all(type(counts.get(k)) is int for k in ("memories", "events"))):
        raise fail(1, "counts", "must be {'memories': int, 'events': int}")
    fields = obj.get("fields")
    if not (isinstance(fields, list) and all(isinstance(f, str) for f in fields)) or len(set(fields)) != len(
        fields
    ):
        raise fail(1, "fields", "must be a list of distinct field names")
    known = {c.name for c in columns}
    unknown = [f for f in fields if f not in known]
    if unknown:
        raise fail(1, "fields", f"{unknown[0]!r} is not a column of this store (a newer schema?)")
    if obj.get("embedding_encoding") not in (None, EMBEDDING_ENCODING):
        raise fail(1, "embedding_encoding", f"must be {EMBEDDING_ENCODING!r} or null")
    try:
        parse_time("exported_at", obj.get("exported_at"))
    except ValidationError as e:
        raise fail(1, "exported_at", str(e)) from None
    return obj


def read(path: str | Path, columns: Sequence[Column]) -> Parsed:
    """Read and validate a portable file against the store's ``columns`` -> :class:`Parsed`.

    Raises FormatError naming the line for: a wrong format name or a newer version, bad UTF-8, a
    truncated last line, bad JSON (duplicate keys, NaN/Infinity), a missing or unknown field, a value
    the store's validators reject, a repeated id, a content hash that does not match, a wrong count.
    """
    p = Path(path)
    if not p.is_file():
        raise FormatError("path", f"{str(path)!r} is not a file")
    header: dict[str, Any] | None = None
    raw: dict[str, list[Any]] = {}
    lines: list[int] = []
    vectors: list[np.ndarray] = []
    events: list[tuple[int, datetime, str, str | None, str | None]] = []
    with p.open("rb") as f:
        for n, line in enumerate(f, 1):  # pass 1, per line: bytes -> UTF-8 -> strict JSON -> raw values
            if not line.endswith(b"\n"):
                raise fail(n, "line", "is truncated (the file does not end with a newline)")
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as e:
                bad = line[e.start : e.start + 1]
                raise fail(n, "line", f"is not valid UTF-8 (byte {e.start}: {bad!r})") from None
            obj = loads(text, n)
            if header is None:
                header = _header(obj, columns)
                raw = {name: [] for name in header["fields"]}
                expected = set(raw) | {k for k, on in (("embedding", header["embedding_encoding"]),
                                                       ("events", header.get("events"))) if on}  # fmt: skip
                continue
            if not isinstance(obj, dict):
                raise fail(n, "line", "must be a JSON object")
            if obj.keys() != expected:
                extra, missing = (
                    set(obj) - expected,
                    [k for k in (*raw, "embedding", "events") if k in expected - set(obj)],
                )
                raise fail(n, sorted(extra)[0], "is not a field named in the header") if extra else fail(
                    n, missing[0], "is missing")  # fmt: skip
            for name, values in raw.items():
                values.append(obj[name])
            if "embedding" in obj:
                vectors.append(parse_embedding(obj["embedding"], header["embedder"]["dim"], n))
            if "events" in obj:
                events += parse_events(obj["events"], len(lines), n)
            lines.append(n)
    if header is None:
        raise fail(1, "header", "is missing (empty file)")
    if header["counts"]["memories"] != len(lines):
        raise fail(
            1, "counts", f"the header says {header['counts']['memories']} memories, the file has {len(lines)}"
        )
    if header.get("events") and header["counts"]["events"] != len(events):
        raise fail(
            1, "counts", f"the header says {header['counts']['events']} events, the file has {len(events)}"
        )
    cols = {c.name: _column(c, raw.get(c.name), lines) for c in columns}  # pass 2, per column
    for a, b, n in zip(cols["valid_from"], cols["valid_until"], lines, strict=True):
        if a is not None and b is not None and b <= a:
            raise fail(n, "valid_until", f"must be after valid_from ({b} <= {a})")
    hashes = [content_hash(t) for t in cols["content"]]
    for given, h, n in zip(cols["content_hash"], hashes, lines, strict=True):
        if given is not MISSING_VALUE and given != h:
            raise fail(n, "content_hash", "does not match the content (edited or corrupted line)")
    cols["content_hash"] = hashes
    ids = cols["id"]
    if len(set(ids)) != len(ids):
        first: dict[str, int] = {}
        for mid, n in zip(ids, lines, strict=True):
            if mid in first:
                raise fail(n, "id", f"{mid!r} repeats the id of line {first[mid]}")
            first[mid] = n
    emb = np.stack(vectors) if vectors else None
    return Parsed(header, cols, lines, emb, events)


def _column(col: Column, values: list[Any] | None, lines: list[int]) -> list[Any]:
    """Validate one column (a validator per value; the slow path only to name the bad line)."""
    if values is None:  # a column this file predates
        value = default(col)
        if value is MISSING_VALUE and col.name != "content_hash":
            if lines:
                raise fail(lines[0], col.name, "is missing (the file predates this column)")
        return [list(value) if isinstance(value, list) else value for _ in lines]
    check = validator(col)
    try:
        if not col.nullable and any(v is None for v in values):
            raise ValidationError(col.name, "must not be null")
        return [None if v is None else check(v) for v in values]
    except ValidationError:
        for v, n in zip(values, lines, strict=True):
            try:
                if v is None and not col.nullable:
                    raise ValidationError(col.name, "must not be null") from None
                if v is not None:
                    check(v)
            except ValidationError as e:
                raise fail(n, col.name, str(e).split(": ", 1)[1]) from None
        raise


def plan_import(
    data: Parsed,
    existing: set[str],
    on_conflict: str,
    namespace_map: dict[str, str],
    new_id: Callable[[], str],
) -> tuple[Parsed, pl.DataFrame]:
    """Decide what happens to each line (pure) -> (the rows to write, a report frame ``line,
    source_id, id, namespace, action``).

    ``existing`` holds the file's ids already in the store. ``on_conflict``: ``skip`` leaves those
    lines out, ``overwrite`` replaces the stored rows, ``error`` rejects the file, ``new_ids`` gives
    every line a fresh id (``supersedes`` and ``merged_from`` inside the file follow). Namespaces are
    renamed by ``namespace_map``.
    """
    check_choice("on_conflict", on_conflict, ON_CONFLICT)
    cols = data.columns
    ids = cols["id"]
    if on_conflict == "error" and existing:
        row = next(i for i, x in enumerate(ids) if x in existing)
        raise fail(data.lines[row], "id", f"{ids[row]!r} is already in the store (on_conflict='error')")
    if on_conflict == "new_ids":
        remap = {x: new_id() for x in ids}
        cols = {**cols, "id": [remap[x] for x in ids]}
        cols["supersedes"] = [remap.get(x, x) for x in cols["supersedes"]]
        cols["merged_from"] = [[remap.get(x, x) for x in ms] for ms in cols["merged_from"]]
        existing = set()
    keep = [i for i, x in enumerate(ids) if not (on_conflict == "skip" and x in existing)]
    cols = {c: [v[i] for i in keep] if len(keep) < len(ids) else v for c, v in cols.items()}
    cols["namespace"] = [namespace_map.get(x, x) for x in cols["namespace"]]
    action = ["skipped"] * len(ids)
    for i in keep:
        action[i] = "overwritten" if ids[i] in existing else "added"
    new_pos = {i: j for j, i in enumerate(keep)}
    events = [(new_pos[r], *rest) for r, *rest in data.events if r in new_pos]
    report = pl.DataFrame(
        {
            "line": data.lines,
            "source_id": ids,
            "id": [cols["id"][new_pos[i]] if i in new_pos else ids[i] for i in range(len(ids))],
            "namespace": [namespace_map.get(x, x) for x in data.columns["namespace"]],
            "action": action,
        },
        schema={
            "line": pl.Int64,
            "source_id": pl.String,
            "id": pl.String,
            "namespace": pl.String,
            "action": pl.String,
        },
    )
    emb = data.embeddings[keep] if data.embeddings is not None else None
    return Parsed(data.header, cols, [data.lines[i] for i in keep], emb, events), report


def arrow_batch(cols: dict[str, list[Any]], columns: Sequence[Column], emb: np.ndarray) -> pa.Table:
    """The rows to insert as one Arrow table: every column typed as the table's, plus ``embedding``
    ``(n, dim)`` as a fixed-size list (pyarrow converts the Python lists in C, column by column)."""
    arrays = {c.name: pa.array(cols[c.name], type=arrow_type(c)) for c in columns}
    n, dim = emb.shape
    arrays["embedding"] = pa.FixedSizeListArray.from_arrays(pa.array(emb.astype(np.float32).ravel()), dim)
    return pa.table(arrays)


def check_namespace_map(value: Any) -> dict[str, str]:
    """``{"old": "new"}`` with valid namespace names on both sides (None -> {})."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError("namespace_map", f"must be a dict of str to str, got {type(value).__name__}")
    return {check_name("namespace_map", k): check_name("namespace_map", v) for k, v in value.items()}
