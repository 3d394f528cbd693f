"""Store-backed panels (re-exported by :mod:`memkit.widgets`): tune weights, preview merges.

Each caches what its sliders need when it is built — the score components of every candidate per
query, the embeddings and merge-partner similarities, the memory frame — so a slider move re-ranks
or re-plans from memory in milliseconds, never re-embeds, and never writes to the store. Only the
buttons write (``Apply`` merges, ``Resolve`` settles a key), through the store's own methods. The
cache follows the store: when ``store.revision`` has moved since it was filled (another cell merged,
wrote or forgot), the next refresh (a slider move, or ``panel.refresh()``) reads the store again.

- :func:`weights_tuner` answers "which weights should my search use?": move a weight and watch the
  top k of each query re-rank, with each hit's score broken into its components and a slope chart
  of what moved against a baseline. Given the relevant ids of each query it also scores recall@k
  and MRR, so a change is judged on labelled data, not on one query that looks better.
- :func:`merge_explorer` answers "which threshold should consolidation use?": move the threshold
  and watch the histogram of merge-partner similarities and the clusters that would merge, then
  apply the plan you have read.

Both rankings and plans come from the same code the store runs (:class:`memkit.evaluate.Reranker`
reproduces ``store.search``; :func:`memkit.consolidate.plan_grouped` is what ``store.consolidate``
calls), so what a panel shows is what the store would do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import ipywidgets as W
import polars as pl

from .. import charts
from ..consolidate import MergeParams, held_apart, plan_grouped
from ..errors import ValidationError
from ..evaluate import Reranker
from ..params import Weights, slider_ranges
from ..views import nearest_similarity
from .panel import Panel, slider, table_html

__all__ = ["MergeExplorer", "WeightsTuner", "merge_explorer", "weights_tuner"]

# wide controls (a query is a sentence); "initial" keeps a description from being cut
_LAY = {"style": {"description_width": "initial"}, "layout": W.Layout(width="520px")}
_MAX_K = 20  # the weights tuner's k slider runs 1-20


class WeightsTuner(Panel):
    """:func:`weights_tuner`'s panel: ``weights``, ``data`` (top-k now), ``baseline_hits``,
    ``metrics`` (per labelled query; None without labels) and ``reranker`` (the cache, filled again
    at the next refresh after the store changed).

    Controls: a slider per field of :class:`~memkit.params.Weights` (named as the field), a
    ``query`` dropdown and a ``k`` slider. ``relevant`` is ``{query: relevant ids}``, or None when
    the queries came as a plain list. ``reset()`` (:meth:`~memkit.widgets.Panel.reset`) puts the
    weight sliders back at ``baseline`` and ``k`` where it started, in one re-rank; the query stays.
    """

    def __init__(
        self,
        store: Any,
        queries: Sequence[str] | Mapping[str, Sequence[str]],
        namespace: str,
        requester: str | None,
        now: datetime | None,
        k: int,
        baseline: Weights,
    ) -> None:
        self.relevant = {q: list(ids) for q, ids in queries.items()} if isinstance(queries, Mapping) else None
        self._queries = qs = list(queries)
        self.store, self.namespace, self.requester, self.now = store, namespace, requester, now
        self._load()
        self.baseline, self.weights, self.metrics = baseline, baseline, None
        # the sliders start at the baseline, so the first slope chart shows no movement
        controls: dict[str, W.Widget] = {
            name: slider(name, lo, hi, step, getattr(baseline, name))
            for name, (lo, hi, step) in slider_ranges(Weights).items()
        }
        controls["query"] = W.Dropdown(options=qs, value=qs[0], description="query", **_LAY)
        controls["k"] = W.IntSlider(value=k, min=1, max=_MAX_K, description="top k", style=_LAY["style"])
        super().__init__("Hybrid score weights: re-rank live", controls)
        self.refresh()

    def _load(self) -> None:
        """The one store access: each query searched once (``reinforce=False``), its candidates'
        components cached in ``reranker``; again when the store has changed since (another cell wrote)."""
        self._revision = self.store.revision  # before the read: a write during it is seen next time
        self.reranker = Reranker.from_store(
            self.store, self._queries, namespace=self.namespace, requester=self.requester, now=self.now
        )

    def refresh(self) -> None:
        """Weights from the sliders -> re-rank the chosen query from the cache, redraw both charts,
        and re-score the labelled queries. Invalid weights (all 0) raise here and are shown. A store
        changed since the cache was filled (``store.revision``) is searched again first."""
        if self.store.revision != self._revision:
            self._load()
        self.weights = Weights(**{n: float(self.controls[n].value) for n in slider_ranges(Weights)})
        q, k = self.controls["query"].value, int(self.controls["k"].value)
        self.data = self.reranker.rank(q, self.weights, k)
        self.baseline_hits = self.reranker.rank(q, self.baseline, k)
        self.show(
            "breakdown",
            charts.score_breakdown(self.data, self.weights, title=f"“{q}”: why each memory ranks here"),
        )
        self.show(
            "shift", charts.rank_shift(self.baseline_hits, self.data, labels=("baseline", "these weights"))
        )
        if self.relevant:  # every labelled query, not only the one shown: one query can mislead
            self.metrics = self.reranker.metrics(self.relevant, self.weights, k)
        self.say(self._summary(k))

    def _summary(self, k: int) -> str:
        """The message line: with labels, recall@k and MRR averaged over the labelled queries,
        beside the baseline's; without, the score formula with the current weights.

        recall@k is the share of a query's relevant memories found in its top k; MRR the mean of
        1 / (rank of the first relevant hit), 0 when none is in the top k. Both lie in [0, 1],
        higher is better; the baseline's pair says whether the sliders improved on it.
        """
        if self.relevant:
            base = self.reranker.metrics(self.relevant, self.baseline, k)
            return (
                f"recall@{k} {self.metrics['recall'].mean():.3f} · "
                f"MRR {self.metrics['reciprocal_rank'].mean():.3f}"
                f"   (baseline: recall@{k} {base['recall'].mean():.3f} · MRR "
                f"{base['reciprocal_rank'].mean():.3f}) over {len(self.relevant)} labelled queries"
            )
        return (
            f"score = {self.weights.similarity:g}·similarity + {self.weights.importance:g}·importance + "
            f"{self.weights.recency:g}·recency + {self.weights.keyword:g}·keyword"
        )


def weights_tuner(
    store: Any,
    queries: Sequence[str] | Mapping[str, Sequence[str]],
    *,
    namespace: str,
    requester: str | None = None,
    now: datetime | None = None,
    k: int = 5,
    baseline: Weights | None = None,
) -> WeightsTuner:
    """Weight sliders over live re-ranking of ``queries`` (a list, or ``{query: relevant ids}`` to
    also show recall@k and MRR): the score breakdown of the top k and how it moved from ``baseline``.
    Each query is searched once (``reinforce=False``); slider moves re-rank the cached components.

    ``baseline`` is what the slope chart compares against and where the sliders start (default: the
    store's own ``store.weights``, what its search ranks with). What to look at: a hit whose bar is
    mostly one colour ranks on one signal only; a weight that moves nothing in the slope chart does
    not matter for these queries.

    >>> panel = weights_tuner(store, {"where do I live": [home.id]}, namespace="u")  # doctest: +SKIP
    >>> panel.sliders["keyword"].value = 0.0                                        # doctest: +SKIP
    >>> panel.metrics["recall"].mean()                                              # doctest: +SKIP

    No query, a single string instead of a list, or ``k`` outside the k slider's 1-20 raise a
    ValidationError naming the argument.
    """
    if isinstance(queries, str) or not isinstance(queries, Sequence | Mapping):
        raise ValidationError(
            "queries", f"must be a list of queries or {{query: relevant ids}}, got {type(queries).__name__}"
        )
    if len(queries) == 0:
        raise ValidationError("queries", "must name at least one query, got none")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= _MAX_K:
        raise ValidationError(
            "k", f"must be a whole number in [1, {_MAX_K}] (the k slider's range), got {k!r}"
        )
    return WeightsTuner(
        store, queries, namespace, requester, now, k, store.weights if baseline is None else baseline
    )


class MergeExplorer(Panel):
    """:func:`merge_explorer`'s panel: ``plan`` (clusters at the slider's threshold), ``held_apart``
    (the pairs at or above it that the plan does not join, and why:
    :func:`memkit.consolidate.held_apart`), ``similarities`` (each memory's best merge partner),
    ``applied`` (the last applied plan, or None). The ``distinct_facts`` checkbox is
    :class:`~memkit.consolidate.MergeParams`' switch (the store's ``merge_distinct_facts`` to start).

    The slider releases before re-planning (``continuous_update=False``): a plan over a large
    namespace takes a moment, and only the position the hand stops at matters. With a ``judge``
    (``plan -> cluster, wrong``), ``plan`` also has a ``wrong`` column and the chart colours each
    cluster right or wrong. ``reset()`` puts the slider back at the threshold it was built with.
    """

    def __init__(
        self,
        store: Any,
        namespace: str | None,
        now: datetime | None,
        requester: str | None,
        threshold: float,
        judge: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
        distinct_facts: bool = True,
    ) -> None:
        self.store, self.namespace, self.now, self.requester = store, namespace, now, requester
        self.judge = judge
        self.applied: pl.DataFrame | None = None
        self._load()  # read again after the button, or when the store changed (refresh)
        lo, hi, step = slider_ranges(MergeParams)["threshold"]
        controls = {
            "threshold": slider("merge threshold", lo, hi, step, threshold, continuous_update=False),
            "distinct_facts": W.Checkbox(value=distinct_facts, description="keep distinct facts apart"),
        }
        apply = W.Button(
            description="Apply: merge these",
            button_style="warning",
            icon="compress",
            layout=W.Layout(width="auto"),
        )
        super().__init__(
            "Consolidation: which near-duplicates a threshold merges", controls, {"apply": apply}
        )
        self.on_click(apply, self._apply)  # a refused merge (access rules) shows in the message line
        self.refresh()

    def _load(self) -> None:
        """(Re)read the candidates and their embeddings from the store, and drop memoized plans."""
        self._revision = self.store.revision  # before the read: a write during it is seen next time
        # what the store's consolidate plans over: written and valid at `now`, changeable by the requester
        self._frame, self._emb = self.store.merge_candidates(
            self.namespace, now=self.now, requester=self.requester
        )
        self._plans: dict[tuple[float, bool], tuple[pl.DataFrame, pl.DataFrame]] = {}
        # each candidate's best cosine to a merge partner: the histogram, computed once per load
        self.similarities = nearest_similarity(self._frame, self._emb)

    def _plan(self, threshold: float, distinct_facts: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The store's plan at ``threshold`` and the pairs it holds apart, computed only over memories
        that have a partner above it (the others cannot merge), by
        :func:`memkit.consolidate.plan_grouped` as ``store.consolidate`` does. Memoized per threshold
        and switch until the store changes (a slider has 51 positions)."""
        key = (round(threshold, 6), distinct_facts)  # 0.85 and 0.8500000000000001 (a slider's): one plan
        if key not in self._plans:
            # the same 1e-6 slack as the store's own plan (memkit.consolidate)
            ok = self.similarities.filter(pl.col("similarity") >= threshold - 1e-6)["id"]
            keep = self._frame["id"].is_in(ok.implode()).to_numpy()
            params = MergeParams(threshold=threshold, distinct_facts=distinct_facts)
            frame, emb = self._frame.filter(pl.Series(keep)), self._emb[keep]
            plan = plan_grouped(frame, emb, params)
            # listed oldest first (a cluster's created_at is its oldest member's) and numbered so
            plan = plan.sort("created_at").with_columns(cluster=pl.int_range(pl.len(), dtype=pl.Int64))
            self._plans[key] = plan, held_apart(frame, emb, params)
        return self._plans[key]

    def refresh(self) -> None:
        """Re-plan at the slider's threshold from the cache (the store is only asked its revision) and redraw.

        ``plan`` and ``data`` are the plan; the table lists each cluster's size, merged text and
        weakest link; the message counts how many memories would become how many. A store changed
        since it was read (``store.revision``: another cell merged, wrote or forgot) is read again first.
        """
        if self.store.revision != self._revision:
            self._load()
        t, facts = float(self.controls["threshold"].value), bool(self.controls["distinct_facts"].value)
        self.plan, self.held_apart = self._plan(t, facts)
        self.data = self.plan
        if self.judge is not None and self.plan.height:  # labelled data: which clusters are wrong
            verdict = self.judge(self.plan).select("cluster", "wrong")
            self.plan = self.data = self.plan.join(verdict, on="cluster", how="left", maintain_order="left")
        self.show("merge", charts.merge_chart(self.similarities, t, self.plan))
        # min_similarity is a member's cosine to the survivor: members join pair by pair (a chain of
        # links at or above the threshold), so the weakest one can lie below the threshold itself
        table = self.plan.select(
            pl.col("members").list.len().alias("members"),
            "content",
            pl.col("min_similarity").alias("lowest cosine to the survivor"),
        )
        note = (
            "<div style='color:#777;font-size:12px'>Members join pair by pair, each link at least the"
            f" threshold {t:.2f}: a member chained through another can be less similar to the survivor.</div>"
        )
        apart = self.held_apart.select(
            pl.format("{} | {}", "content_a", "content_b").alias("held apart"), "similarity", "reason"
        )
        held = (
            "<div style='margin-top:6px'>Pairs at or above the threshold that stay apart, and why:</div>"
            + table_html(apart, 5, width=100)
            if apart.height
            else ""
        )
        self.table.value = table_html(table, 8) + note + held
        wrong = f", {int(self.plan['wrong'].sum())} of them wrong" if "wrong" in self.plan.columns else ""
        merging = int(self.plan["members"].list.len().sum())
        # the chart's blue bars: memories with a partner at or above t that join no cluster (the plan's
        # members all have one: it plans only over them); pairs can be held apart between members too
        above = int((self.similarities["similarity"] >= t - 1e-6).sum())
        apart = [f"{above - merging} memories above it held apart"] if above > merging else []
        apart += [f"{self.held_apart.height} pairs above it held apart"] if self.held_apart.height else []
        self.say(
            f"{self.plan.height} clusters{wrong}, {merging} memories would merge into {self.plan.height}"
            f" at {t:.2f}" + "".join(f"; {a}" for a in apart)
        )

    def _apply(self) -> None:
        """The button: merge at the slider's threshold through ``store.consolidate`` (which plans
        again itself: the store, not the panel's cache, decides), then reload and redraw.

        ``applied`` is the plan the store carried out; the message gives the new active count.
        """
        t, facts = float(self.controls["threshold"].value), bool(self.controls["distinct_facts"].value)
        params = MergeParams(threshold=t, distinct_facts=facts)
        self.applied = self.store.consolidate(
            self.namespace, now=self.now, requester=self.requester, params=params
        )
        self._load()
        self.refresh()
        merged = self.applied.filter(pl.col("merged_id").is_not_null()).height
        refused = self.applied.height - merged  # the guard's (an audited deny each), or the namespace's
        active = self._frame.filter(pl.col("status") == "active").height
        self.say(
            f"merged {merged} clusters at {t:.2f}{f' ({refused} refused by the guard)' if refused else ''}; "
            f"the store now has {active} active memories here"
        )


def merge_explorer(
    store: Any,
    namespace: str | None,
    *,
    now: datetime | None = None,
    requester: str | None = None,
    threshold: float | None = None,
    judge: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
) -> MergeExplorer:
    """A threshold slider over the distribution of merge-partner similarities and the clusters that
    threshold merges (the store's own plan); the button applies it with ``store.consolidate``.

    What to look at: the histogram's valley, between true duplicates near 1.0 and merely related
    memories below, is where a threshold belongs; the table lists each cluster's merged text, which
    should read as one fact; below it, the pairs at or above the threshold held apart because their
    fact tokens differ (a number, a negation, a time word, a name; untick "keep distinct facts apart"
    to merge by cosine alone). Nothing is written until the button is pressed, and then only memories
    ``requester`` may change, as ``store.consolidate`` decides. ``namespace=None`` plans over every
    namespace (merges never cross one). ``judge`` grades a plan against labels, e.g.
    ``judge=lambda plan: judge_plan(plan, frame)`` with :func:`memkit.portable.semantic.judge_plan`.
    """
    threshold = store.merge_threshold if threshold is None else threshold  # the store's own by default
    return MergeExplorer(store, namespace, now, requester, threshold, judge, store.merge_distinct_facts)
