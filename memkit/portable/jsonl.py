"""The portable format: memories as versioned JSONL, written and read without loss.

A file is one header line, then one memory per line, then (version 2) one line per lesson::

    {"format": "memkit", "version": 1, "embedder": {"name": "hash-v1-384-tw0.5", "dim": 384},
     "exported_at": "2026-01-01T00:00:00.000000Z", "namespace": "user_87",
     "counts": {"memories": 2, "events": 0}, "fields": ["id", "namespace", ...]}
    {"id": "9f…", "namespace": "user_87", "content": "用户住在杭州", "tags": ["address"], ...}

The header:

======================  ==========================================================================
key                     meaning
======================  ==========================================================================
``format``, ``version`` ``"memkit"`` and 1, or 2 when the file carries lessons (:data:`VERSION`, what
                        this reader reads; it refuses a newer version)
``embedder``            name and dim of the embedder that made the vectors (reused only if equal)
``exported_at``         when the file was written (ISO-8601 UTC)
``namespace``           the namespace exported, or null for all
``counts``              memories and events (and, version 2, ``lessons``) in the file: a file cut
                        at a line end is caught by them
``fields``              the columns every memory line has, in table order
``embedding_encoding``  :data:`EMBEDDING_ENCODING` when lines carry ``embedding``, else null
``events``              true when each line carries its memory's audit ``events``
======================  ==========================================================================

Lesson lines (:mod:`~memkit.portable.lessons`) carry the guard's lessons of what an operator
exports: a file is written as version 2 only when it has some, so one without stays readable by an
older memkit (which refuses, rather than misreads, a version 2 file).

``fields`` is whatever the store's ``memories`` table holds (the store passes its columns in), so a
column added by a later migration travels without a change here. Timestamps are ISO-8601 UTC with
microseconds (exact round-trip); ``value`` is embedded as JSON, not as a string; embeddings, when
included, are the little-endian float32 bytes in base64 (exact and 4x smaller than decimal text).

Reading is strict, because an import must be all or nothing: every line is decoded as UTF-8, parsed
with duplicate keys, ``NaN``/``Infinity`` and overflowing numbers rejected
(:mod:`~memkit.portable.strictjson`), and every field checked by the validators of
:mod:`memkit.schema` (:mod:`~memkit.portable.fields`). Any problem raises
:class:`~memkit.errors.FormatError` naming the line and the field. What an import then does with
each line is :mod:`~memkit.portable.plan`. Only :mod:`memkit.store` touches the database (see
``MemoryStore.export`` / ``MemoryStore.import_``); this module is files and plain values.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..embed import content_hashes
from ..errors import FormatError, ValidationError, is_duckdb_file
from ..outfile import write_file
from ..params import GuardParams
from .columns import Column, polars_type
from .fields import EVENT_FIELDS, MISSING_VALUE, default, parse_embedding, parse_events, parse_time, validator
from .ids import refuse_flagged_ids
from .lessons import LESSONS_VERSION, check_lessons, first_repeat, lesson_line, parse_lesson
from .lines import numbered
from .strictjson import fail, loads

__all__ = ["FORMAT", "ON_CONFLICT", "VERSION", "Column", "Parsed", "read", "write"]

FORMAT = "memkit"  # the header's "format": what tells a memkit file from any other JSONL
VERSION = 2  # the newest "version" this reads (2: lesson lines); a file is written with the oldest
# that describes it (1 without lessons), raised only where an older reader could misread a file
EMBEDDING_ENCODING = "f32le-base64"  # little-endian float32 bytes, base64: exact, and 4x smaller
ON_CONFLICT = ("skip", "overwrite", "new_ids", "error")  # an import's choices (memkit.portable.plan)
_TS_FORMAT = "%Y-%m-%dT%H:%M:%S%.6fZ"  # polars strftime: microseconds, UTC designator


@dataclass
class Parsed:
    """A validated file: its header, the memories as columns (``{field: [values]}``), the line of
    each memory, its embeddings ``(n, dim)`` float32 (or None), its audit events
    ``(row, ts, op, requester, detail_json)`` and its lessons
    (:func:`~memkit.portable.lessons.parse_lesson`)."""

    header: dict[str, Any]
    columns: dict[str, list[Any]]  # every column of the store's table, values as the store keeps them
    lines: list[int]  # lines[i]: the file line of row i, for error messages after the read
    embeddings: np.ndarray | None = None
    events: list[tuple[int, datetime, str, str | None, str | None]] = field(default_factory=list)
    lessons: list[dict[str, Any]] = field(default_factory=list)


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
    lessons: pl.DataFrame | None = None,
    lesson_embeddings: np.ndarray | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Write ``frame`` (one row per memory, every column of ``columns``) to ``path`` -> the header.

    ``embeddings`` is ``(n, dim)`` row-aligned with ``frame``; ``events`` has ``memory_id, ts, op,
    requester, detail`` (detail as JSON text); ``lessons`` the ``lessons`` table's rows (its
    :data:`~memkit.portable.lessons.LESSON_FIELDS`) and, when ``embeddings`` is given, their
    ``lesson_embeddings`` ``(m, dim)``. The file is written next to ``path`` (or the file a link there
    leads to) and renamed into place, so a reader never sees half a file; ``"-"`` is standard output
    (:func:`memkit.outfile.write_file`; ``force``: a read-only file is replaced too).
    """
    names = [c.name for c in columns]  # the header's "fields": the table's columns, in its order
    for c in columns:
        polars_type(c)  # fail early on a column type the format cannot carry
    times = [c.name for c in columns if c.sql_type.upper().startswith("TIMESTAMP")]  # -> ISO text, µs
    out = frame.select(names).with_columns(pl.col(times).dt.strftime(_TS_FORMAT))
    json_cols = [c.name for c in columns if c.sql_type.upper() == "JSON"]  # value, findings
    per_memory: dict[str, list[dict[str, Any]]] = {}  # memory id -> its events, oldest first
    if events is not None:
        ev = events.with_columns(pl.col("ts").dt.strftime(_TS_FORMAT))
        for e in ev.iter_rows(named=True):  # export writes per line anyway
            detail = None if e["detail"] is None else json.loads(e["detail"])
            per_memory.setdefault(e["memory_id"], []).append(
                {**{k: e[k] for k in EVENT_FIELDS}, "detail": detail}
            )
    taught = lessons is not None and lessons.height > 0  # lesson lines: version 2, else 1 as before
    header = {
        "format": FORMAT,
        "version": LESSONS_VERSION if taught else 1,
        "embedder": {"name": embedder[0], "dim": int(embedder[1])},
        # isoformat, not strftime: glibc's %Y writes year 999 as "999", which no ISO-8601 parser reads
        "exported_at": now.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z"),
        "namespace": namespace,
        "counts": {
            "memories": out.height,
            "events": sum(map(len, per_memory.values())),
            **({"lessons": lessons.height} if taught else {}),
        },  # fmt: skip
        "fields": names,
        "embedding_encoding": EMBEDDING_ENCODING if embeddings is not None else None,
        "events": events is not None,
    }

    def lines(f: Any) -> None:
        """The header, then one line per memory, then one per lesson."""
        f.write(_dumps(header) + "\n")
        for i, row in enumerate(out.iter_rows(named=True)):
            for c in json_cols:  # embedded as JSON, not as a string holding JSON
                if row[c] is not None:
                    row[c] = json.loads(row[c])
            if embeddings is not None:
                row["embedding"] = base64.b64encode(embeddings[i].astype("<f4").tobytes()).decode("ascii")
            if events is not None:
                row["events"] = per_memory.get(row["id"], [])
            f.write(_dumps(row) + "\n")
        for j, les in enumerate(lessons.iter_rows(named=True) if taught else ()):  # type: ignore[union-attr]
            vec = None if embeddings is None or lesson_embeddings is None else lesson_embeddings[j]
            f.write(_dumps(lesson_line(les, vec)) + "\n")

    # memkit.outfile: a temporary file beside the target (a symbolic link's target), renamed over it,
    # so a crash leaves the old file or the new one; "-" is standard output; 0600: memories are private
    write_file("path", path, lines, mode=0o600, stdout=True, force=force)
    return header


def _dumps(obj: Any) -> str:
    """One line of the file: compact, Unicode kept as it is (Chinese stays readable), NaN refused."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


# ----------------------------------------------------------------------------------------- reading
def _header(obj: Any, columns: Sequence[Column]) -> dict[str, Any]:
    """Check the header line (see the module table) against this reader and the store's ``columns``
    -> the header, or FormatError on line 1. A field the store has no column for is refused: the
    file comes from a newer schema, and dropping the field would lose data silently."""
    if not isinstance(obj, dict):
        raise fail(1, "header", "must be a JSON object")
    if obj.get("format") != FORMAT:
        raise fail(1, "format", f"must be {FORMAT!r}, got {obj.get('format')!r} (not a memkit export?)")
    v = obj.get("version")
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise fail(1, "version", f"must be a positive int, got {v!r}")
    if v > VERSION:
        raise fail(1, "version", f"{v} is newer than this memkit reads ({VERSION}); upgrade memkit")
    emb = obj.get("embedder")  # type() is int, not isinstance: true is not a dimension
    if not (isinstance(emb, dict) and isinstance(emb.get("name"), str) and type(emb.get("dim")) is int):
        raise fail(1, "embedder", "must be {'name': str, 'dim': int}")
    counts = obj.get("counts")
    keys = ("memories", "events", "lessons")[: 3 if v >= LESSONS_VERSION else 2]  # version 2 counts lessons
    if not (isinstance(counts, dict) and all(type(counts.get(k)) is int for k in keys)):
        raise fail(1, "counts", "must be {" + ", ".join(f"'{k}': int" for k in keys) + "}")
    fields = obj.get("fields")
    if not (isinstance(fields, list) and all(isinstance(f, str) for f in fields)) or len(set(fields)) != len(
        fields
    ):
        raise fail(1, "fields", "must be a list of distinct field names")
    known = {c.name for c in columns}  # a field may be missing (an older file), never unknown
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


def read(path: str | Path, columns: Sequence[Column], guard: GuardParams | None = None) -> Parsed:
    """Read and validate a portable file against the store's ``columns`` -> :class:`Parsed`.

    Raises FormatError naming the line for: a wrong format name or a newer version, bad UTF-8, a
    truncated last line, bad JSON (duplicate keys, NaN/Infinity), a missing or unknown field, a value
    the store's validators reject, a repeated id, a content hash that does not match, a wrong count,
    a bad lesson line (:func:`~memkit.portable.lessons.parse_lesson`), an id, finding code or event
    requester the guard flags (the default rules plus ``guard``'s
    ``extra_secret_patterns``: the importing store's own, :mod:`memkit.portable.ids`).

    Two passes: the first reads line by line (bytes -> text -> JSON, the shape of each line, the
    embedding and events), collecting raw values per field; the second validates a whole column at
    a time, which is fast, and only on an error goes back to find the line.
    """
    p = Path(path)
    if not p.is_file():
        raise FormatError("path", f"{str(path)!r} is not a file")
    if is_duckdb_file(p):  # (its bytes would be refused as "not valid UTF-8" on line 1)
        raise FormatError("path", f"{str(path)!r} is a DuckDB database, not a memkit export (JSONL)")
    header: dict[str, Any] | None = None  # None until line 1 is read
    raw: dict[str, list[Any]] = {}  # field -> the raw JSON values of every line
    lines: list[int] = []
    vectors: list[np.ndarray] = []
    events: list[tuple[int, datetime, str, str | None, str | None]] = []
    lessons: list[dict[str, Any]] = []
    with p.open("rb") as f:
        for n, text, ended in numbered(f):  # pass 1, per line: bytes -> UTF-8 -> strict JSON -> raw values
            if not ended:  # every line memkit writes ends with one: a cut-off copy
                raise fail(n, "line", "is truncated (the file does not end with a newline)")
            if n == 1 and text.startswith("\ufeff"):  # a byte order mark (Windows editors): not JSON's
                text = text[1:]
            if not text.strip():  # (json's own "Expecting value: line 2 column 1" names another line)
                raise fail(n, "line", "is empty: every line is one JSON object")
            obj = loads(text, n)
            if header is None:
                header = _header(obj, columns)
                raw = {name: [] for name in header["fields"]}
                # the keys every memory line must have, exactly: the fields, plus the optional parts
                expected = set(raw) | {k for k, on in (("embedding", header.get("embedding_encoding")),
                                                       ("events", header.get("events"))) if on}  # fmt: skip
                taught = header["version"] >= LESSONS_VERSION  # lesson lines may follow the memories
                continue
            if taught and isinstance(obj, dict) and obj.keys() == {"lesson"}:  # a lesson's line
                dim, emb = header["embedder"]["dim"], bool(header.get("embedding_encoding"))
                lessons.append(parse_lesson(obj["lesson"], n, dim, emb, guard))
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
                events += parse_events(obj["events"], len(lines), n, guard)
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
    check_lessons(lessons, header["counts"].get("lessons", 0), guard)  # counts, repeats, flagged ids
    cols = {c.name: _column(c, raw.get(c.name), lines) for c in columns}  # pass 2, per column
    # checks across fields or lines, once every value is clean
    for a, b, n in zip(cols["valid_from"], cols["valid_until"], lines, strict=True):
        if a is not None and b is not None and b <= a:
            raise fail(n, "valid_until", f"must be after valid_from ({b} <= {a})")
    for c, a, n in zip(cols["created_at"], cols["last_access_at"], lines, strict=True):  # as add_many
        if isinstance(c, datetime) and isinstance(a, datetime) and a < c:
            raise fail(n, "last_access_at", f"must not precede created_at ({a} < {c})")
    hashes = content_hashes(cols["content"])
    for given, h, n in zip(cols["content_hash"], hashes, lines, strict=True):
        if given is not MISSING_VALUE and given != h:
            raise fail(n, "content_hash", "does not match the content (edited or corrupted line)")
    cols["content_hash"] = hashes  # an older file without hashes gets them here
    ids = cols["id"]
    if len(set(ids)) != len(ids) and (hit := first_repeat(ids, lines)):  # (the slow search: on error only)
        raise fail(hit[0], "id", f"{hit[1]!r} repeats the id of line {hit[2]}")
    refuse_flagged_ids(cols, lines, guard)  # ids are stored as they are: never text (the guard's verdict)
    emb = np.stack(vectors) if vectors else None  # (n, dim)
    return Parsed(header, cols, lines, emb, events, lessons)


def _column(col: Column, values: list[Any] | None, lines: list[int]) -> list[Any]:
    """Validate one column (a validator per value; the slow path only to name the bad line).

    ``values`` is None when the file predates the column: every row gets its
    :func:`~memkit.portable.fields.default`, and a required column without one refuses the file
    (``content_hash`` is exempt: :func:`read` computes it).
    """
    if values is None:  # a column this file predates
        value = default(col)
        if value is MISSING_VALUE and col.name != "content_hash":
            if lines:
                raise fail(lines[0], col.name, "is missing (the file predates this column)")
        # subtle: a list default (tags=[]) is copied per row, so rows never share one mutable list
        return [list(value) if isinstance(value, list) else value for _ in lines]
    check = validator(col)
    try:
        if not col.nullable and any(v is None for v in values):
            raise ValidationError(col.name, "must not be null")
        return [None if v is None else check(v) for v in values]
    except ValidationError:
        # the slow path: the same checks again, one line at a time, to name the first bad line
        for v, n in zip(values, lines, strict=True):
            try:
                if v is None and not col.nullable:
                    raise ValidationError(col.name, "must not be null") from None
                if v is not None:
                    check(v)
            except ValidationError as e:
                raise fail(n, col.name, str(e).split(": ", 1)[1]) from None
        raise
