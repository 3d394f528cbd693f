"""Time in any zone: every entry point takes an aware ``now`` (or time field) in any zone, named
(``ZoneInfo``), fixed offset or UTC, and gives the same result for the same instant; comparisons are
of instants, never wall clocks (a daylight-saving fold); dates at the calendar's ends are named
errors or kept, never a raw OverflowError; a naive time is a ValidationError everywhere."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import polars as pl
import pytest

import memkit as mk
from memkit.agent import ScriptedLLM
from memkit.decay import age_hours_expr
from memkit.views import memory_states

T = datetime(2026, 1, 1, tzinfo=UTC)
NY = ZoneInfo("America/New_York")
ZONES = [T, T.astimezone(timezone(timedelta(hours=5, minutes=45))), T.astimezone(ZoneInfo("Asia/Shanghai"))]


def _store(now: datetime) -> mk.MemoryStore:
    s = mk.MemoryStore()
    s.add("user likes green tea", namespace="u", now=now - timedelta(days=400), importance=0.2)
    s.add("user likes green tea a lot", namespace="u", now=now - timedelta(days=1))
    s.add("the meeting is at noon", namespace="u", now=now, valid_until=now + timedelta(hours=1))
    return s


def _views(now: datetime) -> dict[str, object]:
    """What each time-taking entry point says at ``now`` (ids left out: they are random)."""
    pytest.importorskip("langgraph")
    from memkit.integrations.langgraph import MemkitStore
    from memkit.integrations.mcp import _MemoryTools

    s = _store(now)
    agent = mk.MemoryAgent(s, ScriptedLLM(default="ok"), namespace="u", requester="assistant", now=now)
    lg = MemkitStore(mk.MemoryStore(), now=now)
    lg.put(("m", "u"), "k", {"memory": "tea"}, ttl=90)
    tools = _MemoryTools(s, "u", None, lambda: now)
    frame = s.frame("u")
    return {
        "search": s.search("tea", namespace="u", now=now, reinforce=False)["content"].to_list(),
        "forget": s.forget(namespace="u", now=now, dry_run=True)["reason"].to_list(),
        "consolidate": s.consolidate(namespace="u", now=now, dry_run=True).height,
        "analyze": s.analyze(namespace="u", now=now)["code"].to_list(),
        "plan_forget": mk.forget.plan_forget(frame, mk.ForgetParams(), now)["reason"].to_list(),
        "states": memory_states(frame, now)["state"].to_list(),
        "as_of": s.frame("u", as_of=now - timedelta(hours=2))["content"].to_list(),
        "agent": agent.chat("what do you remember about me?").text,
        "langgraph": lg.get(("m", "u"), "k").value,
        "mcp": [m["content"] for m in tools.show_memories()["memories"]],
    }


def test_the_same_instant_in_any_zone_gives_the_same_results() -> None:
    """A named zone crashed every comparison made in polars (forget, consolidate, analyze, the
    agent's listing, LangGraph get, MCP show_memories: polars refuses a UTC column against a
    literal in another named zone), and a Memory's times came back in the caller's zone."""
    want = _views(T)
    for now in ZONES[1:]:
        assert _views(now) == want, now
    s = mk.MemoryStore()
    m = s.add("x", namespace="u", key="k", now=ZONES[2])
    assert {m.created_at.utcoffset(), m.updated_at.tzinfo} == {timedelta(0), UTC}


def test_validity_compares_instants_across_a_daylight_saving_fold() -> None:
    """01:30 happens twice in New York on 2026-11-01; Python compares two datetimes of one tzinfo by
    wall clock, so the hour-long window 01:30 -> 01:30 (fold=1) was refused and an inverted one kept."""
    s, now = mk.MemoryStore(), datetime(2026, 11, 1, 4, tzinfo=UTC)
    first, second = datetime(2026, 11, 1, 1, 30, tzinfo=NY), datetime(2026, 11, 1, 1, 30, fold=1, tzinfo=NY)
    m = s.add("window", namespace="u", valid_from=first, valid_until=second, now=now)
    assert m.valid_until - m.valid_from == timedelta(hours=1)
    row = pl.DataFrame({"content": ["w"], "value": [{"x": 1}], "valid_from": [first]}).with_columns(
        valid_until=pl.lit(second)
    )
    assert s.add_many(row, namespace="u", now=now)["status"].to_list() == ["active"]  # the row path too
    with pytest.raises(mk.ValidationError, match="valid_until"):  # 06:30Z -> 05:45Z
        until = first + timedelta(minutes=15)
        s.add("inverted", namespace="u", valid_from=second, valid_until=until, now=now)
    with pytest.raises(mk.ValidationError, match="last_access_at"):
        s.add_many(
            pl.DataFrame({"content": ["d"], "created_at": [second], "last_access_at": [first]}),
            namespace="u",
            now=now,
        )
    assert s.frame("u").height == 2


def test_langgraph_ttl_is_real_time_and_bounded() -> None:
    """ttl=120 from a New York clock on the day clocks go forward was 1 h of real time (a wall-clock
    sum); a ttl past year 9999 raised OverflowError mid-batch."""
    pytest.importorskip("langgraph")
    from memkit.integrations.langgraph import MemkitStore

    for now in (datetime(2026, 3, 8, 1, 30, tzinfo=NY), datetime(2026, 11, 1, 0, 30, tzinfo=NY)):
        st = mk.MemoryStore()
        MemkitStore(st, now=now).put(("m", "u"), "k", {"memory": "tea"}, ttl=120)
        assert st.frame("m.u")["valid_until"][0] - now == timedelta(hours=2)
    st = mk.MemoryStore()
    lg = MemkitStore(st, now=datetime(9000, 1, 1, tzinfo=UTC))
    with pytest.raises(mk.ValidationError, match="ttl"):
        lg.put(("m", "u"), "k", {"memory": "tea"}, ttl=1e9)
    assert st.frame().is_empty()


@pytest.mark.parametrize(
    "call",
    [
        lambda f, t: mk.analyze.analyze(f, t),
        lambda f, t: memory_states(f, t),
        lambda f, t: age_hours_expr("created_at", t),
        lambda f, t: mk.evaluate.prepare(
            f.with_columns(conversation=pl.lit("c")),
            pl.DataFrame({"query_id": ["q"], "question": ["tea"], "relevant": [["x"]]}).with_columns(
                conversation=pl.lit("c")
            ),
            now=t,
        ),
    ],
)
def test_a_naive_now_is_a_named_error_in_the_pure_functions(call) -> None:
    """They raised polars' SchemaError, and evaluate read a naive now in the process's own zone."""
    frame = _store(T).frame("u")
    with pytest.raises(mk.ValidationError, match="timezone-aware"):
        call(frame, datetime(2026, 1, 1))


@pytest.mark.parametrize("year", [1, 999])
def test_an_export_of_any_year_imports(year: int, tmp_path) -> None:
    """glibc's strftime writes year 999 as '999': the header's exported_at was no ISO-8601 time."""
    at = datetime(year, 1, 1, tzinfo=UTC)
    s = mk.MemoryStore()
    s.add("ancient", namespace="u", now=at)
    s.export(tmp_path / "e.jsonl", now=at)
    header = json.loads((tmp_path / "e.jsonl").read_text().splitlines()[0])
    assert header["exported_at"] == f"{year:04d}-01-01T00:00:00.000000Z"
    assert mk.MemoryStore().import_(tmp_path / "e.jsonl", now=T)["action"].to_list() == ["added"]


def test_mem0s_never_expiring_date_imports() -> None:
    """expiration_date 9999-12-31 (valid through that day) overflowed the calendar: a raw OverflowError."""
    from memkit.portable.adapters import mem0_frame

    rows = [{"id": "a", "memory": "likes tea", "user_id": "u", "created_at": "2025-01-01T00:00:00Z",
             "expiration_date": "9999-12-31"}]  # fmt: skip
    frame = mem0_frame({"results": rows})
    assert frame["valid_until"].to_list() == [datetime.max.replace(tzinfo=UTC)]
    assert mk.MemoryStore().add_many(frame.drop("namespace"), namespace="u", now=T).height == 1


def test_the_time_machine_reaches_the_calendars_end() -> None:
    """Its simulated future, 30 days past the last write, overflowed for a write in late 9999."""
    pytest.importorskip("ipywidgets")
    s, at = mk.MemoryStore(), datetime(9999, 12, 20, tzinfo=UTC)
    s.add("the last memory", namespace="u", now=at)
    panel = mk.widgets.time_machine(s, "u", step_hours=24 * 7)
    assert panel.controls["at"].options[-1][1] == datetime.max.replace(tzinfo=UTC)
