"""cognee's COGX archive in and out: a directory with ``manifest.json`` and one JSONL file per kind.

COGX (the "Cognee eXchange" format, ``cognee/modules/migration/cogx.py``, version 0.1) is the hub
format cognee uses to move memories between systems. Records are discriminated by ``kind``:

==============  =====================  =========================================================
COGX kind       file                   becomes
==============  =====================  =========================================================
memory          memories.jsonl         a memory (categories -> tags; memkit fields restored from
                                       ``metadata["memkit"]`` when memkit wrote it)
memory_block    memory_blocks.jsonl    a keyed fact: key = label, content = value (Letta blocks)
fact            facts.jsonl            a fact: ``fact_text`` (or subject predicate object),
                                       validity from ``valid_at``/``invalid_at``, confidence ->
                                       importance
document        documents.jsonl        a ``reference``
episode         episodes.jsonl         an episodic ``event``: the turns as ``role: content`` lines
entity          entities.jsonl         nothing (a graph node, not a memory): reported as skipped
==============  =====================  =========================================================

The namespace is the record's scope (user, agent, session or run id) unless one is given. Raw graph
nodes (``nodes.jsonl``) and the permissions file are not read. :func:`write_cogx` writes every memory
as a ``memory`` record, so any COGX reader gets the texts: a memory's id, namespace, text, tags and
times go into the record's own keys, every other field but the guard's findings into
``metadata["memkit"]`` (the guard screens the text again on the way in). Reading it back restores
those fields of the *active* memories only, as new memories (new ids, no lineage): superseded,
conflicting and quarantined rows are skipped, so a round trip is not lossless, and since neighbour
expansion pairs memories whatever their status, neighbour scores can change (README, "A COGX round
trip is not lossless"; memkit's JSONL is the lossless format).

>>> rec = {"kind": "fact", "external_id": "f1", "fact_text": "Alice works at Acme",
...        "scope": {"user_id": "alice"}, "valid_at": "2024-01-01T00:00:00Z", "confidence": 0.9}
>>> row = _cogx_row("fact", rec, "facts.jsonl line 1", None)
>>> row["namespace"], row["content"], row["importance"], row["store"]
('alice', 'Alice works at Acme', 0.9, True)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import FormatError, ValidationError, check_bool, check_frame, check_output, check_path
from ..outfile import write_file
from ..schema import MEMORY_FIELDS, check_name, check_time
from .lines import numbered
from .records import RESTORABLE, records_frame, utc_time
from .strictjson import loads

__all__ = ["COGX_VERSION", "read_cogx", "write_cogx"]

COGX_VERSION = "0.1"  # the COGX schema version these readers and writers follow
_COGX_FILES = {  # COGX kind -> its file in the archive, in the order they are read
    "memory": "memories.jsonl",
    "memory_block": "memory_blocks.jsonl",
    "fact": "facts.jsonl",
    "document": "documents.jsonl",
    "episode": "episodes.jsonl",
    "entity": "entities.jsonl",
}
# The Memory fields a COGX memory record carries in keys of its own (external_id, scope.user_id,
# content, categories, created_at, updated_at), and the guard's findings, which are not exported.
_IN_RECORD = ("id", "namespace", "content", "tags", "created_at", "updated_at", "findings")
_MEMKIT_META = tuple(f for f in MEMORY_FIELDS if f not in _IN_RECORD)  # -> metadata["memkit"]


def write_cogx(
    frame: pl.DataFrame,
    directory: str | Path,
    *,
    embedder: str | None = None,
    now: datetime | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Write ``store.frame()`` as a COGX archive (``manifest.json`` + ``memories.jsonl``) -> the manifest.

    Each memory is a COGX ``memory`` record (``external_system`` "memkit", scope user = namespace,
    categories = tags) whose ``metadata["memkit"]`` carries every other memkit field, so that
    :func:`read_cogx` restores them; other COGX readers see plain memories. A database file under
    one of the archive's names in ``directory`` is refused (ValidationError), nothing written; so is a
    read-only file there, unless ``force`` (:mod:`memkit.outfile`). Bad arguments are refused before
    anything is written (ValidationError naming ``frame``, ``directory``, ``embedder`` or ``force``).
    """
    check_frame(frame, "frame", _IN_RECORD[:-1])  # a store.frame(): the record's own keys at least
    if embedder is not None and not isinstance(embedder, str):
        raise ValidationError("embedder", f"must be a str (the embedder's name) or None, got {embedder!r}")
    now = check_time("now", now, optional=True) or datetime.now(UTC)  # the manifest's exported_at
    d = check_path("directory", directory)  # COGX is a folder of files, not one file
    check_bool("force", force)
    names = (*_COGX_FILES.values(), "nodes.jsonl", "manifest.json")
    for name in names:  # checked before anything is removed: a database there is never overwritten
        check_output("directory", d / name)
    d.mkdir(parents=True, exist_ok=True)
    written = (_COGX_FILES["memory"], "manifest.json")  # replaced through memkit.outfile (a link kept)
    for name in names:  # a stale archive's other parts go
        if name not in written:
            (d / name).unlink(missing_ok=True)
    iso = lambda t: None if t is None else t.astimezone(UTC).isoformat()  # COGX times: ISO-8601 text

    def memories(f: Any) -> None:
        """One line per memory."""
        for m in frame.iter_rows(named=True):
            meta = {k: iso(m[k]) if isinstance(m[k], datetime) else m[k] for k in _MEMKIT_META if k in m}
            if meta.get("value") is not None:  # the frame holds JSON text; the record embeds the value
                meta["value"] = json.loads(meta["value"])
            rec = {  # COGX's own keys, readable by any COGX importer
                "kind": "memory",
                "external_system": "memkit",
                "external_id": m["id"],
                "scope": {"user_id": m["namespace"]},
                "created_at": iso(m["created_at"]),
                "updated_at": iso(m["updated_at"]),
                "metadata": {"memkit": meta},
                "content": m["content"],
                "categories": list(m["tags"]),
            }
            f.write(json.dumps(rec, ensure_ascii=False, allow_nan=False) + "\n")

    write_file("directory", d / _COGX_FILES["memory"], memories, force=force)
    manifest = {
        "cogx_version": COGX_VERSION,
        "source_system": "memkit",
        "exported_at": iso(now),
        "counts": {"memory": frame.height},
        "embedding_model": embedder,
        "notes": ["memkit fields are in metadata.memkit"],  # for a human opening the archive
    }
    write_file(
        "directory",
        d / "manifest.json",
        lambda f: f.write(json.dumps(manifest, indent=2, ensure_ascii=False)),
        force=force,
    )
    return manifest


def _scope(rec: Mapping[str, Any], namespace: str | None, where: str) -> str:
    """The namespace of a record: ``namespace`` if given, else the first of its scope's user,
    agent, session and run ids; FormatError when there is none to go by."""
    scope = rec.get("scope") if isinstance(rec.get("scope"), Mapping) else {}
    ns = namespace or next(
        (scope.get(k) for k in ("user_id", "agent_id", "session_id", "run_id") if scope.get(k)), None
    )
    try:
        return check_name(f"{where}.scope", ns)
    except ValidationError as e:
        raise FormatError(e.field, f"{str(e).split(': ', 1)[1]} (no user/agent/session scope: pass"
                          " namespace=, or --namespace on the command line)") from None  # fmt: skip


def _str_field(rec: Mapping[str, Any], name: str, where: str, optional: bool = False) -> str | None:
    """``rec[name]`` as a non-empty str (None allowed when ``optional``), or FormatError at ``where``."""
    v = rec.get(name)
    if (v is None and optional) or (isinstance(v, str) and v.strip()):
        return v
    raise FormatError(f"{where}.{name}", f"must be a non-empty str, got {v!r}")


def _cogx_row(kind: str, rec: Mapping[str, Any], where: str, namespace: str | None) -> dict[str, Any]:
    """One COGX record of ``kind`` -> one memory record (``store`` false for kinds memkit does not keep).

    ``where`` (``facts.jsonl line 3``) names the record in errors. Every record must have an
    ``external_id`` (COGX requires it), though memkit gives the memory an id of its own.
    """
    if rec.get("kind", kind) != kind:  # a record in the wrong file is a broken archive
        raise FormatError(f"{where}.kind", f"must be {kind!r} in this file, got {rec.get('kind')!r}")
    _str_field(rec, "external_id", where)
    row: dict[str, Any] = {  # what every kind has; each kind adds its content below
        "namespace": _scope(rec, namespace, where),
        "store": True,
        "reason": f"cogx {kind}",
        "record": where,  # what add_frame's errors name the row by
        "created_at": utc_time(f"{where}.created_at", rec.get("created_at")),
        "source": "import",
    }
    if kind == "memory":
        row["content"] = _str_field(rec, "content", where)
        cats = rec.get("categories") or []
        if not isinstance(cats, list):
            raise FormatError(f"{where}.categories", "must be a list of str")
        row["tags"] = cats
        meta = rec.get("metadata", {}).get("memkit") if isinstance(rec.get("metadata"), Mapping) else None
        if isinstance(meta, Mapping):  # written by write_cogx: restore what add_many can set
            row.update({k: meta[k] for k in RESTORABLE if meta.get(k) is not None})
            for t in ("valid_from", "valid_until", "last_access_at"):  # ISO text in the metadata
                if t in row:
                    row[t] = utc_time(f"{where}.metadata.memkit.{t}", row[t])
            row["source"] = meta.get("source") or "import"
            # subtle: the archive holds every version; only the active ones are written back
            row["store"] = (
                meta.get("status", "active") == "active"
            )  # superseded, conflict, quarantined stay out
            row["reason"] = "cogx memory (memkit)" if row["store"] else f"status {meta.get('status')}"
    elif kind == "memory_block":  # Letta's core memory: a labelled slot, so a keyed fact
        row.update(
            key=_str_field(rec, "label", where),
            content=_str_field(rec, "value", where),
            kind="fact",
            tags=["memory_block"],
        )
    elif kind == "fact":  # a temporal fact: the text, or its triple spelled out
        text = _str_field(rec, "fact_text", where, optional=True) or " ".join(
            _str_field(rec, k, where) or "" for k in ("subject_ref", "predicate", "object_ref")
        )
        conf = rec.get("confidence")
        row.update(
            content=text,
            kind="fact",
            tags=["fact"],
            valid_from=utc_time(f"{where}.valid_at", rec.get("valid_at")),
            valid_until=utc_time(f"{where}.invalid_at", rec.get("invalid_at")),
        )
        if isinstance(conf, (int, float)) and not isinstance(conf, bool) and 0 <= conf <= 1:  # else default
            row["importance"] = float(conf)
    elif kind == "document":
        row.update(content=_str_field(rec, "content", where), kind="reference", tags=["document"])
    elif kind == "episode":  # a conversation: one episodic memory holding its turns
        turns = rec.get("turns")
        if not isinstance(turns, list) or not all(isinstance(t, Mapping) for t in turns):
            raise FormatError(f"{where}.turns", "must be a list of {role, content} objects")
        text = "\n".join(f"{_str_field(t, 'role', where)}: {_str_field(t, 'content', where)}" for t in turns)
        row.update(
            content=text or "(empty episode)",
            kind="event",
            layer="episodic",
            tags=["episode"],
            store=bool(turns),
        )
    else:  # entity: a graph node, not a memory
        row.update(content=_str_field(rec, "name", where), store=False, reason="cogx entity (graph node)")
    return row


def read_cogx(directory: str | Path, *, namespace: str | None = None) -> pl.DataFrame:
    """A COGX archive directory -> one row per record (see the module table), with ``store``,
    ``reason`` and ``record`` (``facts.jsonl line 2``) columns. The manifest's ``cogx_version`` must
    not be of a newer major version, and its ``counts`` (``{kind: records}``, as :func:`write_cogx`
    writes them), when it has them, must match the records of each kind memkit reads: a file missing
    or cut at a line's end is refused, nothing read.

    The frame goes to :func:`memkit.portable.adapters.add_frame`, which writes the rows whose
    ``store`` is true. Files of kinds the archive does not have are simply absent; blank lines are
    skipped; anything else that is not a JSON object in UTF-8 stops the read, naming file and line.
    """
    d = check_path("directory", directory)
    namespace = check_name("namespace", namespace, optional=True)  # the caller's: named as such
    if not (d / "manifest.json").is_file():
        raise FormatError("cogx", f"{str(directory)!r} has no manifest.json (not a COGX archive directory)")
    raw = (d / "manifest.json").read_bytes()
    try:
        manifest = loads(raw.decode("utf-8"), None, file="manifest.json")
    except UnicodeDecodeError as e:
        raise FormatError("manifest.json", f"is not UTF-8 ({e.reason} at byte {e.start})") from None
    version = manifest.get("cogx_version") if isinstance(manifest, Mapping) else None
    try:  # a newer minor version only adds: read it; a newer major version may change meanings
        newer = int(str(version).split(".")[0]) > int(COGX_VERSION.split(".")[0])
    except ValueError:
        raise FormatError("manifest.cogx_version", f"is not a version: {version!r}") from None
    if newer:
        raise FormatError("manifest.cogx_version", f"{version} is newer than this reader ({COGX_VERSION})")
    counts = manifest.get("counts")
    if counts is not None and not (isinstance(counts, Mapping) and all(
            type(v) is int and v >= 0 for v in counts.values())):  # fmt: skip
        raise FormatError("manifest.counts", "must be an object of record counts per kind ({'memory': 3})")
    rows, found = [], dict.fromkeys(_COGX_FILES, 0)
    for kind, name in _COGX_FILES.items():
        p = d / name
        if not p.is_file():
            continue
        with p.open("rb") as f:
            for n, text, _ in numbered(f, file=name):  # split on "\n" only, as JSONL is
                if not text.strip():
                    continue
                rec = loads(text, n, file=name)
                if not isinstance(rec, Mapping):
                    raise FormatError(f"{name} line {n}", "must be a JSON object")
                rows.append(_cogx_row(kind, rec, f"{name} line {n}", namespace))
                found[kind] += 1
    for kind, n in found.items():
        if counts is not None and kind in counts and counts[kind] != n:  # a truncated archive
            raise FormatError("manifest.counts", f"says {counts[kind]} {kind} records, {_COGX_FILES[kind]}"
                              f" has {n} (a missing or truncated file)")  # fmt: skip
    return records_frame(rows)
