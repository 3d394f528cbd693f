"""ipywidgets panels: sliders wired to charts, so you move a parameter and watch memory behave.

No memory logic lives here: a panel reads from the store (or from :mod:`memkit.views`, which caches
what a slider needs), builds a chart with :mod:`memkit.charts` and shows it. Every panel is an
object with its widgets and its current state as attributes, so it can be driven from Python
(that is how the tests run them, headlessly)::

    panel = mk.widgets.weights_tuner(store, ["where do I live"], namespace="user_87", now=now)
    panel.sliders["similarity"].value = 0.9      # re-ranks at once
    panel.data                                   # the current top-k frame
    panel.chart                                  # the current Altair chart
    panel                                        # displays the panel in a notebook

- :mod:`~memkit.widgets.panel` — :class:`Panel`, the base every panel shares, and :func:`slider`;
- :mod:`~memkit.widgets.tuning` — :func:`tune` (sliders for any parameter dataclass) and
  :func:`half_life_explorer`;
- :mod:`~memkit.widgets.explorers` — store-backed tuning: :func:`weights_tuner`, :func:`merge_explorer`;
- :mod:`~memkit.widgets.history` — the store over time: :func:`conflict_explorer` (and
  :mod:`~memkit.widgets.time_machine`: :func:`time_machine`);
- :mod:`~memkit.widgets.evaluation` — :func:`recall_tuner`: weights and the decay floor over
  recall@k per question category of a whole benchmark (LoCoMo), re-ranked on every move;
- :mod:`~memkit.widgets.guard` — :func:`guard_threshold`, the injection threshold against recall and
  false positives.

This is the only package that imports ipywidgets.
"""

from __future__ import annotations

from .evaluation import PRESETS, RecallTuner, recall_tuner
from .explorers import MergeExplorer, WeightsTuner, merge_explorer, weights_tuner
from .guard import GuardThreshold, guard_threshold
from .history import ConflictExplorer, TimeMachine, conflict_explorer, time_machine
from .panel import Panel, slider, table_html
from .tuning import HalfLifeExplorer, Tuner, half_life_explorer, tune

__all__ = [
    "ConflictExplorer",
    "GuardThreshold",
    "HalfLifeExplorer",
    "MergeExplorer",
    "PRESETS",
    "Panel",
    "RecallTuner",
    "TimeMachine",
    "Tuner",
    "WeightsTuner",
    "conflict_explorer",
    "guard_threshold",
    "half_life_explorer",
    "merge_explorer",
    "recall_tuner",
    "slider",
    "table_html",
    "time_machine",
    "tune",
    "weights_tuner",
]
