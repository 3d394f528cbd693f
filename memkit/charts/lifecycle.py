"""Charts of the memory lifecycle: merging near-duplicates (pure: frames in, an Altair chart out).

Consolidation merges memories whose embeddings are close: every memory with a partner at cosine
``>= threshold`` joins a cluster, and each cluster becomes one memory (:mod:`memkit.consolidate`).
The threshold is the one number that decides it, and a wrong one fails quietly: too low and
different intents ("I like tea" / "I like coffee") become one memory, too high and nothing merges.
:func:`merge_chart` shows where a threshold cuts: the distribution of each memory's best merge
partner with the threshold line and the articles' safe range (0.82-0.88), above the clusters that
threshold would merge.

How to read it: red bars are the memories the plan merges (each joins a cluster); blue bars are above
the red line but held apart by the plan's other rules (fact tokens differ, the forgetting floor, a
cluster over ``max_cluster``: :func:`memkit.consolidate.held_apart`). A well-placed
threshold sits in a valley of the histogram, between the pile of true duplicates near 1.0 and the
mass of merely related memories below; the cluster bars underneath show what each merge would
produce, so a cluster whose text mixes two facts says the threshold is too low.

:func:`merge_chart` reads as its steps: the histogram, the safe band, the threshold rule, and the
cluster bars. Re-exported by :mod:`memkit.charts`; the conflict graph of keys and versions is
:func:`memkit.charts.conflict_graph_chart` (:mod:`memkit.charts.conflicts`), and the memory timeline
(strength over time, fading and forgetting) is in :mod:`memkit.charts.timeline`.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from ..errors import ValidationError
from .conflicts import conflict_graph_chart
from .style import WIDTH, finish, short

__all__ = ["conflict_graph_chart", "merge_chart"]

_LOWEST = 0.5
"""The lowest threshold :class:`memkit.consolidate.MergeParams` accepts: the x axis starts here."""
_STEP = 0.01
"""Width of a histogram bar, in cosine similarity."""
# subtle: slack on `similarity >= threshold` for float rounding, the store's plan's own (memkit.consolidate):
# float32 cosines round, so a memory "exactly at" the threshold is on the line's right in both.
_EPS = 1e-6
_STATES = ("would merge", "held apart", "stays apart")
"""The histogram's colours with a plan: in its clusters, above the threshold but not in them, below."""
_COLORS = ("#d62728", "#4c78a8", "#bab0ac")


def merge_chart(
    similarities: pl.DataFrame,
    threshold: float = 0.85,
    clusters: pl.DataFrame | None = None,
    *,
    safe: tuple[float, float] = (0.82, 0.88),
    max_clusters: int = 12,
) -> alt.VConcatChart:
    """Where a merge threshold cuts, and what it would merge.

    ``similarities``: one row per memory with ``id`` and ``similarity``, its best cosine to a merge
    partner (:func:`memkit.views.nearest_similarity`). ``clusters``: the merge plan at this threshold
    (``store.consolidate(dry_run=True)`` or :func:`memkit.consolidate.plan_grouped`: ``members,
    content, min_similarity``), drawn below. With a plan, the histogram and the title count exactly the
    plan's members as merging (red); memories at or above the threshold that the plan leaves out are
    *held apart* (blue, counted in the subtitle): their fact tokens differ from their partner's
    (``MergeParams.distinct_facts``), one is below the forgetting floor, or their cluster is over
    ``max_cluster``. Without a plan the chart knows only cosines: red is every memory with a partner
    at or above the threshold, which the plan's rules may still hold apart.

    ``safe`` is the range the articles recommend (a green band); ``max_clusters`` caps the cluster
    bars, largest clusters first. A plan with a boolean ``wrong`` column (clusters judged against
    labels, :func:`memkit.portable.semantic.judge_plan`) colours each bar right or wrong instead of
    by its weakest link, wrong clusters listed first: where wrong merges start, in the data.
    Memories whose best partner is below cosine 0.5 are counted in the subtitle but not drawn (no
    allowed threshold can merge them); memories with no candidate partner at all (null
    ``similarity``: alone in their namespace, layer and key) are left out of the chart and counted in
    the subtitle's last line. The similarities should be
    the plan's candidates' (``store.merge_candidates``, as the panel takes them): a memory whose only
    close partner was no candidate (written after the plan's ``now``, expired) is drawn as held apart.
    A plan whose members are not all in ``similarities`` (another namespace, another store) raises a
    ValidationError; an empty plan needs no ``id`` column.

    >>> sims = pl.DataFrame({"id": list("abcde"),
    ...                      "content": ["likes tea", "likes tea a lot", "budget 5000", "budget 8000", "hi"],
    ...                      "similarity": [0.93, 0.93, 0.92, 0.92, 0.2]})
    >>> merge_chart(sims, 0.85).to_dict()["title"]["text"]
    'Merge threshold 0.85: 4 of 5 memories have a partner at or above it'
    >>> plan = pl.DataFrame({"members": [["a", "b"]], "content": ["likes tea"], "min_similarity": [0.93]})
    >>> title = merge_chart(sims, 0.85, plan).to_dict()["title"]
    >>> title["text"]
    'Merge threshold 0.85: 2 of 5 memories would join a cluster'
    >>> title["subtitle"][1]
    '2 memories at or above it are held apart by the plan (blue).'
    >>> title["subtitle"][2]
    '1 memories have no partner above 0.5 (not drawn).'
    """
    if not isinstance(similarities, pl.DataFrame) or "similarity" not in similarities.columns:
        raise ValidationError("similarities", "must be a polars DataFrame with a similarity column")
    if not 0.0 <= threshold <= 1.0:
        raise ValidationError("threshold", f"must be in [0, 1], got {threshold}")
    if clusters is not None and not {"members", "content", "min_similarity"} <= set(clusters.columns):
        raise ValidationError("clusters", "must be a merge plan with members, content, min_similarity")
    # null similarity: no candidate partner at all (alone in its group); such memories are not counted
    known = _states(similarities.filter(pl.col("similarity").is_not_null()), threshold, clusters)
    sims = known.filter(pl.col("similarity") >= _LOWEST)
    xs = alt.Scale(domain=[_LOWEST, 1.0], zero=False)  # every layer: layers union their x domains
    band_rect, band_text = _safe_band(safe, xs)
    rule, rule_text = _threshold_rule(threshold, xs)
    # drawing order: the band behind the bars, labels and the threshold line on top of them
    top = alt.layer(band_rect, _histogram(sims, clusters is not None, xs), band_text, rule, rule_text)
    charts = [top.properties(width=WIDTH, height=200)]
    if clusters is not None:  # without a plan the chart is the histogram alone
        charts.append(_cluster_bars(clusters, threshold, max_clusters))
    # the same states as the red and blue bars, so the title's count equals their total
    n_merge, n_held = (int((known["state"] == s).sum()) for s in _STATES[:2])
    said = "would join a cluster" if clusters is not None else "have a partner at or above it"
    lone = similarities.height - known.height  # so the counts add up to what the panel says it holds
    alone = (
        [f"{lone} more have no candidate partner (alone in their namespace, layer and key)."] if lone else []
    )
    held = (
        [f"{n_held} memories at or above it are held apart by the plan (blue)."]
        if clusters is not None
        else []
    )
    return finish(
        alt.vconcat(*charts).resolve_scale(color="independent"),  # two colour meanings, two legends
        f"Merge threshold {threshold:.2f}: {n_merge} of {known.height} memories {said}",
        [
            "Lower merges more (0.7 merges different intents); higher merges less (0.95 hardly merges).",
            *held,
            f"{known.height - sims.height} memories have no partner above {_LOWEST} (not drawn).",
            *alone,
        ],
    )


def _states(known: pl.DataFrame, threshold: float, clusters: pl.DataFrame | None) -> pl.DataFrame:
    """``known`` with a ``state`` per memory: with a plan, ``would merge`` exactly for its members,
    ``held apart`` for the others at or above the threshold, ``stays apart`` below it; without one,
    ``would merge`` by cosine alone (the plan's rules unknown)."""
    above = pl.col("similarity") >= threshold - _EPS
    if clusters is None:
        return known.with_columns(state=pl.when(above).then(pl.lit(_STATES[0])).otherwise(pl.lit(_STATES[2])))
    members = clusters["members"].explode().drop_nulls().unique()
    if "id" not in known.columns:  # an empty plan names no member to find
        if members.len():
            raise ValidationError("similarities", "needs an id column to find the plan's members")
        known = known.with_columns(id=pl.lit(None, pl.String))
    missing = members.filter(~members.is_in(known["id"].implode()))
    if missing.len():
        raise ValidationError(
            "clusters", f"{missing.len()} members are not in similarities (e.g. {missing[0]}): another set?"
        )
    member = pl.col("id").is_in(members.implode())
    state = pl.when(member).then(pl.lit(_STATES[0])).when(above).then(pl.lit(_STATES[1]))
    return known.with_columns(state=state.otherwise(pl.lit(_STATES[2])))


def _histogram(sims: pl.DataFrame, planned: bool, xs: alt.Scale) -> alt.Chart:
    """Stacked bars of memories per 0.01 of best-partner similarity, coloured by ``state``: red where
    they would merge, blue where the plan holds them apart (``planned``: the legend names it), grey below.

    The counts are binned here, not by Vega, so each bar's tooltip can carry up to three example
    texts. The y axis is a square root: one bin of 200 exact duplicates must not flatten the
    handful of borderline memories near the threshold, which are what a reader is looking for.
    """
    hist = (
        sims.with_columns(
            # bin = the bar's left edge; a similarity of exactly 1.0 goes in the last bar, 0.99-1.00
            bin=((pl.col("similarity").clip(upper_bound=1.0) / _STEP).floor() * _STEP)
            .clip(upper_bound=1.0 - _STEP)
            .round(2),
        )
        # one row per (bar, state): a bar can be split when the threshold is not on a bin edge (its
        # lower part grey, its upper part red), or when the plan holds some of its memories apart
        .group_by("bin", pl.col("state").alias("merges"))
        .agg(memories=pl.len(), examples=pl.col("content").head(3).str.join(" | "))
        .with_columns(bin_end=(pl.col("bin") + _STEP).round(2))
        .sort("bin", "merges")
    )
    shown = [0, 1, 2] if planned else [0, 2]  # no plan: no "held apart" in the legend
    x = alt.X("bin:Q", bin="binned", scale=xs, title="best cosine similarity to a merge partner")
    return (
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
                scale=alt.Scale(domain=[_STATES[i] for i in shown], range=[_COLORS[i] for i in shown]),
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


def _safe_band(safe: tuple[float, float], xs: alt.Scale) -> tuple[alt.Chart, alt.Chart]:
    """A pale green band over the ``safe`` range and its label just above the plot, at the band's
    left edge (inside the plot it sat on the tallest bars, which are often near the band).

    The articles found 0.82-0.88 safe on their data: paraphrases merge, different intents do not.
    It is a reference, not a rule: with another embedder the valley of the histogram moves, and the
    valley is the better guide.
    """
    band = alt.Chart(pl.DataFrame({"a": [safe[0]], "b": [safe[1]], "t": ["safe range (articles)"]}))
    band_rect = band.mark_rect(color="#54a24b", opacity=0.12).encode(alt.X("a:Q", scale=xs), x2="b:Q")
    band_text = band.mark_text(align="left", baseline="bottom", dx=1, dy=-2, color="#3b7a35").encode(
        alt.X("a:Q", scale=xs), y=alt.value(0), text="t:N"
    )
    return band_rect, band_text


def _threshold_rule(threshold: float, xs: alt.Scale) -> tuple[alt.Chart, alt.Chart]:
    """The red vertical line at ``threshold`` and its bold label, just left of the line.

    The label is right-aligned against the line, over the grey bars that stay apart, so it never
    hides the red bars a reader is counting.
    """
    rule_df = pl.DataFrame({"t": [threshold], "label": [f"threshold {threshold:.2f}"]})
    rule = alt.Chart(rule_df).mark_rule(color="#d62728", strokeWidth=2).encode(alt.X("t:Q", scale=xs))
    rule_text = (
        alt.Chart(rule_df)
        .mark_text(align="right", dx=-4, dy=12, color="#d62728", fontWeight="bold")
        .encode(alt.X("t:Q", scale=xs), y=alt.value(0), text="label:N")
    )
    return rule, rule_text


def _cluster_bars(clusters: pl.DataFrame, threshold: float, max_clusters: int) -> alt.Chart:
    """The lower chart: one bar per cluster of the plan (how many memories merge into one), the
    largest ``max_clusters`` first, shaded by the cluster's weakest link, or a line of text when
    nothing merges.

    The weakest link (``min_similarity``) is the lowest cosine from a member to the cluster's
    survivor. Clusters are chained (A~B and B~C merge A, B and C), so it can fall below the
    threshold: a pale bar is a chain whose ends may say different things. Read its tooltip, the
    merged text, before applying the plan.
    """
    judged = "wrong" in clusters.columns  # labelled data: colour by verdict, wrong ones first
    order = (["wrong"] if judged else []) + ["size", "min_similarity"]
    shown = (
        clusters.with_columns(size=pl.col("members").list.len())
        # the biggest merges first; among clusters of one size, the tightest first
        .sort(order, descending=True)
        .head(max_clusters)
        .with_columns(
            label=pl.col("content").map_elements(lambda s: short(s, 40), return_dtype=pl.String),
            min_similarity=pl.col("min_similarity").round(3),
            verdict=pl.when(pl.col("wrong") if judged else pl.lit(False))
            .then(pl.lit("wrong merge (two facts)"))
            .otherwise(pl.lit("right merge (one fact)")),
        )
        .select("label", "content", "size", "min_similarity", "verdict")
    )
    if shown.height:
        # the colour scale starts at the weaker of the threshold and the weakest link shown
        low = min(threshold, float(shown["min_similarity"].min() or threshold))
        color = (
            alt.Color(
                "verdict:N",
                scale=alt.Scale(
                    domain=["right merge (one fact)", "wrong merge (two facts)"], range=["#54a24b", "#d62728"]
                ),
                title="by the labels",
            )
            if judged
            else alt.Color(
                "min_similarity:Q", scale=alt.Scale(scheme="oranges", domain=[low, 1.0]), title="min cosine"
            )
        )
        bottom = (
            alt.Chart(shown)
            .mark_bar()
            .encode(
                alt.X("size:Q", title="memories merged into one", axis=alt.Axis(tickMinStep=1)),
                # a label is the merged text cut to 40 characters; largest cluster on top (judged:
                # the order above, wrong clusters first)
                alt.Y("label:N", sort=None if judged else "-x", title=None, axis=alt.Axis(labelLimit=300)),
                color,
                tooltip=[alt.Tooltip("content:N", title="merged content"), "size:Q", "min_similarity:Q"]
                + (["verdict:N"] if judged else []),
            )
        )
    else:
        bottom = (
            alt.Chart(pl.DataFrame({"t": ["nothing merges at this threshold"]}))
            .mark_text(fontSize=13, color="#777")
            .encode(text="t:N")
        )
    # the title counts every cluster of the plan, and says when only the largest are drawn
    title = (
        f"{clusters.height} clusters would merge"
        + (f", {int(clusters['wrong'].sum())} of them wrong" if judged else "")
        + (f" (largest {shown.height} shown)" if clusters.height > shown.height else "")
    )
    return bottom.properties(width=WIDTH - 300, height=max(22 * shown.height, 40), title=title)


merge_explorer = merge_chart  # old name (memkit.lifecycle_charts.merge_explorer), kept working
conflict_graph = conflict_graph_chart  # old name (memkit.lifecycle_charts.conflict_graph)
