"""The panel base shared by every widget panel: controls, live charts, a table and a message line.

A panel is one loop: a control changes -> :meth:`Panel.refresh` recomputes ``data`` from the
controls and a cache, builds charts with :mod:`memkit.charts` and hands each to :meth:`Panel.show`
-> the chart widgets update in place. Subclasses write ``__init__`` (build the controls, cache what
the sliders need, call ``refresh`` once) and ``refresh``; everything else is here:

- the layout: a title, the row of controls and buttons, a message line, the charts, a table;
- error handling: a :class:`~memkit.errors.MemkitError` raised by a refresh or a button (all
  weights 0, a refused resolve) is shown in red on the message line and the last good view stays,
  instead of a traceback lost in the widget's callback log;
- speed: charts are built without JSON-schema validation while a slider moves, and a shown chart
  is updated by sending its new spec to the existing ``JupyterChart`` rather than a new widget.

Because a panel keeps its state in attributes (``controls``, ``data``, ``charts``, ``message``),
the tests drive it headlessly: set ``panel.controls["k"].value = 3`` and read ``panel.data``.
"""

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
"""The control types :attr:`Panel.sliders` lists (dropdowns and checkboxes are controls, not sliders)."""
_SETTINGS = (*_SLIDERS, W.Checkbox)
"""The controls :meth:`Panel.reset` puts back: a setting (a weight, a threshold, an instant, a flag).
A menu (a query, a key) picks what is shown, and stays as picked."""
_ready = False  # whether the offline chart bundle is set up in this process


def _offline() -> None:
    """Run :func:`memkit.charts.setup_notebook` once per process, before the first panel draws
    (the chart bundle only: building a panel leaves polars' display settings alone)."""
    global _ready
    if not _ready:
        charts.setup_notebook(text_width=None)
        _ready = True


def table_html(frame: pl.DataFrame, rows: int = 10, width: int = 80) -> str:
    """A small, left-aligned HTML table of ``frame``'s first ``rows`` rows (floats to 3 decimals,
    text cut at ``width`` characters on a word boundary where possible).

    Lists show as ``"3 items"`` (a merge's members), nulls as empty cells, and a last line says how
    many rows were left out. Every cell is HTML-escaped: memory texts are user data.

    >>> page = table_html(pl.DataFrame({"content": ["likes <b>tea</b>"], "score": [0.91234]}))
    >>> "<td style='text-align:left;padding:2px 8px'>0.912</td>" in page, "&lt;b&gt;tea" in page
    (True, True)
    """
    if frame.is_empty():
        return "<i>(none)</i>"

    def cell(v: object) -> str:
        """One ``<td>``: ``0.91234 -> '0.912'``, ``[a, b] -> '2 items'``, ``None -> ''``."""
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
    :meth:`reset` puts every slider and checkbox back where the panel was built with them.

    A minimal panel, one slider and a table::

        class Doubler(Panel):
            def __init__(self) -> None:
                super().__init__("Double it", {"x": slider("x", 0, 10, 1, 3)})
                self.refresh()  # draw once; every slider move calls refresh again

            def refresh(self) -> None:
                self.data = pl.DataFrame({"x2": [2 * self.controls["x"].value]})
                self.table.value = table_html(self.data)
    """

    def __init__(self, title: str, controls: dict[str, W.Widget], buttons: dict[str, W.Button] | None = None):
        _offline()  # the chart widgets below need the JavaScript bundle
        self.controls = controls
        # where reset() puts the settings back: the values the panel was built with
        self._start = {n: w.value for n, w in controls.items() if isinstance(w, _SETTINGS)}
        self._resetting = False  # set while reset() moves them: one refresh after, not one per control
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
        # every control re-runs the panel; buttons are wired by the subclass with on_click
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

    def reset(self) -> None:
        """Every slider and checkbox back to the value the panel was built with (the weights tuner's
        ``baseline``, the merge explorer's threshold, the instant the time machine started on), then one
        refresh, not one per control. Menus (the tuner's query, the conflict explorer's key) stay as
        picked, and nothing a button wrote to the store is undone. A refusal shows as a slider
        move's does (the message line), the controls back all the same.

        >>> panel.sliders["keyword"].value = 0.0   # doctest: +SKIP
        >>> panel.reset()                          # doctest: +SKIP
        >>> panel.weights == panel.baseline        # doctest: +SKIP
        True
        """
        self._resetting = True
        try:
            for name, value in self._start.items():
                self.controls[name].value = value
        finally:
            self._resetting = False
        self._changed()

    def _changed(self, change: Any = None) -> None:
        """A control moved: refresh, or show the refusal and keep the last view (while :meth:`reset`
        moves several, nothing: it refreshes once after). The message line is cleared first: what it
        said (a refusal, a button's result) was about the controls as they were, and a panel whose
        refresh says nothing must not keep it under a view that has moved on."""
        if self._resetting:
            return
        self.say("")
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
        """Display the panel when it is a cell's last expression (Jupyter's display protocol)."""
        return self.widget._repr_mimebundle_(**kwargs)


def slider(name: str, lo: float, hi: float, step: float, value: float, **kw: Any) -> W.Widget:
    """An int or float slider for a parameter range (whole-number ranges get an IntSlider).

    ``lo, hi, step`` come from a field's ``range`` metadata (:func:`memkit.params.slider_ranges`);
    ``kw`` goes to the widget (``continuous_update=False`` for a slider whose refresh is slow). A
    float slider shows as many decimals as its step has: step 0.05 -> ``0.30``, step 0.005 ->
    ``0.300``.
    """
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
    digits = max(0, -math.floor(math.log10(step))) if step > 0 else 3  # 0.05 -> 2, 0.005 -> 3
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
