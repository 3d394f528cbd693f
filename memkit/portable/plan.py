"""The import plan: what happens to each line of a validated portable file (pure, no database).

``MemoryStore.import_`` reads a file (:func:`memkit.portable.jsonl.read`), asks the store which of
its ids are already stored, and calls :func:`plan_import` to decide, line by line, before anything
is written:

==============  =================================================================================
on_conflict     a line whose id is already in the store
==============  =================================================================================
``skip``        is left out (reported ``skipped``); the other lines are ``added``
``overwrite``   replaces the stored row (``overwritten``), in the same transaction as the rest (a
                row the store has since superseded stays superseded: the store decides that)
``new_ids``     every line gets a fresh id, so nothing collides; lineage inside the file follows
``error``       rejects the whole file, naming the first such line
==============  =================================================================================

Whatever ``on_conflict`` says, a line whose id the store erased, or a merge of such a member as it
was before the erasure, is left out as ``erased``: erasure is final.

A requester's lines keep only the lineage it can vouch for (:func:`unvouched`); :func:`approved` says
which rows a reviewer released in the file's history.

The plan returns the rows to write and a report, one row per line of the file, that the store
returns to the caller as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import polars as pl

from ..errors import ValidationError
from ..guard.names import SECRET_IN_NAME, secret_names
from ..params import GuardParams
from ..schema import check_choice, check_name
from .jsonl import ON_CONFLICT, Parsed
from .strictjson import fail

__all__ = ["approved", "check_map_holds", "check_namespace_map", "plan_import", "seen_from", "unvouched"]


def _holds_erased(cols: dict[str, list[Any]], i: int, erased: Mapping[str, datetime]) -> bool:
    """Row ``i`` is a merge one of whose members was erased after the row's last change."""
    changed = cols["updated_at"][i] if "updated_at" in cols else None
    return any(m in erased and (changed is None or changed < erased[m]) for m in cols["merged_from"][i])


def _renamed(cols: dict[str, list[Any]], remap: Mapping[str, str]) -> dict[str, list[Any]]:
    """``cols`` with the lines' ids renamed by ``remap``; lineage that points inside the file follows
    the new ids, ids outside it stay as they are."""
    cols = {**cols, "id": [remap.get(x, x) for x in cols["id"]]}
    cols["supersedes"] = [remap.get(x, x) for x in cols["supersedes"]]
    cols["merged_from"] = [[remap.get(x, x) for x in ms] for ms in cols["merged_from"]]
    return cols


def plan_import(
    data: Parsed,
    existing: set[str],
    on_conflict: str,
    namespace_map: dict[str, str],
    new_id: Callable[[], str],
    erased: Mapping[str, datetime] | None = None,
    rederived: Mapping[str, datetime] | None = None,
    foreign: Iterable[str] = (),
) -> tuple[Parsed, pl.DataFrame]:
    """Decide what happens to each line (pure) -> (the rows to write, a report frame ``line,
    source_id, id, namespace, action``).

    ``existing`` holds the file's ids already in the store. ``on_conflict``: ``skip`` leaves those
    lines out, ``overwrite`` replaces the stored rows, ``error`` rejects the file, ``new_ids`` gives
    every line a fresh id (``supersedes`` and ``merged_from`` inside the file follow). Namespaces are
    renamed by ``namespace_map``. ``erased`` maps ids the store erased (``delete``, ``forget``) to
    when: erasure is final, so a line with such an id, or a merge of such a member last changed
    before its erasure (its text may hold the member's; a merge re-derived after it does not), is
    left out as ``erased`` whatever ``on_conflict`` says. ``rederived`` maps the merges an erasure
    re-derived to when: a line of one, or of a merge holding one, last changed before that is an
    older version that held the erased text (a merge of merges), and is left out too. ``foreign``:
    ids of the file unknown to it (a requester's import: held or erased in another namespace than
    the line's), each given a fresh id as ``new_ids`` would (lineage inside the file follows), so the
    line is ``added`` whatever ``on_conflict`` says.

    >>> data = Parsed({}, {"id": ["a", "b"], "namespace": ["u", "u"]}, [2, 3])
    >>> rows, report = plan_import(data, {"a"}, "skip", {"u": "v"}, lambda: "new")
    >>> rows.columns, report["action"].to_list()
    ({'id': ['b'], 'namespace': ['v']}, ['skipped', 'added'])
    """
    check_choice("on_conflict", on_conflict, ON_CONFLICT)
    cols = data.columns
    source = ids = cols["id"]  # the file's ids (the report's source_id); `ids`: as the plan knows them
    if foreign := set(foreign) & set(ids):  # another namespace's id is not this line's: a fresh one
        cols = _renamed(cols, {x: new_id() for x in ids if x in foreign})
        ids, existing = cols["id"], existing - foreign
    gone: set[int] = set()
    if erased or rederived:  # (a store that never erased anything costs no pass over the lines)
        before = {**(rederived or {}), **(erased or {})}  # a member changed since: the line is older
        changed = cols["updated_at"] if "updated_at" in cols else [None] * len(ids)
        gone = {
            i for i, x in enumerate(ids)
            if (erased and x in erased) or _holds_erased(cols, i, before)
            or (rederived and x in rederived and (changed[i] is None or changed[i] < rederived[x]))
        }  # fmt: skip
    if on_conflict == "error" and existing:
        row = next(i for i, x in enumerate(ids) if x in existing)
        raise fail(data.lines[row], "id", f"{ids[row]!r} is already in the store (on_conflict='error')")
    if on_conflict == "new_ids":
        cols = _renamed(cols, {x: new_id() for x in ids})
        existing = set()
    keep = [i for i, x in enumerate(ids) if not (on_conflict == "skip" and x in existing) and i not in gone]
    # subtle: the lists are copied only when a line is dropped; otherwise the plan shares them with data
    cols = {c: [v[i] for i in keep] if len(keep) < len(ids) else v for c, v in cols.items()}
    cols["namespace"] = [namespace_map.get(x, x) for x in cols["namespace"]]
    stays = on_conflict == "skip" and bool(existing)  # a line of a stored id is skipped: not brought back
    action = ["erased" if i in gone and not (stays and x in existing) else "skipped"
              for i, x in enumerate(ids)]  # fmt: skip
    for i in keep:
        action[i] = "overwritten" if ids[i] in existing else "added"
    new_pos = {i: j for j, i in enumerate(keep)}  # line index in the file -> row index to write
    events = [(new_pos[r], *rest) for r, *rest in data.events if r in new_pos]
    report = pl.DataFrame(
        {
            "line": data.lines,
            "source_id": source,
            "id": [cols["id"][new_pos[i]] if i in new_pos else source[i] for i in range(len(ids))],
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
    emb = data.embeddings[keep] if data.embeddings is not None else None  # (kept, dim)
    return Parsed(data.header, cols, [data.lines[i] for i in keep], emb, events, data.lessons), report


Tombstones = list[tuple[str, str | None, datetime]]
"""``(memory id, namespace as the audit log names it, when)``: the store's erasures of the file's ids."""


def seen_from(
    ids: list[str],
    namespaces: list[str],
    existing: Mapping[str, str],
    erased: Tombstones,
    rederived: Tombstones,
    log_space: Callable[[str], str | None] | None,
) -> tuple[dict[str, datetime], dict[str, datetime], set[str]]:
    """What an import heeds of the store -> (``erased``, ``rederived``: id -> when, for
    :func:`plan_import`; ``foreign``: the lines' ids it treats as unknown).

    ``ids`` and ``namespaces`` are the file's lines (namespaces as mapped), ``existing`` the file's
    stored ids -> their namespace. ``log_space`` None: the operator's import, which sees the whole
    store (every tombstone counts; an id held in another namespace is a stored one: ``skip`` skips
    it, ``overwrite`` is refused). Else a requester's, which sees its lines' namespaces only, as
    ``get(id, namespace=)`` does (NotFound): a tombstone of another namespace is not heeded, and a line
    whose id is held, or was erased, in another namespace than its own is ``foreign`` (a fresh id,
    ``added``), so the import tells nothing of other namespaces. ``log_space``: a namespace as the log
    names it (a pseudonym when it holds a secret).

    >>> erased, rederived, foreign = seen_from(["a", "b"], ["eve", "eve"], {"a": "alice"},
    ...                                        [("b", "alice", 1)], [], str)
    >>> erased, rederived, sorted(foreign)
    ({}, {}, ['a', 'b'])
    """
    logged = None if log_space is None else {n for ns in set(namespaces) for n in (ns, log_space(ns))}

    def heeded(rows: Tombstones) -> dict[str, datetime]:
        """The tombstones of the lines' namespaces as the log may name them (the operator's: all),
        the latest when one id has several."""
        out: dict[str, datetime] = {}
        for x, ns, ts in rows:
            if (logged is None or ns in logged) and (x not in out or out[x] < ts):
                out[x] = ts
        return out

    if log_space is None:
        return heeded(erased), heeded(rederived), set()

    where: dict[str, set[str | None]] = {}  # an erased id -> the namespaces (as logged) it was erased in
    for x, ns, _ts in erased:
        where.setdefault(x, set()).add(ns)
    foreign = {
        x for x, ns in zip(ids, namespaces, strict=True)
        if (existing[x] != ns if x in existing else x in where and not where[x] & {ns, log_space(ns)})
    }  # fmt: skip
    return heeded(erased), heeded(rederived), foreign


def unvouched(
    cols: dict[str, list[Any]], namespaces: list[str], readable: Callable[[list[str]], Mapping[str, str]]
) -> int:
    """Drop, in place, the lineage a requester's lines name that it cannot vouch for -> how many ids.

    A line's ``supersedes`` or ``merged_from`` may name a line of the file, or a memory of the line's
    own (mapped) namespace the requester may read (``readable(ids)``: those of ``ids`` it may read ->
    their namespace; asked once, of the ids outside the file only); any other id —
    another namespace's, one kept from it, an erased one, a made-up one, all alike — is dropped, so no
    link to what it may not read is stored and the import's answer tells nothing of such an id.

    >>> cols = {"id": ["a"], "supersedes": ["x"], "merged_from": [["b", "y"]]}
    >>> unvouched(cols, ["u"], lambda ids: {"b": "u", "x": "v"}), cols["supersedes"], cols["merged_from"]
    (2, [None], [['b']])
    """
    own = set(cols["id"])
    named = {x for x in cols["supersedes"] if x is not None} | {m for ms in cols["merged_from"] for m in ms}
    if not (asked := sorted(named - own)):
        return 0
    found = readable(asked)

    def ok(x: str, ns: str) -> bool:
        return x in own or found.get(x) == ns

    sup, merged = list(cols["supersedes"]), list(cols["merged_from"])
    dropped = 0
    for i, ns in enumerate(namespaces):  # a requester's file: its own few lines
        if sup[i] is not None and not ok(sup[i], ns):
            sup[i], dropped = None, dropped + 1
        if merged[i] and not all(ok(m, ns) for m in merged[i]):
            kept = [m for m in merged[i] if ok(m, ns)]
            merged[i], dropped = kept, dropped + len(merged[i]) - len(kept)
    cols["supersedes"], cols["merged_from"] = sup, merged
    return dropped


def check_namespace_map(value: Any, guard: GuardParams | None = None) -> dict[str, str]:
    """``{"old": "new"}`` with valid namespace names on both sides (None -> {}); a new name must hold
    no secret by the default rules plus ``guard``'s extra secret patterns (the importing store's).

    >>> check_namespace_map({"alice": "alice-2026"}), check_namespace_map(None)
    ({'alice': 'alice-2026'}, {})
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError("namespace_map", f"must be a dict of str to str, got {type(value).__name__}")
    out = {check_name("namespace_map", k): check_name("namespace_map", v) for k, v in value.items()}
    if secret_names(out.values(), guard):  # the rows would be written there: refused here, naming the map
        raise ValidationError("namespace_map", f"maps to a namespace that {SECRET_IN_NAME}")
    return out


def check_map_holds(namespace_map: Mapping[str, str], namespaces: Iterable[str]) -> None:
    """ValidationError naming ``namespace_map`` when one of its old names is not among the
    ``namespaces`` a file holds: a typo (``ul`` for ``u1``) would otherwise import the file into its
    own namespaces, silently. Checked before anything is written.

    >>> check_map_holds({"u1": "alice"}, ["u1", "u2"])
    >>> check_map_holds({"ul": "alice"}, ["u1", "u2"])
    Traceback (most recent call last):
    ...
    memkit.errors.ValidationError: namespace_map: 'ul': the file holds no such namespace (nothing ...
    """
    held = set(namespaces)
    if missing := [old for old in namespace_map if old not in held]:
        raise ValidationError(
            "namespace_map", f"{missing[0]!r}: the file holds no such namespace (nothing was imported)"
        )


def approved(events: list[tuple[Any, ...]]) -> list[int]:
    """Rows whose history (oldest first) ends its review with ``approve``: a reviewer released them
    after the guard held them, so the guard's quarantine verdict on import does not hold them again
    (its findings are still recorded; a secret is still refused)."""
    last = {r: op for r, _ts, op, _who, _detail in events if op in ("approve", "quarantine")}
    return sorted(r for r, op in last.items() if op == "approve")
