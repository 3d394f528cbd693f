"""The guard's threshold trade-off as a chart (pure: a frame in, an Altair chart out).

:func:`guard_tradeoff_chart` draws :func:`memkit.guard.curve.tradeoff`'s frame twice, side by side:
precision against recall (the curve a threshold slides along, the current threshold a dot), and
recall and false-positive rate against the threshold (the current threshold a rule).

How to read it. On the left, lowering the threshold moves the dot right (more attacks caught) and,
as a rule, down (more of what is flagged is benign text). On the right, recall (green) and the
false-positive rate (red) can only fall as the threshold rises, since the flagged set shrinks; a good
threshold sits where the red line has reached the floor while the green one is still high. Precision
(blue) is 1.0 wherever nothing is flagged (:func:`~memkit.guard.curve.tradeoff`'s convention), so it
jumps to the top at the thresholds above every probability.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from ..errors import ValidationError
from .style import WIDTH, finish

__all__ = ["guard_tradeoff_chart"]

# measure -> colour (and legend order): green what a threshold gains, red what it costs
_MEASURES = {"recall": "#2ca02c", "false-positive rate": "#d62728", "precision": "#4c78a8"}


def guard_tradeoff_chart(curve: pl.DataFrame, threshold: float = 0.5, *, title: str = "") -> alt.HConcatChart:
    """Precision/recall and rates by threshold for a ``curve`` (``threshold, recall, fpr,
    precision``), with ``threshold`` marked.

    ``curve`` is :func:`memkit.guard.curve.tradeoff`'s frame (rates in [0, 1], extra columns are
    ignored); ``threshold`` is in [0, 1]. The dot, the subtitle's numbers and nothing else use the
    curve's row *nearest* ``threshold``: a grid point (0.01 apart by default), not an interpolation.
    Raises :class:`~memkit.errors.ValidationError` for a missing column or a threshold out of range.

    Returns two layered panels, 260 px high: the precision-recall line with the dot, and the three
    rates with the rule. Both have fixed [0, 1] axes, so moving the threshold never rescales them.
    ``title`` replaces the default "What the guard's threshold trades".

    >>> from memkit.guard.curve import tradeoff
    >>> scored = pl.DataFrame({"probability": [0.9, 0.6, 0.3, 0.1], "label": [1, 1, 0, 0]})
    >>> spec = guard_tradeoff_chart(tradeoff(scored), 0.5).to_dict()
    >>> [c["layer"][0]["mark"]["type"] for c in spec["hconcat"]]
    ['line', 'line']
    """
    need = {"threshold", "recall", "fpr", "precision"}  # tradeoff's ``flagged`` count is not drawn
    if not isinstance(curve, pl.DataFrame) or not need <= set(curve.columns):
        raise ValidationError("curve", f"must be a polars DataFrame with columns {sorted(need)}")
    if not 0.0 <= threshold <= 1.0:
        raise ValidationError("threshold", f"must be in [0, 1], got {threshold}")
    data = curve.select(sorted(need)).sort("threshold")  # threshold order: the lines run left to right
    # the grid row nearest the threshold: what the dot and the subtitle report
    at = data.with_columns(gap=(pl.col("threshold") - threshold).abs()).sort("gap").head(1).drop("gap")
    half = WIDTH // 2 - 30  # two panels side by side in about one chart WIDTH
    # one tooltip for the line and the dot: the threshold and its three rates as percentages
    tip = [alt.Tooltip("threshold:Q", format=".2f"), alt.Tooltip("recall:Q", format=".1%"),
           alt.Tooltip("fpr:Q", title="false positives", format=".1%"),
           alt.Tooltip("precision:Q", format=".1%")]  # fmt: skip
    pr_line = (
        alt.Chart(alt.Data(values=data.to_dicts()))  # plain records: no pandas needed
        # a small point per grid threshold: the hover target of the tooltip
        .mark_line(color=_MEASURES["precision"], point=alt.OverlayMarkDef(size=12))
        .encode(
            x=alt.X(
                "recall:Q",
                title="recall (attacks caught)",
                scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%"),
            ),
            y=alt.Y(
                "precision:Q",
                title="precision (flagged that are attacks)",
                scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%"),
            ),
            # subtle: Vega-Lite draws a line in x order unless told; several thresholds share one
            # recall, so the path follows the threshold instead
            order="threshold:Q",
            tooltip=tip,
        )
    )
    pr_dot = (  # the current threshold's point, drawn over the line
        alt.Chart(alt.Data(values=at.to_dicts()))
        .mark_point(size=140, filled=True, color="black")
        .encode(x="recall:Q", y="precision:Q", tooltip=tip)
    )
    # long form (threshold, measure, value): one line per measure, coloured by _MEASURES
    long = data.unpivot(index="threshold", on=["recall", "fpr", "precision"], variable_name="measure")
    long = long.with_columns(pl.col("measure").replace({"fpr": "false-positive rate"}))  # legend words
    rates = (
        alt.Chart(alt.Data(values=long.to_dicts()))
        .mark_line()
        .encode(
            x=alt.X(
                "threshold:Q", title="threshold on the injection probability", scale=alt.Scale(domain=[0, 1])
            ),
            y=alt.Y("value:Q", title="rate", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
            color=alt.Color(
                "measure:N", scale=alt.Scale(domain=list(_MEASURES), range=list(_MEASURES.values()))
            ),
            tooltip=[
                "measure:N",
                alt.Tooltip("threshold:Q", format=".2f"),
                alt.Tooltip("value:Q", format=".1%"),
            ],
        )
    )
    rule = (  # the current threshold, a dashed vertical line across the rates
        alt.Chart(alt.Data(values=[{"threshold": threshold}]))
        .mark_rule(strokeDash=[4, 3])
        .encode(x="threshold:Q")
    )
    # each panel is a layer: a line and its marker of the current threshold
    left = alt.layer(pr_line, pr_dot).properties(width=half, height=260)
    right = alt.layer(rates, rule).properties(width=half, height=260)
    # an empty curve reads as flagging nothing: no recall, no false positives, precision 1.0
    r = at.row(0, named=True) if at.height else {"recall": 0.0, "fpr": 0.0, "precision": 1.0}
    sub = (f"threshold {threshold:.2f}: recall {r['recall']:.1%}, false positives {r['fpr']:.1%}, "
           f"precision {r['precision']:.1%}")  # fmt: skip
    # finish (memkit.charts.style): a title that says what to look at, the numbers as its subtitle
    return finish(alt.hconcat(left, right), title or "What the guard's threshold trades", sub)
