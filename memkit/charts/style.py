"""The house style shared by every memkit chart (one width, fixed colours, titles and fonts) and
:func:`setup_notebook`, which makes the charts render offline in Jupyter.

Why a house style: a reader compares charts. When similarity is the same blue in the score
breakdown, the weights tuner and the notebooks, and ``conflict`` the same red in the conflict graph
and the timeline, a colour means one thing everywhere and no legend has to be re-read. Every chart
is :data:`WIDTH` pixels wide, and every builder ends with :func:`finish`: a left-aligned title that
says what to look at, a subtitle with the numbers, no frame around the plot.

Offline notebooks: Altair loads its JavaScript from a CDN by default, so an offline JupyterLab
shows blank charts. :func:`setup_notebook`, in a notebook's first cell, switches Altair to its
widget renderer with the JavaScript bundled locally (``anywidget`` and ``vl-convert-python``, both
memkit dependencies); the widget panels call it themselves (without its polars setting, below).
It also lets polars tables show a memory's text whole: polars cuts strings at 30 characters by
default, mid-sentence, which hides the very words that tell two memories apart.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
from altair.utils.schemapi import debug_mode

from ..errors import MissingDependency, ValidationError

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

HOURS = {
    1: "1 h", 6: "6 h", 24: "1 d", 168: "1 wk", 720: "30 d", 2160: "90 d", 4320: "180 d", 8760: "1 y",
    43800: "5 y", 87600: "10 y",
}  # fmt: skip
"""Tick positions (hours) and names for an age axis: spans a reader knows, not powers of ten."""


def scale(kind: str) -> alt.Scale:
    """The fixed colour scale of ``kind`` (``"component"``, ``"status"``, ``"layer"``,
    ``"movement"``): every value of :data:`COLORS` in the domain, even those a chart does not draw,
    so a colour never shifts when a value is missing from the data.

    >>> scale("layer").to_dict()["domain"]
    ['short_term', 'episodic', 'long_term']
    """
    return alt.Scale(domain=list(COLORS[kind]), range=list(COLORS[kind].values()))


def finish(chart: Any, title: str, subtitle: str | Sequence[str] = "") -> Any:
    """Title, fonts and a frameless view: the house style of every memkit chart.

    ``subtitle`` is a line or a list of lines. The configuration goes on the top-level chart, so
    call it last, on the finished layer or concatenation: Altair refuses ``configure_*`` on a chart
    that is then layered into another.
    """
    return (
        chart.properties(title=alt.Title(title, subtitle=subtitle, anchor="start", fontSize=15))
        .configure_view(stroke=None)
        .configure_axis(labelFontSize=11, titleFontSize=12, gridColor="#eeeeee")
        .configure_legend(labelFontSize=11, titleFontSize=12, orient="right")
    )


def short(text: str, n: int = 28) -> str:
    """``text`` cut to ``n`` characters with an ellipsis, for axis labels (tooltips keep it whole).

    >>> short("User lives in Hangzhou, near West Lake", 20)
    'User lives in Hangz…'
    """
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


def setup_notebook(*, text_width: int | None = 80) -> None:
    """Make Altair charts render offline in Jupyter, and polars tables show whole texts: call once,
    in a notebook's first cell.

    Enables Altair's ``jupyter`` renderer (charts become ``alt.JupyterChart`` widgets) with its
    JavaScript bundled locally by vl-convert instead of fetched from a CDN, and switches hand-built
    ``JupyterChart`` objects (the panels of :mod:`memkit.widgets`) to the same bundle. Idempotent.

    ``text_width``: the characters of a string polars prints in a table cell before it cuts
    (``pl.Config.set_fmt_str_lengths``, process-wide, as the renderer is; polars' own default is 30,
    which ends most memories mid-sentence). ``None`` leaves polars' setting as it is; a number that
    is not a whole number >= 1 raises a ValidationError naming it (before anything is changed).
    """
    if text_width is not None and (
        isinstance(text_width, bool) or not isinstance(text_width, int) or text_width < 1
    ):
        raise ValidationError("text_width", f"must be a whole number >= 1 or None, got {text_width!r}")
    for module, package in (("anywidget", "anywidget"), ("vl_convert", "vl-convert-python")):
        try:
            __import__(module)
        except ImportError:
            raise MissingDependency(
                f"offline charts need {package}: pip install '{package}' (a memkit dependency)"
            ) from None
    _bundle_offline()
    alt.renderers.enable("jupyter", offline=True)
    if text_width is not None:
        pl.Config.set_fmt_str_lengths(text_width)


def _bundle_offline() -> None:
    """``alt.JupyterChart.enable_offline()``, with its bundle cached on disk.

    vl-convert builds the same 0.9 MB JavaScript bundle for a given Altair and vl-convert version in
    3-10 s (the bulk of a notebook's run time); the cache (``~/.cache/memkit``, or
    ``$XDG_CACHE_HOME/memkit``) makes every later kernel start in milliseconds. Installing it sets
    exactly what ``enable_offline`` sets; without those attributes (another Altair) it falls back.
    """
    # imported here, not at the top: only offline rendering in a notebook needs vl-convert, not a
    # script or a test that builds charts and reads their specs
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
