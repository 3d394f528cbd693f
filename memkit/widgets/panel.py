"""The panel base shared by every widget panel: controls, live charts, a table and a message line."""

from __future__ import annotations

import html
import math
from typing import Any

import ipywidgets as W
import polars as pl

from .. import charts
from ..errors import MemkitError

__all__ = ["Panel", "slider", "table_html"]

_SLIDERS = (W.FloatSlider, W.IntSlider, W.FloatLogSlider, W.SelectionSlider)
_ready = False


def _offline() -> None:
    global _ready
    if not _ready:
        charts.setup_notebook()
        _ready = True


def table_html(frame: pl.DataFrame, rows: int = 10, width: int = 80) -> str:
    """A small, left-aligned HTML table of ``frame``'s first ``rows`` rows (floats to 3 decimals,
    text cut at ``width`` characters on a word boundary where possible)."""
    if frame.is_empty():
        return "<i>(none)</i>"

    def cell(v: object) -> str:
        if isinstance(v, float):
            text = f"{v:.3f}"
        elif isinstance(v, list):
            text = f"{len(v)} items"
        else:
            text = "" if v is None else str(v)
            if len(text) > width:
                cut = text[:width].rsplit(" ", 1)[0] if " " in text[:width] else text[:width]
                text = cut + "…"
        return f"<td style='text-align:left;padding:2px 8px'>{html.escape(text)}</td>"

    head = "".join(
        f"<th style='text-align:left;padding:2px 8px'>{html.escape(c)}</th>" for c in frame.columns
    )
    body = "".join(
        "<tr style='border-top:1px solid #eee'>" + "".join(cell(v) for v in r) + "</tr>"
        for r in frame.head(rows).iter_rows()
    )
    more = f"<div style='color:#777'>… {frame.height - rows} more</div>" if frame.height > rows else ""
    return f"<table style='border-collapse:collapse;font-size:12px'><tr>{head}</tr>{body}</table>{more}"


class Panel:
    """A titled box of controls, one or more live charts, a table and a message line.

    Attributes: ``controls`` (name -> widget), ``sliders`` (the slider subset), ``buttons``,
    ``charts`` (name -> current Altair chart), ``chart`` (the first), ``data`` (the current frame),
    ``message`` (an HTML widget: errors and notes), ``widget`` (the box to display).
    """

    def __init__(self, title: str, controls: dict[str, W.Widget], buttons: dict[str, W.Button] | None = None):
        _offline()
        self.controls = controls
        self.buttons = buttons or {}
        self.charts: dict[str, Any] = {}
        self._views: dict[str, Any] = {}  # name -> alt.JupyterChart
        self.data: pl.DataFrame | None = None
        self.message = W.HTML()
        self.table = W.HTML()
        self._chart_box = W.VBox()
        row = [w for w in controls.values()] + list(self.buttons.values())
        self.widget = W.VBox(
            [
                W.HTML(f"<h3 style='margin:4px 0'>{html.escape(title)}</h3>"),
                W.HBox(row, layout=W.Layout(flex_flow="row wrap")),
                self.message,
                self._chart_box,
                self.table,
            ]
        )
        for w in controls.values():
            w.observe(self._changed, names="value")

    @property
    def sliders(self) -> dict[str, W.Widget]:
        """The controls that are sliders."""
        return {n: w for n, w in self.controls.items() if isinstance(w, _SLIDERS)}

    @property
    def chart(self) -> Any:
        """The panel's main (first) chart as it is now."""
        return next(iter(self.charts.values()), None)

    def show(self, name: str, chart: Any) -> None:
        """Put ``chart`` in the panel under ``name`` (a live widget, updated in place)."""
        self.charts[name] = chart
        if name in self._views:
            # subtle: JupyterChart.chart = ... re-validates the whole spec against the Vega-Lite
            # JSON schema (0.1-0.3 s a chart); the builders' output is validated by the tests, so a
            # slider move sends the spec unvalidated (the front end re-embeds on a spec change)
            self._views[name].spec = chart.to_dict(validate=False)
        else:
            self._views[name] = charts.chart_widget(chart)
            self._chart_box.children = tuple(self._views.values())

    def say(self, text: str, error: bool = False) -> None:
        """Show a line of text (red for an error) above the charts."""
        color = "#b00020" if error else "#333"
        self.message.value = f"<span style='color:{color}'>{html.escape(text)}</span>" if text else ""

    def refresh(self) -> None:
        """Recompute data and charts from the controls (each panel implements it)."""
        raise NotImplementedError

    def _changed(self, change: Any = None) -> None:
        try:
            with charts.unvalidated():  # no schema validation while building charts on a slider move
                self.refresh()
        except MemkitError as e:  # a bad combination (all weights 0): say so, keep the last view
            self.say(str(e), error=True)

    def on_click(self, button: W.Button, action: Any) -> None:
        """Run ``action()`` on a click; a refused action (AccessDenied, NotFound, ...) is shown in
        the message line instead of vanishing into the widget's callback log."""

        def run(_: Any) -> None:
            try:
                with charts.unvalidated():
                    action()
            except MemkitError as e:
                self.say(str(e), error=True)

        button.on_click(run)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def slider(name: str, lo: float, hi: float, step: float, value: float, **kw: Any) -> W.Widget:
    """An int or float slider for a parameter range (whole-number ranges get an IntSlider)."""
    style = {"description_width": "initial"}
    layout = W.Layout(width="300px")
    if all(float(v).is_integer() for v in (lo, hi, step)) and float(value).is_integer() and step >= 1:
        return W.IntSlider(
            value=int(value),
            min=int(lo),
            max=int(hi),
            step=int(step),
            description=name,
            style=style,
            layout=layout,
            **kw,
        )
    digits = max(0, -math.floor(math.log10(step))) if step > 0 else 3
    return W.FloatSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=name,
        style=style,
        layout=layout,
        readout_format=f".{digits}f",
        **kw,
    )
