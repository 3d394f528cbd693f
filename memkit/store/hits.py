"""A search's result frame: one row per hit with its score components and stored columns, built at a
fixed cost (:meth:`memkit.store.search.SearchMixin.search`).

After the matrix product over a large index every cache is cold (the product streams the whole matrix
through them), and each Python-level call costs several times what it does warm: a frame of a few hits
is built from rows in one call (:func:`hit_frame`), a larger one as columns of a type built together
and cut in zero-copy slices. Both give the same frame (``tests/store/test_hit_frame.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ..schema import KINDS, LAYERS

__all__ = ["MAX_HITS", "ROWS_AT_MOST", "hit_frame", "texts_column"]

MAX_HITS = 10_000  # a search returns a few memories for a prompt, not the store (its k at most)
# hits built row by row (one call, whose cost grows with the rows); more as columns (a few calls per
# column, nearly flat): measured cold, rows won by ~0.1 ms at 5 hits and broke even near 64
ROWS_AT_MOST = 32
_UTC_US = pl.Datetime("us", "UTC")
_NO_TEXTS = pl.Series([[]], dtype=pl.List(pl.String))  # one empty list of texts
_RANKS = pl.Series("rank", np.arange(1, MAX_HITS + 1, dtype=np.int32))  # a search's ranks: a slice of these
_SCHEMAS: dict[tuple[Any, ...], dict[str, Any]] = {}  # _schema's, by components and pending
_TAIL = {"key": pl.String, "layer": pl.String, "kind": pl.String, "tags": pl.List(pl.String),
         "created_at": _UTC_US, "last_access_at": _UTC_US, "access_count": pl.Int64}  # fmt: skip


def _schema(comp: dict[str, np.ndarray], pending: list[list[str]] | None) -> dict[str, Any]:
    """The row-built frame's schema for these score components (and ``pending`` or not), made once."""
    at = (*comp, pending is None)
    schema = _SCHEMAS.get(at)
    if schema is None:  # (a few shapes: the weights' components, the guard's)
        schema = _SCHEMAS[at] = {"rank": pl.Int32, "id": pl.String, "content": pl.String,
                                 **dict.fromkeys(comp, pl.Float64), **_TAIL,
                                 **({} if pending is None else {"pending": pl.List(pl.String)})}  # fmt: skip
    return schema


def texts_column(name: str, values: list[list[str]]) -> pl.Series:
    """A ``List(String)`` column; when every list is empty (most hits' tags and pending notes) it
    repeats one empty list, a third of the time of building it from Python lists.

    >>> texts_column("tags", [[], []]).to_list(), texts_column("tags", [["a"], []]).to_list()
    ([[], []], [['a'], []])
    """
    if any(values):
        return pl.Series(name, values, pl.List(pl.String))
    return _NO_TEXTS.new_from_index(0, len(values)).alias(name)


def _cut(series: pl.Series, names: tuple[str, ...], n: int) -> list[pl.Series]:
    """``series`` of ``len(names) · n`` values -> its consecutive runs of ``n`` as columns ``names``
    (slices share its buffer: one series built instead of several).

    >>> [c.to_list() for c in _cut(pl.Series([1, 2, 3, 4]), ("a", "b"), 2)]
    [[1, 2], [3, 4]]
    """
    return [series.slice(i * n, n).alias(c) for i, c in enumerate(names)]


def hit_frame(
    ix: Any, rows: np.ndarray, comp: dict[str, np.ndarray], pending: list[list[str]] | None = None
) -> pl.DataFrame:
    """The hits ``rows`` of index ``ix``, best first -> ``rank, id, content, <comp: score,
    similarity, …>, key, layer, kind, tags, created_at, last_access_at, access_count[, pending]``
    (``pending`` when given: each hit's disputed versions)."""
    n = len(rows)
    keys, tags = ix.key[rows].tolist(), [list(t) for t in ix.tags[rows]]
    layers, kinds = [LAYERS[i] for i in ix.layer[rows].tolist()], [KINDS[i] for i in ix.kind[rows].tolist()]
    times = (ix.created_us[rows], ix.last_access_us[rows], ix.access_count[rows])  # int64 each
    if n <= ROWS_AT_MOST:  # one call, every column typed by a schema made once (the times' int64
        # microseconds read as the UTC datetimes they are: exact, no cast afterwards)
        cols = [range(1, n + 1), ix.ids[rows].tolist(), ix.content[rows].tolist(),
                *[v.tolist() for v in comp.values()], keys, layers, kinds, tags, *[t.tolist() for t in times],
                *([] if pending is None else [pending])]  # fmt: skip
        return pl.DataFrame(list(zip(*cols, strict=True)), schema=_schema(comp, pending), orient="row")
    S = pl.Series  # columns of a type built as one series, cut in zero-copy slices
    texts = S("", [*ix.ids[rows].tolist(), *ix.content[rows].tolist(), *keys, *layers, *kinds], pl.String)
    id_, content, key, layer_, kind_ = _cut(texts, ("id", "content", "key", "layer", "kind"), n)
    created, last, count = _cut(
        S("", np.concatenate(times)), ("created_at", "last_access_at", "access_count"), n
    )
    cols = [
        _RANKS.slice(0, n), id_, content,
        *_cut(S("", np.concatenate([*comp.values()], dtype=np.float64)), tuple(comp), n),
        key, layer_, kind_, texts_column("tags", tags),
        created.cast(_UTC_US), last.cast(_UTC_US), count,  # (a cast, not a query plan)
        *([] if pending is None else [texts_column("pending", pending)]),
    ]  # fmt: skip
    return cols[0].to_frame().hstack(cols[1:])  # side by side: a fifth of pl.DataFrame(list)'s checks
