"""The house style shared by every memkit chart (one width, fixed colours, titles and fonts) and
:func:`setup_notebook`, which makes the charts render offline in Jupyter."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import altair as alt
from altair.utils.schemapi import debug_mode

from ..errors import MissingDependency

__all__ = [
    "COLORS",
    "HOURS",
    "WIDTH",
    "chart_widget",
    "finish",
    "is_chart",
    "scale",
    "setup_notebook",
    "short",
    "unvalidated",
]

WIDTH = 600
"""Width in pixels of every chart (fits a JupyterLab cell)."""

COLORS: dict[str, dict[str, str]] = {
    "component": {
        "similarity": "#4c78a8",
        "importance": "#f58518",
        "recency": "#54a24b",
        "keyword": "#b279a2",
        "neighbour": "#9d755d",  # neighbour expansion: the better adjacent memory's score, weighted
    },
    "status": {"active": "#2ca02c", "conflict": "#d62728", "superseded": "#9d9d9d", "quarantined": "#ff7f0e"},
    "layer": {"short_term": "#f58518", "episodic": "#54a24b", "long_term": "#1f3b73"},
    "movement": {
        "up": "#2ca02c",
        "down": "#d62728",
        "same": "#9d9d9d",
        "entered": "#4c78a8",
        "left": "#ff7f0e",
    },
}
"""Fixed colour of each score component, status, layer and rank movement, shared by every chart."""

HOURS = {1: "1 h", 6: "6 h", 24: "1 d", 168: "1 wk", 720: "30 d", 2160: "90 d", 4320: "180 d", 8760: "1 y"}


def scale(kind: str) -> alt.Scale:
    return alt.Scale(domain=list(COLORS[kind]), range=list(COLORS[kind].values()))


def finish(chart: Any, title: str, subtitle: str | Sequence[str] = "") -> Any:
    """Title, fonts and a frameless view: the house style of every memkit chart."""
    return (
        chart.properties(title=alt.Title(title, subtitle=subtitle, anchor="start", fontSize=15))
        .configure_view(stroke=None)
        .configure_axis(labelFontSize=11, titleFontSize=12, gridColor="#eeeeee")
        .configure_legend(labelFontSize=11, titleFontSize=12, orient="right")
    )


def short(text: str, n: int = 28) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def is_chart(obj: object) -> bool:
    """Whether ``obj`` is an Altair chart (any top-level chart: single, layered, concatenated)."""
    return isinstance(obj, alt.TopLevelMixin)


def chart_widget(chart: Any) -> Any:
    """``chart`` as a live ``alt.JupyterChart`` widget; a panel updates it in place by assigning
    ``widget.spec`` (the widgets package never imports Altair itself)."""
    return alt.JupyterChart(chart)


def unvalidated() -> contextlib.AbstractContextManager[Any]:
    """A context in which Altair skips JSON-schema validation while charts are built: 0.1-0.3 s a
    chart saved on every slider move (the builders' output is validated by the tests)."""
    return debug_mode(False)


def setup_notebook() -> None:
    """Make Altair charts render offline in Jupyter: call once, in a notebook's first cell.

    Enables Altair's ``jupyter`` renderer (charts become ``alt.JupyterChart`` widgets) with its
    JavaScript bundled locally by vl-convert instead of fetched from a CDN, and switches hand-built
    ``JupyterChart`` objects (the panels of :mod:`memkit.widgets`) to the same bundle. Idempotent.
    """
    for module, package in (("anywidget", "anywidget"), ("vl_convert", "vl-convert-python")):
        try:
            __import__(module)
        except ImportError:
            raise MissingDependency(
                f"offline charts need {package}: pip install '{package}' (a memkit dependency)"
            ) from None
    _bundle_offline()
    alt.renderers.enable("jupyter", offline=True)


def _bundle_offline() -> None:
    """``alt.JupyterChart.enable_offline()``, with its bundle cached on disk.

    vl-convert builds the same 0.9 MB JavaScript bundle for a given Altair and vl-convert version in
    3-10 s (the bulk of a notebook's run time); the cache (``~/.cache/memkit``, or
    ``$XDG_CACHE_HOME/memkit``) makes every later kernel start in milliseconds. Installing it sets
    exactly what ``enable_offline`` sets; without those attributes (another Altair) it falls back.
    """
    import vl_convert

    chart = alt.JupyterChart
    if getattr(chart, "_is_offline", False):
        return
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memkit"
    cache = root / f"jupyterchart-altair{alt.__version__}-vlconvert{vl_convert.__version__}.js"
    if cache.is_file() and hasattr(chart, "_esm") and hasattr(chart, "_is_offline"):
        chart._esm = cache.read_text(encoding="utf-8")
        chart._is_offline = True
        return
    chart.enable_offline()
    with contextlib.suppress(OSError):  # a read-only home only costs the next kernel the rebuild
        root.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(str(chart._esm), encoding="utf-8")
        tmp.replace(cache)  # atomic: a concurrent kernel never reads half a bundle
