"""Panels that need no store: sliders for any parameter dataclass, and the half-life explorer.

:func:`tune` is the general tool: give it a function and a parameter dataclass, and every field
with a ``range`` in its metadata becomes a slider (:func:`memkit.params.slider_ranges`; a ``bool``
field becomes a checkbox, and a field's ``doc`` metadata its tooltip). Each move rebuilds the
dataclass with :func:`dataclasses.replace`, which re-runs its validation, and re-renders
``fn(params)``: a chart is shown as a chart, a frame as a table, anything else through IPython's
``display``. An invalid combination (every weight 0) shows the ValidationError in red and keeps
the last result, so a slider can be dragged through a bad value without breaking the panel::

    what_if = hits.drop("score")                 # a search's scores hold for its own weights only
    panel = mk.widgets.tune(lambda w: mk.charts.score_breakdown(what_if, w), mk.Weights())
    panel.sliders["similarity"].value = 0.6      # redraws the bars; panel.params is the new Weights

:func:`half_life_explorer` is the decay formula with its four inputs on sliders, drawn over the
worked examples' curves. The store-backed panels are in :mod:`memkit.widgets.explorers`
(:func:`~memkit.widgets.weights_tuner`, :func:`~memkit.widgets.merge_explorer`) and
:mod:`memkit.widgets.history` (:func:`~memkit.widgets.conflict_explorer`,
:func:`~memkit.widgets.time_machine`); all are re-exported by :mod:`memkit.widgets`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import polars as pl
from IPython.display import display

from .. import charts
from ..decay import below_floor, hours_until, strength
from ..errors import ValidationError
from ..params import check_number
from ..views import worked_examples
from .panel import Panel, slider, table_html

__all__ = ["HalfLifeExplorer", "Tuner", "half_life_explorer", "tune"]

# the half-life explorer's slider ranges (hours for half-life and age); the floor starts at its first
# step, 0.01: a floor of 0 is never crossed, and hours_until refuses it
_IMPORTANCE = (0.05, 1.0, 0.01)
_HALF_LIFE_HOURS = (0.5, 20_000.0)  # half an hour to about 2.3 years
_AGE_HOURS = (0.1, 10_000.0)  # 6 minutes to 10,000 h
_FLOOR = (0.01, 0.5, 0.01)
# the positions of the half-life and age sliders (hours): spans a reader knows, from minutes to years.
# Not a log slider: its 10^0.01 steps moved 2 h to 1.995 h in the browser, which then reported
# another strength than the one a cell had just computed for 2 h
_HALF_LIFE_STEPS = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 24.0, 48.0, 72.0, 120.0, 168.0, 336.0, 720.0,
                    1440.0, 2160.0, 4320.0, 8760.0, 17520.0)  # fmt: skip
_AGE_STEPS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 18.0, 24.0, 36.0, 48.0, 72.0,
              120.0, 168.0, 336.0, 720.0, 1440.0, 2160.0, 4320.0, 8760.0)  # fmt: skip
# where the explorer's age axis ends: past the age slider's end and the latest fade the sliders can
# make (half-life 20,000 h, importance 1, floor 0.01: 20,000 · log2(100) ≈ 133,000 h, 15 years), so
# the dot and the cross are always on the chart and the axis never moves while a slider does (10% more:
# the farthest cross is not drawn on the axis' very edge, nor lost to a rounding of the slider's value)
_HORIZON_HOURS = 1.1 * max(_AGE_HOURS[1], _HALF_LIFE_HOURS[1] * math.log2(_IMPORTANCE[1] / _FLOOR[0]))


class Tuner(Panel):
    """:func:`tune`'s panel: ``params`` (the current dataclass) and ``result`` (``fn(params)``).

    Its controls are named after the fields (``panel.sliders["keyword"]`` is the keyword weight),
    so code can set a value exactly as a user would drag it, and read ``params`` and ``result``
    back. ``fn`` is kept as ``panel.fn``.
    """

    def __init__(self, fn: Callable[[Any], Any], params: Any, title: str, continuous_update: bool) -> None:
        if isinstance(params, type):  # a class: start from its defaults
            params = params()
        if not dataclasses.is_dataclass(params):
            raise ValidationError("params", f"must be a dataclass instance, got {type(params).__name__}")
        self.fn, self.params, self.result = fn, params, None
        self._out = W.Output()  # where a result that is neither a chart nor a frame is displayed
        super().__init__(title, _field_controls(params, continuous_update))
        self.widget.children = (*self.widget.children, self._out)
        self.refresh()

    def refresh(self) -> None:
        """Rebuild ``params`` from the sliders (validated) and re-render ``fn(params)``.

        A chart replaces the last chart in place, a polars frame becomes ``data`` and a 20-row
        table, anything else is displayed in an output area below (cleared first, so results do
        not pile up).
        """
        values = {n: w.value for n, w in self.controls.items()}
        # subtle: replace() re-runs __post_init__; if it refuses, self.params keeps the last good value
        self.params = dataclasses.replace(self.params, **values)
        self.say("")  # a valid combination clears the last refusal
        self.result = self.fn(self.params)
        # charts.is_chart, not isinstance(alt...): the widgets package never imports Altair itself
        if charts.is_chart(self.result):
            self.show("result", self.result)
        elif isinstance(self.result, pl.DataFrame):
            self.data = self.result
            self.table.value = table_html(self.result, 20)
        else:
            with self._out:
                self._out.clear_output(wait=True)
                display(self.result)


def _field_controls(params: Any, continuous_update: bool) -> dict[str, W.Widget]:
    """A control per tunable field of ``params``, in field order: a slider for a field with a
    ``range`` in its metadata, a checkbox for a ``bool`` field; the field's ``doc`` is the tooltip.
    Other fields (strings, tuples) have no control and keep their value."""
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
    return controls


def tune(
    fn: Callable[[Any], Any], params: Any, *, title: str | None = None, continuous_update: bool = True
) -> Tuner:
    """Sliders for every field of ``params`` (a parameter dataclass or its class) that carries a
    ``range`` in its metadata; each change re-renders ``fn(params)`` (a chart, a frame or anything
    displayable). An invalid combination shows the ValidationError and keeps the last result.

    ``continuous_update=False`` re-renders only when a slider is released: use it when ``fn`` takes
    more than a few tenths of a second (a search over a store, a sweep), so a drag does not queue
    one render per pixel. ``title`` defaults to ``"Tune <class name>"``.

    >>> import memkit as mk
    >>> panel = tune(lambda w: round(w.total(), 2), mk.Weights())    # doctest: +SKIP
    >>> panel.sliders["keyword"].value = 0.4                          # doctest: +SKIP
    >>> panel.result                       # similarity 0.3 + keyword 0.4   # doctest: +SKIP
    0.7
    """
    name = type(params).__name__ if not isinstance(params, type) else params.__name__
    return Tuner(fn, params, title or f"Tune {name}", continuous_update)


class HalfLifeExplorer(Panel):
    """:func:`half_life_explorer`'s panel; ``data`` is your memory's row (strength at the chosen age,
    hours until it fades).

    Things to try: set importance 0.6 and half-life 2 h (the meeting example) and move the age
    past 5 h: the memory drops below the floor. Raise the floor from 0.1 to 0.2: every cross moves
    left by one half-life, which costs a 90-day fact three months and a 2-hour note two hours.
    """

    def __init__(self, importance: float, half_life_hours: float, age_hours: float, floor: float) -> None:
        super().__init__(
            "Half-lives: how long a memory stays recallable",
            _decay_controls(importance, half_life_hours, age_hours, floor),
        )
        self.refresh()

    def refresh(self) -> None:
        """Redraw the reference curves plus yours, with your memory's strength at the chosen age."""
        c = {n: float(w.value) for n, w in self.controls.items()}
        # strength = importance · 0.5^(age / half-life); it fades at half-life · log2(importance / floor)
        s = float(strength(c["importance"], c["age_hours"], c["half_life_hours"]))
        fade = float(hours_until(c["floor"], c["importance"], c["half_life_hours"]))
        mine = _your_memory(c, s)
        recalled = not below_floor(s, c["floor"])
        self.data = mine.with_columns(hours_until_faded=pl.lit(fade), recalled=pl.lit(recalled))
        # your memory joins the worked examples: one more curve, one more dot
        points = pl.concat([worked_examples(), mine], how="vertical_relaxed")
        self.show(
            "curves",
            charts.half_life_curves(
                points.select("label", "importance", "half_life_hours"),
                floor=c["floor"],
                examples=points,
                horizon_hours=_HORIZON_HOURS,
            ),
        )
        state = "still recalled" if recalled else "below the floor: no longer recalled"
        self.say(
            f"After {_span(c['age_hours'])} your memory has strength {s:.4f} ({state}); "
            f"it fades below {c['floor']:g} after {fade:.1f} h ({fade / 24:.1f} days)."
        )


def _decay_controls(
    importance: float, half_life_hours: float, age_hours: float, floor: float
) -> dict[str, W.Widget]:
    """The explorer's four sliders. Half-life and age step through spans a reader knows
    (:data:`_HALF_LIFE_STEPS`: 30 minutes to 2 years; :data:`_AGE_STEPS`: 6 minutes to 1 year),
    labelled ``"2 h"``, ``"1 wk"``, ``"90 d"``: a linear slider could not move between minutes and
    years, and every position is exactly the number of hours its label says, in Python and in the
    browser. A starting value between the steps is added as a position of its own. The floor runs
    from 0.01 to 0.5: every position is a floor the formula accepts."""
    lay = {"style": {"description_width": "initial"}, "layout": W.Layout(width="300px")}
    return {
        "importance": slider("importance", *_IMPORTANCE, importance),
        "half_life_hours": W.SelectionSlider(
            options=_spans(_HALF_LIFE_STEPS, half_life_hours),
            value=half_life_hours,
            description="half-life",
            **lay,
        ),  # fmt: skip
        "age_hours": W.SelectionSlider(
            options=_spans(_AGE_STEPS, age_hours), value=age_hours, description="age", **lay
        ),
        "floor": slider("retrieval floor", *_FLOOR, floor),
    }


def _spans(steps: tuple[float, ...], value: float) -> list[tuple[str, float]]:
    """A selection slider's options: each step (hours) with its label, ``value`` among them
    (``_spans((1.0, 24.0), 5.0) -> [("1 h", 1.0), ("5 h", 5.0), ("1 d", 24.0)]``)."""
    return [(_span(h), h) for h in sorted({*steps, float(value)})]


def _span(hours: float) -> str:
    """A span in hours as a reader says it: ``0.25 -> '15 min'``, ``2.0 -> '2 h'``, ``48.0 -> '2 d'``,
    ``336.0 -> '2 wk'``, ``8760.0 -> '1 y'``, ``12.5 -> '12.5 h'``, ``20000.0 -> '20,000 h'``."""
    if hours < 1:
        return f"{hours * 60:g} min"
    if hours % 8760 == 0:
        return f"{hours / 8760:g} y"
    if hours % 168 == 0 and hours < 720:
        return f"{hours / 168:g} wk"
    if hours % 24 == 0:
        return f"{hours / 24:g} d"
    return f"{hours:,g} h"


def _your_memory(c: dict[str, float], s: float) -> pl.DataFrame:
    """The slider values ``c`` as one row in :func:`memkit.views.worked_examples`' columns
    (``label, importance, half_life_hours, age_hours, strength``), ``s`` rounded as theirs are."""
    # the half-life as its slider says it ("1 d", not "24.0 h"): one unit style in one panel
    label = f"yours · importance {c['importance']:.2f}, half-life {_span(c['half_life_hours'])}"
    return pl.DataFrame(
        {
            "label": [label],
            "importance": [c["importance"]],
            "half_life_hours": [c["half_life_hours"]],
            "age_hours": [c["age_hours"]],
            "strength": [round(s, 4)],
        }
    )


def half_life_explorer(
    importance: float = 0.7, half_life_hours: float = 24.0, age_hours: float = 12.0, floor: float = 0.1
) -> HalfLifeExplorer:
    """Sliders for importance, half-life, age and the retrieval floor over the worked examples'
    curves: ``strength = importance · 0.5^(age / half-life)`` and the age at which it fades.

    The arguments are the sliders' starting values (hours for ``half_life_hours`` and
    ``age_hours``). The message line reads the result out: your memory's strength at that age,
    whether it is still recalled, and after how many hours (and days) it falls below the floor.
    Half-life and age step through spans a reader knows (``"30 min"`` … ``"2 y"``, ``"6 min"`` …
    ``"1 y"``), each exactly its number of hours; a starting value between them becomes a position of
    its own. A starting value outside its slider's range (importance 0.05-1, half-life 0.5-20,000 h,
    age 0.1-10,000 h, floor 0.01-0.5) raises a ValidationError naming it, rather than being moved
    silently to the nearest end of the slider.

    >>> panel = half_life_explorer(half_life_hours=2.0)             # doctest: +SKIP
    >>> panel.sliders["half_life_hours"].label, panel.data["strength"][0]  # doctest: +SKIP
    ('2 h', 0.0109)
    """
    given = dict(importance=importance, half_life_hours=half_life_hours, age_hours=age_hours, floor=floor)
    ranges = dict(
        importance=_IMPORTANCE, half_life_hours=_HALF_LIFE_HOURS, age_hours=_AGE_HOURS, floor=_FLOOR
    )
    checked = {n: check_number(n, v, lo=ranges[n][0], hi=ranges[n][1]) for n, v in given.items()}
    return HalfLifeExplorer(**checked)
