"""The decay chart: how a memory's strength halves every half-life (pure: frames in, a chart out).

A memory starts at its importance and fades with age: ``strength = importance · 0.5^(age /
half-life)``. Below a retrieval floor search no longer returns it, so the age at which a curve
crosses the floor, ``half-life · log2(importance / floor)``, is how long the memory stays recallable
(:func:`memkit.decay.hours_until`). The chart draws the articles' floor, 0.1, by default: it is the
floor of a search with ``min_strength=0.1`` and of the articles' forgetting policy, but not memkit's
defaults (``DecayParams.min_strength`` is 0: ``store.search`` returns a memory however faded until a
forget pass drops it, below ``ForgetParams.min_strength``, 0.05: one half-life later). The two worked
examples of the design, with the 0.1 floor:

- "住在杭州滨江" (lives in Hangzhou), importance 0.8, half-life 90 days: 0.7939 after one day, and
  recallable for 90 · log2(8) = 270 days;
- "我现在在开会" (I'm in a meeting now), importance 0.6, half-life 2 h: 0.15 after four hours, and
  gone after 2 · log2(6) = 5.17 h.

How to read :func:`half_life_curves`: the x axis is age on a log scale, so hours and years fit on
one chart (each tick is a familiar span: 1 h, 6 h, 1 d, 1 wk, 30 d, ...); on it, every curve has the
same shape, shifted right by its half-life and up by its importance. The dashed line is the floor;
a cross marks where each curve meets it; the black dots are the worked examples with their values.

Re-exported by :mod:`memkit.charts` (and by :mod:`memkit.charts.retrieval`, where it used to live).

>>> chart = half_life_curves()
>>> [layer["mark"]["type"] for layer in chart.to_dict()["layer"]]
['line', 'rule', 'text', 'point', 'point', 'text']
"""

from __future__ import annotations

import altair as alt
import polars as pl

from ..errors import ValidationError
from ..views import decay_curves, floor_crossings, worked_examples
from .style import HOURS, WIDTH, finish

__all__ = ["half_life_curves"]

_YEAR, _LONGEST = 365 * 24.0, 10 * 8760.0  # the default x axis' end, and the furthest it goes (hours)


def half_life_curves(
    memories: pl.DataFrame | None = None,
    *,
    floor: float = 0.1,
    horizon_hours: float | None = None,
    examples: pl.DataFrame | None = None,
) -> alt.LayerChart:
    """Strength over age, one curve per (importance, half-life), on a log time axis.

    ``memories``: ``label, importance, half_life_hours`` (default: the two worked examples). The
    dashed rule is ``floor`` (default 0.1, the articles' retrieval and forgetting floor; memkit's
    forgetting floor is 0.05, and ``store.search`` has none by default); a cross marks where each
    curve falls below it (a search with that floor no longer recalls the memory); black dots are
    ``examples`` (``label, age_hours, strength``; default :func:`memkit.views.worked_examples`: 0.7939
    after one day, 0.15 after four hours).

    ``horizon_hours`` is where the x axis ends; by default a year, or further when a memory crosses
    the floor later (a quarter past its crossing, up to 10 years), so every curve gets its cross. The
    axis starts at 0.1 h (6 minutes), since a log axis cannot reach age 0. Given ``memories`` but no
    ``examples``, no dots are drawn.

    >>> notes = pl.DataFrame({"label": ["a passing remark", "a stated fact"],
    ...                       "importance": [0.5, 0.9], "half_life_hours": [6.0, 720.0]})
    >>> spec = half_life_curves(notes, floor=0.2).to_dict()
    >>> crosses = spec["datasets"][spec["layer"][3]["data"]["name"]]
    >>> [(r["label"], round(r["hours"], 1)) for r in crosses]
    [('a passing remark', 7.9), ('a stated fact', 1562.3)]

    The remark is gone after 6 · log2(0.5 / 0.2) = 7.9 hours; the fact lasts 720 · log2(0.9 / 0.2)
    hours, about 65 days. Raising the floor shortens every memory's life by the same number of
    half-lives, which is why the long-lived facts are the ones a high floor costs the most.
    """
    if memories is None:  # the worked examples: their curves and their dots
        ex = worked_examples() if examples is None else examples
        memories = ex.select("label", "importance", "half_life_hours")
    else:
        ex = examples if examples is not None else worked_examples().head(0)
    if not 0.0 <= floor <= 1.0:
        raise ValidationError("floor", f"must be in [0, 1], got {floor}")
    cross = floor_crossings(memories, floor)  # label, hours, floor
    if horizon_hours is None:  # a year, or on past the last crossing (a 180-day fact at 0.7: 505 days)
        last = cross["hours"].filter(cross["hours"].is_finite()).max()
        horizon_hours = _YEAR if last is None else max(_YEAR, min(1.25 * float(last), _LONGEST))
    # (n_memories · 160) rows: label, importance, half_life_hours, age_hours, age_days, strength
    curves = decay_curves(memories, horizon_hours=horizon_hours, log=True)
    # crossings off the drawn range are left out: before 6 minutes, or after the horizon
    cross = cross.filter((pl.col("hours") > 0.1) & (pl.col("hours") <= horizon_hours))
    # one colour per memory, shared by its curve and its cross (the legend lists the labels)
    color = alt.Color(
        "label:N", title="memory", legend=alt.Legend(orient="bottom", columns=1, labelLimit=400)
    )
    # layer order is drawing order: curves first, then the floor, crosses and dots over them
    rule, rule_text = _floor_marks(floor)
    dots, dot_text = _example_dots(ex)
    layers = [_lines(curves, _age_axis(horizon_hours), color), rule, rule_text, _crosses(cross, color)]
    chart = alt.layer(*layers, dots, dot_text).properties(width=WIDTH, height=300)
    return finish(
        chart,
        "How memories fade: strength halves every half-life",
        f"A cross marks where a memory drops below the floor {floor:g}: a search with that floor"
        " (min_strength) stops recalling it.",
    )


def _age_text(hours: float) -> str:
    """``4.0 -> '4 h'``, ``12.02 -> '12 h'``, ``24.0 -> '1 day'``, ``60.0 -> '2.5 days'``."""
    if hours < 24:
        return f"{hours:.1f}".removesuffix(".0") + " h"
    days = f"{hours / 24:.1f}".removesuffix(".0")
    return f"{days} day" + ("" if days == "1" else "s")


def _age_axis(horizon_hours: float) -> alt.X:
    """The log x axis of age, 0.1 h to ``horizon_hours``, ticked at the spans of :data:`HOURS`.

    A log axis labels itself 1, 10, 100, 1000 (hours), which nobody reads as "a day, a week, a
    month"; a Vega ``labelExpr`` maps each tick to its name instead:
    ``datum.value == 1 ? '1 h' : datum.value == 6 ? '6 h' : ... : ''``.
    """
    ticks = [h for h in HOURS if h <= horizon_hours]  # hours: 1, 6, 24, 168, 720, ... up to the horizon
    label_expr = " : ".join(f"datum.value == {h} ? '{HOURS[h]}'" for h in ticks) + " : ''"
    return alt.X(
        "age_hours:Q",
        scale=alt.Scale(type="log", domain=[0.1, horizon_hours]),
        # labelSeparation: a label touching its neighbour ("90 d", "180 d" on a 15-year axis) is hidden
        axis=alt.Axis(
            values=ticks,
            labelExpr=label_expr,
            title="age since written (log scale)",
            labelOverlap="greedy",
            labelSeparation=6,
        ),  # fmt: skip
    )


def _lines(curves: pl.DataFrame, x: alt.X, color: alt.Color) -> alt.Chart:
    """The curves of :func:`memkit.views.decay_curves` (160 ages a memory), strength on 0-1; the
    tooltip gives the age in hours and days and the strength to four decimals.

    The ages are spaced geometrically (``log=True``), evenly on the log axis: a straight
    ``linspace`` would spend almost every point on the last months and draw the first hours, where
    short half-lives do all their falling, as a single segment.
    """
    return (
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


def _floor_marks(floor: float) -> tuple[alt.Chart, alt.Chart]:
    """The dashed rule at ``floor`` and its label, written just above it at the left edge (x = 0.12 h,
    right of the axis start at 0.1 h)."""
    rule = (
        alt.Chart(pl.DataFrame({"floor": [floor]}))
        .mark_rule(strokeDash=[6, 4], color="#555")
        .encode(y="floor:Q")
    )
    rule_text = (
        alt.Chart(pl.DataFrame({"floor": [floor], "x": [0.12], "t": [f"floor {floor:g}"]}))
        .mark_text(align="left", dy=-7, color="#555")
        .encode(x="x:Q", y="floor:Q", text="t:N")
    )
    return rule, rule_text


def _crosses(cross: pl.DataFrame, color: alt.Color) -> alt.Chart:
    """A cross on the floor at the age each memory stops being recalled (its curve's colour).

    ``cross`` is :func:`memkit.views.floor_crossings` (``label, hours, floor``); its hours are the
    exact ``half-life · log2(importance / floor)``, not read off the sampled curve.
    """
    return (
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


def _example_dots(ex: pl.DataFrame) -> tuple[alt.Chart, alt.Chart]:
    """A black dot per example at ``(age_hours, strength)`` and its bold label, e.g.
    ``"0.7939 after 1 day"``: the numbers a reader can check against the formula by hand."""
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
    return dots, dots.mark_text(align="left", dx=8, dy=-8, fontWeight="bold").encode(text="text:N")
