"""Values -> small integer codes, as the search index keeps its names and enum columns
(:mod:`memkit.store.index_columns`): vectorized, so that a bulk write's million rows are coded in C;
its time unit (µs since the epoch) and the code of an erased row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["DELETED", "US_PER_HOUR", "Codes", "among", "coded", "enum_codes"]

DELETED = -1  # status code of an erased row (the row stays so that row numbers never shift)
US_PER_HOUR = 3.6e9  # microseconds per hour: the columns' time unit (epoch µs) -> the decay formulas' unit


class Codes:
    """Interned names -> int32 codes; code 0 is None.

    >>> c = Codes(); c.encode(["alice", None, "bob", "alice"]).tolist(), c.lookup("carol")
    ([1, 0, 2, 1], -2)
    """

    def __init__(self) -> None:
        """An empty table: only None is known (code 0)."""
        self.code: dict[str | None, int] = {None: 0}

    def encode(self, values: Sequence[str | None]) -> np.ndarray:
        """Names -> their codes ``(len(values),)`` int32; a name seen for the first time gets the next."""
        return coded(values, self.code, grow=True)

    def lookup(self, value: str | None) -> int:
        """Code of a name, or -2 (matches nothing) if never seen."""
        return self.code.get(value, -2)

    def forget(self, values: Sequence[str]) -> None:
        """Drop names no row uses any more (an erased memory's tags): each leaves the table, and its
        code is held by a placeholder (``("erased", code)``, never equal to a name), so it is not
        given again and the codes still in the columns keep their meaning.

        >>> c = Codes(); _ = c.encode(["a", "b"]); c.forget(["a"]); c.lookup("a"), c.encode(["c"]).tolist()
        (-2, [3])
        """
        for v in values:
            if v is not None and v in self.code:
                code = self.code.pop(v)
                self.code[("erased", code)] = code  # type: ignore[index]


def among(column: np.ndarray, codes: list[int]) -> np.ndarray:
    """``column`` (int8 enum codes) is one of ``codes`` -> bool mask. One compare per code: over a
    million rows ``np.isin`` with one code costs ~20 ms, ``==`` ~1 ms.

    >>> among(np.array([0, 1, 2], np.int8), [0, 2]).tolist()
    [True, False, True]
    """
    if len(codes) == 1:  # (a search's one status: the compare alone)
        return column == codes[0]
    hit = np.zeros(column.shape, dtype=bool)
    for c in codes:
        hit |= column == c
    return hit


def enum_codes(values: Sequence[str], choices: tuple[str, ...]) -> np.ndarray:
    """Enum values -> their positions in ``choices`` as int8 (``("active",)`` -> ``[0]``)."""
    return coded(values, {c: i for i, c in enumerate(choices)}, dtype=np.int8)


def coded(
    values: Sequence[Any], code: dict[Any, int], *, grow: bool = False, dtype: Any = np.int32
) -> np.ndarray:
    """``values`` -> ``code[v]`` each, as ``dtype``; ``grow`` gives an unseen value the next code.
    A batch holds few distinct names and statuses: they are found in C (``dict.fromkeys``), and a
    column of one value (a bulk write's namespace, author, status) is filled, not looked up per row."""
    one = isinstance(values, list) and len(values) > 0 and values.count(values[0]) == len(values)  # in C
    distinct = {values[0]: None} if one else dict.fromkeys(values)
    if grow:
        for v in distinct:
            code.setdefault(v, len(code))
    if len(distinct) == 1:
        return np.full(len(values), code[next(iter(distinct))], dtype)
    return np.fromiter(map(code.__getitem__, values), dtype, len(values))
