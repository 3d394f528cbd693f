"""memkit.evaluate: metrics on literal examples, the LoCoMo loader's quirks, evaluate/sweep, scenarios."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit import evaluate as ev
from memkit.evaluate.grid import HALF_LIFE_FLOOR

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_tiny.json"
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10.json"
KW = mk.Weights(similarity=0.0, importance=0.0, recency=0.0, keyword=1.0, neighbour=0.0, tie=0.0)


# ------------------------------------------------------------------------------------------ metrics
def test_metrics_worked_example() -> None:
    # query 0: relevant {a, b}, ranked [x, a, y, b]; query 1: relevant {c}, ranked [c, ...]
    hits = np.array([[False, True, False, True], [True, False, False, False]])
    n_rel = np.array([2, 1])
    assert ev.recall_at_k(hits, n_rel, 1).tolist() == [0.0, 1.0]
    assert ev.recall_at_k(hits, n_rel, 2).tolist() == [0.5, 1.0]
    assert ev.recall_at_k(hits, n_rel, 4).tolist() == [1.0, 1.0]
    assert ev.hit_at_k(hits, n_rel, 1).tolist() == [0.0, 1.0]
    assert ev.mrr(hits).tolist() == [0.5, 1.0]
    dcg = 1 / np.log2(3) + 1 / np.log2(5)
    idcg = 1 + 1 / np.log2(3)
    np.testing.assert_allclose(ev.ndcg_at_k(hits, n_rel, 4), [dcg / idcg, 1.0])


def test_metrics_without_hits_or_relevant_are_zero() -> None:
    hits = np.zeros((2, 3), dtype=bool)
    n_rel = np.array([0, 3])
    assert ev.recall_at_k(hits, n_rel, 3).tolist() == [0.0, 0.0]
    assert ev.mrr(hits).tolist() == [0.0, 0.0]
    assert ev.ndcg_at_k(hits, n_rel, 3).tolist() == [0.0, 0.0]


def test_score_rankings_and_summarize() -> None:
    ranked = pl.DataFrame(
        {"query_id": ["a", "a", "a", "b", "b"], "rank": [1, 2, 3, 1, 2], "id": ["x", "r1", "r2", "r3", "z"]}
    )
    qs = pl.DataFrame(
        {"query_id": ["a", "b", "c"], "relevant": [["r1", "r2"], ["r3"], []], "category": [1, 2, 2]}
    )
    pq = ev.score_rankings(ranked, qs, ks=(1, 3))
    assert pq["query_id"].to_list() == ["a", "b"]  # c has nothing relevant: not scored
    assert pq["recall@1"].to_list() == [0.0, 1.0] and pq["recall@3"].to_list() == [1.0, 1.0]
    assert pq["mrr"].to_list() == [0.5, 1.0]
    s = ev.summarize(pq)
    assert s["category"].to_list() == ["1", "2", "all"] and s["n"].to_list() == [1, 1, 2]
    assert s.filter(pl.col("category") == "all")["recall@1"][0] == 0.5


def test_score_rankings_rejects_missing_columns() -> None:
    with pytest.raises(mk.ValidationError) as ei:
        ev.score_rankings(
            pl.DataFrame({"query_id": ["a"]}), pl.DataFrame({"query_id": ["a"], "relevant": [[]]})
        )
    assert ei.value.field == "ranked"


# ------------------------------------------------------------------------------------------- loader
@pytest.fixture(scope="module")
def tiny() -> tuple[pl.DataFrame, pl.DataFrame]:
    return ev.load_locomo(FIXTURE)


def test_loader_memories(tiny) -> None:
    mem, _ = tiny
    assert mem.height == 8  # 6 + 2 turns; the blank turn D1:4 is skipped
    a = mem.filter(pl.col("conversation") == "conv-a")
    assert a["dia_id"].to_list() == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D3:1"]
    assert a["content"][0] == "[8 May 2023] Ann: Hi Bo! I started painting lessons this week."
    assert a["created_at"][0] == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    # session 2 has no date: it borrows session 1's; session 4 has a date but no turns: ignored
    assert (
        a.filter(pl.col("session") == 2)["created_at"].to_list()
        == [datetime(2023, 5, 8, 13, 56, tzinfo=UTC)] * 2
    )
    assert set(a["session"].to_list()) == {1, 2, 3}
    assert mem["id"][0] == "conv-a:D1:1"


def test_loader_queries_quirks(tiny) -> None:
    _, qs = tiny
    assert qs.height == 8
    q = {r["query_id"]: r for r in qs.to_dicts()}
    assert q["conv-a:q0"]["relevant"] == ["conv-a:D1:3", "conv-a:D2:1"]  # "D1:3; D2:1" split
    assert q["conv-a:q1"]["relevant"] == ["conv-a:D2:2"]  # "D:2:2" repaired
    assert q["conv-a:q1"]["answer"] == "2022"  # a number becomes a string
    assert q["conv-a:q2"]["answer"] is None and q["conv-a:q2"]["category_name"] == "adversarial"
    assert q["conv-a:q3"]["relevant"] == []  # D9:9 names no turn, "D" is no id
    assert q["conv-a:q4"]["relevant"] == ["conv-a:D1:1"]  # repeats collapsed
    assert q["conv-b:q1"]["relevant"] == ["conv-b:D1:1", "conv-b:D1:2"]  # space-separated
    assert q["conv-a:q0"]["audit_id"] == "locomo_0_qa0" and not q["conv-a:q0"]["audited"]


def test_loader_captions_are_opt_in() -> None:
    plain, _ = ev.load_locomo(FIXTURE)
    with_caps, _ = ev.load_locomo(FIXTURE, captions=True)
    row = lambda m: m.filter(pl.col("id") == "conv-a:D2:1")["content"][0]  # noqa: E731
    assert row(plain) == "[8 May 2023] Bo: Do you still drink that tea?"
    assert row(with_caps) == "[8 May 2023] Bo: Do you still drink that tea? [shares a cup of tea]"
    assert plain.drop("content").equals(with_caps.drop("content"))


def test_loader_audit_corrections(tmp_path: Path) -> None:
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps([
        {"question_id": "locomo_0_qa4", "correct_evidence": ["D1:1", "D2:2"]},
        {"question_id": "locomo_1_qa0", "correct_evidence": []},  # no correction: ignored
    ]))  # fmt: skip
    _, qs = ev.load_locomo(FIXTURE, audit=audit)
    q = {r["query_id"]: r for r in qs.to_dicts()}
    assert q["conv-a:q4"]["relevant"] == ["conv-a:D1:1", "conv-a:D2:2"] and q["conv-a:q4"]["audited"]
    assert q["conv-a:q4"]["evidence"] == ["D1:1"]  # the original labels stay visible
    assert q["conv-b:q0"]["relevant"] == ["conv-b:D1:2"] and not q["conv-b:q0"]["audited"]


@pytest.mark.parametrize(
    "content",
    ["not json", json.dumps({"a": 1}), json.dumps([{"sample_id": "x"}]),
     json.dumps([{"sample_id": "x", "conversation": {"session_1": [{"dia_id": "D1:1", "text": "hi"}]}}]),
     json.dumps([{"sample_id": "x", "conversation": {"session_1_date_time": "yesterday", "session_1": []}}])],
)  # fmt: skip
def test_loader_bad_files_raise_format_error(tmp_path: Path, content: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(mk.FormatError):
        ev.load_locomo(p)


def test_loader_missing_file(tmp_path: Path) -> None:
    with pytest.raises(mk.FormatError) as ei:
        ev.load_locomo(tmp_path / "nope.json")
    assert ei.value.field == "path"


# ------------------------------------------------------------------------------------ evaluate/sweep
class Counting(mk.HashEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=64)
        self.calls: list[str] = []

    def embed(self, texts):
        self.calls.extend(texts)
        return super().embed(texts)


def test_evaluate_frame_keyword_finds_the_evidence(tiny) -> None:
    mem, qs = tiny
    pq = ev.evaluate(mem, qs, weights=KW, k=(1, 5), per_query=True)
    r = {row["query_id"]: row for row in pq.to_dicts()}
    assert "conv-a:q3" not in r  # nothing relevant: not scored
    assert r["conv-a:q0"]["recall@1"] == 0.5 and r["conv-a:q0"]["recall@5"] == 1.0
    assert r["conv-b:q0"]["recall@1"] == 1.0  # "Miso"? no: "cat" matches the adoption turn
    assert r["conv-a:q5"]["recall@1"] == 1.0  # Chinese question, 住 matches 住在
    summary = ev.evaluate(mem, qs, weights=KW, k=5)
    assert summary["category"].to_list() == ["1", "2", "3", "4", "5", "all"]
    assert summary.filter(pl.col("category") == "all")["n"][0] == 7


def test_sweep_embeds_each_text_once_and_matches_evaluate(tiny) -> None:
    mem, qs = tiny
    e = Counting()
    prep = ev.prepare(mem, qs, embedder=e)
    assert len(e.calls) == mem.height + 7  # every memory and every scored question once
    grid = {"similarity": [0.0, 0.5, 1.0], "keyword": [0.0, 1.0], "importance": [0.0], "recency": [0.0]}
    s = ev.sweep(prep, grid=grid, k=5)
    assert len(e.calls) == mem.height + 7  # the sweep embedded nothing more
    assert s.filter(pl.col("category") == "all").height == 5  # (0, 0) skipped: all weights zero
    one = ev.evaluate(prep, weights=KW, k=5).filter(pl.col("category") == "all")
    point = s.filter(
        (pl.col("category") == "all") & (pl.col("similarity") == 0.0) & (pl.col("keyword") == 1.0)
    )
    assert point["recall@5"][0] == one["recall@5"][0]


def test_sweep_half_life_floor_drops_old_memories(tiny) -> None:
    mem, qs = tiny
    prep = ev.prepare(mem, qs)
    s = ev.sweep(prep, grid={"keyword": [1.0], "similarity": [0.0], "half_life_hours": [1.0, 1e6]}, k=5)
    a = s.filter(pl.col("category") == "all").sort("half_life_hours")
    assert a["min_strength"].to_list() == [0.1, 0.1]
    # a 1 h half-life at a floor of 0.1: only the newest memory of each conversation survives
    assert a["recall@5"][0] < a["recall@5"][1]


@pytest.mark.parametrize("nb", [(0.0, 0.0), (0.6, 0.8)])  # (neighbour, neighbour2)
def test_evaluate_store_matches_store_search(tiny, now, nb) -> None:
    mem, qs = tiny
    store = mk.MemoryStore()
    for (conv,), part in mem.group_by("conversation", maintain_order=True):
        store.add_many(part.select("content", "created_at", key="id"), namespace=conv, now=now)
    w = mk.Weights(similarity=0.5, importance=0.0, recency=0.0, keyword=0.5, neighbour=nb[0], tie=0.0,
                   neighbour2=nb[1])  # fmt: skip
    pq = ev.evaluate(store, qs, weights=w, k=3, per_query=True, now=now)
    for row in pq.to_dicts():
        hits = store.search(row["question"], namespace=row["conversation"], k=3, weights=w, now=now,
                            min_strength=0.0, reinforce=False)  # fmt: skip
        got = len(set(hits["key"].to_list()) & set(row["relevant"])) / len(row["relevant"])
        assert got == pytest.approx(row["recall@3"])
    store.close()


def test_evaluate_and_sweep_reject_bad_input(tiny) -> None:
    mem, qs = tiny
    with pytest.raises(mk.ValidationError) as ei:
        ev.evaluate(mem, qs, weights={"similarity": 1.0})
    assert ei.value.field == "weights"
    with pytest.raises(mk.ValidationError) as ei:
        ev.evaluate(mem, qs, k=0)
    assert ei.value.field == "k"
    with pytest.raises(mk.ValidationError) as ei:
        ev.evaluate(mem.drop("content"), qs)
    assert ei.value.field == "memories"
    with pytest.raises(mk.ValidationError) as ei:
        ev.sweep(mem, qs, grid={"similarity": [1.0], "temperature": [2.0]})
    assert ei.value.field == "grid"
    with pytest.raises(mk.ValidationError):
        ev.evaluate("not a store", qs)


BAD_NUMBERS = (2.0, float("nan"), float("inf"), -1.0, "0.1", True, None, [0.1])


def test_evaluate_and_sweep_check_the_floor_as_search_does(tiny) -> None:
    """evaluate() and sweep() used to take min_strength=2.0, NaN, -1.0 and True silently (a floor
    that drops everything, or nothing) and raise a raw TypeError for '0.1'; now each is a
    ValidationError naming the argument passed, with search's own message."""
    mem, qs = tiny
    prep = ev.prepare(mem, qs)
    with mk.MemoryStore() as s:
        for bad in BAD_NUMBERS[:-2]:  # (None is "the store's floor" for search and evaluate)
            with pytest.raises(mk.ValidationError) as searched:
                s.search("tea", namespace="u", min_strength=bad)
            with pytest.raises(mk.ValidationError) as evaluated:
                ev.evaluate(prep, weights=KW, min_strength=bad)
            assert str(evaluated.value) == str(searched.value)  # "min_strength: must be <= 1.0, got 2.0"
    for bad in BAD_NUMBERS:
        if bad is not None:
            with pytest.raises(mk.ValidationError) as ei:
                ev.evaluate(prep, weights=KW, min_strength=bad)
            assert ei.value.field == "min_strength"
        with pytest.raises(mk.ValidationError) as ei:
            ev.sweep(prep, grid=[{"keyword": 1.0, "min_strength": bad}])
        assert ei.value.field == "grid.min_strength"
        with pytest.raises(mk.ValidationError) as ei:
            ev.rank(prep, KW, min_strength=bad)  # type: ignore[arg-type]
        assert ei.value.field == "min_strength"
    floors = ev.sweep(prep, grid={"keyword": [1], "min_strength": [0, np.float64(0.05)]}, by=None)
    assert floors["min_strength"].to_list() == [0.0, 0.05]  # numbers of any kind, as floats


def test_every_other_setting_of_a_sweep_or_an_evaluation_is_named_when_bad(tiny) -> None:
    mem, qs = tiny
    prep = ev.prepare(mem, qs)
    for name in ("similarity", "keyword", "tie", "neighbour", "time_scale_hours", "half_life_hours"):
        for bad in (float("nan"), -1.0, "1", True, None):
            with pytest.raises(mk.ValidationError) as ei:
                ev.sweep(prep, grid=[{"keyword": 1.0, name: bad}])
            assert ei.value.field == f"grid.{name}", (name, bad)
    for bad in (float("nan"), 0.0, -1.0, "168", True):
        with pytest.raises(mk.ValidationError) as ei:
            ev.evaluate(prep, weights=KW, time_scale_hours=bad)
        assert ei.value.field == "time_scale_hours"
    with pytest.raises(mk.ValidationError) as ei:
        ev.rank(prep, KW, half_life_hours="24")  # type: ignore[arg-type]
    assert ei.value.field == "half_life_hours"
    for bad_k in ((1, 5), 0, True):
        with pytest.raises(mk.ValidationError) as ei:
            ev.rank(prep, KW, k=bad_k)  # type: ignore[arg-type]
        assert ei.value.field == "k"
    for base in (5, "x", {"similarity": 1.0}):
        with pytest.raises(mk.ValidationError) as ei:
            ev.sweep(prep, grid=[{"keyword": 1.0}], base=base)  # type: ignore[arg-type]
        assert ei.value.field == "base"
    for grid in ([1, 2], {"keyword": 0.5}):
        with pytest.raises(mk.ValidationError) as ei:
            ev.sweep(prep, grid=grid)  # type: ignore[arg-type]
        assert ei.value.field == "grid"


def test_k_takes_numpy_integers_and_names_anything_else(tiny) -> None:
    mem, qs = tiny
    prep = ev.prepare(mem, qs)
    assert ev.evaluate(prep, weights=KW, k=np.arange(1, 4)).equals(ev.evaluate(prep, weights=KW, k=(1, 2, 3)))
    assert ev.evaluate(prep, weights=KW, k=np.int64(3)).equals(ev.evaluate(prep, weights=KW, k=3))
    grid = {"keyword": [1.0], "similarity": [0.0]}
    assert ev.sweep(prep, grid=grid, k=np.int32(2)).equals(ev.sweep(prep, grid=grid, k=2))
    for bad in (True, np.bool_(True), 2.0, np.array([1.0, 2.0]), "5", None, [1, 0], np.int64(0), object()):
        with pytest.raises(mk.ValidationError) as ei:
            ev.evaluate(prep, weights=KW, k=bad)
        assert ei.value.field == "k"


def test_a_half_life_point_without_a_floor_uses_the_documented_one(tiny) -> None:
    mem, qs = tiny
    prep = ev.prepare(mem, qs)
    grid = [{"keyword": 1.0, "similarity": 0.0, "half_life_hours": 24.0},
            {"keyword": 1.0, "similarity": 0.0, "half_life_hours": 24.0, "min_strength": 0.0}]  # fmt: skip
    assert ev.sweep(prep, grid=grid, k=5, by=None)["min_strength"].to_list() == [HALF_LIFE_FLOOR, 0.0]
    assert HALF_LIFE_FLOOR == 0.1 and "HALF_LIFE_FLOOR" in (ev.sweep.__doc__ or "")  # said, not silent


def test_audited_marks_what_the_audit_checked_also_when_it_confirms(tmp_path: Path) -> None:
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps([{"question_id": "locomo_0_qa5", "correct_evidence": ["D3:1"]}]))  # as cited
    _, qs = ev.load_locomo(FIXTURE, audit=audit)
    q = qs.filter(pl.col("query_id") == "conv-a:q5").row(0, named=True)
    assert q["audited"] and q["relevant"] == ["conv-a:D3:1"] and q["evidence"] == ["D3:1"]  # (the docstring)


NOTEBOOK_09 = Path(__file__).resolve().parents[1] / "notebooks" / "09_evaluating_on_locomo.ipynb"


def test_lesson_09_shows_the_rows_its_text_compares() -> None:
    cells = json.loads(NOTEBOOK_09.read_text(encoding="utf-8"))["cells"]
    prose = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert "has no evidence" not in prose  # category 5 cites evidence (test_lesson_09_claims_hold_on_locomo)
    assert "BM25" in prose and "beats" in prose  # the claim; the cell below must show its two sides
    table = next("".join(c["source"]) for c in cells if "BM25 alone" in "".join(c["source"]))
    assert "hashing embedder alone" in table and table.count("**alone") == 2  # one component each


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo is not beside the repo (../shared/data/locomo)")
def test_lesson_09_claims_hold_on_locomo() -> None:
    mem, qs = ev.load_locomo(LOCOMO)
    assert (qs.filter(pl.col("category") == 5)["relevant"].list.len() > 0).all()  # all 446 cite turns
    prep = ev.prepare(mem, qs.filter(pl.col("category") <= 4))
    alone = dict(importance=0.0, recency=0.0, neighbour=0.0, tie=0.0)
    r5 = {name: ev.evaluate(prep, weights=w, k=5, by=None)["recall@5"][0] for name, w in {
        "default": mk.Weights(), "bm25": mk.Weights(similarity=0.0, keyword=1.0, **alone),
        "hash": mk.Weights(similarity=1.0, keyword=0.0, **alone)}.items()}  # fmt: skip
    assert (round(r5["bm25"], 2), round(r5["hash"], 2), round(r5["default"], 2)) == (0.57, 0.44, 0.62)


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo is not beside the repo (../shared/data/locomo)")
def test_real_locomo_counts() -> None:
    mem, qs = ev.load_locomo(LOCOMO)
    assert mem.height == 5882 and qs.height == 1986
    usable = qs.filter((pl.col("category") <= 4) & (pl.col("relevant").list.len() > 0))
    assert usable.height == 1536  # the data README's protocol
    assert qs.filter(pl.col("category") == 5)["answer"].null_count() == 444  # 2 of 446 have one


# ---------------------------------------------------------------------------------------- scenarios
def test_forgetting_scenario_default_policy_drops_exactly_the_right_ones() -> None:
    r = ev.forgetting_scenario(n_useful=8, n_expired=3, n_low=4, n_protected_low=2)
    row = {x["kind"]: x for x in r.to_dicts()}
    assert row["all"]["precision"] == 1.0 and row["all"]["recall"] == 1.0
    assert row["protected_low"]["dropped"] == 0 and row["useful"]["dropped"] == 0
    assert row["expired"]["correct_drops"] == 3


def test_forgetting_scenario_measures_a_bad_policy() -> None:
    lax = ev.forgetting_scenario(mk.ForgetParams(drop_expired=False), n_useful=8, n_expired=3, n_low=4)
    row = {x["kind"]: x for x in lax.to_dicts()}
    assert row["expired"]["dropped"] == 0 and row["all"]["recall"] == pytest.approx(4 / 7)
    harsh = ev.forgetting_scenario(
        mk.ForgetParams(capacity=4), n_useful=8, n_expired=3, n_low=4, n_protected_low=0
    )
    row = {x["kind"]: x for x in harsh.to_dicts()}
    assert row["useful"]["dropped"] == 4 and row["all"]["precision"] < 1.0


def test_knowledge_update_scenario_keyed_writes_return_the_current_value() -> None:
    r = ev.knowledge_update_scenario(n_subjects=3)
    assert set(r["mode"]) == {"plain", "keyed"} and r["n"].to_list() == [12] * 8
    keyed = r.filter(pl.col("mode") == "keyed")
    assert (keyed["stale@1"] == 0.0).all()  # superseded versions are never returned
    plain_sim = r.filter((pl.col("mode") == "plain") & (pl.col("weights") == "similarity only"))
    assert plain_sim["stale@1"][0] > 0.0  # without keys, recency or newest-first ties, old values compete
    plain_default = r.filter((pl.col("mode") == "plain") & (pl.col("weights") == "default"))
    assert plain_default["current@1"][0] == 1.0  # the default: a newer value wins a near tie


@pytest.mark.parametrize("weights", [mk.Weights(), {"mine": {"similarity": 1.0}}, [mk.Weights()]])
def test_knowledge_update_scenario_names_bad_weights(weights) -> None:
    with pytest.raises(mk.ValidationError, match="weights"):
        ev.knowledge_update_scenario(n_subjects=1, weights=weights)


def test_locomo_benchmark_skips_cleanly_without_data(tmp_path: Path) -> None:
    import subprocess
    import sys

    bench = Path(__file__).resolve().parents[1] / "benchmarks" / "locomo.py"
    proc = subprocess.run(
        [sys.executable, str(bench), "--data", str(tmp_path), "--no-models"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("skip: LoCoMo not found")


def test_evaluating_a_store_at_now_ranks_only_what_search_returns_then() -> None:
    """An expired memory and one written after ``now`` are not search results at ``now``: evaluate
    ranked them (recall 1.0 on evidence the store never returns then)."""
    from datetime import UTC, datetime, timedelta

    t = datetime(2026, 1, 10, tzinfo=UTC)
    with mk.MemoryStore() as s:
        s.add("I like oolong tea very much", namespace="c1", key="k1", now=t - timedelta(days=5),
              valid_until=t - timedelta(days=1))  # fmt: skip
        s.add("I like green tea sometimes", namespace="c1", key="k2", now=t - timedelta(days=4))
        s.add("I like black tea now", namespace="c1", key="k3", now=t + timedelta(days=3))
        queries = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "question": ["what tea do I like"] * 3,
                                "relevant": [["k1"], ["k3"], ["k2"]], "conversation": ["c1"] * 3,
                                "category": [1, 1, 1]})  # fmt: skip
        pq = ev.evaluate(s, queries, now=t, k=(1, 3), per_query=True)
        found = s.search("what tea do I like", namespace="c1", k=3, now=t, min_strength=0, reinforce=False)
    assert found["key"].to_list() == ["k2"]
    got = dict(zip(pq["query_id"], pq["recall@3"], strict=True))
    assert got.get("q1", 0.0) == 0.0 and got.get("q2", 0.0) == 0.0 and got["q3"] == 1.0


def test_the_evaluation_helpers_take_edge_inputs_and_name_bad_ones() -> None:
    """An empty candidate list, queries without a category, a grid of all-zero points, NaN or
    negative grid weights and a rank of 0 end in results or a named error, not numpy/polars ones."""
    from datetime import UTC, datetime

    now = datetime(2026, 1, 1, tzinfo=UTC)
    with mk.MemoryStore() as s:
        s.add("my diary entry about tea", namespace="u", access="private", requester="alice", now=now)
        blind = ev.Reranker.from_store(s, ["tea"], namespace="u", requester="bob", now=now)  # sees nothing
        assert blind.sweep({"tea": ["x"]}, pl.DataFrame({"similarity": [0.5]}))["recall"].to_list() == [0.0]
        assert blind.metrics({"tea": ["x"]}, mk.Weights())["recall"].to_list() == [0.0]
        rr = ev.Reranker.from_store(s, ["tea"], namespace="u", now=now)
        for bad in (float("nan"), -5.0):
            with pytest.raises(mk.ValidationError, match="grid.similarity"):
                rr.sweep({"tea": ["x"]}, pl.DataFrame({"similarity": [bad]}))
    mem = pl.DataFrame({"id": ["m1", "m2"], "content": ["I like tea", "I walk my dog"],
                        "created_at": [now, now], "conversation": ["c", "c"]})  # fmt: skip
    qs = pl.DataFrame({"query_id": ["q"], "question": ["tea?"], "relevant": [["m1"]], "conversation": ["c"]})
    assert ev.evaluate(mem, qs)["category"].to_list() == ["all"]  # no category: the overall row
    with pytest.raises(mk.ValidationError, match="by"):
        ev.evaluate(mem, qs, by="topic")
    with pytest.raises(mk.ValidationError, match="grid"):
        ev.sweep(mem, qs, {"similarity": [0.0], "keyword": [0.0]})
    ranked = pl.DataFrame({"query_id": ["q"], "rank": [0], "id": ["m1"]})
    with pytest.raises(mk.ValidationError, match="rank"):
        ev.score_rankings(ranked, qs)


def test_a_reranker_refuses_candidates_with_a_missing_write_time() -> None:
    """A null ``created_at`` made every candidate's age NaN (the newest was NaN), which silently turned
    off newest-first for near ties of that query: it is bad input, named."""
    f = pl.DataFrame(
        {
            "id": ["a", "b"],
            "content": ["tea", "coffee"],
            "similarity": [0.9, 0.8],
            "importance": [0.5, 0.5],
            "recency": [1.0, 1.0],
            "created_at": [datetime(2026, 1, 1, tzinfo=UTC), None],
        }
    )
    with pytest.raises(mk.ValidationError, match=r"candidates\['q'\]\.created_at"):
        ev.Reranker({"q": f})
    assert ev.Reranker({"q": f.drop_nulls()}).rank("q", mk.Weights(), k=5).height == 1
