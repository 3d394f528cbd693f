"""What a portable file carries besides the memories' rows: their vectors and the guard's lessons.

Called by :mod:`memkit.store.portable` (``export`` / ``import_``); the files themselves are
:mod:`memkit.portable.jsonl` and :mod:`memkit.portable.lessons`.

- **Vectors.** A file's embeddings are reused when its embedder is the store's (and ``reembed`` is
  not asked). An all-zero vector is reused only where the store's embedder gives the line's text a
  zero vector too (a text without words, ``"!!!"``): otherwise it is an edited or corrupted line that
  would make the memory match nothing, and the import is refused (FormatError naming the line).
- **Lessons.** An operator's export writes every lesson of what it exports (namespace as rows name
  it: the log's pseudonym of a namespace holding a secret is written as the namespace itself). An
  operator's import brings them back (:func:`memkit.portable.lessons.plan_lessons` decides which),
  each text and reason screened as ``learn_lesson`` screens a reason: a secret refuses the file,
  PII is redacted; the injection the text holds is what a lesson is for, so it stays. A lesson of a
  memory this store erased, or of a merge an erasure here re-derived (its old text held the erased
  one), comes in erased (``[erased]``, its vector only); a lesson whose id is stored already is
  skipped whatever ``on_conflict`` says (``new_ids`` included: no copy of it, erased or not). The
  vector is the file's when it may be reused (the text unchanged), else the text's embedding; an
  erased lesson with no usable vector is left *inert* (zeros: near nothing), with a warning, as
  ``reembed`` leaves one.
  Each lesson written gets a ``lesson`` event (``action: "import"``); they commit with the rows.
"""

from __future__ import annotations

import warnings
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..embed import l2_normalize
from ..guard import screen, secret_names
from ..params import GuardParams
from ..portable.jsonl import Parsed
from ..portable.lessons import LESSON_FIELDS, plan_lessons
from ..portable.rows import new_id
from ..portable.strictjson import fail
from .forgotten import ERASED, erased_lessons
from .guard import GuardMixin
from .names import log_names
from .vectors import ZERO_VECTOR, points

__all__ = ["CarriedMixin"]

_REPORT = {
    "line": pl.Int64,
    "source_id": pl.String,
    "id": pl.String,
    "namespace": pl.String,
    "action": pl.String,
}
_INSERT = (
    "INSERT INTO lessons (id, namespace, memory_id, content, reason, requester, created_at, embedding)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)  # (the columns of LESSON_FIELDS, then the vector)
_STORED = "SELECT id FROM lessons WHERE id IN (SELECT unnest(?::VARCHAR[]))"
_UNLEARNED = (  # the lessons of ? a reviewer dropped here (unlearn): a backup does not bring them back
    "SELECT DISTINCT detail->>'lesson' FROM events WHERE op = 'lesson' AND detail->>'action' = 'unlearn'"
    " AND detail->>'lesson' IN (SELECT unnest(?::VARCHAR[]))"
)


def _as_stored(vectors: np.ndarray) -> np.ndarray:
    """A file's vectors ``(n, dim)`` as the store keeps them: unit length (zero stays zero), float32."""
    norms = np.linalg.norm(vectors, axis=1)  # (n,)
    # subtle: re-normalizing a unit vector can move its last bits; keep stored ones exact
    unit = (np.abs(norms - 1.0) < 1e-5) | (norms == 0)
    return np.where(unit[:, None], vectors, l2_normalize(vectors)).astype(np.float32)


class CarriedMixin(GuardMixin):
    """The vectors and lessons of ``export`` and ``import_`` (see the module docstring)."""

    def _export_lessons(
        self, namespace: str | None, spaces: list[str], with_vectors: bool
    ) -> tuple[pl.DataFrame, np.ndarray | None]:
        """The lessons of ``namespace`` (or all), oldest first, and their vectors ``(m, dim)`` when
        ``with_vectors``; a lesson stored under the log's pseudonym of one of ``spaces`` (the
        namespaces the file holds) is named by it."""
        names = None if namespace is None else log_names(namespace)
        cols = ", ".join(LESSON_FIELDS) + (", embedding" if with_vectors else "")
        t = self._sql(
            f"SELECT {cols} FROM lessons WHERE (?::VARCHAR[] IS NULL OR namespace IN"
            f" (SELECT unnest(?::VARCHAR[]))) ORDER BY {self._lesson_order}",  # an import keeps the order
            [names, names],
        )
        back = {log_names(ns)[1]: ns for ns in {*spaces, *([namespace] if namespace else [])}}
        t = t.with_columns(pl.col("namespace").replace(back))
        vectors = (
            np.stack(t["embedding"].to_numpy()).astype(np.float32) if with_vectors and t.height else None
        )
        return t.drop("embedding", strict=False), vectors

    def _carried_vectors(self, data: Parsed, reembed: bool) -> np.ndarray | None:
        """The file's memory vectors ``(n, dim)`` normalized, when they may be reused (else None: the
        pipeline embeds the texts); an all-zero one only where this store's embedder agrees."""
        if data.embeddings is None or reembed or not self._same_embedder(data):
            return None
        if (bad := self._lying_zeros(data.embeddings, data.columns["content"])).size:
            raise fail(data.lines[bad[0]], "embedding", ZERO_VECTOR)  # the text has a direction: it lies
        return _as_stored(data.embeddings)

    def _same_embedder(self, data: Parsed) -> bool:
        """Whether the file's vectors were made by this store's embedder (name and dimension)."""
        return data.header["embedder"] == {"name": self.embedder.name, "dim": self.embedder.dim}

    def _taught(
        self, data: Parsed, nsmap: dict[str, str], on_conflict: str, requester: str | None,
        remap: dict[str, str], erased: dict[str, Any], rederived: dict[str, Any], reembed: bool,
    ) -> tuple[list[dict[str, Any]], pl.DataFrame]:  # fmt: skip
        """The file's lessons to write, screened and with their vectors, and their report rows
        (``learned``, ``inert`` or ``skipped``). Nothing is written here."""
        if not data.lessons:
            return [], pl.DataFrame(schema=_REPORT)
        ids = [x["id"] for x in data.lessons]
        stored, unlearned = ({r[0] for r in self._run(q, [ids])} for q in (_STORED, _UNLEARNED))
        # of a memory erased here, or of a merge an erasure re-derived here (as deleting does to its lessons)
        gone = {x["line"] for x in data.lessons if x["memory_id"] in erased or x["memory_id"] in rederived}
        planned = plan_lessons(data.lessons, stored=stored, unlearned=unlearned, namespace_map=nsmap,
                               operator=requester is None, remap=remap,
                               new_id=new_id if on_conflict == "new_ids" else None)  # fmt: skip
        kept = [x for x in planned if x["action"] == "learned"]
        rules = self.guard if self.guard.enabled else GuardParams()  # as learn_lesson screens a reason
        reuse = (
            data.header.get("embedding_encoding") is not None and not reembed and self._same_embedder(data)
        )
        todo: list[int] = []  # kept lessons whose text this store embeds
        zeros: set[int] = set()  # ... of them, those the file gave a zero vector: the text's must be zero too
        for j, x in enumerate(kept):
            if x["line"] in gone:  # erasure is final: the text and the reviewer's words about it stay out
                x["content"] = x["reason"] = ERASED
            said = {}
            for name in ("content", "reason"):
                s = screen(x[name], rules)
                if "secret" in s.findings["kind"].to_list() or secret_names([x[name]], self.guard):
                    raise fail(
                        x["line"], f"lesson.{name}", "holds a secret (a key, a password): nothing imported"
                    )
                said[name] = s.text  # PII redacted
            unchanged = said["content"] == x["content"]
            x.update(said)
            empty = erased_lessons([x["content"]], [x["reason"]])[0] or x["line"] in gone  # no text to embed
            vec = x["embedding"] if reuse and (unchanged or empty) else None
            if vec is not None and (points(vec[None, :])[0] or empty):
                x["vector"] = _as_stored(vec[None, :])[0]  # (an inert one stays zero)
            elif empty:
                x["vector"], x["action"] = np.zeros(self.embedder.dim, np.float32), "inert"
            else:
                todo.append(j)
                if vec is not None:
                    zeros.add(j)
        if todo:
            made = self._check_embeddings(self.embedder.embed([kept[j]["content"] for j in todo]), len(todo))
            for j, v in zip(todo, made, strict=True):
                if j in zeros and points(v[None, :])[0]:
                    raise fail(kept[j]["line"], "lesson.embedding", ZERO_VECTOR)
                kept[j]["vector"] = v
        if inert := sum(x["action"] == "inert" for x in kept):
            warnings.warn(
                f"import left {inert} erased lesson(s) inert: their text is gone and the file carries no"
                f" vector of {self.embedder.name} for them (export with embeddings from a store of this"
                " embedder to keep them), so a repeat is not held for review",
                UserWarning,
                stacklevel=4,
            )
        report = pl.DataFrame(
            [{"line": x["line"], "source_id": x["source_id"], "id": x["id"], "namespace": x["namespace"],
              "action": x["action"]} for x in planned],
            schema=_REPORT,
        )  # fmt: skip
        return kept, report

    def _write_lessons(self, kept: list[dict[str, Any]], now: datetime, requester: str | None) -> None:
        """Insert ``kept`` (from :meth:`_taught`) and a ``lesson`` event each; inside the import's
        transaction. The lessons' cache is emptied now and again after the commit."""
        for x in kept:
            self._run(
                _INSERT,
                [x["id"], self._log_space(x["namespace"]), x["memory_id"], x["content"], x["reason"],
                 x["requester"], x["created_at"], x["vector"].tolist()],
            )  # fmt: skip
            moved = {"source_id": x["source_id"]} if x["source_id"] != x["id"] else {}
            self._event(now, "lesson", x["namespace"], x["memory_id"], requester, lesson=x["id"],
                        action="import", **moved)  # fmt: skip
        if kept:
            self._lesson_cache.clear()
            self._on_commit(self._lesson_cache.clear)
