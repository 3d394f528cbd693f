"""Charts of the memory lifecycle: merging, and versions and conflicts of keys.

Pure like :mod:`memkit.charts` (which re-exports them): frames in, an Altair chart out.

- :func:`merge_chart` — the distribution of merge-partner similarities with the threshold line
  and the articles' safe range, above the clusters that threshold would merge;
- :func:`conflict_graph_chart` — keys as lanes over time, versions as marks coloured by status, and the
  edges of :func:`memkit.conflicts.conflict_graph` (next version, conflicts with, merged into);

The memory timeline (strength over time, fading and forgetting) is in :mod:`memkit.timeline_chart`.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from ..errors import ValidationError
from .style import WIDTH, finish, scale, short

__all__ = ["conflict_graph_chart", "merge_chart"]

_EDGE_KINDS = {
    "next_version": "#555555",
    "conflicts_with": "#d62728",
    "merged_into": "#1f77b4",
    "near_duplicate_of": "#9467bd",
}


def merge_chart(
    similarities: pl.DataFrame,
    threshold: float = 0.85,
    clusters: pl.DataFrame | None = None,
    *,
    safe: tuple[float, float] = (0.82, 0.88),
    max_clusters: int = 12,
) -> alt.VConcatChart:
    """Where a merge threshold cuts, and what it would merge.

    ``similarities``: one row per memory with ``similarity``, its best cosine to a merge partner
    (:func:`memkit.views.nearest_similarity`); bars right of the threshold are memories that would
    join a cluster. ``clusters``: a merge plan (``store.consolidate(dry_run=True)`` or
    :func:`memkit.consolidate.plan_merges`: ``members, content, min_similarity``), drawn below.
    """
    if not isinstance(similarities, pl.DataFrame) or "similarity" not in similarities.columns:
        raise ValidationError("similarities", "must be a polars DataFrame with a similarity column")
    if not 0.0 <= threshold <= 1.0:
        raise ValidationError("threshold", f"must be in [0, 1], got {threshold}")
    lo = 0.5  # the lowest threshold MergeParams accepts
    known = similarities.filter(pl.col("similarity").is_not_null())
    sims = known.filter(pl.col("similarity") >= lo)
    step = 0.01
    hist = (
        sims.with_columns(
            bin=((pl.col("similarity").clip(upper_bound=1.0) / step).floor() * step)
            .clip(upper_bound=1.0 - step)
            .round(2),
            merges=pl.when(pl.col("similarity") >= threshold - 1e-9)
            .then(pl.lit("would merge"))
            .otherwise(pl.lit("stays apart")),
        )
        .group_by("bin", "merges")
        .agg(memories=pl.len(), examples=pl.col("content").head(3).str.join(" | "))
        .with_columns(bin_end=(pl.col("bin") + step).round(2))
        .sort("bin", "merges")
    )
    xs = alt.Scale(domain=[lo, 1.0], zero=False)  # every layer: layers union their x domains
    x = alt.X("bin:Q", bin="binned", scale=xs, title="best cosine similarity to a merge partner")
    bars = (
        alt.Chart(hist)
        .mark_bar(stroke="white", strokeWidth=0.5)
        .encode(
            x,
            x2="bin_end:Q",
            y=alt.Y(
                "memories:Q", stack="zero", title="memories (square-root scale)", scale=alt.Scale(type="sqrt")
            ),
            color=alt.Color(
                "merges:N",
                scale=alt.Scale(domain=["would merge", "stays apart"], range=["#d62728", "#bab0ac"]),
                title=None,
            ),
            tooltip=[
                alt.Tooltip("bin:Q", title="from"),
                alt.Tooltip("bin_end:Q", title="to"),
                "merges:N",
                "memories:Q",
                alt.Tooltip("examples:N", title="e.g."),
            ],
        )
    )
    band = alt.Chart(pl.DataFrame({"a": [safe[0]], "b": [safe[1]], "t": ["safe range (articles)"]}))
    band_rect = band.mark_rect(color="#54a24b", opacity=0.12).encode(alt.X("a:Q", scale=xs), x2="b:Q")
    band_text = band.mark_text(align="left", baseline="top", dx=3, dy=22, color="#3b7a35").encode(
        alt.X("a:Q", scale=xs), y=alt.value(0), text="t:N"
    )
    n_merge = int((sims["similarity"] >= threshold - 1e-9).sum())
    n_clusters = 0 if clusters is None else clusters.height
    rule_df = pl.DataFrame({"t": [threshold], "label": [f"threshold {threshold:.2f}"]})
    rule = alt.Chart(rule_df).mark_rule(color="#d62728", strokeWidth=2).encode(alt.X("t:Q", scale=xs))
    rule_text = (
        alt.Chart(rule_df)
        .mark_text(align="right", dx=-4, dy=12, color="#d62728", fontWeight="bold")
        .encode(alt.X("t:Q", scale=xs), y=alt.value(0), text="label:N")
    )
    top = alt.layer(band_rect, bars, band_text, rule, rule_text).properties(width=WIDTH, height=200)
    charts = [top]
    if clusters is not None:
        if not {"members", "content", "min_similarity"} <= set(clusters.columns):
            raise ValidationError("clusters", "must be a merge plan with members, content, min_similarity")
        shown = (
            clusters.with_columns(size=pl.col("members").list.len())
            .sort(["size", "min_similarity"], descending=[True, True])
            .head(max_clusters)
            .with_columns(
                label=pl.col("content").map_elements(lambda s: short(s, 40), return_dtype=pl.String),
                min_similarity=pl.col("min_similarity").round(3),
            )
            .select("label", "content", "size", "min_similarity")
        )
        if shown.height:
            low = min(threshold, float(shown["min_similarity"].min() or threshold))
            bottom = (
                alt.Chart(shown)
                .mark_bar()
                .encode(
                    alt.X("size:Q", title="memories merged into one", axis=alt.Axis(tickMinStep=1)),
                    alt.Y("label:N", sort="-x", title=None, axis=alt.Axis(labelLimit=300)),
                    alt.Color(
                        "min_similarity:Q",
                        scale=alt.Scale(scheme="oranges", domain=[low, 1.0]),
                        title="min cosine",
                    ),
                    tooltip=[alt.Tooltip("content:N", title="merged content"), "size:Q", "min_similarity:Q"],
                )
            )
        else:
            bottom = (
                alt.Chart(pl.DataFrame({"t": ["nothing merges at this threshold"]}))
                .mark_text(fontSize=13, color="#777")
                .encode(text="t:N")
            )
        title = f"{n_clusters} clusters would merge" + (
            f" (largest {shown.height} shown)" if n_clusters > shown.height else ""
        )
        charts.append(bottom.properties(width=WIDTH - 300, height=max(22 * shown.height, 40), title=title))
    return finish(
        alt.vconcat(*charts),
        f"Merge threshold {threshold:.2f}: {n_merge} of {known.height} memories would join a cluster",
        [
            "Lower merges more (0.7 merges different intents); higher merges less (0.95 hardly merges).",
            f"{known.height - sims.height} memories have no partner above {lo} (not drawn).",
        ],
    )


def conflict_graph_chart(nodes: pl.DataFrame, edges: pl.DataFrame) -> alt.LayerChart:
    """Keys as lanes over time, every version a dot coloured by status, edges between versions.

    ``nodes, edges`` are :func:`memkit.conflicts.conflict_graph`'s frames. Shown: keyed memories
    and any memory at the end of an edge (unkeyed ones share the ``(no key)`` lane).
    """
    for name, f, cols in (
        ("nodes", nodes, {"id", "key", "version", "status", "content", "created_at"}),
        ("edges", edges, {"source", "target", "kind"}),
    ):
        if not isinstance(f, pl.DataFrame) or not cols <= set(f.columns):
            raise ValidationError(name, f"must be a polars DataFrame with {', '.join(sorted(cols))}")
    linked = pl.concat([edges["source"], edges["target"]]).unique()
    ns = nodes["namespace"].n_unique() if "namespace" in nodes.columns else 1
    lane = pl.col("key").fill_null("(no key)")
    if ns > 1:
        lane = pl.format("{} · {}", pl.col("namespace"), lane)
    shown = nodes.filter(pl.col("key").is_not_null() | pl.col("id").is_in(linked.implode())).with_columns(
        lane=lane,
        v=pl.format("v{}", pl.col("version")),
        text=pl.col("content").map_elements(lambda s: short(s, 40), return_dtype=pl.String),
    )
    # x is the write order (every write its own column, dates in the tooltip): versions written
    # minutes apart on a months-long axis would sit on top of each other
    shown = shown.sort("created_at", "id").with_columns(x=pl.int_range(1, pl.len() + 1))
    pos = shown.select("id", "lane", "x")
    e = edges.join(pos.rename({"id": "source"}), on="source").join(
        pos.rename({"id": "target", "lane": "lane2", "x": "x2"}), on="target"
    )
    lanes = shown.sort("lane")["lane"].unique(maintain_order=True).to_list()
    y = alt.Y(
        "lane:N",
        sort=lanes,
        scale=alt.Scale(type="point", padding=0.7),
        title=None,
        axis=alt.Axis(labelLimit=260, grid=True),
    )
    x = alt.X(
        "x:Q",
        title="write order (hover a dot for its time)",
        axis=alt.Axis(tickMinStep=1, grid=False),
        scale=alt.Scale(domain=[0.5, shown.height + 0.5]),
    )
    kinds = alt.Scale(domain=list(_EDGE_KINDS), range=list(_EDGE_KINDS.values()))
    dashes = alt.Scale(domain=list(_EDGE_KINDS), range=[[1, 0], [6, 3], [2, 2], [1, 3]])

    def edge_layer(data: pl.DataFrame, width: float, legend: bool) -> alt.Chart:
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

    # disputes are drawn last and thicker: they run along the same lane as the lineage
    rules = edge_layer(e.filter(pl.col("kind") != "conflicts_with"), 2, legend=True)
    disputes = edge_layer(e.filter(pl.col("kind") == "conflicts_with"), 3.5, legend=False)
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
