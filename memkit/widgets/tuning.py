"""ipywidgets panels: sliders wired to charts, so you move a parameter and watch memory behave.

No memory logic lives here: a panel reads from the store (or from :mod:`memkit.views`, which caches
what a slider needs), builds a chart from :mod:`memkit.charts` and shows it. Every panel is an
object with its widgets and its current state as attributes, so it can be driven from Python
(that is how the tests run them, headlessly)::

    panel = mk.widgets.weights_tuner(store, ["where do I live"], namespace="user_87", now=now)
    panel.sliders["similarity"].value = 0.9      # re-ranks at once
    panel.data                                   # the current top-k frame
    panel.chart                                  # the current Altair chart
    panel                                        # displays the panel in a notebook

:func:`tune` builds sliders from any parameter dataclass (the ranges live in its field metadata,
:func:`memkit.params.slider_ranges`); :func:`half_life_explorer` is here, the store-backed panels
(:func:`weights_tuner`, :func:`merge_explorer` in :mod:`memkit.panels`; :func:`conflict_explorer`,
:func:`time_machine` in :mod:`memkit.history_panels`) are re-exported. Charts are
``alt.JupyterChart`` widgets with the JavaScript bundled offline (:func:`memkit.charts.setup_notebook`
runs on the first panel).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import polars as pl
from IPython.display import display

from .. import charts
from ..decay import hours_until, strength
from ..errors import ValidationError
from ..views import worked_examples
from .panel import Panel, slider, table_html

__all__ = ["HalfLifeExplorer", "Tuner", "half_life_explorer", "tune"]


class Tuner(Panel):
    """:func:`tune`'s panel: ``params`` (the current dataclass) and ``result`` (``fn(params)``)."""

    def __init__(self, fn: Callable[[Any], Any], params: Any, title: str, continuous_update: bool) -> None:
        if isinstance(params, type):
            params = params()
        if not dataclasses.is_dataclass(params):
            raise ValidationError("params", f"must be a dataclass instance, got {type(params).__name__}")
        controls: dict[str, W.Widget] = {}
        for f in dataclasses.fields(params):
            value = getattr(params, f.name)
            if "range" in f.metadata:
                lo, hi, step = f.metadata["range"]
                controls[f.name] = slider(f.name, lo, hi, step, value, continuous_update=continuous_update)
            elif isinstance(value, bool):
                controls[f.name] = W.Checkbox(value=value, description=f.name)
            if f.name in controls and f.metadata.get("doc"):
                controls[f.name].tooltip = f.metadata["doc"]
        self.fn, self.params, self.result = fn, params, None
        self._out = W.Output()
        super().__init__(title, controls)
        self.widget.children = (*self.widget.children, self._out)
        self.refresh()

    def refresh(self) -> None:
        """Rebuild ``params`` from the sliders (validated) and re-render ``fn(params)``."""
        values = {n: w.value for n, w in self.controls.items()}
        self.params = dataclasses.replace(self.params, **values)
        self.say("")
        self.result = self.fn(self.params)
        if charts.is_chart(self.result):
            self.show("result", self.result)
        elif isinstance(self.result, pl.DataFrame):
            self.data = self.result
            self.table.value = table_html(self.result, 20)
        else:
            with self._out:
                self._out.clear_output(wait=True)
                display(self.result)


def tune(
    fn: Callable[[Any], Any], params: Any, *, title: str | None = None, continuous_update: bool = True
) -> Tuner:
    """Sliders for every field of ``params`` (a parameter dataclass or its class) that carries a
    ``range`` in its metadata; each change re-renders ``fn(params)`` (a chart, a frame or anything
    displayable). An invalid combination shows the ValidationError and keeps the last result.

    >>> import memkit as mk
    >>> panel = tune(lambda w: round(w.total(), 2), mk.Weights())    # doctest: +SKIP
    >>> panel.sliders["keyword"].value = 0.4                          # doctest: +SKIP
    >>> panel.result                                                  # doctest: +SKIP
    1.4
    """
    name = type(params).__name__ if not isinstance(params, type) else params.__name__
    return Tuner(fn, params, title or f"Tune {name}", continuous_update)


class HalfLifeExplorer(Panel):
    """:func:`half_life_explorer`'s panel; ``data`` is your memory's row (strength at the chosen age,
    hours until it fades)."""

    def __init__(self, importance: float, half_life_hours: float, age_hours: float, floor: float) -> None:
        lay = {"style": {"description_width": "initial"}, "layout": W.Layout(width="300px")}
        controls = {
            "importance": slider("importance", 0.05, 1.0, 0.01, importance),
            "half_life_hours": W.FloatLogSlider(
                value=half_life_hours,
                base=10,
                min=-0.3,
                max=4.3,
                step=0.01,
                description="half-life (h)",
                readout_format=".1f",
                **lay,
            ),
            "age_hours": W.FloatLogSlider(
                value=age_hours,
                base=10,
                min=-1,
                max=4,
                step=0.01,
                description="age (h)",
                readout_format=".1f",
                **lay,
            ),
            "floor": slider("retrieval floor", 0.0, 0.5, 0.01, floor),
        }
        super().__init__("Half-lives: how long a memory stays recallable", controls)
        self.refresh()

    def refresh(self) -> None:
        """Redraw the reference curves plus yours, with your memory's strength at the chosen age."""
        c = {n: float(w.value) for n, w in self.controls.items()}
        s = float(strength(c["importance"], c["age_hours"], c["half_life_hours"]))
        fade = float(hours_until(c["floor"], c["importance"], c["half_life_hours"]))
        label = f"yours · importance {c['importance']:.2f}, half-life {c['half_life_hours']:.1f} h"
        ex = worked_examples()
        mine = pl.DataFrame(
            {
                "label": [label],
                "importance": [c["importance"]],
                "half_life_hours": [c["half_life_hours"]],
                "age_hours": [c["age_hours"]],
                "strength": [round(s, 4)],
            }
        )
        self.data = mine.with_columns(hours_until_faded=pl.lit(fade), recalled=pl.lit(s >= c["floor"]))
        points = pl.concat([ex, mine], how="vertical_relaxed")
        self.show(
            "curves",
            charts.half_life_curves(
                points.select("label", "importance", "half_life_hours"), floor=c["floor"], examples=points
            ),
        )
        state = "still recalled" if s >= c["floor"] else "below the floor: no longer recalled"
        self.say(
            f"After {c['age_hours']:.1f} h your memory has strength {s:.4f} ({state}); "
            f"it fades below {c['floor']:g} after {fade:.1f} h ({fade / 24:.1f} days)."
        )


def half_life_explorer(
    importance: float = 0.7, half_life_hours: float = 24.0, age_hours: float = 12.0, floor: float = 0.1
) -> HalfLifeExplorer:
    """Sliders for importance, half-life, age and the retrieval floor over the worked examples'
    curves: ``strength = importance · 0.5^(age / half-life)`` and the age at which it fades."""
    return HalfLifeExplorer(importance, half_life_hours, age_hours, floor)
