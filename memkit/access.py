"""The access rule, in three equivalent forms: a numpy mask, a polars expression and a SQL predicate.

DESIGN.md's rule, for a requester reading a memory in its namespace:

- ``public``    — anyone may read it;
- ``protected`` — only its ``owner`` (the module that owns it);
- ``private``   — only its ``created_by`` (the writer).

``requester=None`` is the store operator (notebooks, maintenance) and reads everything. Changing or
erasing a memory needs more than reading it: the operator, its owner or its creator.

>>> import numpy as np
>>> readable_mask(np.array(["public", "protected", "private"]), np.array(["a", "a", "b"]),
...               np.array(["x", "x", "x"]), requester="a").tolist()
[True, True, False]
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["SQL_READABLE", "can_modify", "can_read", "readable_expr", "readable_mask"]


def readable_mask(
    access: np.ndarray,
    owner: np.ndarray,
    created_by: np.ndarray,
    requester: object | None,
    levels: dict[str, object] | None = None,
) -> np.ndarray:
    """Boolean mask of the rows ``requester`` may read (shapes ``(n,)`` -> ``(n,)``).

    The arrays may hold names, or integer codes: then ``owner``/``created_by``/``requester`` use one
    encoding and ``levels`` maps "public", "protected", "private" to the codes used in ``access``.
    """
    if requester is None:
        return np.ones(len(access), dtype=bool)
    lv = levels or {"public": "public", "protected": "protected", "private": "private"}
    return (
        (access == lv["public"])
        | ((access == lv["protected"]) & (owner == requester))
        | ((access == lv["private"]) & (created_by == requester))
    )


def readable_expr(requester: str | None) -> pl.Expr:
    """The same rule as a polars expression over columns ``access``, ``owner``, ``created_by``."""
    if requester is None:
        return pl.lit(True)
    a = pl.col("access")
    return (
        (a == "public")
        | ((a == "protected") & (pl.col("owner") == requester)).fill_null(False)
        | ((a == "private") & (pl.col("created_by") == requester)).fill_null(False)
    )


def modifiable_expr(requester: str | None) -> pl.Expr:
    """:func:`can_modify` as a polars expression over columns ``owner``, ``created_by``."""
    if requester is None:
        return pl.lit(True)
    return ((pl.col("owner") == requester) | (pl.col("created_by") == requester)).fill_null(False)


# One SQL predicate with three parameters: (requester, requester, requester). NULL requester = operator.
SQL_READABLE = (
    "(? IS NULL OR access = 'public' OR (access = 'protected' AND owner = ?)"
    " OR (access = 'private' AND created_by = ?))"
)


def can_read(access: str, owner: str | None, created_by: str | None, requester: str | None) -> bool:
    """Scalar form of the rule, for one memory."""
    if requester is None or access == "public":
        return True
    if access == "protected":
        return owner == requester
    return created_by == requester


def can_modify(owner: str | None, created_by: str | None, requester: str | None) -> bool:
    """May ``requester`` change or erase a memory? The operator, its owner or its creator."""
    return requester is None or requester in (owner, created_by)
