"""The guard's lessons in a portable file: one line each, after the memories (format version 2).

A lesson is a text a reviewer confirmed bad (``MemoryStore.learn_lesson``): later writes near it are
quarantined. It is guard state, not a memory, so a backup that left it behind would let the copy
store a repeat the original holds for review. An operator's export therefore writes every lesson of
what it exports as a line of its own::

    {"lesson": {"id": "…", "namespace": "u1", "memory_id": "…", "content": "Buy cheap pills…",
                "reason": "spam", "requester": null, "created_at": "2026-01-01T00:00:00.000000Z",
                "embedding": "…"}}

``embedding`` is there exactly when the file carries the memories' embeddings (the header's
``embedding_encoding``). A file with lessons is written as version 2 (its header's ``counts`` has
``lessons``), so an older memkit refuses it ("upgrade memkit") rather than misreading it; a file
without lessons stays version 1, readable by every memkit.

Reading checks each lesson as strictly as a memory line (:func:`parse_lesson`, FormatError naming the
line and ``lesson.<field>``); what an import then does with each one is :func:`plan_lessons` (pure),
and the store screens the texts and writes them (:mod:`memkit.store.carried`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from datetime import UTC
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..guard.names import SECRET_IN_NAME, holds_secret
from ..params import GuardParams
from ..schema import check_name, check_text
from .fields import parse_embedding, parse_time
from .ids import check_id, refuse_flagged
from .strictjson import fail

__all__ = [
    "LESSON_FIELDS", "LESSONS_VERSION", "check_lessons", "first_repeat", "lesson_line", "parse_lesson",
    "plan_lessons",
]  # fmt: skip

LESSON_FIELDS = ("id", "namespace", "memory_id", "content", "reason", "requester", "created_at")
"""A lesson's fields as a file carries them (the ``lessons`` table's columns but its embedding)."""
LESSONS_VERSION = 2  # the first format version whose files may carry lesson lines
REASON_CHARS = 1000  # a reviewer's reason, at most (as learn_lesson takes it)


def lesson_line(row: Mapping[str, Any], embedding: np.ndarray | None) -> dict[str, Any]:
    """One lesson (a row of the ``lessons`` table) -> its line's object; ``embedding`` ``(dim,)``
    as memory lines carry theirs (little-endian float32, base64), or None for none."""
    out = {k: row[k] for k in LESSON_FIELDS}
    out["created_at"] = (
        row["created_at"].astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    )
    if embedding is not None:
        out["embedding"] = base64.b64encode(np.asarray(embedding).astype("<f4").tobytes()).decode("ascii")
    return {"lesson": out}


def parse_lesson(
    v: Any, line: int, dim: int, with_embedding: bool, guard: GuardParams | None = None
) -> dict[str, Any]:
    """A lesson line's object (the value of its ``"lesson"`` key) -> its fields as the store keeps
    them, plus ``line`` and ``embedding`` (``(dim,)`` float32, or None), or FormatError naming the
    line and ``lesson.<field>``: exactly :data:`LESSON_FIELDS` (and ``embedding`` when the file
    carries embeddings), ids of an identifier's shape, names and texts as the store's validators
    take them, a reason of 1000 characters at most, a requester holding no secret (the default rules
    plus ``guard``'s patterns), an aware time. The texts are screened later, by the importing store.
    """
    expected = set(LESSON_FIELDS) | ({"embedding"} if with_embedding else set())
    if not isinstance(v, dict):
        raise fail(line, "lesson", "must be a JSON object")
    if v.keys() != expected:
        extra, missing = (
            sorted(set(v) - expected),
            [k for k in (*LESSON_FIELDS, "embedding") if k in expected - set(v)],
        )
        raise fail(line, f"lesson.{extra[0]}", "is not a lesson field") if extra else fail(
            line, f"lesson.{missing[0]}", "is missing")  # fmt: skip
    try:
        out = {
            "id": check_id("id", v["id"]),
            "namespace": check_name("namespace", v["namespace"]),
            "memory_id": check_id("memory_id", v["memory_id"]),
            "content": check_text("content", v["content"]),
            "reason": check_text("reason", v["reason"], max_chars=REASON_CHARS),
            "requester": check_name("requester", v["requester"], optional=True),
            "created_at": parse_time("created_at", v["created_at"]),
        }
        if out["created_at"] is None:
            raise ValidationError("created_at", "must not be null")
        if out["requester"] is not None and holds_secret(out["requester"], guard):  # kept as it is
            raise ValidationError("requester", SECRET_IN_NAME)
    except ValidationError as e:
        raise fail(line, f"lesson.{e.field}", str(e)[len(e.field) + 2 :]) from None
    out["embedding"] = (
        parse_embedding(v["embedding"], dim, line, "lesson.embedding") if with_embedding else None
    )
    return {**out, "line": line}


def plan_lessons(
    lessons: list[dict[str, Any]],
    *,
    stored: set[str],
    unlearned: set[str],
    namespace_map: Mapping[str, str],
    operator: bool,
    remap: Mapping[str, str] | None = None,
    new_id: Callable[[], str] | None = None,
) -> list[dict[str, Any]]:
    """What an import does with each lesson of a file (pure) -> the lessons, each with ``action``
    (``learned`` or ``skipped``), ``source_id`` and its ``id``, ``namespace`` and ``memory_id`` in
    the store.

    A lesson is ``skipped`` when the import is not the operator's (``operator`` False: lessons are
    the reviewers' record, and a requester's import replays no history either), when its id is
    already ``stored`` (a lesson is never overwritten nor copied, whatever ``on_conflict`` says: the
    store's own, erased text included, stands, and a copy under a fresh id would add a duplicate, or
    bring back the text an erasure took out of the stored one) or when the store ``unlearned`` it (a
    reviewer called it wrong: a backup does not undo that). Namespaces follow ``namespace_map``;
    with ``new_id`` (``on_conflict="new_ids"``) every lesson it learns gets a fresh id and its
    ``memory_id`` follows ``remap`` (the file's ids -> the new ones).

    >>> les = [{"id": f"l{i}", "namespace": "u", "memory_id": f"m{i}"} for i in (1, 2)]
    >>> [(x["action"], x["namespace"]) for x in plan_lessons(les, stored={"l2"}, unlearned=set(),
    ...                                                       namespace_map={"u": "v"}, operator=True)]
    [('learned', 'v'), ('skipped', 'v')]
    """
    out = []
    for les in lessons:
        skip = not operator or les["id"] in unlearned or les["id"] in stored
        out.append({
            **les,
            "source_id": les["id"],
            "id": new_id() if new_id is not None and not skip else les["id"],
            "namespace": namespace_map.get(les["namespace"], les["namespace"]),
            "memory_id": (remap or {}).get(les["memory_id"], les["memory_id"]),
            "action": "skipped" if skip else "learned",
        })  # fmt: skip
    return out


def first_repeat(ids: list[str], lines: list[int]) -> tuple[int, str, int] | None:
    """The first id that repeats an earlier one -> ``(its line, the id, the earlier line)``, or None.

    >>> first_repeat(["a", "b", "a"], [5, 6, 7])
    (7, 'a', 5)
    """
    first: dict[str, int] = {}
    for x, n in zip(ids, lines, strict=True):
        if x in first:
            return n, x, first[x]
        first[x] = n
    return None


def check_lessons(lessons: list[dict[str, Any]], expected: int, guard: GuardParams | None = None) -> None:
    """The lessons of a whole file: as many as its header counts (``expected``), each id once, no
    id the guard flags (the default rules plus ``guard``'s patterns, as for a memory's ids)."""
    if expected != len(lessons):
        raise fail(1, "counts", f"the header says {expected} lessons, the file has {len(lessons)}")
    lines = [x["line"] for x in lessons]
    if hit := first_repeat([x["id"] for x in lessons], lines):
        raise fail(hit[0], "lesson.id", f"{hit[1]!r} repeats the id of the lesson in line {hit[2]}")
    # ids are stored as they are, never text: judged by the guard as a memory's are (ids.py)
    refuse_flagged({f"lesson.{k}": [x[k] for x in lessons] for k in ("id", "memory_id")}, lines, guard)
