"""The time machine: a date slider over a namespace's history, showing what the store recalled and
what it would have forgotten at each instant (re-exported by :mod:`memkit.widgets` and
:mod:`memkit.widgets.history`).

Memory changes with time in two ways. Writes change what the store holds: a fact is added,
superseded, merged, deleted; ``store.frame(as_of=t)`` replays the audit log to give the store as
it was at ``t``. And decay changes what a search can reach: a memory the store still holds falls
below the retrieval floor and is no longer recalled; a forget pass would then drop it for good.
The two floors differ: search recalls down to the store's retrieval floor
(``DecayParams.min_strength``, ``store.decay.min_strength``: 0 by default, so a weak memory is still
returned), while the forgetting policy drops what is below its own (``ForgetParams.min_strength``,
0.05 by default). The time machine puts both on one slider. At each instant it shows

- every memory's strength curve, the retrieval floor (dashed) and the forgetting floor (red,
  dotted), and a dot per memory at that instant coloured by its state: recalled (what a search
  then may return), faded (below the retrieval floor), expired, not yet valid, superseded, or what
  a forget pass with ``policy`` would drop and why (:func:`memkit.views.memory_states`,
  :func:`memkit.forget.plan_forget`);
- the states as bars (:func:`memkit.charts.state_counts`), so two instants compare at a glance;
- with a ``query``, the top 5 a search would have returned then (the store's own search, floor
  included, with ``reinforce=False``: looking at the past must not change the present), and the
  forget plan's rows with their reasons, in the order they would go (a ``capacity`` row gives its
  forget-cost and information: among equal costs, what says least goes first).

No slider move writes to the store: the plan is computed by the pure
:func:`~memkit.forget.plan_forget`, never applied.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta
from typing import Any

import ipywidgets as W
import polars as pl

from .. import access as acl
from .. import charts
from ..errors import ValidationError
from ..forget import plan_forget
from ..params import ForgetParams, check_number
from ..schema import check_time
from ..store.settable import FromStore, an_instance
from ..views import memory_states, rank_notes
from .panel import Panel, table_html

__all__ = ["TimeMachine", "time_machine"]

MAX_POSITIONS = 5000
"""The most slider positions :func:`time_machine` builds (each one is a replay of the audit log when
the slider stops there; 5,000 daily steps are 13 years)."""


class TimeMachine(Panel):
    """:func:`time_machine`'s panel: ``at`` (the slider's instant), ``data`` (every memory's state
    then, :func:`memkit.views.memory_states`, judged by ``floor``), ``plan`` (what a forget pass then
    would drop), ``hits`` (the query's results then, or None), ``faded`` (how many memories then
    were below the retrieval floor, whatever the plan says of them). ``floor`` is the store's
    retrieval floor (what its search recalls down to), ``policy.min_strength`` the forgetting floor;
    both are read from the store at each slider move (``store.decay``, ``store.forget_policy``), so a
    change made after the panel was built counts at the next move, unless ``policy`` was given.

    ``times`` are the slider's instants and ``value`` the one it starts at (``reset()`` goes back to
    it). The whole namespace is read once, through the read gate, for the curves, and again at the
    next refresh after the store changed (``store.revision``: another cell wrote, merged or forgot;
    call ``refresh()`` to redraw at once); each slider move reads the store as of that instant
    (``store.frame(as_of=...)``), which is where the states come from.

    Why two frames: today's frame has every memory ever written (the curves need them all, the
    later ones as "not yet written"), but only the frame as of ``at`` knows what was superseded,
    merged or deleted by then, and with what importance.
    """

    # the store's as they are at each slider move (`store.decay = ...` after the panel was built
    # counts), unless given: the retrieval floor store.search applies, and the forgetting policy
    floor = FromStore("decay", lambda n, v: check_number(n, v, lo=0.0, hi=1.0), lambda d: d.min_strength)
    policy = FromStore("forget_policy", an_instance(ForgetParams))

    def __init__(
        self,
        store: Any,
        namespace: str,
        times: list[datetime],
        policy: ForgetParams | None,
        query: str | None,
        requester: str | None,
        value: datetime,
    ) -> None:
        self.store, self.namespace, self.policy = store, namespace, policy  # None: the store's
        self.query, self.requester = query, requester
        self.hits: pl.DataFrame | None = None
        self._load()
        self._end = times[-1]  # the timeline always runs to the slider's last instant
        opts = [(f"{t:%Y-%m-%d %H:%M}", t) for t in times]
        controls = {
            "at": W.SelectionSlider(
                options=opts,
                value=value,
                description="when",
                continuous_update=False,  # a replay of the audit log per position: redraw on release
                style={"description_width": "initial"},
                layout=W.Layout(width="640px"),
            )
        }
        super().__init__(f"Time machine: what {namespace!r} recalls and forgets", controls)
        self.refresh()

    def _load(self) -> None:
        """Today's frame of the namespace, for the curves, through the read gate."""
        self._revision = self.store.revision  # before the read: a write during it is seen next time
        self._frame = self.store.frame(self.namespace, requester=self.requester)

    def refresh(self) -> None:
        """The store as of the slider's instant: states, forget plan, optional query, redraw (the
        curves' frame read again first when the store has changed since it was read)."""
        if self.store.revision != self._revision:
            self._load()
        self.at = at = self.controls["at"].value
        # what the store held at `at`, replayed from the audit log, as this requester may see it
        then = self.store.frame(self.namespace, as_of=at, requester=self.requester)
        # the plan `forget(requester=)` would make: over what the requester may change (another
        # writer's memory it may read neither counts toward its capacity nor is dropped)
        self.plan = plan_forget(then.filter(acl.modifiable_expr(self.requester)), self.policy, at)
        floor = self.floor  # recalled or faded: by the floor search applies, not the policy's
        self.data = self._states(then, at, floor)
        timeline = charts.memory_timeline(
            self._frame, end=self._end, floor=floor, forget_floor=self.policy.min_strength,
            states=self.data, at=at,
        )  # fmt: skip
        self.show("timeline", timeline)
        self.show(
            "states", charts.state_counts(self.data, title=f"State of every memory at {at:%Y-%m-%d %H:%M}")
        )
        self.say(self._headline(at))  # the instant's story in one line, above the charts
        self.table.value = self._tables(then, at, floor)

    def _states(self, then: pl.DataFrame, at: datetime, floor: float) -> pl.DataFrame:
        """Every memory's state at ``at``: those the store held then (``then``), with the forget
        plan's verdicts, and the ones written later marked ``"not yet written"``.

        The later ones come from today's frame; they are kept (not dropped) so the frame has one
        row per memory of the timeline at every instant, and the chart can leave them out itself.
        """
        # faded: below the retrieval floor, counted before the plan's verdicts replace some states
        self.faded = int((memory_states(then, at, floor=floor)["state"] == "faded").sum())
        known = memory_states(then, at, floor=floor, plan=self.plan)
        unborn = self._frame.filter(~pl.col("id").is_in(then["id"].implode()))
        unborn = memory_states(unborn, at, floor=floor).with_columns(
            state=pl.lit("not yet written"), recalled=pl.lit(False)
        )
        return pl.concat([known, unborn], how="diagonal_relaxed")

    def _headline(self, at: datetime) -> str:
        """The message line: how many memories a search at ``at`` may return and how many have
        faded below the retrieval floor, how many a forget pass would drop, by reason, and how many
        it would leave ``recalled`` (``"2026-03-01 00:00: a search may return 41 memories, 9 faded
        below the retrieval floor 0; a forget pass would drop 6 (...), 35 stay recalled"``).

        "recalled" means one thing in the panel: the state (green in the charts), a memory a search
        may return and a forget pass keeps. The first number counts the ``recalled`` column instead:
        a memory a forget pass would drop is still returned by a search until the pass runs."""
        # "4 capacity, 2 weak": the plan's reasons, alphabetical so the line does not jump around
        reasons = ", ".join(f"{n} {r}" for r, n in self.plan["reason"].value_counts().sort("reason").rows())
        kept, returned = int((self.data["state"] == "recalled").sum()), int(self.data["recalled"].sum())
        return (
            f"{at:%Y-%m-%d %H:%M}: a search may return {returned} memor{'y' if returned == 1 else 'ies'}, "
            f"{self.faded} faded below the retrieval floor {self.floor:g}; a forget pass would drop "
            f"{self.plan.height} ({reasons or 'nothing'}; forgetting floor {self.policy.min_strength:g}), "
            f"{kept} stay recalled"
        )

    def _tables(self, then: pl.DataFrame, at: datetime, floor: float) -> str:
        """The HTML under the charts: the query's top 5 at ``at`` (when there is a query; sets
        ``hits``) and the forget plan's rows with their texts."""
        parts = []
        if self.query:
            # the search as it would have run then: its clock at `at`, the store's own retrieval floor
            # (what store.search applies), no reinforcement (looking at the past must not strengthen
            # memories in the present)
            self.hits = self.store.search(
                self.query,
                namespace=self.namespace,
                requester=self.requester,
                k=5,
                now=at,
                reinforce=False,
                min_strength=floor,
            )
            # a near tie (newer first) can rank a hit above a higher score: the note says so
            shown = self.hits.select("rank", "content", "score", "strength", rank_notes(self.hits))
            parts.append(_heading(f"recall for “{self.query}”") + table_html(shown))
        plan = self.plan.join(
            then.select("id", "content"), on="id", how="left", maintain_order="left"
        ).select("reason", "content", "detail")
        parts.append(_heading("a forget pass now would drop") + table_html(plan, 8))
        return "".join(parts)


def _heading(text: str) -> str:
    """A table's bold heading on a line of its own (``"(none)"`` under it, not run into it)."""
    return f"<div style='margin-top:6px'><b>{html.escape(text)}</b></div>"


def time_machine(
    store: Any,
    namespace: str,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    step_hours: float = 24.0,
    at: datetime | None = None,
    policy: ForgetParams | None = None,
    query: str | None = None,
    requester: str | None = None,
) -> TimeMachine:
    """A date slider from ``start`` (default: the namespace's first write) to ``end`` (default: 30
    days after its last) in ``step_hours`` steps, the last one on ``end`` itself: what the store held
    then (``store.frame(as_of=)``), each memory's strength and state, what a forget pass with
    ``policy`` (default: the store's own, ``store.forget_policy`` as it is at each slider move) would
    drop, and — given a ``query`` — what a search then returns (``reinforce=False``).

    The slider starts at ``at`` (default: the namespace's last write): an instant between ``start``
    and ``end`` is added to the steps, so the slider can sit exactly on it (``at=now`` shows what was
    written at ``now``); one outside them starts the slider at the nearest step. A namespace without
    memories, ``step_hours`` that is not a number of hours > 0 (or makes more than
    :data:`MAX_POSITIONS` steps) and ``start`` after ``end`` raise a ValidationError naming it.
    The 30 days after the last write are the simulated future: nothing is written there, but
    memories keep fading, which is where a forget pass finds most to drop.

    >>> panel = time_machine(store, "user_87", query="我住在哪里？", step_hours=12)  # doctest: +SKIP
    >>> panel.controls["at"].value = panel.controls["at"].options[-1][1]       # doctest: +SKIP
    >>> panel.plan["reason"].value_counts()          # what a pass would drop then  # doctest: +SKIP
    """
    step_hours = check_number("step_hours", step_hours, lo=0.0, lo_open=True)
    start, end, at = (
        check_time(n, v, optional=True) for n, v in (("start", start), ("end", end), ("at", at))
    )
    audit = store.audit(namespace, requester=requester)
    if audit.is_empty():
        raise ValidationError("namespace", f"{namespace!r} has no memories")
    start, last = start or audit["ts"].min(), audit["ts"].max()
    if end is None:  # 30 days on, or the calendar's end when that is past year 9999
        end = last + min(timedelta(days=30), datetime.max.replace(tzinfo=UTC) - last)
    if start > end:
        raise ValidationError("start", f"{start.isoformat()} is after end {end.isoformat()}")
    # every step_hours from start, then end itself: the slider reaches both ends of the range
    n = int((end - start).total_seconds() // (step_hours * 3600)) + 1
    if n > MAX_POSITIONS:
        raise ValidationError(
            "step_hours",
            f"{step_hours:g} h makes {n:,} positions from start to end (at most {MAX_POSITIONS:,})",
        )
    times = sorted({start + timedelta(hours=step_hours * i) for i in range(n)} | {end})
    at = at or audit["ts"].max()
    if start <= at <= end and at not in times:  # subtle: the chosen instant, exactly, not the step before it
        times = sorted([*times, at])
    value = at if at in times else min(times, key=lambda t: abs((t - at).total_seconds()))
    return TimeMachine(store, namespace, times, policy, query, requester, value)
