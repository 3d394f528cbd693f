"""The memory timeline: every memory's strength over simulated time (pure: a frame in, a chart out).

Each memory fades from its writing, ``strength = importance · 0.5^(age / half-life)``; a cross marks
where it falls below the retrieval floor (the one ``store.search`` applies: ``DecayParams.min_strength``,
0 by default, so by default nothing fades out of reach) and, at a chosen instant, a dot per memory shows
its state then — recalled, faded, or what a forget pass would drop (:func:`memkit.views.memory_states`).
The forgetting floor (``ForgetParams.min_strength``, 0.05), below which a forget pass would drop a
memory for good, is a second, dotted red line when given. The
curves are computed by Vega from one row per memory (the decay formula travels in the spec), so a
timeline of hundreds of memories stays a small chart. Re-exported by :mod:`memkit.charts`.

How to read it: the x axis is simulated time (dates), the y axis strength from 0 to 1. A curve
starts at its memory's importance on the day it was written and halves every half-life: short-term
memories (hours) drop almost vertically, long-term facts (months) stay nearly flat across the
chart. Colour is the layer; the many episodic curves are drawn faint so the few long-term facts
stand out. The dashed line is the retrieval floor: below it a memory is no longer recalled; the red
dotted line (``forget_floor``) is where a forget pass would drop it. The black line
(``at``) is the instant the dots describe; the dotted line (``now``) is the present when the chart
runs on into the future.

:func:`memory_timeline` reads as the chart's layers, one private builder each: the curves, the floor
rule, the fade crosses, the forgetting floor, the ``now`` marker and the ``at`` line with its state dots.
:func:`state_counts` is the same states as bars, in the same colours.
"""

from __future__ import annotations

from datetime import datetime

import altair as alt
import numpy as np
import polars as pl

from ..decay import hours_until
from ..errors import ValidationError
from ..params import DecayParams, check_number
from .style import WIDTH, finish, scale

__all__ = ["STATE_COLORS", "memory_timeline", "state_counts"]

STATE_COLORS = {
    "recalled": "#2ca02c",
    "faded": "#9d9d9d",
    "expired": "#8c564b",
    "not yet valid": "#aec7e8",
    "forget: weak": "#d62728",
    "forget: capacity": "#ff7f0e",
    "forget: expired": "#9467bd",
    "forget: cascade": "#ff9896",
    "superseded": "#c7c7c7",
    "conflict": "#e377c2",
    "quarantined": "#bcbd22",
    "not yet written": "#eeeeee",
}
"""Colour of each state of :func:`memkit.views.memory_states`."""

_STATE_SCALE = alt.Scale(domain=list(STATE_COLORS), range=list(STATE_COLORS.values()))
"""The state colours as an Altair scale: the timeline's dots and :func:`state_counts`' bars share it."""
_NEEDED = {"id", "content", "layer", "importance", "half_life_hours", "created_at"}
"""The columns of a ``store.frame()`` that the timeline reads."""


def memory_timeline(
    frame: pl.DataFrame,
    *,
    start: datetime | None = None,
    end: datetime,
    floor: float = DecayParams().min_strength,
    forget_floor: float | None = None,
    states: pl.DataFrame | None = None,
    at: datetime | None = None,
    now: datetime | None = None,
    max_memories: int = 300,
) -> alt.LayerChart:
    """Strength of every memory of ``frame`` (``store.frame(...)``) from its writing until ``end``.

    A grey cross marks where a memory fades below ``floor``. With ``at`` and ``states`` (from
    :func:`memkit.views.memory_states`), a rule marks that instant and a dot per memory shows its
    strength then, coloured by its state (recalled, faded, what a forget pass would drop, ...).
    ``now`` draws a dotted rule for the present. Above ``max_memories`` an even sample by writing
    time is drawn (the subtitle says so).

    ``start`` defaults to the first write, so the x axis runs from the first memory to ``end``.
    ``floor`` is a strength (0-1), the retrieval floor search uses (``DecayParams.min_strength``, 0 by
    default; ``store.decay.min_strength`` for a store's own): what fades below it is no longer
    recalled. A floor of 0 is never crossed: no crosses. ``forget_floor`` (``ForgetParams.min_strength``)
    draws where a forget pass would drop a memory (red, dotted). Only the rows' ``importance``,
    ``half_life_hours`` and ``created_at`` shape a curve; ``content`` and ``layer`` are for the tooltip
    and the colour.

    >>> from datetime import datetime, timezone
    >>> t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> frame = pl.DataFrame({"id": ["a", "b"], "content": ["lives in Hangzhou", "said hello"],
    ...     "layer": ["long_term", "short_term"], "importance": [0.8, 0.3],
    ...     "half_life_hours": [2160.0, 2.0], "created_at": [t0, t0]})
    >>> spec = memory_timeline(frame, end=datetime(2026, 2, 1, tzinfo=timezone.utc), floor=0.1).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]  # curves, floor, fade crosses
    ['line', 'rule', 'point']
    >>> spec["title"]["subtitle"]
    ['2 memories', 'crosses: faded below the retrieval floor 0.1']

    The hello (0.3, half-life 2 h) fades after ``2 · log2(0.3 / 0.1)`` = 3.2 h and gets a cross;
    the address (0.8, 90 days) is still at 0.63 a month later.
    """
    if not isinstance(frame, pl.DataFrame) or not _NEEDED <= set(frame.columns):
        raise ValidationError("frame", f"must be a polars DataFrame with {', '.join(sorted(_NEEDED))}")
    floor = check_number("floor", floor, lo=0.0, hi=1.0)
    if forget_floor is not None:
        forget_floor = check_number("forget_floor", forget_floor, lo=0.0, hi=1.0)
    f = _even_sample(frame.sort("created_at"), max_memories)
    end_ms = end.timestamp() * 1e3
    # the x domain in epoch milliseconds (Vega's time unit); an empty frame spans just `end`
    start_ms = (
        (start.timestamp() * 1e3)
        if start
        else (f["created_at"].min().timestamp() * 1e3 if f.height else end_ms)
    )
    rows = _curve_rows(f, floor, end_ms)
    # a UTC scale: dates on the axis are the store's (UTC) dates whatever the browser's time zone
    x = alt.X(
        "t:T",
        title="simulated time",
        scale=alt.Scale(type="utc", domain=[start_ms, end_ms]),
        # a label closer than 10 px to the one before is hidden (weekly ticks on a months-wide axis)
        axis=alt.Axis(format="%b %d", labelOverlap="greedy", labelSeparation=10),
    )
    y = alt.Y("strength:Q", title="strength", scale=alt.Scale(domain=[0, 1]))
    # layer order is drawing order: the crosses and dots stay visible on top of the curves
    layers = [_curves(rows, x, y), _floor_rule(floor), _fades(rows, floor, x, y)]
    if forget_floor is not None:  # what a forget pass would drop, apart from what search still returns
        layers.append(_floor_rule(forget_floor, color="#d62728", dash=[2, 3]))
    if now is not None:  # the present, when the timeline runs on into the simulated future
        layers += _now_marker(now)
    subtitle = [
        f"{f.height} of {frame.height} memories" if f.height < frame.height else f"{frame.height} memories",
        f"crosses: faded below the retrieval floor {floor:g}"
        if floor > 0
        else "no retrieval floor: search recalls every memory, however faded",
    ]
    if forget_floor is not None:
        subtitle.append(
            f"red dotted line: the forgetting floor {forget_floor:g} (a forget pass drops below it)"
        )
    if at is not None:
        at_layers, at_line = _at_instant(at, states, f["id"], x, y)
        layers += at_layers
        subtitle += at_line
    # two colour scales, two legends: curves by layer, dots by state (one shared scale would mix them)
    chart = alt.layer(*layers).resolve_scale(color="independent").properties(width=WIDTH, height=280)
    return finish(chart, "Memory strength over time", subtitle)


def _even_sample(f: pl.DataFrame, n: int) -> pl.DataFrame:
    """At most ``n`` rows of ``f`` (sorted by writing time), evenly spaced, first and last kept:
    a dense week and a sparse year stay in proportion, unlike a random sample."""
    if f.height <= n:
        return f
    # (n,) row positions spread over the whole range: 1000 rows, n=300 -> 0, 3, 7, 10, ..., 999
    return f[np.linspace(0, f.height - 1, n).round().astype(np.int64)]


def _curve_rows(f: pl.DataFrame, floor: float, end_ms: float) -> pl.DataFrame:
    """One row per memory: what Vega needs to draw its curve, in epoch milliseconds.

    ``created_ms`` (when it was written), ``end_ms`` (where its curve stops) and ``faded_ms``
    (when its strength reaches ``floor``, :func:`memkit.decay.hours_until`; null if after ``end``).

    Why rows and not points: 300 memories are 300 rows in the spec; the 40 points of each curve
    (12,000 in all) are generated by Vega in the browser, so a slider move sends a small spec.
    """
    # (n,) epoch milliseconds; an empty frame gives an empty float array
    created = f["created_at"].dt.epoch("ms").cast(pl.Float64).to_numpy() if f.height else np.zeros(0)
    # a floor of 0 is never crossed (strength stays above 0): no memory fades, and no cross is drawn
    fade_h = (
        hours_until(floor, f["importance"].to_numpy(), f["half_life_hours"].to_numpy())
        if floor > 0
        else np.full(f.height, np.inf)
    )
    fade_ms = created + fade_h * 3.6e6  # hours -> ms
    return f.select("id", "content", "layer", "importance", "half_life_hours").with_columns(
        created_ms=pl.Series(created),
        end_ms=pl.lit(end_ms),
        # NaN -> null: a memory that outlives `end` has no cross (the fades layer drops nulls)
        faded_ms=pl.Series(np.where(fade_ms <= end_ms, fade_ms, np.nan)).fill_nan(None),
    )


def _curves(rows: pl.DataFrame, x: alt.X, y: alt.Y) -> alt.Chart:
    """Every memory's decay curve, computed in the browser from its row (40 points a memory)."""
    # each memory's curve: 40 ages per memory, geometric (dense right after writing, where a 2 h
    # half-life drops), clamped at `end`; strength = importance · 0.5^(age / half-life)
    return (
        alt.Chart(rows)
        .transform_calculate(k="sequence(0, 40)")
        .transform_flatten(["k"])
        .transform_calculate(
            # ages 0, 0.33 h, 0.42 h, ... growing 1.3x a step (Vega's sequence(0, 40) stops at 39).
            # subtle: the last age is 0.25 · 1.3^39 h, about 290 days: a curve stops there even
            # when `end` is later (the cross and the dots are placed exactly, from their own rows)
            age_h="datum.k == 0 ? 0 : "
            "min(0.25 * pow(1.3, datum.k), (datum.end_ms - datum.created_ms) / 3600000)"
        )
        .transform_calculate(
            t="datum.created_ms + datum.age_h * 3600000",
            strength="datum.importance * pow(0.5, datum.age_h / datum.half_life_hours)",
        )
        .mark_line(strokeWidth=1.3, clip=True)
        .encode(
            x,
            y,
            alt.Color("layer:N", scale=scale("layer"), title="layer"),
            # the many episodic events stay in the background; the few long-term facts stand out
            alt.Opacity(
                "layer:N",
                scale=alt.Scale(domain=["short_term", "episodic", "long_term"], range=[0.9, 0.3, 0.85]),
                legend=None,
            ),
            detail="id:N",
        )
    )


def _fades(rows: pl.DataFrame, floor: float, x: alt.X, y: alt.Y) -> alt.Chart:
    """A grey cross on the floor where each memory fades below it (memories that fade by ``end``).

    The cross sits where the curve meets the floor, at the exact instant (``faded_ms``), not at the
    nearest of the curve's 40 points; its tooltip gives that instant to the minute.
    """
    faded = rows.filter(pl.col("faded_ms").is_not_null()).with_columns(
        t=pl.col("faded_ms"), strength=pl.lit(floor)
    )
    return (
        alt.Chart(faded)
        .mark_point(shape="cross", size=50, color="#666", opacity=0.8, clip=True)
        .encode(
            x,
            y,
            tooltip=[
                "content:N",
                "layer:N",
                alt.Tooltip("t:T", title="fades below the floor", format="%Y-%m-%d %H:%M"),
            ],
        )
    )


def _floor_rule(floor: float, *, color: str = "#555", dash: list[int] | None = None) -> alt.Chart:
    """The dashed horizontal line of the retrieval floor (the same dash as in
    :func:`memkit.charts.half_life_curves`, so the floor looks the same in every chart); the
    forgetting floor is the same rule in red, dotted."""
    return (
        alt.Chart(pl.DataFrame({"strength": [floor]}))
        .mark_rule(strokeDash=dash or [6, 4], color=color)
        .encode(y="strength:Q")
    )


def _now_marker(now: datetime) -> list[alt.Chart]:
    """A dotted vertical rule at ``now`` and its ``now`` label.

    The label has no y value, so Vega centres it vertically; ``dy=-125`` lifts it to the top of the
    280-pixel plot, clear of the curves that start near it.
    """
    now_df = pl.DataFrame({"t": [now.timestamp() * 1e3], "label": ["now"]})
    now_rule = alt.Chart(now_df).mark_rule(strokeDash=[2, 3], color="#333")
    return [now_rule.encode(x="t:T"), now_rule.mark_text(align="left", dx=3, dy=-125).encode(
        x="t:T", text="label:N")]  # fmt: skip


def _at_instant(
    at: datetime, states: pl.DataFrame | None, drawn: pl.Series, x: alt.X, y: alt.Y
) -> tuple[list[alt.Chart], list[str]]:
    """The layers and subtitle lines of instant ``at``: a black rule and, given ``states``, a dot per
    drawn memory (ids in ``drawn``) at its strength then, coloured by state, and the state counts."""
    at_ms = at.timestamp() * 1e3
    layers = [alt.Chart(pl.DataFrame({"t": [at_ms]})).mark_rule(color="black", strokeWidth=2).encode(x="t:T")]
    if states is None:
        return layers, []
    if not {"id", "strength", "state"} <= set(states.columns):
        raise ValidationError("states", "must be memory_states() output with id, strength, state")
    # only memories that have a curve (the sample), and none before its writing: no dot without a line
    pts = states.filter(pl.col("id").is_in(drawn.implode()) & (pl.col("state") != "not yet written"))
    pts = pts.select("id", "content", "state", "strength").with_columns(t=pl.lit(at_ms))
    layers.append(
        alt.Chart(pts)
        .mark_point(filled=True, size=55, opacity=0.9)
        .encode(
            x,
            y,
            # the fixed colours of every state, but a legend of the states present only
            alt.Color(
                "state:N",
                scale=_STATE_SCALE,
                title=f"at {at:%Y-%m-%d %H:%M}",
                legend=alt.Legend(values=[s for s in STATE_COLORS if s in set(pts["state"].to_list())]),
            ),
            tooltip=["content:N", "state:N", alt.Tooltip("strength:Q", format=".3f")],
        )
    )
    # the subtitle spells out the dots' story, most common state first: "72 recalled, 13 forget: weak"
    counts = pts["state"].value_counts().sort("count", descending=True).rows()
    return layers, ["at the black line: " + ", ".join(f"{n} {s}" for s, n in counts)]


def state_counts(states: pl.DataFrame, *, title: str = "Memories by state") -> alt.Chart:
    """One bar per state of :func:`memkit.views.memory_states` (how many memories are recalled,
    faded, would be forgotten, ...), in the timeline's colours; "not yet written" is left out.

    Bars are listed in :data:`STATE_COLORS` order (recalled first, then the ways a memory is lost),
    so two instants of the time machine can be compared bar by bar; each bar is labelled with its
    count. The bar chart is 200 pixels narrower than the timeline, leaving room for the state names.

    >>> states = pl.DataFrame({"state": ["recalled", "faded", "recalled", "not yet written"]})
    >>> spec = state_counts(states).to_dict()
    >>> spec["layer"][0]["encoding"]["y"]["sort"]
    ['recalled', 'faded']
    """
    # validated here, not by Altair: the error names the argument and what it should be
    if not isinstance(states, pl.DataFrame) or "state" not in states.columns:
        raise ValidationError("states", "must be memory_states() output with a state column")
    counts = (
        states.filter(pl.col("state") != "not yet written")
        .group_by("state")
        .len()
        .rename({"len": "memories"})
    )
    order = [s for s in STATE_COLORS if s in set(counts["state"].to_list())]
    chart = (
        alt.Chart(counts)
        .mark_bar()
        .encode(
            alt.X("memories:Q", title="memories", axis=alt.Axis(tickMinStep=1)),
            alt.Y("state:N", sort=order, title=None),
            alt.Color("state:N", scale=_STATE_SCALE, legend=None),
            tooltip=["state:N", "memories:Q"],
        )
        .properties(width=WIDTH - 200, height=max(22 * len(order), 40))
    )  # fmt: skip
    bars_text = chart.mark_text(align="left", dx=3).encode(text="memories:Q", color=alt.value("#333"))
    return finish(alt.layer(chart, bars_text), title)
