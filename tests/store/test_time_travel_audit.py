"""What a keyed history costs the audit log, counted without timing.

A keyed write logs each change to a key's versions when it happened in the key's history
(:mod:`memkit.store.timeline`), and still in one statement per kind of event: the events of one
write carry their own times (a ``ts`` column of the events' Arrow view, a COPY column on PostgreSQL),
never one ``INSERT`` per distinct time (a 20,000-row history took 16,003 statements). A write dated
among a history logs only the changes it makes: the version it replaces and its own replacement,
not again every older version the history superseded already.

And the log tells the truth whatever order the history is written in: each supersede event says which
version replaced which, when, once — the events of the same rows added one by one in ``created_at``
order (``_log``). A version written between two others replaced the earlier one, which the later one
then never did: the event that said so (in the batch, or stored) now names the version written between.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
import pytest

import memkit as mk

Event = tuple[str, str, str, datetime]  # (the replaced version's text, the replacing one's, status, ts)

T = datetime(2025, 6, 1, tzinfo=UTC)
H = timedelta(hours=1)
TODAY = datetime(2026, 1, 1, tzinfo=UTC)


def _history(n: int, keys: int) -> pl.DataFrame:
    """``n`` rows of ``keys`` keys, one an hour, each key's versions in time order."""
    return pl.DataFrame({
        "content": [f"value {i} of fact {i % keys}" for i in range(n)],
        "key": [f"fact.k{i % keys}" for i in range(n)],
        "created_at": [T + i * H for i in range(n)],
    })  # fmt: skip


def _counting(store: mk.MemoryStore) -> list[str]:
    """The ``INSERT INTO events`` statements ``store`` runs from now on, as they run."""
    seen: list[str] = []
    run = store._run

    def counted(query: str, params: Any = ()) -> Any:
        if "INSERT INTO events" in query:
            seen.append(query)
        return run(query, params)

    store._run = counted  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize(("n", "keys"), [(30, 6), (900, 150)], ids=["bound lists", "Arrow view"])
def test_a_keyed_history_logs_its_dated_events_in_one_statement_each(n: int, keys: int) -> None:
    s = mk.MemoryStore()
    inserts = _counting(s)
    s.add_many(_history(n, keys), namespace="u", now=TODAY, conflict_policy="supersede")
    assert len(inserts) == 2  # the rows' own events, then every supersede: not one per distinct time
    log = s.audit("u", op="supersede").sort("seq")
    assert log.height == n - keys  # each version but the last of its key, once
    rows = s.frame("u").select("id", "created_at")
    born = dict(rows.iter_rows())
    by = [json_by(d) for d in log["detail"].to_list()]
    assert log["ts"].to_list() == [born[b] for b in by]  # dated when the next version was written
    for day in (3, 30):  # and replayed so: one current version per key, the one written last by then
        t = T + day * H + H / 2
        active = s.frame("u", as_of=t).filter(pl.col("status") == "active")
        assert active.height == min(keys, day + 1) and active["key"].n_unique() == active.height


def json_by(detail: Any) -> str:
    """The ``by`` of a supersede event's detail (a dict, or its JSON text)."""
    import json

    return (detail if isinstance(detail, dict) else json.loads(detail))["by"]


@pytest.mark.parametrize("path", ["add_many", "add"])
def test_a_write_dated_among_a_history_logs_only_what_it_changes(path: str) -> None:
    s = mk.MemoryStore()
    history = _history(60, 1)
    if path == "add_many":
        s.add_many(history, namespace="u", now=TODAY, conflict_policy="supersede")
    else:
        for r in history.iter_rows(named=True):
            s.add(r["content"], key=r["key"], created_at=r["created_at"], namespace="u", now=TODAY,
                  conflict_policy="supersede")  # fmt: skip
    before = s.audit("u").height
    at = T + 30 * H + H / 2  # between versions 31 and 32
    m = s.add("value 30.5 of fact 0", key="fact.k0", namespace="u", now=at, conflict_policy="supersede")
    assert m.status == "superseded"  # history: version 32 was written after it and stays current
    new = s.audit("u").filter(pl.col("seq") > s.audit("u")["seq"].sort()[before - 1]).sort("seq")
    # its own write and its replacement by the next (at that one's time); the version it replaced (at
    # its time) was logged replaced by the next: that event now names it, and is not logged twice
    assert new["op"].to_list() == ["add", "supersede"]
    assert new["ts"].to_list() == [at, T + 31 * H]
    assert s.audit("u").height == before + 2
    log = _log(s)
    assert ("value 30 of fact 0", "value 30.5 of fact 0", "superseded", at) in log
    assert ("value 30.5 of fact 0", "value 31 of fact 0", "superseded", T + 31 * H) in log
    assert len(log) == 60 and not any(e[:2] == ("value 30 of fact 0", "value 31 of fact 0") for e in log)
    assert s.read("fact.k0", namespace="u").content == "value 59 of fact 0"
    for t, said in ((at - H / 4, "value 30 of fact 0"), (at + H / 4, "value 30.5 of fact 0"),
                    (T + 31 * H + H / 4, "value 31 of fact 0")):  # fmt: skip
        assert s.read("fact.k0", namespace="u", now=t).content == said
        assert s.frame("u", as_of=t).filter(pl.col("status") == "active").height == 1


def test_a_write_dated_among_a_history_added_out_of_order_still_logs_each_change_once() -> None:
    """A history written newest first: each older version takes its place behind the newer ones."""
    s = mk.MemoryStore()
    s.add_many(_history(40, 1).reverse(), namespace="u", now=TODAY, conflict_policy="supersede")
    log = s.audit("u", op="supersede")
    assert log.height == log["memory_id"].n_unique()  # no version superseded twice
    assert s.read("fact.k0", namespace="u").content == "value 39 of fact 0"
    for i in (0, 17, 39):
        assert s.read("fact.k0", namespace="u", now=T + i * H + H / 2).content == f"value {i} of fact 0"


def _log(s: mk.MemoryStore) -> list[Event]:
    """Every supersede event of namespace ``u``, naming versions by their text."""
    fr = s.frame("u")
    text = dict(zip(fr["id"].to_list(), fr["content"].to_list(), strict=True))
    log = s.audit("u", op="supersede").sort("seq")
    return [
        (text[m], text[json_by(d)], json_status(d), ts)
        for m, d, ts in zip(log["memory_id"], log["detail"], log["ts"], strict=True)
    ]


def json_status(detail: Any) -> str:
    """The ``status`` of an event's detail (a dict, or its JSON text)."""
    import json

    return (detail if isinstance(detail, dict) else json.loads(detail))["status"]


def _one_by_one(s: mk.MemoryStore, rows: pl.DataFrame) -> None:
    for r in rows.iter_rows(named=True):
        s.add(r["content"], key=r["key"], created_at=r["created_at"], namespace="u", now=TODAY,
              conflict_policy="supersede")  # fmt: skip


def _in_order(rows: pl.DataFrame) -> list[Event]:
    """The events of ``rows`` added one by one in ``created_at`` order: what any order must log."""
    s = mk.MemoryStore()
    _one_by_one(s, rows.sort("created_at"))
    return _log(s)


def _truthful(log: list[Event], want: list[Event]) -> None:
    """``log`` holds ``want``'s events, each version's replacement once (order aside)."""
    assert len({e[0] for e in log}) == len(log)  # never two events for one version
    assert sorted(log) == sorted(want)


@pytest.mark.parametrize("path", ["add_many", "add"])
def test_a_shuffled_history_logs_who_replaced_whom_once(path: str) -> None:
    """500 versions of a key written in random order (a finding: 987 supersede events, not 499, the
    last of a version's naming a version written long after the one that replaced it)."""
    n = 500 if path == "add_many" else 120
    rows = _history(n, 1 if path == "add_many" else 3)
    shuffled = rows.sample(fraction=1.0, shuffle=True, seed=7)
    s = mk.MemoryStore()
    if path == "add_many":
        s.add_many(shuffled, namespace="u", now=TODAY, conflict_policy="supersede")
    else:
        _one_by_one(s, shuffled)
    log = _log(s)
    _truthful(log, _in_order(rows))
    born = dict(s.frame("u").select("content", "created_at").iter_rows())
    assert all(ts == born[by] for _, by, _, ts in log)  # each dated when its replacing version was written
    assert len(log) == n - (1 if path == "add_many" else 3)


def test_a_batch_written_among_a_stored_history_corrects_its_events() -> None:
    """A stored history's events name the versions that replaced them then; a later batch written
    between them (out of order, several rows between the same two) takes their place, each event
    rewritten once, not followed by a second one for the same version."""
    rows = _history(240, 2)
    s = mk.MemoryStore()
    odd = rows.filter(pl.int_range(pl.len()) % 4 == 0)
    s.add_many(odd, namespace="u", now=TODAY, conflict_policy="supersede")  # every fourth row, in order
    inserts = _counting(s)
    rest = rows.filter(pl.int_range(pl.len()) % 4 != 0).sample(fraction=1.0, shuffle=True, seed=3)
    s.add_many(rest, namespace="u", now=TODAY, conflict_policy="supersede")
    assert len(inserts) == 2  # the rows' events and the new supersede events: rewrites are no inserts
    _truthful(_log(s), _in_order(rows))
    for key in ("fact.k0", "fact.k1"):
        assert s.read(key, namespace="u").content == rows.filter(pl.col("key") == key)["content"][-1]
