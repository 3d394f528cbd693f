"""build_frame (a whole add_many frame validated column by column) accepts exactly what build_rows
accepts, and builds the same rows; anything it cannot vouch for goes to the row path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit.portable.rows import build_frame, build_rows, new_ids
from memkit.schema import LAYER_HALF_LIFE_HOURS

NOW = datetime(2026, 1, 1, 9, tzinfo=timezone(timedelta(hours=8)))
TEXTS = [
    "I live in Hangzhou",
    "我住在杭州",
    " padded ",
    "",
    "   ",
    "\u3000",
    "a\x00b",
    "\x1c",
    "x" * 5,
    "🙂",
    "¿?",
]
NAMES = ["pref.tea", "k", " k", "k ", "", "a\u200bb", "a\nb", "键", "k" * 257, "a b", "\u0301a", "a\u0301"]
NUMBERS = [0.0, 0.3, 0.5, 1.0, 1.5, -0.1, float("nan"), float("inf")]
WHEN = [  # aware times, in UTC and elsewhere, past and future (polars keeps a column of them in UTC)
    datetime(2025, 3, 1, 12, tzinfo=UTC),
    datetime(2024, 6, 1, 23, 30, tzinfo=timezone(timedelta(hours=-5))),
    datetime(2027, 1, 1, tzinfo=timezone(timedelta(hours=8))),
]
EDGES = [datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, tzinfo=UTC)]  # still valid, near the end
VALID = {  # values every validator accepts: most frames are made of these, so the frame path runs
    "content": st.sampled_from([t for t in TEXTS if t.strip() and "\x00" not in t]),
    "importance": st.sampled_from([None, 0.0, 0.3, 0.5, 1.0]),
    "key": st.sampled_from([None, "pref.tea", "k", "键", "a b", "a\u0301"]),
    "kind": st.sampled_from([None, "fact", "event", "preference"]),
    "layer": st.sampled_from([None, "short_term", "episodic"]),
    "source": st.sampled_from([None, "tool", "user"]),
    "access": st.sampled_from([None, "public", "private"]),
    "protected": st.sampled_from([None, True, False]),
    "created_at": st.sampled_from([None, *WHEN]),
    "last_access_at": st.sampled_from([None, *WHEN]),
    "valid_from": st.sampled_from([None, *WHEN]),
    "valid_until": st.sampled_from([None, *WHEN]),
    "half_life_hours": st.sampled_from([None, 0.5, 24, 1e6]),
    "access_count": st.sampled_from([None, 0, 3, 2**31 - 1]),
    "tags": st.sampled_from([None, [], ["a"], ["a", "a"], ["键", "a b", "a"]]),
}
TIMES = ("created_at", "last_access_at", "valid_from", "valid_until")
COLUMNS = {
    "content": st.sampled_from(TEXTS),
    "importance": st.sampled_from([None, *NUMBERS]),
    "key": st.sampled_from([None, *NAMES]),
    "kind": st.sampled_from([None, "fact", "event", "preference", "nonsense"]),
    "layer": st.sampled_from([None, "short_term", "episodic", "LONG"]),
    "source": st.sampled_from([None, "tool", "user", "web"]),
    "access": st.sampled_from([None, "public", "private", "secret"]),
    "protected": st.sampled_from([None, True, False]),
    "created_at": st.sampled_from([None, *WHEN, *EDGES]),
    "last_access_at": st.sampled_from([None, *WHEN, *EDGES]),
    "valid_from": st.sampled_from([None, *WHEN, *EDGES]),
    "valid_until": st.sampled_from([None, *WHEN, *EDGES]),
    "half_life_hours": st.sampled_from([None, 0.5, 24, 0, -1.0, float("nan"), float("inf"), 1e300]),
    "access_count": st.sampled_from([None, 0, 3, -1, 2**31 - 1, 2**31, 2.5]),
    "tags": st.sampled_from([None, [], ["a"], ["a", "a"], [" a"], ["a\nb"], ["k" * 257], [None], ["\u0301"]]),
}


def _rows_or_error(records: list[dict]) -> dict | type[Exception]:
    try:
        return build_rows(records, "u", "alice", NOW)
    except mk.ValidationError:
        return mk.ValidationError


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_the_frame_path_agrees_with_the_row_path(data) -> None:
    names = ["content", *data.draw(st.lists(st.sampled_from(list(COLUMNS)[1:]), unique=True))]
    n = data.draw(st.integers(1, 4))
    doubtful = data.draw(st.sampled_from([None, *names]))  # at most one column may hold anything
    pools = {c: COLUMNS[c] if c == doubtful else VALID[c] for c in names}
    columns = {c: [data.draw(pools[c]) for _ in range(n)] for c in names}
    frame = pl.DataFrame(columns, strict=False)
    naive = doubtful in TIMES and frame.schema[doubtful] != pl.Null and data.draw(st.booleans())
    if naive:  # naive times: refused by both paths
        frame = frame.with_columns(pl.col(doubtful).dt.replace_time_zone(None))
    fast = build_frame(frame, "u", "alice", NOW)
    slow = _rows_or_error(frame.to_dicts())
    if fast is None:  # the row path decides (valid or not)
        return
    assert slow is not mk.ValidationError, ("the frame path accepted what the rows refuse", columns)
    assert list(fast) == list(slow)
    for c in fast:
        if c != "id":
            assert fast[c] == slow[c], (c, fast[c], slow[c])


def test_plain_frames_take_the_frame_path_and_doubtful_ones_do_not() -> None:
    plain = pl.DataFrame({"content": ["a", "我住在杭州"], "importance": [0.2, None], "key": [None, "k"]})
    assert build_frame(plain, "u", None, NOW) is not None
    for doubtful in (
        plain.with_columns(pl.lit("bob").alias("owner")),  # a column the frame path does not check
        plain.with_columns(pl.Series("tags", [["x"], [None]])),  # a tag that is not a name
        plain.with_columns(pl.Series("importance", [0.2, float("nan")])),
        plain.with_columns(pl.Series("key", [" k", None])),
        pl.DataFrame({"content": ["   ", "a"]}),
        pl.DataFrame({"content": [1, 2]}),
        pl.DataFrame({"content": ["a"], "importance": ["high"]}),
    ):
        assert build_frame(doubtful, "u", None, NOW) is None


def test_a_frame_with_its_own_times_takes_the_frame_path() -> None:
    """A history with its timestamps (a conversation's turns) is the common bulk write: it needs no
    row-by-row validation. Each row keeps its time, in UTC; a missing one is ``now``; the last access
    starts at it."""
    when = [WHEN[1], None, WHEN[2]]
    frame = pl.DataFrame({"content": ["a", "b", "c"], "created_at": when})
    cols = build_frame(frame, "u", None, NOW)
    assert cols is not None
    expected = [WHEN[1].astimezone(UTC), NOW.astimezone(UTC), WHEN[2].astimezone(UTC)]
    assert cols["created_at"] == expected and cols["last_access_at"] == expected
    assert cols["updated_at"] == [NOW] * 3
    for doubtful in (
        frame.with_columns(pl.col("created_at").dt.replace_time_zone(None)),  # naive: the rows refuse it
        pl.DataFrame({"content": ["a"], "created_at": [EDGES[0]]}),  # at the end of Python's range
        pl.DataFrame({"content": ["a"], "created_at": ["2025-01-01"]}),  # text
    ):
        assert build_frame(doubtful, "u", None, NOW) is None


def test_every_column_of_an_export_like_frame_takes_the_frame_path() -> None:
    """Tags, validity windows, last access, half-lives and counts are checked column by column too:
    a frame carrying them (a migrated history, a restored export) needs no row-by-row validation."""
    frame = pl.DataFrame(
        {
            "content": ["a", "b"],
            "tags": [["x", "y", "x"], None],
            "valid_from": [WHEN[1], None],
            "valid_until": [WHEN[2], WHEN[0]],
            "last_access_at": [WHEN[2], None],
            "created_at": [WHEN[1], WHEN[0]],
            "half_life_hours": [None, 48],
            "access_count": [3, None],
        }
    )
    cols = build_frame(frame, "u", None, NOW)
    assert cols is not None
    assert cols["tags"] == [["x", "y"], []]
    assert cols["valid_from"] == [WHEN[1].astimezone(UTC), None]
    assert cols["valid_until"] == [WHEN[2].astimezone(UTC), WHEN[0]]
    assert cols["last_access_at"] == [WHEN[2].astimezone(UTC), WHEN[0]]  # a missing one: its creation
    assert cols["half_life_hours"] == [LAYER_HALF_LIFE_HOURS["long_term"], 48.0]
    assert cols["access_count"] == [3, 0]
    for doubtful in (
        frame.with_columns(pl.Series("valid_until", [WHEN[1], None])),  # an empty window
        frame.with_columns(pl.Series("last_access_at", [WHEN[1] - timedelta(1), None])),  # before creation
        frame.with_columns(pl.Series("half_life_hours", [0.0, None])),
        frame.with_columns(pl.Series("access_count", [3.0, None])),  # a float count: the rows decide
    ):
        assert build_frame(doubtful, "u", None, NOW) is None


def test_rows_are_stored_in_utc_with_the_requester_as_author() -> None:
    cols = build_frame(pl.DataFrame({"content": ["a"] * 3}), "u", "alice", NOW)
    assert cols["created_at"] == [NOW.astimezone(UTC)] * 3 and cols["owner"] == ["alice"] * 3
    assert cols["tags"] == [[], [], []] and cols["merged_from"] == [[], [], []]


def test_new_ids_are_distinct_hex() -> None:
    ids = new_ids(10_000)
    assert len(set(ids)) == 10_000 and all(len(i) == 16 and int(i, 16) >= 0 for i in ids[:50])


@pytest.mark.parametrize(
    ("frame", "field"),
    [
        (pl.DataFrame({"content": ["ok", "  "]}), r"content\[row 1\]"),
        (pl.DataFrame({"content": ["ok", "ok"], "importance": [0.5, 2.0]}), r"importance\[row 1\]"),
        (pl.DataFrame({"content": ["ok"], "kind": ["nonsense"]}), "kind"),
    ],
)
def test_add_many_still_names_the_bad_row(frame, field) -> None:
    with mk.MemoryStore() as s:
        with pytest.raises(mk.ValidationError, match=field):
            s.add_many(frame, namespace="u", now=NOW)
        assert s.count() == 0
