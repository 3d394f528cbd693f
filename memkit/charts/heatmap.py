"""The weight heatmap: a retrieval metric over a grid of two weights (pure: a frame in, a chart out).

:func:`memkit.evaluate.sweep` scores a grid of weightings and returns a tidy frame: the point's
parameters, then one row per question category *and* an ``"all"`` row (every question), with
``recall@k``, ``mrr``, ...; :meth:`memkit.evaluate.Reranker.sweep` returns one row per point. A
heatmap has room for two parameters and one number per cell, so :func:`weight_heatmap` first makes
sure each ``(x, y)`` cell holds exactly one row:

- a summary's ``"all"`` rows are the ones drawn (the mean over every question, as ``evaluate``
  reports it), unless ``where`` picks a category (``where={"category": "1"}``);
- any other parameter that varies (the README's grid varies ``recency`` too) must be fixed with
  ``where={"recency": 0.0}``; otherwise a ValidationError names the parameter and its values. Several
  rows in one cell would be drawn on top of each other, and the printed value and the "best" cell
  would be whichever row came last, not a number of the sweep.

The subtitle names the best cell and the rows it was chosen from (``category all, recency 0``); when
several cells share the best value, it says how many tie, and outlines every one of them: which of
them came first in the sweep is no finding.
Re-exported by :mod:`memkit.charts` and :mod:`memkit.charts.retrieval`, where it used to live.

>>> sweep = pl.DataFrame({"similarity": [0.5, 0.5, 1.0, 1.0], "keyword": [1.0, 1.0, 0.0, 0.0],
...                       "category": ["1", "all", "1", "all"], "recall@5": [0.75, 0.62, 0.40, 0.35]})
>>> weight_heatmap(sweep, y="keyword", metric="recall@5").to_dict()["title"]["subtitle"]
'best: similarity 0.5, keyword 1.0 → recall@5 0.620 (rows: category all)'
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import altair as alt
import polars as pl

from ..errors import ValidationError
from .style import WIDTH, finish

__all__ = ["weight_heatmap"]

_LIGHT = 0.45
"""Where on viridis (0 darkest, 1 lightest) black text starts to contrast better than white (WCAG
contrast of the scheme's colours: about 5 to 4 at 0.45)."""
_RESULTS = ("n", "recall", "hit", "ndcg", "mrr")
"""Names of the result columns of a sweep (``recall@5`` is ``recall``), told apart from parameters
when a cell holds several rows: only a parameter can be fixed with ``where``."""


def weight_heatmap(
    sweep: pl.DataFrame,
    *,
    x: str = "similarity",
    y: str = "importance",
    metric: str = "recall",
    where: Mapping[str, Any] | None = None,
) -> alt.LayerChart:
    """A metric over a grid of two weights (a tidy frame with columns ``x``, ``y``, ``metric``); the
    best cell is outlined.

    ``sweep`` is typically :func:`memkit.evaluate.sweep`'s result: its ``"all"`` rows (every question)
    are drawn, the per-category rows left out. ``where`` keeps the rows whose columns equal the given
    values (``{"category": "1"}``, ``{"recency": 0.1}``). After that each ``(x, y)`` cell must hold one
    row, or a ValidationError names ``sweep`` and the columns that still vary within a cell. Weights
    are rounded to three decimals so that 0.30000000000000004 and 0.3 are one column. The y axis
    runs high to low (the largest weight at the top); a cell's value is printed in it, in black on
    the light cells (the upper 55% of the colour scale, which runs from the lowest value to the
    best) and in white on the dark ones. Cells within 1e-9 of the best value tie for it: all are
    outlined, and the subtitle counts them (``12 settings tie for best: recall 0.620, all outlined``).

    >>> grid = pl.DataFrame({"similarity": [0.3, 0.3, 0.6, 0.6], "importance": [0.0, 0.3, 0.0, 0.3],
    ...                      "recall": [0.52, 0.41, 0.57, 0.49]})
    >>> weight_heatmap(grid).to_dict()["title"]["subtitle"]
    'best: similarity 0.6, importance 0.0 → recall 0.570'
    """
    if not isinstance(sweep, pl.DataFrame) or not {x, y, metric} <= set(sweep.columns):
        raise ValidationError("sweep", f"must be a polars DataFrame with columns {x}, {y}, {metric}")
    rows, context = _one_row_per_cell(sweep, x, y, metric, dict(where or {}))
    data = rows.select(x, y, metric)
    lo, hi = float(data[metric].min() or 0), float(data[metric].max() or 0)
    best = data.filter(pl.col(metric) >= hi - 1e-9 * max(1.0, abs(hi)))  # the cells outlined in red
    # ordinal axes: the grid's values as columns, evenly spaced whatever their numeric gaps
    enc = [
        alt.X(f"{x}:O", title=f"{x} weight", axis=alt.Axis(labelAngle=0)),
        alt.Y(f"{y}:O", title=f"{y} weight", sort="descending"),
    ]
    tip = [alt.Tooltip(f"{x}:Q"), alt.Tooltip(f"{y}:Q"), alt.Tooltip(f"{metric}:Q", format=".3f")]
    # cells, values and outline share `enc`, so the three layers fall on the same grid
    # the colour scale spans the values drawn, lowest to best, so a cell's place on it is its brightness
    domain = [lo, hi] if hi > lo else alt.Undefined
    cells = (
        alt.Chart(data)
        .mark_rect()
        .encode(
            *enc,
            alt.Color(f"{metric}:Q", scale=alt.Scale(scheme="viridis", domain=domain), title=metric),
            tooltip=tip,
        )
    )
    text = (
        alt.Chart(data)
        .mark_text(fontSize=10)
        .encode(
            *enc,
            text=alt.Text(f"{metric}:Q", format=".2f"),
            # viridis gets lighter along its range: from 45% of it on, black text reads better than white
            color=alt.condition(
                f"datum['{metric}'] >= {lo + _LIGHT * (hi - lo)!r}", alt.value("black"), alt.value("white")
            ),
        )
    )
    # one best cell: a bold outline; several that tie: a thinner one on each (a plateau, not a point)
    stroke = 3 if best.height == 1 else 1.5
    outline = alt.Chart(best).mark_rect(fill=None, stroke="#d62728", strokeWidth=stroke).encode(*enc)
    chart = alt.layer(cells, text, outline).properties(width=WIDTH - 160, height=WIDTH - 260)
    b = best.row(0, named=True) if best.height else None
    if b is None:
        headline = "empty sweep"
    elif best.height == 1:
        headline = f"best: {x} {b[x]}, {y} {b[y]} → {metric} {b[metric]:.3f}"
    else:  # e.g. every cell with keyword >= 0.4: no single setting is "the" best
        headline = f"{best.height} settings tie for best: {metric} {b[metric]:.3f}, all outlined"
    # "(rows: category all, recency 0.1)": which rows of the sweep the cells are
    return finish(
        chart, f"{metric} over {x} × {y} weights", headline + (f" (rows: {context})" if context else "")
    )


def _one_row_per_cell(
    sweep: pl.DataFrame, x: str, y: str, metric: str, where: dict[str, Any]
) -> tuple[pl.DataFrame, str]:
    """The rows of ``sweep`` the heatmap draws, ``x`` and ``y`` rounded to three decimals, and the
    label of the choice (``"category all, recency 0.1"``, ``""`` when every row is drawn).

    ``where`` filters first; then a string column holding ``"all"`` (a summary's group column:
    ``category``, or ``group`` with ``by=None``) keeps its ``"all"`` rows. Raises a ValidationError
    naming ``where`` (an unknown column, a value no row has) or ``sweep`` (a cell with several rows).
    """
    rows, labels = sweep, []
    for col, value in where.items():
        if col not in sweep.columns or col in (x, y, metric):
            raise ValidationError("where", f"{col!r} is not a column of sweep other than {x}, {y}, {metric}")
        rows = rows.filter(_equals(col, value, sweep.schema[col]))
        labels.append(f"{col} {value}")
    if rows.is_empty():
        raise ValidationError("where", f"no row of sweep has {', '.join(labels)}")
    for col, dtype in sweep.schema.items():  # the "all" rows of a summary: every question at once
        if dtype == pl.String and col not in where and col not in (x, y, metric):
            groups = rows[col].unique()
            if "all" in groups.to_list() and groups.len() > 1:
                rows = rows.filter(pl.col(col) == "all")
                labels.append(f"{col} all")
    rows = rows.with_columns(pl.col(x).round(3), pl.col(y).round(3))
    _check_one_row_per_cell(rows, x, y, metric)
    return rows, ", ".join(labels)


def _equals(col: str, value: Any, dtype: pl.DataType) -> pl.Expr:
    """``col == value`` for a ``where`` entry: a number within 1e-9 (a grid's 0.1 is 0.1000000001
    after arithmetic), a string column against ``str(value)`` (``category`` 1 or ``"1"``)."""
    if dtype.is_numeric():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValidationError("where", f"{col} is a number column, got {value!r}")
        return (pl.col(col) - value).abs() <= 1e-9
    return pl.col(col).cast(pl.String) == str(value) if dtype == pl.String else pl.col(col) == value


def _check_one_row_per_cell(rows: pl.DataFrame, x: str, y: str, metric: str) -> None:
    """ValidationError naming ``sweep`` when an ``(x, y)`` cell of ``rows`` holds several rows, with
    the parameter columns that vary within a cell and their values (what ``where`` should fix)."""
    sizes = rows.group_by(x, y).len()
    if sizes.is_empty() or sizes["len"].max() <= 1:
        return
    params = [c for c in rows.columns if c not in (x, y, metric) and c.split("@")[0] not in _RESULTS]
    # a parameter varies within a cell when some cell holds more than one of its values
    spread = rows.group_by(x, y).agg(pl.col(c).n_unique() for c in params) if params else None
    varying = [c for c in params if spread is not None and spread[c].max() > 1]
    cell = sizes.sort("len", descending=True).row(0, named=True)
    what = f"has {cell['len']} rows in the cell {x} {cell[x]}, {y} {cell[y]}"
    if not varying:
        raise ValidationError("sweep", f"{what}: give one row per ({x}, {y}) cell")
    values = {c: sorted(rows[c].unique().drop_nulls().to_list()) for c in varying}
    raise ValidationError(
        "sweep",
        f"{what}: {', '.join(f'{c} varies too ({v})' for c, v in values.items())}; draw one value "
        f"at a time, e.g. where={{{', '.join(f'{c!r}: {v[0]!r}' for c, v in values.items())}}}",
    )
