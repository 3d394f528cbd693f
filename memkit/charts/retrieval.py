"""Charts of retrieval: why a memory ranks where it does (pure: frames in, a chart out).

A search scores every candidate as a weighted sum of components (:class:`memkit.params.Weights`)::

    score = w_sim · similarity + w_imp · importance + w_rec · recency + w_kw · keyword
            (+ w_nb · the better adjacent memory's score, with neighbour expansion)

and a ranking is only as trustworthy as those weights. Three charts make them visible:

- :func:`score_breakdown` — a stacked bar per hit, one segment per ``weight × component``: a hit
  that ranks high only on importance, or only on keyword overlap, shows it at a glance;
- :func:`rank_shift` — two rankings of one query side by side (before and after a change of
  weights, embedder or data), lines joining each memory's two ranks;
- :func:`weight_heatmap` — a metric (recall@k, MRR) over a grid of two weights, from
  :func:`memkit.evaluate.sweep`, best cell outlined (it lives in :mod:`memkit.charts.heatmap`,
  re-exported here).

Every builder validates its frame and names the argument at fault (a
:class:`~memkit.errors.ValidationError`), so a wrong frame fails here, not inside Vega.
Re-exported by :mod:`memkit.charts`; the decay chart :func:`half_life_curves` now lives in
:mod:`memkit.charts.decay` and is re-exported here under its old path.

>>> import polars as pl
>>> hits = pl.DataFrame({"rank": [1, 2], "id": ["a", "b"], "content": ["tea", "coffee"],
...     "score": [0.67, 0.44], "similarity": [0.9, 0.2], "importance": [0.1, 0.9], "recency": [1.0, 0.5]})
>>> spec = score_breakdown(hits, Weights.articles()).to_dict()
>>> spec["title"]["subtitle"]
'weights: similarity 0.6, importance 0.3, recency 0.1, keyword 0'

With the articles' weights, "tea" scores 0.6·0.9 + 0.3·0.1 + 0.1·1.0 = 0.54 + 0.03 + 0.10 = 0.67 and
"coffee" 0.12 + 0.27 + 0.05 = 0.44: coffee is the more important memory, but the weights favour
similarity, and the chart shows that in the length of each bar's blue segment. Drawn with
``Weights()`` instead, these scores would be unexplained: the chart refuses (``weights: do not give
the hits' scores ...``) rather than draw totals the search never gave.
"""

from __future__ import annotations

import json

import altair as alt
import polars as pl

from ..errors import ValidationError
from ..params import Weights
from ..views import COMPONENTS, NEAR_TIE, NO_MATCH, contributions, rank_notes
from .decay import half_life_curves
from .heatmap import weight_heatmap
from .style import WIDTH, finish, scale, short

__all__ = ["half_life_curves", "rank_shift", "score_breakdown", "weight_heatmap"]

_LABEL_PX = 360
"""The most pixels a memory's label takes beside its bars (60 Latin characters; fewer Chinese ones)."""
# the slope chart: _SLOPE_GAP pixels between its two columns (room for "outside the top k"), and 260 on
# either side for the labels (up to 48 characters, cut at _SLOPE_LABEL_PX)
_SLOPE_WIDTH, _SLOPE_GAP, _SLOPE_LABEL_PX = 700, 180, 245


def score_breakdown(
    hits: pl.DataFrame, weights: Weights = Weights(), *, title: str | None = None
) -> alt.LayerChart:
    """A stacked bar per hit: how much similarity, importance, recency, keyword and (neighbour
    expansion) the adjacent memories each add to the score (``weight × component``), so a ranking
    explains itself. ``hits``: a search frame.

    Bars are in rank order, the best on top, each labelled with its total score; the segments are
    stacked in :data:`memkit.views.COMPONENTS` order, so the same component sits at the same place
    in every bar. The subtitle lists the weights (``neighbour`` only when it is on). The weights
    must be those of the search that produced ``hits`` (``store.weights`` for a store's default):
    when ``hits`` has a ``score`` column, bars that would not add up to it raise a ValidationError
    naming ``weights`` (:func:`memkit.views.contributions`). A frame without ``score`` is a what-if:
    the totals are what ``weights`` would give, in the frame's rank order, and the subtitle says so.

    Where the order needs a word, the total says it (:func:`memkit.views.rank_notes`, for a search's
    own scores): ``↑ near tie: newer first`` on a hit the near-tie rule ranked above a higher score,
    and ``score 0: matches nothing``, greyed with its label, on a hit that only fills the top k; a
    subtitle line explains each once. Labels keep up to 60 characters (the tooltip has the whole
    text); the legend sits under the bars, clear of their totals.
    """
    # (hits · components) rows: rank, id, content, component, value, weight, contribution, score
    long = contributions(hits, weights).with_columns(
        label=pl.format(
            "{}. {}",
            pl.col("rank"),
            pl.col("content").map_elements(lambda t: short(t, 60), return_dtype=pl.String),
        )
    )
    # "1. User lives in Hangzhou": the rank in the label keeps two hits with one text apart
    order = long.sort("rank")["label"].unique(maintain_order=True).to_list()
    # the total at the end of each bar: the score the search ranked by (checked by contributions)
    totals = long.group_by("rank", "label", maintain_order=True).agg(pl.col("score").first())
    notes = (
        rank_notes(totals)
        if "score" in hits.columns
        else pl.Series("note", [None] * totals.height, pl.String)
    )
    marks = {NEAR_TIE: "  ↑ " + NEAR_TIE, NO_MATCH: "  " + NO_MATCH}  # after the total: "0.874  ↑ near tie…"
    texts = [f"{v:.3f}{marks.get(n, '')}" for v, n in zip(totals["score"], notes, strict=True)]
    totals = totals.with_columns(note=notes.cast(pl.String), text=pl.Series(texts, dtype=pl.String))
    grey = totals.filter(pl.col("note") == NO_MATCH)["label"].to_list()
    # a hit scoring 0 is greyed on the axis too: `indexof` over the labels as a JSON (= Vega) array
    label_color = {"condition": {"test": f"indexof({json.dumps(grey)}, datum.value) >= 0", "value": "#999"},
                   "value": "#000"} if grey else alt.Undefined  # fmt: skip
    y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=_LABEL_PX, labelColor=label_color))
    bars = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            alt.X(
                "contribution:Q",
                stack="zero",
                title="score = Σ weight × component",
                axis=alt.Axis(tickCount=6),
            ),
            y,
            alt.Color(
                "component:N",
                scale=scale("component"),
                title="component",
                legend=alt.Legend(orient="bottom", direction="horizontal"),  # clear of the totals
            ),
            alt.Order("order:Q"),
            tooltip=[
                "rank:O",
                "content:N",
                "component:N",
                alt.Tooltip("value:Q", format=".3f", title="component value"),
                alt.Tooltip("weight:Q", format=".2f"),
                alt.Tooltip("contribution:Q", format=".3f"),
                alt.Tooltip("score:Q", format=".3f"),
            ],
        )
        # the stacking order: a component's position in COMPONENTS (+ neighbour), computed by Vega
        .transform_calculate(order=f"indexof({[*COMPONENTS, 'neighbour']}, datum.component)")
    )
    text = (
        alt.Chart(totals)
        .mark_text(align="left", dx=4, fontSize=11)
        .encode(
            alt.X("score:Q"),
            y,
            text="text:N",
            color=alt.condition(alt.datum.note == NO_MATCH, alt.value("#999"), alt.value("#333")),
        )
    )
    # "weights: similarity 0.3, importance 0, ...": what a reader needs to redo one bar by hand
    w = ", ".join(
        f"{c} {getattr(weights, c):g}"
        for c in (*COMPONENTS, "neighbour")
        if c in COMPONENTS or weights.neighbour
    )
    # 24 pixels a bar; the plot keeps the house width less 260 pixels, the labels take up to _LABEL_PX
    chart = alt.layer(bars, text).properties(width=WIDTH - 260, height=max(24 * hits.height, 60))
    what_if = "" if "score" in hits.columns else " (no search score: totals are these weights' sums)"
    subtitle = [f"weights: {w}{what_if}"]
    if (notes == NEAR_TIE).any():
        subtitle.append(
            f"↑ near tie: scores within one step of tie {weights.tie:g} × the best score rank newest first"
        )
    if grey:
        subtitle.append("score 0: no weighted signal found it; it only fills a place of the top k")
    return finish(
        chart, title or "Why each memory ranks where it does", subtitle if len(subtitle) > 1 else subtitle[0]
    )


def rank_shift(
    before: pl.DataFrame, after: pl.DataFrame, *, labels: tuple[str, str] = ("before", "after")
) -> alt.LayerChart:
    """Slope chart: the top-k of two rankings (search frames with ``rank, id, content``) side by
    side; lines join a memory's two ranks, coloured by how it moved. A memory in one top-k only sits
    on the ``out`` row of the other.

    ``labels`` name the two columns (``("baseline", "these weights")`` in the weights tuner). The
    colours: green up, red down, grey unchanged, blue entered the top k, orange left it. The
    subtitle counts each movement (a memory that entered pushed one out: of a top 3, "1 entered,
    1 left" is one swap); a change of weights that moves nothing is a change the user will not notice.

    >>> before = pl.DataFrame({"rank": [1, 2, 3], "id": ["a", "b", "c"], "content": ["x", "y", "z"]})
    >>> after = pl.DataFrame({"rank": [1, 2, 3], "id": ["b", "a", "d"], "content": ["y", "x", "w"]})
    >>> rank_shift(before, after).to_dict()["title"]["subtitle"]  # a down, b up, c left, d entered
    'top 3: 1 up, 1 down, 1 entered, 1 left'
    """
    for name, f in (("before", before), ("after", after)):
        if not isinstance(f, pl.DataFrame) or not {"rank", "id", "content"} <= set(f.columns):
            raise ValidationError(name, "must be a search frame with rank, id, content")
    k = max(before.height, after.height)
    out = k + 1  # the "outside the top k" row, just below the last rank
    both = _rank_pairs(before, after, out)
    long = _one_row_per_side(both, labels, out)
    # labels sit outside the two columns: the columns are placed _SLOPE_GAP apart in the middle of the
    # chart (an explicit pixel range, no padding), leaving each side room for its labels
    x = alt.X(
        "setting:N",
        sort=list(labels),
        title=None,
        scale=alt.Scale(range=[(_SLOPE_WIDTH - _SLOPE_GAP) / 2, (_SLOPE_WIDTH + _SLOPE_GAP) / 2], padding=0),
        axis=alt.Axis(orient="top", labelAngle=0, labelFontSize=12, domain=False, ticks=False),
    )
    # rank 1 at the top; the axis is hidden because every point is labelled with its rank
    y = alt.Y("rank:Q", scale=alt.Scale(reverse=True, domain=[0.5, out + 0.5]), axis=None)
    color = alt.Color(
        "movement:N", scale=scale("movement"), title="moved", legend=alt.Legend(orient="bottom")
    )
    tip = ["content:N", "movement:N", "setting:N", "rank:Q"]
    # detail=id: one line per memory, from its point in the left column to its point in the right
    base = alt.Chart(long).encode(x, y, color, detail="id:N", tooltip=tip)
    lines = base.mark_line(strokeWidth=2, point=alt.OverlayMarkDef(size=60, filled=True))
    left, right = _side_labels(base, labels, out)
    # the out row has no rank number: a grey italic caption in the middle says what it is
    out_label = (
        alt.Chart(pl.DataFrame({"rank": [out], "t": ["outside the top k"]}))
        .mark_text(color="#888", fontStyle="italic")
        .encode(y="rank:Q", text="t:N")
    )
    chart = alt.layer(lines, left, right, out_label).properties(width=_SLOPE_WIDTH, height=max(28 * out, 120))
    # per movement, not "n of the union moved": that union is larger than k whenever one entered
    n = dict(both["movement"].value_counts().iter_rows())
    moved = ", ".join(f"{n[m]} {m}" for m in ("up", "down", "entered", "left") if n.get(m))
    said = f"top {k}: {moved}" if moved else f"the same top {k}, in the same order"
    return finish(chart, f"How the top {k} changes: {labels[0]} → {labels[1]}", said)


def _rank_pairs(before: pl.DataFrame, after: pl.DataFrame, out: int) -> pl.DataFrame:
    """One row per memory in either ranking: ``id, content, r0, r1`` (its rank before and after,
    ``out`` when absent), ``movement`` and ``label`` (its content cut to 48 characters).

    ``movement`` is ``entered`` (not in ``before``), ``left`` (not in ``after``), ``up`` (a
    smaller rank number after), ``down`` or ``same``. Rows are ``before``'s memories first, in its
    order, then the newcomers of ``after``.
    """
    # every memory once, with its text from whichever ranking has it
    texts = pl.concat([before.select("id", "content"), after.select("id", "content")]).unique(
        "id", keep="first", maintain_order=True
    )
    both = texts.join(before.select("id", r0="rank"), on="id", how="left").join(
        after.select("id", r1="rank"), on="id", how="left"
    )
    return both.with_columns(
        pl.col("r0").fill_null(out).cast(pl.Int64),
        pl.col("r1").fill_null(out).cast(pl.Int64),
    ).with_columns(
        movement=pl.when(pl.col("r0") == out)
        .then(pl.lit("entered"))
        .when(pl.col("r1") == out)
        .then(pl.lit("left"))
        .when(pl.col("r1") < pl.col("r0"))
        .then(pl.lit("up"))
        .when(pl.col("r1") > pl.col("r0"))
        .then(pl.lit("down"))
        .otherwise(pl.lit("same")),
        label=pl.col("content").map_elements(lambda s: short(s, 48), return_dtype=pl.String),
    )


def _one_row_per_side(both: pl.DataFrame, labels: tuple[str, str], out: int) -> pl.DataFrame:
    """``both`` unpivoted to two rows per memory, one per ranking (``setting`` is its label), with
    ``text`` = ``"3. <label>"`` where the memory is ranked and null on the ``out`` row.

    Vega draws a line through the points of one ``detail`` group, so the slope chart needs the
    long shape: ``(id=a, r0=1, r1=2)`` becomes ``(a, before, 1)`` and ``(a, after, 2)``.
    """
    long = both.unpivot(
        index=["id", "content", "label", "movement"], on=["r0", "r1"], variable_name="side", value_name="rank"
    ).with_columns(setting=pl.col("side").replace_strict({"r0": labels[0], "r1": labels[1]}))
    return long.with_columns(
        text=pl.when(pl.col("rank") < out).then(pl.format("{}. {}", pl.col("rank"), pl.col("label")))
    )


def _side_labels(base: alt.Chart, labels: tuple[str, str], out: int) -> tuple[alt.Chart, alt.Chart]:
    """The ``"3. <text>"`` labels: left of the first column (right-aligned) and right of the second
    (left-aligned), so they never cross the lines; memories on the ``out`` row get none.

    Both are filters of ``base``, so they share its encodings and tooltip with the lines.
    """
    left = (
        base.mark_text(align="right", dx=-10, limit=_SLOPE_LABEL_PX)
        .encode(text="text:N")
        .transform_filter((alt.datum.setting == labels[0]) & (alt.datum.rank < out))
    )
    right = (
        base.mark_text(align="left", dx=10, limit=_SLOPE_LABEL_PX)
        .encode(text="text:N")
        .transform_filter((alt.datum.setting == labels[1]) & (alt.datum.rank < out))
    )
    return left, right
