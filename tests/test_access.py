"""memkit.access: the access rule, and its numpy / polars / SQL forms agree."""

from __future__ import annotations

import itertools

import duckdb
import numpy as np
import polars as pl
import pytest

from memkit.access import SQL_READABLE, can_modify, can_read, readable_expr, readable_mask

NAMES = [None, "a", "b"]
CASES = [
    (acc, owner, creator, req)
    for acc in ("public", "protected", "private")
    for owner, creator, req in itertools.product(NAMES, NAMES, NAMES)
]


@pytest.mark.parametrize(
    "access, owner, creator, requester, expected",
    [
        ("public", "a", "a", "z", True),
        ("protected", "a", "b", "a", True),
        ("protected", "a", "b", "b", False),  # the writer is not the owner
        ("private", "a", "b", "b", True),
        ("private", "a", "b", "a", False),  # the owner is not the writer
        ("private", None, None, "a", False),
        ("private", "a", "b", None, True),  # operator
        ("protected", None, None, None, True),
    ],
)
def test_can_read(access, owner, creator, requester, expected) -> None:
    assert can_read(access, owner, creator, requester) is expected


def test_can_modify() -> None:
    assert can_modify("o", "c", None)
    assert can_modify("o", "c", "o") and can_modify("o", "c", "c")
    assert not can_modify("o", "c", "x")
    assert not can_modify(None, None, "x")


def test_three_forms_agree_with_can_read() -> None:
    expected = [can_read(*c) for c in CASES]
    # numpy, per requester
    got_np = []
    for acc, owner, creator, req in CASES:
        got_np.append(
            bool(
                readable_mask(
                    np.array([acc]), np.array([owner], dtype=object), np.array([creator], dtype=object), req
                )[0]
            )  # fmt: skip
        )
    assert got_np == expected
    # polars
    df = pl.DataFrame(
        {
            "access": [c[0] for c in CASES],
            "owner": [c[1] for c in CASES],
            "created_by": [c[2] for c in CASES],
        },
        schema={"access": pl.String, "owner": pl.String, "created_by": pl.String},
    )
    got_pl = [bool(df[i].select(readable_expr(c[3]))[0, 0]) for i, c in enumerate(CASES)]
    assert got_pl == expected
    # SQL
    con = duckdb.connect()
    got_sql = [
        bool(
            con.execute(
                f"SELECT {SQL_READABLE} FROM (SELECT ? AS access, ? AS owner, ? AS created_by)",
                [req, req, req, acc, owner, creator],
            ).fetchone()[0]
        )  # fmt: skip
        for acc, owner, creator, req in CASES
    ]
    con.close()
    assert got_sql == expected


def test_readable_mask_with_integer_codes() -> None:
    levels = {"public": 0, "protected": 1, "private": 2}
    access = np.array([0, 1, 1, 2, 2], dtype=np.int8)
    owner = np.array([5, 7, 8, 7, 7])
    creator = np.array([5, 8, 7, 7, 8])
    got = readable_mask(access, owner, creator, 7, levels)
    assert got.tolist() == [True, True, False, True, False]
    assert readable_mask(access, owner, creator, None, levels).all()
