"""Store-backed panels over time (re-exported by :mod:`memkit.widgets`): versions and conflicts of
keys, and a time machine over what the store recalls and forgets.

Like :mod:`memkit.widgets.explorers`, controls only read; the ``Resolve`` button writes through
``store.resolve``. The time machine reads ``store.frame(as_of=...)`` — what the store believed then,
replayed from its audit log — and plans forgetting with the pure :func:`memkit.forget.plan_forget`.

- :func:`conflict_explorer` is the review queue of keyed facts. A key written twice with
  different values is either superseded (the new value wins) or held as a ``conflict`` beside the
  active one until someone decides. The panel draws every key's versions
  (:func:`memkit.charts.conflict_graph_chart`), lists the keys with pending conflicts first, and
  resolves the picked one with ``store.resolve(keep=...)``: the kept version becomes active and
  every other live version superseded, in the audit log.
- :func:`time_machine` (:mod:`memkit.widgets.time_machine`, re-exported here) answers "what did
  the agent remember on that day, and what would it have forgotten?".

Both read through the store's access rules (``requester``), so a panel never shows a memory its
user could not read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import ipywidgets as W
import polars as pl

from .. import charts
from ..conflicts import conflict_graph
from .panel import Panel, table_html
from .time_machine import TimeMachine, time_machine

__all__ = ["ConflictExplorer", "TimeMachine", "conflict_explorer", "time_machine"]

# wide menus (an option is a version's text); "initial" keeps a description from being cut
_LAY = {"style": {"description_width": "initial"}, "layout": W.Layout(width="520px")}


class ConflictExplorer(Panel):
    """:func:`conflict_explorer`'s panel: ``nodes``, ``edges`` (the graph), ``versions`` (of the key
    picked), ``resolved`` (the last kept Memory, or None).

    Controls: ``key`` (the keys, pending conflicts first, labelled with their count) and ``keep``
    (the picked key's live versions, the newest pending one preselected). Picking a key redraws;
    picking a version to keep changes nothing until the button is pressed.
    """

    def __init__(self, store: Any, namespace: str, now: datetime | None, requester: str | None) -> None:
        self.store, self.namespace, self.now, self.requester = store, namespace, now, requester
        # _quiet: set while refresh() refills the menus, so that is not taken for a user's pick
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
        # the only write of the panel, through store.resolve (access rules, audit log)
        self.on_click(button, self._resolve)
        self.refresh()

    def refresh(self, change: Any = None) -> None:
        """Reload the graph; list keys (pending conflicts first) and the picked key's live versions."""
        frame = self.store.frame(self.namespace, requester=self.requester)  # through the read gate
        # the store's record of what each pending version was compared with: its disputes, exactly
        told = self.store.audit(self.namespace, op="conflict", requester=self.requester)
        self.nodes, self.edges = conflict_graph(frame, audit=told)
        self.show("graph", charts.conflict_graph_chart(self.nodes, self.edges))
        keyed = frame.filter(pl.col("key").is_not_null())
        key = self._fill_keys(_keys_by_urgency(keyed))
        # every version of the key, superseded ones too: the table is its whole history
        self.versions = (
            self.store.versions(key, namespace=self.namespace, requester=self.requester)
            if key
            else keyed.head(0)
        )
        self._fill_versions(self.versions.filter(pl.col("status").is_in(["active", "conflict"])))
        self.data = self.versions
        self.table.value = table_html(
            self.versions.select("version", "status", "content", "created_at", "id")
        )
        self.say(_status_line(key, self.versions))  # about the key picked now (a resolve's line follows)

    def _fill_keys(self, keys: pl.DataFrame) -> str | None:
        """Refill the ``key`` menu from ``keys`` (``key, pending``), keeping the current pick when
        it is still there (else the first key) -> the key now picked, None when there is none."""
        key_w = self.controls["key"]
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
        return key_w.value

    def _fill_versions(self, live: pl.DataFrame) -> None:
        """Refill the ``keep`` menu with the ``live`` versions (active and pending) and preselect
        the newest pending version (else the newest live one)."""
        keep_w = self.controls["keep"]
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

    def _changed(self, change: Any = None) -> None:
        """A control moved: redraw on a key pick; ignore menu refills and version picks."""
        if self._quiet or (change is not None and change["owner"] is self.controls["keep"]):
            return  # picking a version to keep changes nothing until the button
        super()._changed(change)

    def _resolve(self) -> None:
        """The button: keep the picked version of the picked key (``store.resolve``), redraw."""
        key, keep = self.controls["key"].value, self.controls["keep"].value
        if not key or not keep:
            self.say("pick a key and a version first", error=True)
            return
        self.resolved = self.store.resolve(
            key, namespace=self.namespace, keep=keep, requester=self.requester, now=self.now
        )
        self.refresh()
        self.say(f"{key}: kept v{self.resolved.version} — {self.resolved.content}")


def _status_line(key: str | None, versions: pl.DataFrame) -> str:
    """The message line for the picked ``key``: its pending versions (to resolve) or none."""
    if key is None:
        return "no keyed memories here"
    pending = int((versions["status"] == "conflict").sum())
    if pending:
        return f"{key}: {pending} pending — pick the version to keep, then Resolve"
    return f"{key}: no pending conflict ({versions.height} versions)"


def _keys_by_urgency(keyed: pl.DataFrame) -> pl.DataFrame:
    """One row per key of ``keyed`` -> ``key, pending, versions``: keys with the most pending
    conflicts first, then the most versions, then by name (a stable order for the menu)."""
    return (
        keyed.group_by("key")
        .agg(pending=(pl.col("status") == "conflict").sum(), versions=pl.len())
        .sort(["pending", "versions", "key"], descending=[True, True, False])
    )


def conflict_explorer(
    store: Any, namespace: str, *, now: datetime | None = None, requester: str | None = None
) -> ConflictExplorer:
    """The conflict graph of ``namespace``; pick a key and a version, and resolve it.

    What to look at: a red dot is a new value held back by the store's ``flag`` policy
    (:mod:`memkit.conflicts`); until it is resolved, ``store.read`` keeps returning the active
    value and the agent's context notes the dispute. ``now`` is the resolve's timestamp
    (default: the store's clock); ``requester`` reads and resolves under its access rules, and a
    refused resolve is shown on the message line.

    >>> panel = conflict_explorer(store, "user_87")            # doctest: +SKIP
    >>> panel.controls["key"].value = "user.address"           # doctest: +SKIP
    >>> panel.buttons["resolve"].click()                       # doctest: +SKIP
    >>> panel.resolved.content                                 # doctest: +SKIP
    '用户搬到了上海浦东新区'
    """
    return ConflictExplorer(store, namespace, now, requester)
