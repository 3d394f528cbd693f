"""Charts of retrieval quality on a benchmark (pure: frames in, an Altair chart out).

:func:`recall_by_category` draws one metric (recall@5, say) per question category for the weights
being tuned, as bars, with reference settings (memkit's default, the articles' formula) as tick
marks across the same bars. It is the chart of the LoCoMo weights panel
(:func:`memkit.widgets.recall_tuner`): a slider move redraws the bars, the ticks stay, so a bar
above its ticks is a setting that beats both references on that kind of question.

How to read it: compare heights within a category, not across. Categories differ in difficulty
(LoCoMo's multi-hop questions need several turns, single-hop ones one), so "all" — every question
weighted equally — is the one number to optimise, and the per-category bars say what it traded.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from ..errors import ValidationError
from .style import WIDTH, finish

__all__ = ["recall_by_category"]

_BAR = "#4c78a8"  # the setting being tuned
_REFERENCE = ["#e45756", "#54a24b", "#b279a2", "#f58518"]  # tick colours, one per reference setting


def recall_by_category(
    current: pl.DataFrame,
    references: pl.DataFrame | None = None,
    *,
    metric: str = "recall@5",
    by: str = "category",
    title: str | None = None,
) -> alt.LayerChart:
    """Bars of ``metric`` per ``by`` value for the current setting, ticks for the references.

    ``current``: one row per category (``by``, ``metric``, optional ``n``), as
    :func:`memkit.evaluate.evaluate` returns it (an ``"all"`` row is drawn last). ``references``:
    the same columns plus ``setting`` (its name in the legend). Metric values lie in [0, 1].

    >>> now = pl.DataFrame({"category": ["a", "all"], "recall@5": [0.5, 0.6], "n": [3, 3]})
    >>> ref = now.with_columns(setting=pl.lit("default"), **{"recall@5": pl.lit(0.4)})
    >>> spec = recall_by_category(now, ref).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['bar', 'text', 'tick']
    """
    for name, frame in (("current", current), ("references", references)):
        if frame is None:
            continue
        need = {by, metric} | ({"setting"} if name == "references" else set())
        if not isinstance(frame, pl.DataFrame) or not need <= set(frame.columns):
            raise ValidationError(name, f"must be a polars DataFrame with columns {sorted(need)}")
    # categories in their own order, "all" last: the x axis reads left to right, summary at the end
    order = [c for c in current[by].cast(pl.String).to_list() if c != "all"] + ["all"]
    x = alt.X(f"{by}:N", sort=order, title=None, axis=alt.Axis(labelAngle=0))
    y = alt.Y(f"{metric}:Q", scale=alt.Scale(domain=[0, 1]), title=metric)
    bars_data = current.with_columns(pl.col(by).cast(pl.String), pl.col(metric).round(3))
    bars = alt.Chart(bars_data).mark_bar(color=_BAR, opacity=0.85, width={"band": 0.6}).encode(x, y)
    tips = [alt.Tooltip(f"{by}:N"), alt.Tooltip(f"{metric}:Q", format=".3f")]
    if "n" in current.columns:
        tips.append(alt.Tooltip("n:Q", title="questions"))
    bars = bars.encode(tooltip=tips)
    labels = (
        alt.Chart(bars_data)
        .mark_text(dy=-6, baseline="bottom", fontSize=11)
        .encode(x, y, text=alt.Text(f"{metric}:Q", format=".2f"))
    )
    layers = [bars, labels]
    if references is not None and references.height:
        ref = references.with_columns(pl.col(by).cast(pl.String), pl.col(metric).round(3))
        names = list(dict.fromkeys(ref["setting"].to_list()))  # legend in the order given
        ticks = (
            alt.Chart(ref)
            .mark_tick(thickness=3, size=34)
            .encode(
                x,
                y,
                color=alt.Color(
                    "setting:N",
                    scale=alt.Scale(domain=names, range=_REFERENCE[: len(names)]),
                    title="reference",
                ),
                tooltip=["setting:N", alt.Tooltip(f"{by}:N"), alt.Tooltip(f"{metric}:Q", format=".3f")],
            )
        )
        layers.append(ticks)
    total = bars_data.filter(pl.col(by) == "all")[metric]
    head = title or f"{metric} per question category" + (f": {total[0]:.3f} overall" if total.len() else "")
    return finish(
        alt.layer(*layers).properties(width=WIDTH, height=220),
        head,
        "Bars: the weights on the sliders. Ticks: reference settings, fixed while you drag.",
    )
