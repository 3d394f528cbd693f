"""Altair charts of memory behaviour (pure: frames in, ``alt.Chart`` out, never displayed).

Every builder takes polars frames as the store and :mod:`memkit.views` return them and gives back
a chart you can display, save or inspect with ``chart.to_dict()`` (which is how the tests check
them). Components, statuses and layers have fixed colours across all charts, and every chart has
the same width, a title that says what to look at, axis titles with units and tooltips.

Decay and retrieval live here; the merge explorer and conflict graph in :mod:`memkit.lifecycle_charts`
and the memory timeline in :mod:`memkit.timeline_chart`, all re-exported here.

Offline notebooks: Altair 6 loads its JavaScript from a CDN by default, so an offline JupyterLab
shows blank charts. Call :func:`setup_notebook` in a notebook's first cell: it switches Altair to
its widget renderer with the JavaScript bundled locally (needs ``anywidget`` and
``vl-convert-python``, both memkit dependencies).

>>> chart = half_life_curves()
>>> [layer["mark"]["type"] for layer in chart.to_dict()["layer"]][:2]
['line', 'rule']
"""

from __future__ import annotations

import altair as alt
import polars as pl

from ..errors import ValidationError
from ..params import Weights
from ..views import COMPONENTS, contributions, decay_curves, floor_crossings, worked_examples
from .style import HOURS, WIDTH, finish, scale, short

__all__ = ["half_life_curves", "rank_shift", "score_breakdown", "weight_heatmap"]


def _age_text(hours: float) -> str:
    """``4.0 -> '4 h'``, ``12.02 -> '12 h'``, ``24.0 -> '1 day'``, ``60.0 -> '2.5 days'``."""
    if hours < 24:
        return f"{hours:.1f}".removesuffix(".0") + " h"
    days = f"{hours / 24:.1f}".removesuffix(".0")
    return f"{days} day" + ("" if days == "1" else "s")


# ---------------------------------------------------------------------------------------------- decay
def half_life_curves(
    memories: pl.DataFrame | None = None,
    *,
    floor: float = 0.1,
    horizon_hours: float = 365 * 24.0,
    examples: pl.DataFrame | None = None,
) -> alt.LayerChart:
    """Strength over age, one curve per (importance, half-life), on a log time axis.

    ``memories``: ``label, importance, half_life_hours`` (default: the two worked examples). The
    dashed rule is the retrieval floor; a cross marks where each curve falls below it (the memory
    is no longer recalled); black dots are ``examples`` (``label, age_hours, strength``; default
    :func:`memkit.views.worked_examples`: 0.7939 after one day, 0.15 after four hours).
    """
    if memories is None:  # the worked examples: their curves and their dots
        ex = worked_examples() if examples is None else examples
        memories = ex.select("label", "importance", "half_life_hours")
    else:
        ex = examples if examples is not None else worked_examples().head(0)
    if not 0.0 <= floor <= 1.0:
        raise ValidationError("floor", f"must be in [0, 1], got {floor}")
    curves = decay_curves(memories, horizon_hours=horizon_hours, log=True)
    cross = floor_crossings(memories, floor).filter(
        (pl.col("hours") > 0.1) & (pl.col("hours") <= horizon_hours)
    )
    ticks = [h for h in HOURS if h <= horizon_hours]
    label_expr = " : ".join(f"datum.value == {h} ? '{HOURS[h]}'" for h in ticks) + " : ''"
    x = alt.X(
        "age_hours:Q",
        scale=alt.Scale(type="log", domain=[0.1, horizon_hours]),
        axis=alt.Axis(values=ticks, labelExpr=label_expr, title="age since written (log scale)"),
    )
    color = alt.Color(
        "label:N", title="memory", legend=alt.Legend(orient="bottom", columns=1, labelLimit=400)
    )
    lines = (
        alt.Chart(curves)
        .mark_line(strokeWidth=2.5)
        .encode(
            x,
            alt.Y(
                "strength:Q",
                scale=alt.Scale(domain=[0, 1]),
                title="strength = importance · 0.5^(age / half-life)",
            ),
            color,
            tooltip=[
                "label:N",
                alt.Tooltip("age_hours:Q", format=",.1f", title="age (h)"),
                alt.Tooltip("age_days:Q", format=",.2f", title="age (days)"),
                alt.Tooltip("strength:Q", format=".4f"),
            ],
        )
    )
    rule = (
        alt.Chart(pl.DataFrame({"floor": [floor]}))
        .mark_rule(strokeDash=[6, 4], color="#555")
        .encode(y="floor:Q")
    )
    rule_text = (
        alt.Chart(pl.DataFrame({"floor": [floor], "x": [0.12], "t": [f"retrieval floor {floor:g}"]}))
        .mark_text(align="left", dy=-7, color="#555")
        .encode(x="x:Q", y="floor:Q", text="t:N")
    )
    marks = (
        alt.Chart(cross)
        .mark_point(shape="cross", size=140, filled=True)
        .encode(
            alt.X("hours:Q"),
            alt.Y("floor:Q"),
            color,
            tooltip=[
                "label:N",
                alt.Tooltip("hours:Q", format=",.2f", title="falls below the floor after (h)"),
            ],
        )
    )
    ex_data = ex.with_columns(
        text=pl.format(
            "{} after {}",
            pl.col("strength").round(4),
            pl.col("age_hours").map_elements(_age_text, return_dtype=pl.String),
        )
    )
    dots = (
        alt.Chart(ex_data)
        .mark_point(filled=True, size=90, color="black")
        .encode(
            x="age_hours:Q",
            y="strength:Q",
            tooltip=["label:N", "age_hours:Q", alt.Tooltip("strength:Q", format=".4f")],
        )
    )
    dot_text = dots.mark_text(align="left", dx=8, dy=-8, fontWeight="bold").encode(text="text:N")
    chart = alt.layer(lines, rule, rule_text, marks, dots, dot_text).properties(width=WIDTH, height=300)
    return finish(
        chart,
        "How memories fade: strength halves every half-life",
        f"A cross marks where a memory drops below the retrieval floor ({floor:g}) and stops being recalled.",
    )


# ------------------------------------------------------------------------------------------ retrieval
def score_breakdown(
    hits: pl.DataFrame, weights: Weights = Weights(), *, title: str | None = None
) -> alt.LayerChart:
    """A stacked bar per hit: how much similarity, importance, recency, keyword and (neighbour
    expansion) the adjacent memories each add to the score (``weight × component``), so a ranking
    explains itself. ``hits``: a search frame."""
    long = contributions(hits, weights).with_columns(
        label=pl.format(
            "{}. {}", pl.col("rank"), pl.col("content").map_elements(short, return_dtype=pl.String)
        )
    )
    order = long.sort("rank")["label"].unique(maintain_order=True).to_list()
    y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
    bars = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            alt.X("contribution:Q", stack="zero", title="score = Σ weight × component"),
            y,
            alt.Color("component:N", scale=scale("component"), title="component"),
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
        .transform_calculate(order=f"indexof({[*COMPONENTS, 'neighbour']}, datum.component)")
    )
    totals = long.group_by("rank", "label", maintain_order=True).agg(pl.col("score").first())
    text = (
        alt.Chart(totals)
        .mark_text(align="left", dx=4, fontSize=11)
        .encode(alt.X("score:Q"), y, text=alt.Text("score:Q", format=".3f"))
    )
    w = ", ".join(
        f"{c} {getattr(weights, c):g}"
        for c in (*COMPONENTS, "neighbour")
        if c in COMPONENTS or weights.neighbour
    )
    chart = alt.layer(bars, text).properties(width=WIDTH - 260, height=max(24 * hits.height, 60))
    return finish(chart, title or "Why each memory ranks where it does", f"weights: {w}")


def rank_shift(
    before: pl.DataFrame, after: pl.DataFrame, *, labels: tuple[str, str] = ("before", "after")
) -> alt.LayerChart:
    """Slope chart: the top-k of two rankings (search frames with ``rank, id, content``) side by
    side; lines join a memory's two ranks, coloured by how it moved. A memory in one top-k only sits
    on the ``out`` row of the other."""
    for name, f in (("before", before), ("after", after)):
        if not isinstance(f, pl.DataFrame) or not {"rank", "id", "content"} <= set(f.columns):
            raise ValidationError(name, "must be a search frame with rank, id, content")
    k = max(before.height, after.height)
    out = k + 1
    texts = pl.concat([before.select("id", "content"), after.select("id", "content")]).unique(
        "id", keep="first", maintain_order=True
    )
    both = texts.join(before.select("id", r0="rank"), on="id", how="left").join(
        after.select("id", r1="rank"), on="id", how="left"
    )
    both = both.with_columns(
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
        label=pl.col("content").map_elements(lambda s: short(s, 30), return_dtype=pl.String),
    )
    long = both.unpivot(
        index=["id", "content", "label", "movement"], on=["r0", "r1"], variable_name="side", value_name="rank"
    ).with_columns(setting=pl.col("side").replace_strict({"r0": labels[0], "r1": labels[1]}))
    long = long.with_columns(
        text=pl.when(pl.col("rank") < out).then(pl.format("{}. {}", pl.col("rank"), pl.col("label")))
    )
    # labels sit outside the two columns: pad the point scale so they fit inside the chart
    x = alt.X(
        "setting:N",
        sort=list(labels),
        title=None,
        scale=alt.Scale(padding=1.6),
        axis=alt.Axis(orient="top", labelAngle=0, labelFontSize=12, domain=False, ticks=False),
    )
    y = alt.Y("rank:Q", scale=alt.Scale(reverse=True, domain=[0.5, out + 0.5]), axis=None)
    color = alt.Color(
        "movement:N", scale=scale("movement"), title="moved", legend=alt.Legend(orient="bottom")
    )
    tip = ["content:N", "movement:N", "setting:N", "rank:Q"]
    base = alt.Chart(long).encode(x, y, color, detail="id:N", tooltip=tip)
    lines = base.mark_line(strokeWidth=2, point=alt.OverlayMarkDef(size=60, filled=True))
    left = (
        base.mark_text(align="right", dx=-10)
        .encode(text="text:N")
        .transform_filter((alt.datum.setting == labels[0]) & (alt.datum.rank < out))
    )
    right = (
        base.mark_text(align="left", dx=10)
        .encode(text="text:N")
        .transform_filter((alt.datum.setting == labels[1]) & (alt.datum.rank < out))
    )
    out_label = (
        alt.Chart(pl.DataFrame({"rank": [out], "t": ["outside the top k"]}))
        .mark_text(color="#888", fontStyle="italic")
        .encode(y="rank:Q", text="t:N")
    )
    chart = alt.layer(lines, left, right, out_label).properties(width=WIDTH - 40, height=max(28 * out, 120))
    moved = int((both["movement"] != "same").sum())
    return finish(
        chart, f"How the top {k} changes: {labels[0]} → {labels[1]}", f"{moved} of {both.height} moved"
    )


def weight_heatmap(
    sweep: pl.DataFrame, *, x: str = "similarity", y: str = "importance", metric: str = "recall"
) -> alt.LayerChart:
    """A metric over a grid of two weights (a tidy frame with columns ``x``, ``y``, ``metric``); the
    best cell is outlined."""
    if not isinstance(sweep, pl.DataFrame) or not {x, y, metric} <= set(sweep.columns):
        raise ValidationError("sweep", f"must be a polars DataFrame with columns {x}, {y}, {metric}")
    data = sweep.select(x, y, metric).with_columns(pl.col(x).round(3), pl.col(y).round(3))
    best = data.sort(metric, descending=True).head(1)
    enc = [
        alt.X(f"{x}:O", title=f"{x} weight", axis=alt.Axis(labelAngle=0)),
        alt.Y(f"{y}:O", title=f"{y} weight", sort="descending"),
    ]
    tip = [alt.Tooltip(f"{x}:Q"), alt.Tooltip(f"{y}:Q"), alt.Tooltip(f"{metric}:Q", format=".3f")]
    cells = (
        alt.Chart(data)
        .mark_rect()
        .encode(*enc, alt.Color(f"{metric}:Q", scale=alt.Scale(scheme="viridis"), title=metric), tooltip=tip)
    )
    hi = float(data[metric].max() or 0)
    text = (
        alt.Chart(data)
        .mark_text(fontSize=10)
        .encode(
            *enc,
            text=alt.Text(f"{metric}:Q", format=".2f"),
            color=alt.condition(f"datum['{metric}'] > {hi * 0.6}", alt.value("black"), alt.value("white")),
        )
    )
    outline = alt.Chart(best).mark_rect(fill=None, stroke="#d62728", strokeWidth=3).encode(*enc)
    chart = alt.layer(cells, text, outline).properties(width=WIDTH - 160, height=WIDTH - 260)
    b = best.row(0, named=True) if best.height else {x: None, y: None, metric: None}
    return finish(
        chart,
        f"{metric} over {x} × {y} weights",
        f"best: {x} {b[x]}, {y} {b[y]} → {metric} {b[metric]:.3f}" if best.height else "empty sweep",
    )
