"""Charts and panels say what the lessons mean (helper 109, from the browser audit h106): texts cut
before the words that tell two memories apart, ranks that contradict the scores shown, black digits on
dark heatmap cells, one of a hundred tied cells called "the best", a slider whose browser value was
not the one Python computed with, one word with two meanings in one panel."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

import memkit as mk
from memkit import charts, views
from memkit.charts.timeline import STATE_COLORS

T = datetime(2026, 1, 1, tzinfo=UTC)
LONG = "Alice is vegetarian and avoids dairy, and she said so twice"  # 59 characters


def _hits(scores: list[float], contents: list[str] | None = None) -> pl.DataFrame:
    """A search frame under ``Weights(similarity=1, importance=0, ...)``: score = similarity."""
    n = len(scores)
    return pl.DataFrame({
        "rank": list(range(1, n + 1)), "id": [f"m{i}" for i in range(n)],
        "content": contents or [f"memory {i}" for i in range(n)], "score": scores, "similarity": scores,
        "importance": [0.5] * n, "recency": [0.5] * n,
    })  # fmt: skip


SIM = mk.Weights(similarity=1.0, importance=0.0, recency=0.0, keyword=0.0, neighbour=0.0)


# ----------------------------------------------------------------------------- ranks and scores
def test_rank_notes_name_near_ties_and_zero_scores() -> None:
    hits = pl.DataFrame({"rank": [3, 1, 2, 4], "score": [0.5, 0.784, 0.787, 0.0]})  # any row order
    assert views.rank_notes(hits).to_list() == [None, views.NEAR_TIE, None, views.NO_MATCH]
    assert views.rank_notes(hits.head(0)).to_list() == []
    with pytest.raises(mk.ValidationError, match="^hits"):
        views.rank_notes(pl.DataFrame({"rank": [1]}))


def test_score_breakdown_marks_a_near_tie_and_greys_a_zero_score() -> None:
    spec = charts.score_breakdown(_hits([0.784, 0.787, 0.5, 0.0]), SIM).to_dict()
    totals = {r["rank"]: r["text"] for r in spec["datasets"].values() for r in r if "text" in r}
    assert totals == {
        1: "0.784  ↑ near tie: newer first",
        2: "0.787",
        3: "0.500",
        4: "0.000  score 0: matches nothing",
    }
    subtitle = spec["title"]["subtitle"]
    assert subtitle[1].startswith("↑ near tie:") and subtitle[2].startswith("score 0:")
    # the zero-score row's label is grey on the axis: the test names exactly its label
    axis = spec["layer"][0]["encoding"]["y"]["axis"]
    assert json.dumps(["4. memory 3"]) in axis["labelColor"]["condition"]["test"]
    # a what-if (no search score) is ranked by the caller, not by the rule: no notes
    plain = charts.score_breakdown(_hits([0.5, 0.6]).drop("score"), SIM).to_dict()
    assert (
        isinstance(plain["title"]["subtitle"], str)
        and "labelColor" not in plain["layer"][0]["encoding"]["y"]["axis"]
    )


def test_score_breakdown_and_rank_shift_keep_the_words_that_differ() -> None:
    two = [LONG, "Alice is vegetarian and avoids dairy, and she said so once"]
    spec = charts.score_breakdown(_hits([0.9, 0.8], two), SIM).to_dict()
    labels = {r["label"] for r in spec["datasets"].values() for r in r if "label" in r}
    assert labels == {f"1. {LONG}", f"2. {two[1]}"}  # whole: they differ in their last word
    y = spec["layer"][0]["encoding"]["y"]["axis"]
    assert y["labelLimit"] >= 350
    assert spec["layer"][0]["encoding"]["color"]["legend"]["orient"] == "bottom"  # clear of the totals
    shift = charts.rank_shift(_hits([0.9, 0.8], two), _hits([0.9, 0.8], two[::-1])).to_dict()
    texts = {r["text"] for r in shift["datasets"].values() for r in r if r.get("text")}
    assert "1. Alice is vegetarian and avoids dairy, and she s…" in texts  # 48 characters, not 30


# ------------------------------------------------------------------------------------------ heatmap
def test_heatmap_text_colour_follows_the_cells_brightness_and_ties_are_said() -> None:
    grid = pl.DataFrame({"similarity": [0.0, 0.0, 0.5, 0.5], "keyword": [0.0, 1.0, 0.0, 1.0],
                         "mrr": [0.44, 0.61, 0.76, 0.76]})  # fmt: skip
    spec = charts.weight_heatmap(grid, y="keyword", metric="mrr").to_dict()
    cells, text, outline = spec["layer"]
    assert cells["encoding"]["color"]["scale"]["domain"] == [0.44, 0.76]  # lowest to best
    test = text["encoding"]["color"]["condition"]["test"]
    cut = float(test.split(">=")[1])
    assert cut == pytest.approx(0.44 + 0.45 * 0.32)  # 0.61 (teal) reads in black, 0.44 (purple) in white
    assert 0.44 < cut < 0.61
    assert spec["title"]["subtitle"] == "2 settings tie for best: mrr 0.760, all outlined"
    assert len(spec["datasets"][outline["data"]["name"]]) == 2
    one = charts.weight_heatmap(
        grid.with_columns(mrr=pl.Series([0.44, 0.61, 0.76, 0.75])), y="keyword", metric="mrr"
    )
    assert one.to_dict()["title"]["subtitle"] == "best: similarity 0.5, keyword 0.0 → mrr 0.760"


# ------------------------------------------------------------------------------------- notebooks
def test_setup_notebook_shows_whole_texts_in_polars_tables() -> None:
    frame = pl.DataFrame({"content": [LONG]})
    with pl.Config():  # restored on exit: the rest of the session keeps polars' default
        charts.setup_notebook()
        assert LONG in frame._repr_html_()
        pl.Config.set_fmt_str_lengths(30)
        charts.setup_notebook(text_width=None)  # the panels' call: polars' setting left alone
        assert LONG not in frame._repr_html_()
        for bad in (0, 2.5, True, "80"):
            with pytest.raises(mk.ValidationError, match="^text_width"):
                charts.setup_notebook(text_width=bad)  # type: ignore[arg-type]


def test_half_life_curves_reach_every_crossing_and_space_their_labels() -> None:
    kinds = pl.DataFrame({"label": ["project background", "transient"], "importance": [0.7, 0.2],
                          "half_life_hours": [180 * 24.0, 2.0]})  # fmt: skip
    spec = charts.half_life_curves(kinds).to_dict()
    crosses = spec["datasets"][spec["layer"][3]["data"]["name"]]
    assert {r["label"] for r in crosses} == {"project background", "transient"}  # 505 days: on the axis
    axis = spec["layer"][0]["encoding"]["x"]["axis"]
    assert axis["labelSeparation"] > 0 and axis["labelOverlap"] == "greedy"
    short = charts.half_life_curves(kinds.tail(1)).to_dict()  # nothing past a year: a year
    assert short["layer"][0]["encoding"]["x"]["scale"]["domain"] == [0.1, 365 * 24.0]


def test_the_timelines_legend_lists_the_states_present() -> None:
    f = pl.DataFrame({"id": ["a", "b"], "content": ["x", "y"], "layer": ["long_term"] * 2,
                      "importance": [0.8, 0.2], "half_life_hours": [2160.0, 2.0], "created_at": [T, T],
                      "status": ["active"] * 2, "valid_until": [None, None]})  # fmt: skip
    states = views.memory_states(f, T + timedelta(hours=8), floor=0.1)
    spec = charts.memory_timeline(
        f, end=T + timedelta(days=1), states=states, at=T + timedelta(hours=8)
    ).to_dict()
    dots = [u for u in spec["layer"] if u["encoding"].get("color", {}).get("field") == "state"]
    assert dots[0]["encoding"]["color"]["legend"]["values"] == ["recalled", "faded"]
    assert len(dots[0]["encoding"]["color"]["scale"]["domain"]) == len(STATE_COLORS)  # colours fixed


# ------------------------------------------------------------------------------------------ panels
def test_the_half_life_explorer_steps_through_exact_spans() -> None:
    pytest.importorskip("ipywidgets")
    panel = mk.widgets.half_life_explorer(importance=0.7, half_life_hours=24.0, age_hours=12.0)
    half_life, age = panel.sliders["half_life_hours"], panel.sliders["age_hours"]
    labels = dict(half_life.options)
    assert (
        labels["2 h"] == 2.0
        and labels["1 d"] == 24.0
        and labels["90 d"] == 2160.0
        and labels["1 y"] == 8760.0
    )
    assert dict(age.options)["12 h"] == 12.0 and dict(age.options)["6 min"] == 0.1
    # the lesson's move: the browser holds exactly 2.0 (a log slider snapped it to 1.995 there, and the
    # message, recomputed with that, said 0.0106 under a table that said 0.0109)
    half_life.value = 2.0
    s = float(mk.decay.strength(0.7, 12.0, 2.0))
    assert half_life.label == "2 h" and panel.data["strength"][0] == round(s, 4)
    assert f"strength {s:.4f}" in panel.message.value
    odd = mk.widgets.half_life_explorer(half_life_hours=30.0)  # between two steps: a position of its own
    assert ("30 h", 30.0) in odd.sliders["half_life_hours"].options


def test_the_merge_explorer_says_a_chain_can_reach_below_the_threshold() -> None:
    pytest.importorskip("ipywidgets")
    s = mk.MemoryStore()
    s.add_many(pl.DataFrame({"content": ["tea", "tea.", "tea!"]}), namespace="u", now=T)
    panel = mk.widgets.merge_explorer(s, "u", now=T)
    assert "lowest cosine to the survivor" in panel.table.value and "pair by pair" in panel.table.value
    s.close()


def test_the_time_machine_says_why_a_lower_score_ranks_first_and_keeps_its_headings_apart() -> None:
    pytest.importorskip("ipywidgets")
    s = mk.MemoryStore()
    s.add("the user lives in Hangzhou", namespace="u", importance=0.8, now=T)
    s.add(
        "the user now lives in Hangzhou, Binjiang", namespace="u", importance=0.8, now=T + timedelta(hours=1)
    )
    s.add("the user likes tea", namespace="u", importance=0.8, now=T + timedelta(days=3))
    tm = mk.widgets.time_machine(s, "u", query="the user lives in Hangzhou", at=T + timedelta(days=4))
    hits = tm.hits
    assert hits is not None and hits["score"][0] < hits["score"][1]  # the newer, slightly lower, first
    assert views.NEAR_TIE in tm.table.value
    assert "<b>a forget pass now would drop</b></div><i>(none)</i>" in tm.table.value  # not "drop(none)"
    s.close()


def test_the_guard_panel_shows_a_rate_as_a_percent_of_one() -> None:
    pytest.importorskip("ipywidgets")
    scored = pl.DataFrame({"probability": [0.9, 0.2, 0.7, 0.1], "label": [1, 1, 0, 0]})
    panel = mk.widgets.guard_threshold(scored)
    assert panel.data["rate"].to_list() == [0.5, 0.5]  # data: fractions
    assert ">50.0%<" in panel.table.value and "50.000" not in panel.table.value
