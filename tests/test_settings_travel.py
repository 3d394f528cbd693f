"""What a user tuned travels (helper 62's prototype-to-production audit): every entry point that
ranks, screens or plans for a store uses the store's own settings unless told otherwise —
evaluate/sweep, the LangGraph adapter, the tuning widgets — and the CLI's commands that open a store
take ``--settings FILE``. They used the library's defaults, silently."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

import memkit as mk
import memkit.evaluate as ev
from memkit.cli import main

T = datetime(2026, 1, 1, tzinfo=UTC)
# importance outweighs similarity: the important memory wins a query that names the other one
TUNED = mk.Settings(
    weights=mk.Weights(similarity=0.1, importance=1.0, keyword=0.0, neighbour=0.0),
    forget=mk.ForgetParams(min_strength=0.6),
    merge_threshold=0.95,
    guard=mk.GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",)),
)


def _store() -> mk.MemoryStore:
    s = mk.MemoryStore(settings=TUNED)
    s.add("the user likes green tea", namespace="c", key="k0", importance=0.4, now=T)
    s.add(
        "the user's birthday is in May", namespace="c", key="k1", importance=0.9, now=T + timedelta(hours=1)
    )
    return s


def test_evaluate_and_sweep_rank_a_store_as_its_search_does() -> None:
    s = _store()
    q = pl.DataFrame({"query_id": ["q"], "question": ["green tea"], "relevant": [["k1"]]})
    q = q.with_columns(conversation=pl.lit("c"), category=pl.lit(1))
    hits = s.search(
        "green tea", namespace="c", k=1, min_strength=0, reinforce=False, now=T + timedelta(hours=1)
    )
    assert hits["key"].to_list() == ["k1"]
    assert ev.evaluate(s, q, k=1, per_query=True)["recall@1"].to_list() == [1.0]  # was 0.0 (Weights())
    assert ev.evaluate(s, q, k=1, per_query=True, weights=mk.Weights())["recall@1"].to_list() == [0.0]
    swept = ev.sweep(s, q, {"recency": [0.0]}, k=1, by=None)  # unset weights come from the store's
    assert swept["similarity"].to_list() == [0.1] and swept["recall@1"].to_list() == [1.0]


def test_the_langgraph_adapter_ranks_with_the_stores_weights() -> None:
    pytest.importorskip("langgraph")
    from memkit.integrations.langgraph import MemkitStore

    s = _store()
    lg = MemkitStore(s, now=T + timedelta(hours=1))
    assert lg.weights == mk.Weights(similarity=0.1, importance=1.0, keyword=0.0, neighbour=0.0)
    want = s.search("green tea", namespace="c", k=2, now=T + timedelta(hours=1), reinforce=False)["key"]
    assert [i.key for i in lg.search(("c",), query="green tea", limit=2)] == want.to_list()


def test_the_tuning_panels_start_from_the_stores_settings() -> None:
    pytest.importorskip("ipywidgets")
    s = _store()
    tm = mk.widgets.time_machine(s, "c")
    assert tm.policy == TUNED.forget
    assert mk.widgets.merge_explorer(s, "c", now=T).controls["threshold"].value == 0.95
    tuner = mk.widgets.weights_tuner(s, ["green tea"], namespace="c", now=T + timedelta(hours=1))
    assert tuner.baseline == TUNED.weights


def test_cli_commands_open_the_store_with_a_settings_file(tmp_path, capsys) -> None:
    settings, db = tmp_path / "memkit.toml", tmp_path / "m.duckdb"
    mk.save_settings(settings, TUNED)
    with mk.MemoryStore(str(db), settings=str(settings)) as s:
        s.add("the user likes green tea", namespace="c", now=T)
    bad = tmp_path / "secret.jsonl"  # a text the tuned guard refuses, exported by an untuned store
    with mk.MemoryStore() as other:
        other.add("door code ACME-123456", namespace="c", now=T)
        other.export(bad, "c", now=T)
    assert main(["import", str(bad), "--db", str(db), "--settings", str(settings)]) == 2
    assert "WriteRefused" in capsys.readouterr().err
    assert main(["import", str(bad), "--db", str(db)]) == 0  # without it: the library's default guard
    capsys.readouterr()
    now = (T + timedelta(days=30)).isoformat()
    assert main(["analyze", "--db", str(db), "--settings", str(settings), "--now", now]) == 0
    tuned = capsys.readouterr().out
    assert main(["analyze", "--db", str(db), "--now", now]) == 0
    assert tuned.count("MK006") > capsys.readouterr().out.count("MK006")  # the tuned forgetting floor
