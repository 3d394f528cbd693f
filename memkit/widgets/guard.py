"""The guard's threshold panel: move ``GuardParams.injection_threshold``, watch recall and false
positives move on labelled sets.

No guard logic lives here: the curve and the per-set rates come from :mod:`memkit.guard.curve`, the
chart from :func:`memkit.charts.guard_tradeoff_chart`.

What to look at: the chart shows the whole trade-off and where the slider sits on it; the table
below it gives, per labelled set, ``N`` and the rate at that threshold (recall on attack texts,
false positives on benign ones), so you see which set pays for a lower threshold.
"""

from __future__ import annotations

import dataclasses

import polars as pl

from .. import charts
from ..errors import ValidationError
from ..guard.curve import rates_at, tradeoff
from ..params import GuardParams, slider_ranges
from .panel import Panel, slider, table_html

__all__ = ["GuardThreshold", "guard_threshold"]


class GuardThreshold(Panel):
    """:func:`guard_threshold`'s panel: ``params`` (the current :class:`~memkit.GuardParams`),
    ``curve`` (the whole trade-off) and ``data`` (per set, at the current threshold)."""

    def __init__(self, scored: pl.DataFrame, params: GuardParams, field: str) -> None:
        """One slider over ``field`` (one of the two probability thresholds), its range and step
        from ``GuardParams``' field metadata, starting at ``params``' value; then a first draw."""
        if field not in ("injection_threshold", "strict_threshold"):
            raise ValidationError("field", f"must be injection_threshold or strict_threshold, got {field!r}")
        self.scored, self.params, self.field = scored, params, field
        self.curve = tradeoff(scored)  # computed once: the slider only moves along it
        lo, hi, step = slider_ranges(GuardParams)[field]  # both thresholds: 0.05 .. 0.99, step 0.01
        # continuous_update=False: redraw when the slider is released, not at every step of a drag
        controls = {field: slider(field, lo, hi, step, getattr(params, field), continuous_update=False)}
        super().__init__("Guard threshold: recall against false positives", controls)
        self.refresh()

    def refresh(self) -> None:
        """Re-read the slider into ``params`` (validated), redraw the mark and the per-set table."""
        # rounded to the slider's 0.01 step, which is also tradeoff's default grid: the dot sits on it
        value = round(float(self.controls[self.field].value), 2)
        # replace() re-runs GuardParams' validation (after a slider move, Panel shows a refusal)
        self.params = dataclasses.replace(self.params, **{self.field: value})
        self.data = rates_at(self.scored, value)  # per set and label: N, flagged, rate, measure
        self.show("tradeoff", charts.guard_tradeoff_chart(self.curve, value))
        # the rate as a percentage with one decimal ("52.0%"; data keeps the fraction, 0.52), at most 30 rows
        shown = self.data.with_columns(rate=pl.format("{}%", (pl.col("rate") * 100).round(1)))
        self.table.value = table_html(shown, 30)


def guard_threshold(
    scored: pl.DataFrame, params: GuardParams = GuardParams(), *, field: str = "injection_threshold"
) -> GuardThreshold:
    """A slider over ``params.<field>`` on ``scored`` texts (``probability, label[, set]``: the
    learned detector's output on labelled sets) -> the panel (display it, or set
    ``panel.sliders[field].value`` and read ``panel.data``).

    ``field`` is ``injection_threshold`` (the default) or ``strict_threshold`` (for ``tool`` and
    ``import`` sources). ``panel.params`` is ``params`` with the slider's value in that field, the
    rest unchanged: ready for ``MemoryStore(guard=panel.params)``.
    """
    if not isinstance(params, GuardParams):
        raise ValidationError("params", f"must be a memkit.GuardParams, got {type(params).__name__}")
    return GuardThreshold(scored, params, field)
