"""The conflict graph chart: keys as lanes, versions as dots, edges between them (pure: frames in,
an Altair chart out).

A keyed memory (``user.address``) has versions: a new value either supersedes the old one or, when
the store cannot tell which is right, waits as a ``conflict`` beside it until someone resolves it.
:func:`memkit.conflicts.conflict_graph` turns a store frame into nodes (memories) and edges
(``next_version``, ``conflicts_with``, ``merged_into``, ``near_duplicate_of``);
:func:`conflict_graph_chart` draws them.

How to read it: each key is a horizontal lane (``namespace · key`` when several namespaces are
drawn), and each dot a version, coloured by status (green active, red conflict, grey superseded).
The x axis is the order of writing, one column per write, so versions written a minute apart do not
sit on top of each other on a months-long time axis (hover a dot for its date). A grey line is the
lineage (v1 -> v2 -> v3); a thick red dashed line is a dispute that is still open. A lane with a red
dot is a fact the agent cannot state with confidence until it is resolved.

Re-exported by :mod:`memkit.charts` (and by :mod:`memkit.charts.lifecycle`, where it used to live).

>>> from datetime import datetime, timezone
>>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
>>> nodes = pl.DataFrame({"id": ["a", "b"], "key": ["addr", "addr"], "version": [1, 2],
...     "status": ["active", "conflict"], "content": ["Hangzhou", "Shanghai"], "created_at": [t, t]})
>>> edges = pl.DataFrame({"source": ["a", "b"], "target": ["b", "a"],
...     "kind": ["next_version", "conflicts_with"]})
>>> conflict_graph_chart(nodes, edges).to_dict()["title"]["subtitle"]
'1 active, 1 conflict; 2 edges'
"""

from __future__ import annotations

import altair as alt
import polars as pl

from ..errors import ValidationError
from .style import WIDTH, finish, scale, short

__all__ = ["conflict_graph_chart"]

_EDGE_KINDS = {
    "next_version": "#555555",
    "conflicts_with": "#d62728",
    "merged_into": "#1f77b4",
    "near_duplicate_of": "#9467bd",
}
"""Colour of each edge kind of :func:`memkit.conflicts.conflict_graph` (disputes in red)."""
_DASHES = [[1, 0], [6, 3], [2, 2], [1, 3]]
"""Stroke dash of each edge kind, in :data:`_EDGE_KINDS` order (solid lineage, dashed dispute, ...):
the kinds stay apart in a black-and-white print."""
_NODE_COLUMNS = {"id", "key", "version", "status", "content", "created_at"}
"""The node columns the chart reads (``namespace`` too, when present: it splits the lanes)."""
_EDGE_COLUMNS = {"source", "target", "kind"}
"""The edge columns the chart reads."""


def conflict_graph_chart(nodes: pl.DataFrame, edges: pl.DataFrame) -> alt.LayerChart:
    """Keys as lanes over time, every version a dot coloured by status, edges between versions.

    ``nodes, edges`` are :func:`memkit.conflicts.conflict_graph`'s frames. Shown: keyed memories
    and any memory at the end of an edge (unkeyed ones share the ``(no key)`` lane). The x axis is
    the order of ``created_at``; memories of one instant keep the order of ``nodes``, which is the
    order they were written in when they come from ``store.frame()`` (a hand-made frame: list them so).

    The chart is 34 pixels a lane high; the subtitle counts the versions shown by status and the
    edges drawn. Edges whose ends are not both shown are left out.
    """
    for name, f, cols in (("nodes", nodes, _NODE_COLUMNS), ("edges", edges, _EDGE_COLUMNS)):
        if not isinstance(f, pl.DataFrame) or not cols <= set(f.columns):
            raise ValidationError(name, f"must be a polars DataFrame with {', '.join(sorted(cols))}")
    shown = _placed_nodes(nodes, edges)
    e = _placed_edges(edges, shown)
    # lanes in alphabetical order (namespace first when shown): a key's row never depends on data order
    lanes = shown.sort("lane")["lane"].unique(maintain_order=True).to_list()
    # lanes evenly spaced, with room above the top lane for its v-labels (point padding)
    y = alt.Y(
        "lane:N",
        sort=lanes,
        scale=alt.Scale(type="point", padding=0.7),
        title=None,
        axis=alt.Axis(labelLimit=260, grid=True),
    )
    # half a column of margin at each end, so the first and the last dot are not cut in half
    x = alt.X(
        "x:Q",
        title="write order (hover a dot for its time)",
        axis=alt.Axis(tickMinStep=1, grid=False),
        scale=alt.Scale(domain=[0.5, shown.height + 0.5]),
    )
    # disputes are drawn last and thicker: they run along the same lane as the lineage
    rules = _edge_layer(e.filter(pl.col("kind") != "conflicts_with"), x, y, 2, legend=True)
    disputes = _edge_layer(e.filter(pl.col("kind") == "conflicts_with"), x, y, 3.5, legend=False)
    dots, labels = _version_marks(shown, x, y)
    # two colour legends: edges by kind, dots by status (a shared scale would merge the two)
    chart = alt.layer(rules, disputes, dots, labels).resolve_scale(color="independent")
    chart = chart.properties(width=WIDTH - 200, height=max(34 * len(lanes), 80))
    counts = shown["status"].value_counts().sort("status").rows()
    return finish(
        chart,
        "Keys and their versions over time",
        ", ".join(f"{n} {s}" for s, n in counts) + f"; {e.height} edges"
        if shown.height
        else "no keyed memories",
    )


def _placed_nodes(nodes: pl.DataFrame, edges: pl.DataFrame) -> pl.DataFrame:
    """The nodes to draw, each with its ``lane`` (y), ``x`` (its place in the order of writing,
    from 1), ``v`` (the ``"v2"`` label) and ``text`` (its content cut to 40 characters).

    Unkeyed memories are drawn only when an edge touches them (a merge, a near duplicate): the
    chart is about keys, and a store has far more unkeyed memories than keyed ones.
    """
    linked = pl.concat([edges["source"], edges["target"]]).unique()
    ns = nodes["namespace"].n_unique() if "namespace" in nodes.columns else 1
    lane = pl.col("key").fill_null("(no key)")
    if ns > 1:  # two tenants may use the same key: their lanes stay apart
        lane = pl.format("{} · {}", pl.col("namespace"), lane)
    shown = nodes.filter(pl.col("key").is_not_null() | pl.col("id").is_in(linked.implode())).with_columns(
        lane=lane,
        v=pl.format("v{}", pl.col("version")),
        text=pl.col("content").map_elements(lambda s: short(s, 40), return_dtype=pl.String),
    )
    # x is the write order (every write its own column, dates in the tooltip): versions written
    # minutes apart on a months-long axis would sit on top of each other. Two writes at one instant
    # keep the frame's order, the store's order of writing (store.frame: created_at, then rowid),
    # not their ids' (random: a tie broken by id drew the second write first, in 3 runs of 4)
    return shown.sort("created_at", maintain_order=True).with_columns(x=pl.int_range(1, pl.len() + 1))


def _placed_edges(edges: pl.DataFrame, shown: pl.DataFrame) -> pl.DataFrame:
    """``edges`` between drawn nodes, with both ends' positions: ``lane, x`` of the source and
    ``lane2, x2`` of the target (an inner join drops edges to nodes not drawn)."""
    pos = shown.select("id", "lane", "x")  # where each drawn node sits, joined on once per end
    return edges.join(pos.rename({"id": "source"}), on="source").join(
        pos.rename({"id": "target", "lane": "lane2", "x": "x2"}), on="target"
    )


def _edge_layer(data: pl.DataFrame, x: alt.X, y: alt.Y, width: float, legend: bool) -> alt.Chart:
    """A line per edge of ``data``, from ``(x, lane)`` to ``(x2, lane2)``, coloured and dashed by
    kind; ``legend`` shows the edge legend (one of the two edge layers carries it)."""
    kinds = alt.Scale(domain=list(_EDGE_KINDS), range=list(_EDGE_KINDS.values()))
    dashes = alt.Scale(domain=list(_EDGE_KINDS), range=_DASHES)
    return (
        alt.Chart(data)
        .mark_rule(strokeWidth=width)
        .encode(
            x,
            x2="x2:Q",
            y=y,
            y2="lane2:N",
            color=alt.Color("kind:N", scale=kinds, title="edge", legend=alt.Legend() if legend else None),
            strokeDash=alt.StrokeDash("kind:N", scale=dashes, legend=None),
            tooltip=["kind:N", "source:N", "target:N"],
        )
    )


def _version_marks(shown: pl.DataFrame, x: alt.X, y: alt.Y) -> tuple[alt.Chart, alt.Chart]:
    """A dot per version coloured by status (the tooltip has its text, time and id) and its
    ``v<n>`` label above it; unkeyed memories get no label (their version number means nothing)."""
    pts = alt.Chart(shown).encode(x, y)
    dots = pts.mark_point(filled=True, size=160, opacity=1).encode(
        color=alt.Color("status:N", scale=scale("status"), title="status"),
        tooltip=[
            "lane:N",
            "version:Q",
            "status:N",
            "content:N",
            alt.Tooltip("created_at:T", title="written", format="%Y-%m-%d %H:%M"),
            "id:N",
        ],
    )
    labels = (
        pts.mark_text(dy=-13, fontSize=10, color="#333")
        .encode(text="v:N")
        .transform_filter(alt.datum.lane != "(no key)")
    )
    return dots, labels
