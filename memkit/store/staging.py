"""A bulk write's index append, prepared while DuckDB writes the rest of its transaction.

The index mirrors a write only after its commit (:mod:`memkit.store.vectors`). When a batch grows the
index's columns (a bulk load into an empty store, and each doubling after), most of that append --
allocating the grown columns, copying the live rows into them, writing the new rows' own values
(vectors, which the int8 index quantizes, texts, enums, numbers, times, tags as tuples:
:meth:`IndexColumns.fill <memkit.store.index_columns.IndexColumns.fill>`) -- depends on nothing the
transaction decides. :func:`stage` does it on a second thread into a *shadow* of the index (a copy of its
attribute table: the grown arrays are the shadow's own, the index's are only read). The write starts it
once DuckDB has inserted the rows (the insert keeps both cores busy; the events that follow run on one)
and waits for it before its commit (:meth:`Staged.finish`): what the thread raised is raised there, in
the transaction, which rolls back. After the commit, :meth:`Staged.publish` hands the shadow's new
arrays to the index, provided the index has not changed since (the same rows, capacity and version;
the write holds the store's lock throughout, so nothing else changes it); else the append is made from
the start, as without a stage. A write that fails waits for the thread and drops the shadow: the index
never saw it. Measured at 1M rows (README, "Ingestion").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["STAGE_ROWS", "Staged", "stage"]

STAGE_ROWS = 8192
"""A write of this many rows or more that grows the index's columns has its append staged."""

Full = Callable[[dict[str, Any]], dict[str, Any]]  # rows as stored -> the columns the index takes


class Staged:
    """An append's first part under way on a thread of its own (see the module docstring)."""

    def __init__(
        self,
        index: Any,
        cols: dict[str, Any],
        emb: np.ndarray,
        full: Full,
    ) -> None:
        """Start :meth:`fill` of ``full(cols)`` (the columns as the index takes them) and ``emb``
        into a shadow of ``index``."""
        self.index, self.state = index, (index.n, index.cap, index.version)
        self.was = dict(index.__dict__)  # the index's attributes as the stage found them
        self.shadow = object.__new__(type(index))
        self.shadow.__dict__.update(self.was)
        self.cols: dict[str, Any] | None = None  # full(cols), once made
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(cols, emb, full), name="memkit-index-stage")
        self._thread.start()

    def _run(self, cols: dict[str, Any], emb: np.ndarray, full: Full) -> None:
        try:
            self.cols = full(cols)
            self.shadow.fill(self.cols, emb)
        except BaseException as e:  # raised on the write's thread by finish(), before the commit
            self.error = e

    def wait(self) -> None:
        """Until the thread has ended (a failed write waits too: nothing runs on after it)."""
        self._thread.join()

    def finish(self) -> None:
        """Wait for the thread; raise what it raised (in the write's transaction: rolled back)."""
        self.wait()
        if self.error is not None:
            raise self.error

    def columns(self) -> dict[str, Any] | None:
        """``full(cols)`` as the thread made it (None if it failed first), once it has ended."""
        self.wait()
        return self.cols

    def publish(self, index: Any) -> bool:
        """Hand the shadow's grown arrays to ``index`` -> True; False (nothing changed) when the
        stage failed or ``index`` is not the index it was made from, as it was then."""
        self.wait()
        if (
            self.error is not None
            or index is not self.index
            or (index.n, index.cap, index.version) != self.state
        ):
            return False
        # what the fill replaced (the grown columns, cap), not what the index holds now: nothing else
        was = self.was
        index.__dict__.update({k: v for k, v in self.shadow.__dict__.items() if was.get(k) is not v})
        return True


def stage(index: Any, cols: dict[str, Any], emb: np.ndarray, full: Full) -> Staged | None:
    """:class:`Staged` for an append of ``cols`` and ``emb`` to ``index``, when it pays: at least
    :data:`STAGE_ROWS` rows that grow the index's columns; else None (the append is made as it is)."""
    m = len(cols["id"])
    if m < STAGE_ROWS or index.n + m <= index.cap:
        return None
    return Staged(index, cols, emb, full)
