"""The memory timeline: every memory's strength over simulated time (pure: a frame in, a chart out).

Each memory fades from its writing, ``strength = importance · 0.5^(age / half-life)``; a cross marks
where it falls below the retrieval floor and, at a chosen instant, a dot per memory shows its state
then — recalled, faded, or what a forget pass would drop (:func:`memkit.views.memory_states`). The
curves are computed by Vega from one row per memory (the decay formula travels in the spec), so a
timeline of hundreds of memories stays a small chart. Re-exported by :mod:`memkit.charts`.
"""

from __future__ import annotations

from datetime import datetime

import altair as alt
import numpy as np
import polars as pl

from ..decay import hours_until
from ..errors import ValidationError
from .style import WIDTH, finish, scale

__all__ = ["STATE_COLORS", "memory_timeline", "state_counts"]

STATE_COLORS = {
    "recalled": "#2ca02c",
    "faded": "#9d9d9d",
    "expired": "#8c564b",
    "forget: weak": "#d62728",
    "forget: capacity": "#ff7f0e",
    "forget: expired": "#9467bd",
    "superseded": "#c7c7c7",
    "conflict": "#e377c2",
    "quarantined": "#bcbd22",
    "not yet written": "#eeeeee",
}
"""Colour of each state of :func:`memkit.views.memory_states`."""


def memory_timeline(
    frame: pl.DataFrame,
    *,
    start: datetime | None = None,
    end: datetime,
    floor: float = 0.1,
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
    """
    need = {"id", "content", "layer", "importance", "half_life_hours", "created_at"}
    if not isinstance(frame, pl.DataFrame) or not need <= set(frame.columns):
        raise ValidationError("frame", f"must be a polars DataFrame with {', '.join(sorted(need))}")
    n_all = frame.height
    f = frame.sort("created_at")
    if f.height > max_memories:
        f = f[np.linspace(0, f.height - 1, max_memories).round().astype(np.int64)]
    end_ms = end.timestamp() * 1e3
    start_ms = (
        (start.timestamp() * 1e3)
        if start
        else (f["created_at"].min().timestamp() * 1e3 if f.height else end_ms)
    )
    created = f["created_at"].dt.epoch("ms").cast(pl.Float64).to_numpy() if f.height else np.zeros(0)
    fade_h = hours_until(floor, f["importance"].to_numpy(), f["half_life_hours"].to_numpy())
    fade_ms = created + fade_h * 3.6e6
    rows = f.select("id", "content", "layer", "importance", "half_life_hours").with_columns(
        created_ms=pl.Series(created),
        end_ms=pl.lit(end_ms),
        faded_ms=pl.Series(np.where(fade_ms <= end_ms, fade_ms, np.nan)).fill_nan(None),
    )
    x = alt.X(
        "t:T",
        title="simulated time",
        scale=alt.Scale(type="utc", domain=[start_ms, end_ms]),
        axis=alt.Axis(format="%b %d"),
    )
    y = alt.Y("strength:Q", title="strength", scale=alt.Scale(domain=[0, 1]))
    # each memory's curve: 40 ages per memory, geometric (dense right after writing, where a 2 h
    # half-life drops), clamped at `end`; strength = importance · 0.5^(age / half-life)
    curves = (
        alt.Chart(rows)
        .transform_calculate(k="sequence(0, 40)")
        .transform_flatten(["k"])
        .transform_calculate(
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
    fades = (
        alt.Chart(
            rows.filter(pl.col("faded_ms").is_not_null()).with_columns(
                t=pl.col("faded_ms"), strength=pl.lit(floor)
            )
        )
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
    rule = (
        alt.Chart(pl.DataFrame({"strength": [floor]}))
        .mark_rule(strokeDash=[6, 4], color="#555")
        .encode(y="strength:Q")
    )
    layers = [curves, rule, fades]
    if now is not None:  # the present, when the timeline runs on into the simulated future
        now_df = pl.DataFrame({"t": [now.timestamp() * 1e3], "label": ["now"]})
        now_rule = alt.Chart(now_df).mark_rule(strokeDash=[2, 3], color="#333")
        layers += [now_rule.encode(x="t:T"), now_rule.mark_text(align="left", dx=3, dy=-125).encode(
            x="t:T", text="label:N")]  # fmt: skip
    subtitle = [
        f"{f.height} of {n_all} memories" if f.height < n_all else f"{n_all} memories",
        f"crosses: faded below the retrieval floor {floor:g}",
    ]
    if at is not None:
        at_ms = at.timestamp() * 1e3
        layers.append(
            alt.Chart(pl.DataFrame({"t": [at_ms]})).mark_rule(color="black", strokeWidth=2).encode(x="t:T")
        )
        if states is not None:
            if not {"id", "strength", "state"} <= set(states.columns):
                raise ValidationError("states", "must be memory_states() output with id, strength, state")
            pts = states.filter(
                pl.col("id").is_in(f["id"].implode()) & (pl.col("state") != "not yet written")
            )
            pts = pts.select("id", "content", "state", "strength").with_columns(t=pl.lit(at_ms))
            layers.append(
                alt.Chart(pts)
                .mark_point(filled=True, size=55, opacity=0.9)
                .encode(
                    x,
                    y,
                    alt.Color(
                        "state:N",
                        scale=alt.Scale(domain=list(STATE_COLORS), range=list(STATE_COLORS.values())),
                        title=f"at {at:%Y-%m-%d %H:%M}",
                    ),
                    tooltip=["content:N", "state:N", alt.Tooltip("strength:Q", format=".3f")],
                )
            )
            counts = pts["state"].value_counts().sort("count", descending=True).rows()
            subtitle.append("at the black line: " + ", ".join(f"{n} {s}" for s, n in counts))
    chart = alt.layer(*layers).resolve_scale(color="independent").properties(width=WIDTH, height=280)
    return finish(chart, "Memory strength over time", subtitle)


_STATE_SCALE = alt.Scale(domain=list(STATE_COLORS), range=list(STATE_COLORS.values()))


def state_counts(states: pl.DataFrame, *, title: str = "Memories by state") -> alt.Chart:
    """One bar per state of :func:`memkit.views.memory_states` (how many memories are recalled,
    faded, would be forgotten, ...), in the timeline's colours; "not yet written" is left out."""
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
