"""Charts and their data (memkit.charts, memkit.lifecycle_charts, memkit.views): checked on to_dict()."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit import charts, views
from memkit.sample import load_into


def layers(spec: dict[str, Any], data: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every unit spec of a (possibly layered / concatenated) chart spec, depth first; a unit
    without its own data gets its parent's."""
    data = spec.get("data", data)
    out = []
    for key in ("layer", "vconcat", "hconcat"):
        for sub in spec.get(key, []):
            out.extend(layers(sub, data))
    return out or [{**spec, "data": data} if data is not None else spec]


def values(spec: dict[str, Any], unit: dict[str, Any]) -> list[dict[str, Any]]:
    """The inline rows a unit spec draws (Altair puts them in the top-level ``datasets``)."""
    return spec["datasets"][unit["data"]["name"]]


def marks(spec: dict[str, Any]) -> list[str]:
    return [u["mark"]["type"] if isinstance(u["mark"], dict) else u["mark"] for u in layers(spec)]


@pytest.fixture
def sample_store(now):
    s = mk.MemoryStore()
    load_into(s, now=now)
    yield s
    s.close()


# ------------------------------------------------------------------------------------------- decay
def test_half_life_curves_draw_the_worked_examples_and_the_floor() -> None:
    spec = charts.half_life_curves().to_dict()
    units = layers(spec)
    assert marks(spec)[:2] == ["line", "rule"]
    curves = values(spec, units[0])
    home = [r for r in curves if "90 d" in r["label"]]
    assert home and all(abs(r["strength"] - 0.8 * 0.5 ** (r["age_hours"] / 2160)) < 1e-9 for r in home)
    assert units[0]["encoding"]["x"]["scale"]["type"] == "log"
    assert values(spec, units[1]) == [{"floor": 0.1}]
    crossing = sorted(round(r["hours"], 2) for r in values(spec, units[3]))
    assert crossing[0] == 5.17  # the 0.6 / 2 h memory fades after 5.17 h
    dots = {round(r["strength"], 4) for r in values(spec, units[4])}
    assert dots == {0.7939, 0.15}
    assert "tooltip" in units[0]["encoding"] and spec["title"]["text"]


def test_half_life_curves_validate() -> None:
    with pytest.raises(mk.ValidationError, match="floor"):
        charts.half_life_curves(floor=2.0)
    with pytest.raises(mk.ValidationError, match="memories"):
        charts.half_life_curves(pl.DataFrame({"label": ["a"]}))
    with pytest.raises(mk.ValidationError, match="horizon_hours"):
        views.decay_curves(
            pl.DataFrame({"label": ["a"], "importance": [1.0], "half_life_hours": [1.0]}), horizon_hours=-1
        )


# --------------------------------------------------------------------------------------- retrieval
def test_contributions_sum_to_the_search_score(sample_store, now) -> None:
    w = mk.Weights(similarity=0.5, importance=0.2, recency=0.1, keyword=0.4, neighbour=0.0, tie=0.0)
    hits = sample_store.search("Bob 喝什么茶？", namespace="bob", k=5, weights=w, now=now, reinforce=False)
    long = views.contributions(hits, w)
    total = long.group_by("rank").agg(pl.col("contribution").sum()).sort("rank")["contribution"]
    assert np.allclose(total.to_numpy(), hits["score"].to_numpy())
    assert long.filter(pl.col("rank") == 1)["component"].to_list() == list(views.COMPONENTS)


def test_score_breakdown_stacks_weight_times_component(sample_store, now) -> None:
    articles = mk.Weights.articles()
    hits = sample_store.search(
        "我住在哪里", namespace="user_87", k=4, weights=articles, now=now, reinforce=False
    )
    assert "keyword" not in hits.columns  # weight 0: the column is absent and counts as 0
    spec = charts.score_breakdown(hits, articles).to_dict()
    bars, text = layers(spec)
    assert bars["encoding"]["x"]["stack"] == "zero" and bars["encoding"]["color"]["field"] == "component"
    assert bars["encoding"]["color"]["scale"]["domain"] == [*views.COMPONENTS, "neighbour"]
    rows = values(spec, bars)
    sim = [r for r in rows if r["rank"] == 1 and r["component"] == "similarity"][0]
    assert sim["contribution"] == pytest.approx(0.6 * hits["similarity"][0])
    assert [r["score"] for r in values(spec, text)] == pytest.approx(hits["score"].to_list())
    with pytest.raises(mk.ValidationError, match="hits"):
        charts.score_breakdown(hits.drop("similarity"))
    with pytest.raises(mk.ValidationError, match="weights"):
        charts.score_breakdown(hits, {"similarity": 1})  # type: ignore[arg-type]


def _hits(ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"rank": list(range(1, len(ids) + 1)), "id": ids, "content": [f"text {i}" for i in ids]}
    )


def test_rank_shift_classifies_moves() -> None:
    spec = charts.rank_shift(_hits(["a", "b", "c"]), _hits(["b", "a", "d"])).to_dict()
    rows = values(spec, layers(spec)[0])
    moved = {(r["id"], r["setting"]): (r["rank"], r["movement"]) for r in rows}
    assert moved[("a", "before")] == (1, "down") and moved[("a", "after")] == (2, "down")
    assert moved[("b", "after")] == (1, "up")
    assert moved[("c", "after")] == (4, "left")  # k + 1 is the "out" row
    assert moved[("d", "before")] == (4, "entered")
    assert layers(spec)[0]["encoding"]["y"]["scale"]["reverse"] is True
    with pytest.raises(mk.ValidationError, match="before"):
        charts.rank_shift(pl.DataFrame({"id": ["a"]}), _hits(["a"]))


def test_reranker_matches_store_search_for_any_weights(sample_store, now) -> None:
    queries = ["我住在哪里", "我喝什么咖啡"]
    rr = views.Reranker.from_store(sample_store, queries, namespace="user_87", now=now)
    plain = {"neighbour": 0.0, "tie": 0.0}
    weights = (mk.Weights(), mk.Weights(0.1, 0.8, 0.1, 0.0, **plain), mk.Weights(0.5, 0.1, 0.0, 0.7, **plain))
    for w in weights:  # the default (neighbours, ties) and two plain weightings
        for q in queries:
            want = sample_store.search(q, namespace="user_87", k=5, weights=w, now=now, reinforce=False)
            got = rr.rank(q, w, 5)
            assert got["id"].to_list() == want["id"].to_list()
            assert np.allclose(got["score"].to_numpy(), want["score"].to_numpy())
    with pytest.raises(mk.ValidationError, match="query"):
        rr.rank("not cached", mk.Weights())


def test_sweep_recall_and_mrr() -> None:
    cand = pl.DataFrame(
        {
            "id": ["a", "b", "c"],
            "content": ["x", "y", "z"],
            "similarity": [1.0, 0.0, 0.5],
            "importance": [0.0, 1.0, 0.5],
            "recency": [0.0, 0.0, 0.0],
        }
    )
    rr = views.Reranker({"q": cand})
    grid = pl.DataFrame({"similarity": [1.0, 0.0], "importance": [0.0, 1.0]})
    out = rr.sweep({"q": ["a"]}, grid, k=1)
    assert out["recall"].to_list() == [1.0, 0.0] and out["mrr"].to_list() == [1.0, 0.0]
    out = rr.sweep({"q": ["a"]}, grid, k=3)
    assert out["mrr"].to_list() == [1.0, pytest.approx(1 / 3)]
    spec = charts.weight_heatmap(out, metric="mrr").to_dict()
    cells, text, best = layers(spec)
    assert values(spec, best) == [{"similarity": 1.0, "importance": 0.0, "mrr": 1.0}]
    assert cells["encoding"]["color"]["field"] == "mrr"
    with pytest.raises(mk.ValidationError, match="sweep"):
        charts.weight_heatmap(out, metric="ndcg")
    with pytest.raises(mk.ValidationError, match="relevant"):
        rr.sweep({"other": ["a"]}, grid)


# -------------------------------------------------------------------------------------- lifecycle
def test_nearest_similarity_is_the_best_partner_within_a_group() -> None:
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(7, 8)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    frame = pl.DataFrame(
        {
            "id": list("abcdefg"),
            "content": list("abcdefg"),
            "status": ["active"] * 6 + ["superseded"],
            "namespace": ["u"] * 7,
            "layer": ["long_term"] * 5 + ["episodic"] * 2,
            "key": [None] * 7,
        }
    )
    got = views.nearest_similarity(frame, emb, block=2)
    sims = emb[:5] @ emb[:5].T
    np.fill_diagonal(sims, -np.inf)
    assert np.allclose(got["similarity"].to_numpy()[:5], sims.max(1), atol=1e-6)
    assert got["id"].to_list() == list("abcdef")  # superseded g is no candidate
    assert got["similarity"][5] is None  # f is alone in its layer
    with pytest.raises(mk.ValidationError, match="embeddings"):
        views.nearest_similarity(frame, emb[:3])


def test_nearest_similarity_pairs_weak_with_weak_as_the_merge_plan_does() -> None:
    """With ``_weak`` (store.merge_candidates), a weak memory's partners are the weak ones: its value
    is where a threshold slider makes it join a cluster, as plan_merges decides."""
    r = np.radians([0, 25, 50])  # A, B, C: cos(A,B) = cos(B,C) = 0.906, cos(A,C) = 0.643
    emb = np.stack([np.cos(r), np.sin(r)], axis=1).astype(np.float32)
    frame = pl.DataFrame({"id": list("ABC"), "content": list("ABC"), "status": ["active"] * 3,
                          "namespace": ["u"] * 3, "layer": ["long_term"] * 3, "key": [None] * 3,
                          "_weak": [True, False, True]})  # fmt: skip
    got = views.nearest_similarity(frame, emb)["similarity"].to_list()
    assert got[0] == pytest.approx(0.643, abs=1e-3) and got[2] == pytest.approx(0.643, abs=1e-3)
    assert got[1] is None  # B has no partner of its kind


def test_merge_explorer_cuts_at_the_threshold(sample_store, now) -> None:
    frame = sample_store.frame("user_87", include_embedding=True)
    sims = views.nearest_similarity(frame.drop("embedding"), frame["embedding"].to_numpy())
    plan = sample_store.consolidate("user_87", threshold=0.7, now=now, dry_run=True)
    spec = charts.merge_explorer(sims, 0.7, plan).to_dict()
    units = layers(spec)
    hist = values(spec, units[1])
    merging = sum(r["memories"] for r in hist if r["merges"] == "would merge")
    assert merging == plan["members"].list.len().sum()  # the plan's members, not every cosine above 0.7
    assert sum(r["memories"] for r in hist) == int((sims["similarity"] >= 0.5).sum())
    assert values(spec, units[3])[0]["t"] == 0.7
    bars = values(spec, units[-1])
    assert sorted(r["size"] for r in bars) == sorted(plan["members"].list.len().to_list())[-len(bars) :]
    empty = charts.merge_explorer(sims, 1.0, plan.head(0)).to_dict()
    assert marks(empty)[-1] == "text"
    with pytest.raises(mk.ValidationError, match="threshold"):
        charts.merge_explorer(sims, 1.5)
    with pytest.raises(mk.ValidationError, match="clusters"):
        charts.merge_explorer(sims, 0.8, plan.drop("members"))


def test_conflict_graph_lanes_edges_and_status(store, now) -> None:
    a = store.add("杭州", namespace="u", key="addr", now=now)
    b = store.add("上海", namespace="u", key="addr", now=now + timedelta(hours=1))
    store.add("unkeyed and unlinked", namespace="u", now=now)
    nodes, edges = mk.conflicts.conflict_graph(store.frame("u"))
    spec = charts.conflict_graph(nodes, edges).to_dict()
    rules, disputes, dots, _ = layers(spec)
    shown = values(spec, dots)
    assert {r["id"]: r["status"] for r in shown} == {a.id: "active", b.id: "conflict"}
    assert {r["lane"] for r in shown} == {"addr"}
    assert [r["x"] for r in sorted(shown, key=lambda r: r["created_at"])] == [1, 2]  # write order
    kinds = {(r["source"], r["target"]): r["kind"] for r in values(spec, rules) + values(spec, disputes)}
    assert kinds == {(a.id, b.id): "next_version", (b.id, a.id): "conflicts_with"}
    assert disputes["mark"]["strokeWidth"] > rules["mark"]["strokeWidth"]  # drawn on top, thicker
    assert dots["encoding"]["color"]["scale"]["domain"][:3] == ["active", "conflict", "superseded"]
    with pytest.raises(mk.ValidationError, match="edges"):
        charts.conflict_graph(nodes, edges.drop("kind"))


def test_memory_timeline_rows_fades_and_states(sample_store, now) -> None:
    frame = sample_store.frame("user_87")
    at = now + timedelta(days=10)
    plan = mk.forget.plan_forget(frame, mk.ForgetParams(capacity=40), at)
    states = views.memory_states(frame, at, plan=plan)
    assert set(states.filter(pl.col("id").is_in(plan["id"].implode()))["state"]) <= {
        "forget: weak",
        "forget: capacity",
    }
    end = now + timedelta(days=60)
    spec = charts.memory_timeline(frame, end=end, floor=0.1, states=states, at=at).to_dict()
    units = layers(spec)
    rows = values(spec, units[0])
    assert len(rows) == frame.height  # one row per memory: Vega draws the curves
    assert any(t.get("calculate", "").startswith("sequence") for t in units[0]["transform"])
    fades = values(spec, units[2])
    r = frame.row(0, named=True)
    want = (
        r["created_at"].timestamp() * 1e3
        + float(mk.decay.hours_until(0.1, r["importance"], r["half_life_hours"])) * 3.6e6
    )
    assert any(abs(f["t"] - want) < 1 and f["id"] == r["id"] for f in fades) or want > end.timestamp() * 1e3
    assert fades  # the 0.1 floor is crossed by the month's short-term notes
    dots = values(spec, units[4])
    assert len(dots) == frame.height and {d["t"] for d in dots} == {at.timestamp() * 1e3}
    small = charts.memory_timeline(frame, end=end, max_memories=10).to_dict()
    assert len(values(small, layers(small)[0])) == 10
    with pytest.raises(mk.ValidationError, match="states"):
        charts.memory_timeline(frame, end=end, at=at, states=states.drop("state"))


def test_state_counts_bars(now) -> None:
    states = pl.DataFrame({"state": ["recalled", "recalled", "faded", "forget: weak", "not yet written"]})
    spec = charts.state_counts(states).to_dict()
    bars = layers(spec)[0]
    assert {r["state"]: r["memories"] for r in values(spec, bars)} == {
        "recalled": 2,
        "faded": 1,
        "forget: weak": 1,
    }
    assert bars["encoding"]["y"]["sort"] == ["recalled", "faded", "forget: weak"]
    with pytest.raises(mk.ValidationError, match="states"):
        charts.state_counts(states.rename({"state": "s"}))


def test_memory_states(now) -> None:
    f = pl.DataFrame(
        {
            "id": list("abcde"),
            "status": ["active", "active", "superseded", "active", "active"],
            "importance": [0.8, 0.6, 0.8, 0.8, 0.8],
            "half_life_hours": [2160.0, 2.0, 2160.0, 2160.0, 1.0],
            "created_at": [now - timedelta(hours=4)] * 4 + [now + timedelta(hours=1)],
            "valid_until": [None, None, None, now, None],
        }
    )
    got = views.memory_states(f, now, plan=pl.DataFrame({"id": ["b"], "reason": ["weak"]}))
    assert got["state"].to_list() == ["recalled", "forget: weak", "superseded", "expired", "not yet written"]
    assert got["strength"][1] == pytest.approx(0.15)


def test_setup_notebook_enables_the_offline_renderer() -> None:
    import altair as alt

    with pl.Config():  # (its polars setting is undone on exit: other tests keep polars' defaults)
        charts.setup_notebook()
    assert alt.renderers.active == "jupyter"
    assert alt.JupyterChart._is_offline and "cdn" not in alt.JupyterChart._esm[:2000].lower()


# ---------------------------------------------------- charts that must show the numbers the store holds
TINY_LOCOMO = Path(__file__).parent / "fixtures" / "locomo_tiny.json"


@pytest.fixture(scope="module")
def tiny_sweep() -> pl.DataFrame:
    """``evaluate.sweep``'s own shape: one row per grid point and category, plus the "all" rows; the
    grid varies a third weight (recency), as the README's does."""
    mem, qs = mk.evaluate.load_locomo(TINY_LOCOMO)
    grid = {"similarity": [0.0, 0.5, 1.0], "keyword": [0.0, 1.0], "importance": [0.0], "recency": [0.0, 0.5]}
    return mk.evaluate.sweep(mem, qs, grid=grid, k=5)


def test_weight_heatmap_draws_the_all_rows_of_a_sweep_and_names_its_rows(tiny_sweep) -> None:
    sw = tiny_sweep
    assert set(sw["category"]) == {"1", "2", "3", "4", "5", "all"}  # several rows per (x, y) cell
    with pytest.raises(mk.ValidationError, match=r"^sweep: .*recency varies too \(\[0\.0, 0\.5\]\)"):
        charts.weight_heatmap(sw, x="similarity", y="keyword", metric="recall@5")  # cells would stack
    spec = charts.weight_heatmap(
        sw, x="similarity", y="keyword", metric="recall@5", where={"recency": 0}
    ).to_dict()
    cells, text, best = layers(spec)
    want = sw.filter(pl.col("category") == "all", pl.col("recency") == 0.0)  # the mean over every question
    drawn = {(r["similarity"], r["keyword"]): r["recall@5"] for r in values(spec, cells)}
    assert len(values(spec, cells)) == len(drawn) == want.height  # one row per cell
    assert drawn == {(r["similarity"], r["keyword"]): r["recall@5"] for r in want.to_dicts()}
    top = want.sort("recall@5", descending=True).row(0, named=True)
    # several cells share the best recall here: every one is outlined, and the subtitle says they tie
    tied = want.filter(pl.col("recall@5") == top["recall@5"])
    assert tied.height == 5
    assert {(r["similarity"], r["keyword"]) for r in values(spec, best)} == set(
        tied.select("similarity", "keyword").rows()
    )
    assert spec["title"]["subtitle"] == (
        f"5 settings tie for best: recall@5 {top['recall@5']:.3f}, all outlined"
        " (rows: recency 0, category all)"
    )
    # a grid that varies only x and y (notebook 09's): the "all" rows, without a where
    plain = charts.weight_heatmap(
        sw.filter(pl.col("recency") == 0.0), x="similarity", y="keyword", metric="recall@5"
    )
    plain_spec = plain.to_dict()
    assert values(plain_spec, layers(plain_spec)[0]) == values(spec, cells)
    assert plain_spec["title"]["subtitle"].endswith(", all outlined (rows: category all)")
    # one category on request, named in the subtitle; a number or its text picks it
    one = charts.weight_heatmap(
        sw, x="similarity", y="keyword", metric="recall@5", where={"recency": 0.5, "category": 1}
    )
    rows = values(one.to_dict(), layers(one.to_dict())[0])
    cat1 = sw.filter(pl.col("category") == "1", pl.col("recency") == 0.5)
    assert sorted(r["recall@5"] for r in rows) == sorted(cat1["recall@5"].to_list())
    assert one.to_dict()["title"]["subtitle"].endswith("(rows: recency 0.5, category 1)")


def test_weight_heatmap_names_bad_where() -> None:
    grid = pl.DataFrame({"similarity": [0.5, 0.5], "importance": [0.0, 0.0], "recall": [0.4, 0.6]})
    with pytest.raises(mk.ValidationError, match="^sweep: has 2 rows in the cell"):
        charts.weight_heatmap(grid)  # two rows, nothing to tell them apart
    with pytest.raises(mk.ValidationError, match="^where: 'tie' is not a column"):
        charts.weight_heatmap(grid, where={"tie": 0.1})
    with pytest.raises(mk.ValidationError, match="^where: no row of sweep has n 2, tie 0.1"):
        charts.weight_heatmap(grid.with_columns(n=pl.lit(1), tie=pl.lit(0.1)), where={"n": 2, "tie": 0.1})
    with pytest.raises(mk.ValidationError, match="^where: 'similarity' is not a column of sweep other than"):
        charts.weight_heatmap(grid, where={"similarity": 0.5})
    with pytest.raises(mk.ValidationError, match="^where: recall is a number column"):
        charts.weight_heatmap(grid.rename({"recall": "mrr"}).with_columns(recall=pl.lit(1.0)), metric="mrr",
                              where={"recall": "high"})  # fmt: skip


def test_score_breakdown_refuses_weights_that_did_not_make_the_scores(now) -> None:
    tuned = mk.MemoryStore(settings=mk.Settings(weights=mk.Weights.articles()))
    tuned.add("User lives in Hangzhou", namespace="u", importance=0.9, now=now)
    tuned.add("User drinks coffee in Hangzhou every morning", namespace="u", importance=0.2,
              now=now + timedelta(hours=1))  # fmt: skip
    tuned.add("The weather was nice", namespace="u", importance=0.9, now=now + timedelta(hours=2))
    hits = tuned.search("Hangzhou coffee", namespace="u", k=3, now=now + timedelta(hours=3), reinforce=False)
    # the store's own weights: every bar adds up to the score the search ranked by
    spec = charts.score_breakdown(hits, tuned.weights).to_dict()
    bars, text = layers(spec)
    assert [r["score"] for r in values(spec, text)] == pytest.approx(hits["score"].to_list())
    sums: dict[int, float] = {}
    for r in values(spec, bars):
        sums[r["rank"]] = sums.get(r["rank"], 0.0) + r["contribution"]
    assert [sums[r] for r in hits["rank"]] == pytest.approx(hits["score"].to_list())
    # the chart's default weights are not the search's: refused, naming weights, instead of other totals
    with pytest.raises(mk.ValidationError, match=r"^weights: do not give the hits' scores: rank 1 scored"):
        charts.score_breakdown(hits)
    with pytest.raises(mk.ValidationError, match="^weights:"):
        views.contributions(hits, mk.Weights())
    # without a score column it is a what-if, and the subtitle says so
    what_if = charts.score_breakdown(hits.drop("score")).to_dict()
    assert what_if["title"]["subtitle"].endswith("(no search score: totals are these weights' sums)")
    tuned.close()


def test_score_breakdown_refuses_weights_without_the_searchs_neighbour_term(sample_store, now) -> None:
    hits = sample_store.search("我住在哪里", namespace="user_87", k=5, now=now, reinforce=False)
    assert "neighbour" in hits.columns and (hits["neighbour"] > 0).any()  # the default weights expand
    charts.score_breakdown(hits, sample_store.weights)  # the search's weights: drawn
    no_neighbours = dataclasses.replace(sample_store.weights, neighbour=0.0)
    with pytest.raises(mk.ValidationError, match="^weights:"):
        charts.score_breakdown(hits, no_neighbours)  # the neighbour term would vanish from every bar


def test_memory_states_follow_what_search_returns(now) -> None:
    s = mk.MemoryStore()
    later = s.add("Office moves to Pudong", namespace="u", importance=0.8, now=now,
                  valid_from=now + timedelta(days=30))  # fmt: skip
    weak = s.add("User is in a meeting until 5pm", namespace="u", importance=0.6, layer="short_term", now=now)
    for at in (now + timedelta(days=1), now + timedelta(days=31)):  # weak: 0.6 · 0.5^12 and far less
        states = views.memory_states(s.frame("u"), at)
        got = dict(states.select("id", "state").rows())
        returned = set(s.search("Office Pudong meeting", namespace="u", k=5, now=at, reinforce=False)["id"])
        assert got[later.id] == ("not yet valid" if at < now + timedelta(days=30) else "recalled")
        assert got[weak.id] == "recalled"  # no retrieval floor by default: faded, but still returned
        assert set(states.filter(pl.col("recalled"))["id"]) == returned  # recalled = what search returns
    at = now + timedelta(hours=8)  # the weak one at 0.0375: below the articles' floor, when asked for
    states = views.memory_states(s.frame("u"), at, floor=0.1)
    returned = set(s.search("meeting", namespace="u", k=5, now=at, reinforce=False, min_strength=0.1)["id"])
    assert dict(states.select("id", "state").rows())[weak.id] == "faded" and weak.id not in returned
    with pytest.raises(mk.ValidationError, match="^floor:"):
        views.memory_states(s.frame("u"), at, floor=-0.1)
    s.close()


def test_memory_timeline_floors(sample_store, now) -> None:
    frame = sample_store.frame("user_87")
    end = now + timedelta(days=60)
    spec = charts.memory_timeline(frame, end=end).to_dict()  # the default: search's floor, 0
    units = layers(spec)
    assert values(spec, units[1]) == [{"strength": 0.0}] and values(spec, units[2]) == []  # nothing fades
    assert "no retrieval floor" in spec["title"]["subtitle"][1]
    spec = charts.memory_timeline(frame, end=end, floor=0.05, forget_floor=0.1).to_dict()
    units = layers(spec)
    assert values(spec, units[1]) == [{"strength": 0.05}] and values(spec, units[3]) == [{"strength": 0.1}]
    assert units[3]["mark"]["color"] == "#d62728"  # the forgetting floor: red, apart from the dashed one
    assert spec["title"]["subtitle"][1] == "crosses: faded below the retrieval floor 0.05"
    assert "forgetting floor 0.1" in spec["title"]["subtitle"][2]
    with pytest.raises(mk.ValidationError, match="^forget_floor:"):
        charts.memory_timeline(frame, end=end, forget_floor=2.0)
