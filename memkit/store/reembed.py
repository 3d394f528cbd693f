"""``reembed``: every stored vector recomputed with another embedder (or a newer version of this one),
in one transaction.

A file written by another embedder opens *stale*: readable (``frame``, ``get``, ``export``), but it
refuses writes and searches until :meth:`ReembedMixin.reembed` migrates it. Memories, lessons and the
embedding cache are rewritten and the file's embedder recorded; the dimension may change.

An erased lesson (:func:`~memkit.store.forgotten.erased_lessons`) is the exception: its text is
gone, so its vector cannot be recomputed, and embedding its placeholder ``[erased]`` would make it
hold every text about "erased" for review while the repeats it was learned for go through. Its stored
vector stays when it is already in the new embedder's space (the same name and dimension: the
embedder the file was written with, re-run); otherwise it is left *inert* (a zero vector, near
nothing: cosine 0) and ``reembed`` warns how many (a ``UserWarning``): a reviewer learns the lesson
anew from the next repeat, or ``unlearn``\\ s it.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl

from ..embed import Embedder
from ..errors import ValidationError
from .deferred import DeferredMixin
from .files import check_embedder
from .forgotten import erased_lessons
from .settable import refix

__all__ = ["ReembedMixin"]


def _swap_embedding(table: str, dim: int) -> list[str]:
    """Statements that give ``table`` (a constant: memories, lessons, embed_cache) a new embedding
    column of ``dim`` filled from the view ``_view`` (``id, embedding``)."""
    assert table in ("memories", "lessons", "embed_cache")
    return [
        f"ALTER TABLE {table} DROP COLUMN embedding",
        f"ALTER TABLE {table} ADD COLUMN embedding FLOAT[{int(dim)}]",
        f"UPDATE {table} t SET embedding = v.embedding FROM _view v WHERE t.id = v.id",
        f"ALTER TABLE {table} ALTER COLUMN embedding SET NOT NULL",
    ]


class ReembedMixin(DeferredMixin):
    """The migration of a store's vectors to another embedder."""

    def reembed(self, embedder: Embedder | None = None, *, batch_size: int = 4096) -> int:
        """Recompute every embedding with ``embedder`` (default: the store's) -> rows re-embedded.

        For a file written by another embedder, or an older version of this one (its name carries
        the version): such a file opens readable (``frame``, ``get``, ``export``) but refuses writes
        and searches until it is migrated. Memories, lessons and the embedding cache are rewritten
        and the file's embedder recorded, in one transaction: a failure changes nothing. The
        dimension may change. The CLI's ``memkit reembed --db FILE`` does the same. An erased
        lesson keeps its vector if it is the new embedder's already, else it is left inert, with a
        warning that counts them (see the module docstring).
        """
        check_embedder(self.embedder if embedder is None else embedder)  # as the constructor checks it
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValidationError("batch_size", f"must be an int >= 1, got {batch_size!r}")
        if self.read_only:
            raise ValidationError("read_only", "a read-only store cannot be re-embedded; reopen it writable")
        if self._depth:  # it replaces the embedder and the index, which a rollback could not restore
            raise ValidationError("reembed", "cannot run inside store.transaction(); call it on its own")
        with self._lock:
            was = self._stale or (self.embedder.name, self.embedder.dim)  # who made the stored vectors
            old = self.embedder
            refix(self, "embedder", embedder or old)  # the one way to another embedder (settable.Fixed)
            try:
                n, inert = self._reembed(int(batch_size), was == (self.embedder.name, self.embedder.dim))
            except BaseException:
                refix(self, "embedder", old)
                raise
        if inert:
            warnings.warn(
                f"reembed left {inert} erased lesson(s) inert: their text is gone, so {self.embedder.name}"
                " cannot embed it, and their vectors were another embedder's; they no longer hold"
                " repeats for review (learn the lesson anew from a repeat, or unlearn them)",
                UserWarning,
                stacklevel=2,
            )
        return n

    def _reembed(self, batch_size: int, same: bool) -> tuple[int, int]:
        """:meth:`reembed` with ``self.embedder`` already the new embedder (``same``: the one that made
        the stored vectors): compute every vector first (the slow part, outside any transaction),
        then swap the columns in one transaction -> (memories re-embedded, erased lessons left inert)."""
        dim = self.embedder.dim
        texts = self._sql("SELECT id, content FROM memories ORDER BY rowid")
        parts = [texts["content"][i : i + batch_size].to_list() for i in range(0, texts.height, batch_size)]
        made = [self._check_embeddings(self.embedder.embed(p), len(p), "embedder") for p in parts]
        emb = np.concatenate(made or [np.zeros((0, dim))]).astype(np.float32)  # (n, dim)
        lessons, les, inert = self._lesson_vectors(same)

        def write() -> None:
            """Replace the vectors of memories and lessons, empty the cache, record the embedder."""
            for table, ids, vectors in (("memories", texts["id"], emb), ("lessons", lessons, les)):
                new = pl.DataFrame(
                    {"id": ids, "embedding": vectors},
                    schema_overrides={"embedding": pl.Array(pl.Float32, dim)},
                )
                for statement in _swap_embedding(table, dim):  # the dimension may change
                    if statement.startswith("UPDATE"):
                        self._with_view(new.to_arrow(), statement)
                    else:
                        self._run(statement)
            self._run("DELETE FROM embed_cache")  # vectors of other embedders (their dim may differ)
            for statement in _swap_embedding("embed_cache", dim):
                if not statement.startswith("UPDATE"):
                    self._run(statement)
            for name, value in (("embedder", self.embedder.name), ("dim", dim)):
                self._run("INSERT OR REPLACE INTO meta VALUES (?, ?)", [name, str(value)])

        stale, self._stale = self._stale, None  # writable for this one transaction
        try:
            self._tx(write)
        except BaseException:
            self._stale = stale
            raise
        self._embed_query.cache_clear()  # cached query vectors are the old embedder's
        self._lesson_cache.clear()
        self._start_journal()  # writable now: replay what an earlier crash left, journal from here on
        self._load_index()
        return texts.height, inert

    def _lesson_vectors(self, same: bool) -> tuple[pl.Series, np.ndarray, int]:
        """Every lesson's vector under ``self.embedder`` -> ``(ids, (m, dim), erased lessons left inert)``:
        a lesson's text embedded; an erased lesson's stored vector if ``same`` (the embedder that made
        it), else zeros (near nothing)."""
        dim = self.embedder.dim
        order = self._lesson_order  # (they are few; embedded in their listing order)
        rows = self._sql(f"SELECT id, content, reason, embedding FROM lessons ORDER BY {order}")
        gone = np.asarray(erased_lessons(rows["content"].to_list(), rows["reason"].to_list()), bool)  # (m,)
        vectors = np.zeros((rows.height, dim), np.float32)  # (m, dim): an erased one stays zeros unless...
        if (~gone).any():
            said = rows["content"].filter(pl.Series(~gone)).to_list()
            vectors[~gone] = self._check_embeddings(self.embedder.embed(said), len(said), "embedder")
        if same and gone.any():  # ... its stored vector is this embedder's already
            vectors[gone] = np.stack(rows["embedding"].filter(pl.Series(gone)).to_numpy())
        return rows["id"], vectors, 0 if same else int(gone.sum())
