"""Store-backed panels over time (re-exported by :mod:`memkit.widgets`): versions and conflicts of
keys, and a time machine over what the store recalls and forgets.

Like :mod:`memkit.panels`, controls only read; the ``Resolve`` button writes through
``store.resolve``. The time machine reads ``store.frame(as_of=...)`` — what the store believed then,
replayed from its audit log — and plans forgetting with the pure :func:`memkit.forget.plan_forget`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import ipywidgets as W
import polars as pl

from .. import charts
from ..conflicts import conflict_graph
from ..errors import ValidationError
from ..forget import plan_forget
from ..params import ForgetParams
from ..views import memory_states
from .panel import Panel, table_html

__all__ = ["ConflictExplorer", "TimeMachine", "conflict_explorer", "time_machine"]

_LAY = {"style": {"description_width": "initial"}, "layout": W.Layout(width="520px")}


class ConflictExplorer(Panel):
    """:func:`conflict_explorer`'s panel: ``nodes``, ``edges`` (the graph), ``versions`` (of the key
    picked), ``resolved`` (the last kept Memory, or None)."""

    def __init__(self, store: Any, namespace: str, now: datetime | None, requester: str | None) -> None:
        self.store, self.namespace, self.now, self.requester = store, namespace, now, requester
        self.resolved, self._quiet = None, False
        controls = {
            "key": W.Dropdown(description="key", **_LAY),
            "keep": W.Dropdown(description="keep", **_LAY),
        }
        button = W.Button(
            description="Resolve: keep this",
            button_style="success",
            icon="check",
            layout=W.Layout(width="auto"),
        )
        super().__init__("Keys, versions and conflicts", controls, {"resolve": button})
        self.on_click(button, self._resolve)
        self.refresh()

    def refresh(self, change: Any = None) -> None:
        """Reload the graph; list keys (pending conflicts first) and the picked key's live versions."""
        frame = self.store.frame(self.namespace, requester=self.requester)  # through the read gate
        self.nodes, self.edges = conflict_graph(frame)
        self.show("graph", charts.conflict_graph_chart(self.nodes, self.edges))
        keyed = frame.filter(pl.col("key").is_not_null())
        keys = (
            keyed.group_by("key")
            .agg(pending=(pl.col("status") == "conflict").sum(), versions=pl.len())
            .sort(["pending", "versions", "key"], descending=[True, True, False])
        )
        key_w, keep_w = self.controls["key"], self.controls["keep"]
        options = [
            (f"{r['key']}  ({r['pending']} pending)" if r["pending"] else r["key"], r["key"])
            for r in keys.iter_rows(named=True)
        ]
        names, current = keys["key"].to_list(), key_w.value
        self._quiet = True  # re-filling the menus is not a user's pick
        try:
            key_w.options = options
            key_w.value = current if current in names else (names[0] if names else None)
        finally:
            self._quiet = False
        key = key_w.value
        self.versions = (
            self.store.versions(key, namespace=self.namespace, requester=self.requester)
            if key
            else keyed.head(0)
        )
        live = self.versions.filter(pl.col("status").is_in(["active", "conflict"]))
        self._quiet = True
        try:
            keep_w.options = [
                (f"v{r['version']} ({r['status']}): {r['content'][:48]}", r["id"])
                for r in live.iter_rows(named=True)
            ]
            pending = live.filter(pl.col("status") == "conflict")["id"].to_list()
            keep_w.value = pending[-1] if pending else (live["id"][-1] if live.height else None)
        finally:
            self._quiet = False
        self.data = self.versions
        self.table.value = table_html(
            self.versions.select("version", "status", "content", "created_at", "id")
        )

    def _changed(self, change: Any = None) -> None:
        if self._quiet or (change is not None and change["owner"] is self.controls["keep"]):
            return  # picking a version to keep changes nothing until the button
        super()._changed(change)

    def _resolve(self) -> None:
        key, keep = self.controls["key"].value, self.controls["keep"].value
        if not key or not keep:
            self.say("pick a key and a version first", error=True)
            return
        self.resolved = self.store.resolve(
            key, namespace=self.namespace, keep=keep, requester=self.requester, now=self.now
        )
        self.refresh()
        self.say(f"{key}: kept v{self.resolved.version} — {self.resolved.content}")


def conflict_explorer(
    store: Any, namespace: str, *, now: datetime | None = None, requester: str | None = None
) -> ConflictExplorer:
    """The conflict graph of ``namespace``; pick a key and a version, and resolve it."""
    return ConflictExplorer(store, namespace, now, requester)


class TimeMachine(Panel):
    """:func:`time_machine`'s panel: ``at`` (the slider's instant), ``data`` (every memory's state
    then, :func:`memkit.views.memory_states`), ``plan`` (what a forget pass then would drop),
    ``hits`` (the query's results then, or None)."""

    def __init__(
        self,
        store: Any,
        namespace: str,
        times: list[datetime],
        policy: ForgetParams,
        query: str | None,
        requester: str | None,
        value: datetime,
    ) -> None:
        self.store, self.namespace, self.policy, self.query, self.requester = (
            store,
            namespace,
            policy,
            query,
            requester,
        )
        self.hits: pl.DataFrame | None = None
        self._frame = store.frame(namespace, requester=requester)  # through the read gate
        self._end = times[-1]
        opts = [(f"{t:%Y-%m-%d %H:%M}", t) for t in times]
        controls = {
            "at": W.SelectionSlider(
                options=opts,
                value=value,
                description="when",
                continuous_update=False,
                style={"description_width": "initial"},
                layout=W.Layout(width="640px"),
            )
        }
        super().__init__(f"Time machine: what {namespace!r} recalls and forgets", controls)
        self.refresh()

    def refresh(self) -> None:
        """The store as of the slider's instant: states, forget plan, optional query, redraw."""
        self.at = at = self.controls["at"].value
        then = self.store.frame(self.namespace, as_of=at, requester=self.requester)
        self.plan = plan_forget(then, self.policy, at)
        floor = self.policy.min_strength
        known = memory_states(then, at, floor=floor, plan=self.plan)
        unborn = self._frame.filter(~pl.col("id").is_in(then["id"].implode()))
        self.data = pl.concat(
            [known, memory_states(unborn, at, floor=floor).with_columns(state=pl.lit("not yet written"))],
            how="diagonal_relaxed",
        )
        self.show(
            "timeline",
            charts.memory_timeline(self._frame, end=self._end, floor=floor, states=self.data, at=at),
        )
        self.show(
            "states", charts.state_counts(self.data, title=f"State of every memory at {at:%Y-%m-%d %H:%M}")
        )
        counts = dict(self.data["state"].value_counts().rows())
        reasons = ", ".join(f"{n} {r}" for r, n in self.plan["reason"].value_counts().sort("reason").rows())
        self.say(
            f"{at:%Y-%m-%d %H:%M}: {counts.get('recalled', 0)} recalled, {counts.get('faded', 0)} faded, "
            f"{self.plan.height} a forget pass would drop ({reasons or 'nothing'})"
        )
        parts = []
        if self.query:
            self.hits = self.store.search(
                self.query,
                namespace=self.namespace,
                requester=self.requester,
                k=5,
                now=at,
                reinforce=False,
                min_strength=floor,
            )
            parts.append(
                f"<b>recall for “{self.query}”</b>"
                + table_html(self.hits.select("rank", "content", "score", "strength"))
            )
        plan = self.plan.join(then.select("id", "content"), on="id", how="left").select(
            "reason", "content", "detail"
        )
        parts.append("<b>a forget pass now would drop</b>" + table_html(plan, 8))
        self.table.value = "".join(parts)


def time_machine(
    store: Any,
    namespace: str,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    step_hours: float = 24.0,
    at: datetime | None = None,
    policy: ForgetParams = ForgetParams(),
    query: str | None = None,
    requester: str | None = None,
) -> TimeMachine:
    """A date slider from ``start`` (default: the namespace's first write) to ``end`` (default: 30
    days after its last) in ``step_hours`` steps: what the store held then (``store.frame(as_of=)``),
    each memory's strength and state, what a forget pass with ``policy`` would drop, and — given a
    ``query`` — what a search then returns (``reinforce=False``)."""
    audit = store.audit(namespace, requester=requester)
    if audit.is_empty():
        raise ValidationError("namespace", f"{namespace!r} has no memories")
    start = start or audit["ts"].min()
    end = end or audit["ts"].max() + timedelta(days=30)
    n = int((end - start).total_seconds() // (step_hours * 3600)) + 1
    times = [start + timedelta(hours=step_hours * i) for i in range(n)]
    value = (
        at if at in times else min(times, key=lambda t: abs((t - (at or audit["ts"].max())).total_seconds()))
    )
    return TimeMachine(store, namespace, times, policy, query, requester, value)
