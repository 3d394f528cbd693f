"""Altair charts of memory behaviour (pure: frames in, ``alt.Chart`` out, never displayed).

Every builder takes polars frames, as the store and :mod:`memkit.views` return them, and gives back
a chart you can display, save or inspect with ``chart.to_dict()``. Components, statuses and layers
have fixed colours across all charts, and every chart has the same width, a title that says what to
look at, axis titles with units and tooltips. This is the only package that imports Altair.

- :mod:`~memkit.charts.style` — the house style and :func:`setup_notebook` (offline rendering);
- :mod:`~memkit.charts.decay` — half-life curves (strength over age, the floor, worked examples);
- :mod:`~memkit.charts.retrieval` — score breakdowns, rank shifts, weight heatmaps;
- :mod:`~memkit.charts.lifecycle` — the merge-threshold chart;
- :mod:`~memkit.charts.conflicts` — the conflict-graph chart (keys as lanes, versions, edges);
- :mod:`~memkit.charts.timeline` — each memory's life over time, and state counts;
- :mod:`~memkit.charts.evaluation` — recall per question category against reference settings;
- :mod:`~memkit.charts.guard` — the guard's threshold trade-off (precision/recall, rates by threshold).

Builders whose old names equalled a panel's or a data function's have names that say they are
charts (:func:`merge_chart`, :func:`conflict_graph_chart`); the old names remain as aliases.

>>> chart = half_life_curves()
>>> [layer["mark"]["type"] for layer in chart.to_dict()["layer"]][:2]
['line', 'rule']
"""

from __future__ import annotations

from .evaluation import recall_by_category
from .guard import guard_tradeoff_chart
from .lifecycle import conflict_graph_chart, merge_chart
from .retrieval import half_life_curves, rank_shift, score_breakdown, weight_heatmap
from .style import COLORS, WIDTH, chart_widget, is_chart, setup_notebook, unvalidated
from .timeline import memory_timeline, state_counts

conflict_graph = conflict_graph_chart  # old name (equals mk.conflicts.conflict_graph, a data function)
merge_explorer = merge_chart  # old name (equals mk.widgets.merge_explorer, a panel)

__all__ = [
    "COLORS",
    "WIDTH",
    "chart_widget",
    "conflict_graph",
    "conflict_graph_chart",
    "guard_tradeoff_chart",
    "half_life_curves",
    "is_chart",
    "memory_timeline",
    "merge_chart",
    "merge_explorer",
    "rank_shift",
    "recall_by_category",
    "score_breakdown",
    "setup_notebook",
    "state_counts",
    "unvalidated",
    "weight_heatmap",
]
