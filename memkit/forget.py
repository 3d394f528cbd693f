"""Forgetting, as a pure plan over a frame of memories.

A memory store that only grows becomes a junk room. :func:`plan_forget` decides what a policy
(:class:`~memkit.params.ForgetParams`) drops, and why, without touching anything; the store's
``forget(..., dry_run=True)`` shows that plan and ``dry_run=False`` applies it. Three reasons, checked
in this order (a memory is reported once, under the first reason that applies):

1. ``expired`` — its ``valid_until`` is at or before ``now`` (it no longer holds in the world);
2. ``weak`` — its strength ``importance · 0.5^(age / half_life)`` is below ``min_strength``, compared
   unrounded (:func:`memkit.decay.below_floor`, as every judge of the floor does);
3. ``capacity`` — its namespace still holds more than ``capacity`` live memories after 1 and 2: the
   lowest **forget-cost** go first, ``cost = 2 · importance + access_count / 1.1``, so a memory that
   was important or often recalled outlives one that was neither. Among equal costs the one that says
   least goes first (:func:`memkit.information.information`: its distinct content words), then the
   older: with the default importance and no recall every memory costs the same, and oldest first
   alone then drops the facts of a conversation's first weeks with its greetings (README,
   "Forgetting": on LoCoMo, capacity that way erases 5.3% of the turns the questions ask about
   against 22.9% of the others, where oldest first erased both alike). Memories of one instant (a
   batch's, a chat's one second) go in the frame's order: ``store.frame()`` lists them in the order
   written, so the same script plans the same way in every run (never by id: ids are random).

"Equal" is equal as the plan shows costs, to :data:`COST_DECIMALS` decimals (a half up, rounded
from a value with the float noise taken out first, so ``2 · 0.45025`` and ``2 · (0.35025 + 0.1)``
share the band 0.901): float noise (``0.1 + 0.2``) is no difference, while any difference a policy
makes stays one — a reinforcement adds 0.005 to importance (0.01 to the cost), the articles' 1-100
importance moves it by 0.02. A wider band would let a memory outlive a cheaper one because it has
more words, and the cost (DESIGN: lowest first) is the judgement of what matters; the words only
settle what it leaves open. The ``weak`` floor is not a ranking and has no ties: a memory below it
goes whatever it says.

and what the erasure of those takes with it, listed after them as ``cascade``: the members of a
dropped merged memory (at any depth, within its own namespace and access group, as the store's
erasure follows a lineage), then a merged memory none of whose members is left. So the plan has one
row per memory that goes: a preview counts what applying it erases.

Never dropped automatically: ``protected`` memories (what the user explicitly asked to keep),
memories waiting for a decision (``conflict``, ``quarantined``), and the members of a live merged
memory (``merged_from``: they go with it). Other superseded versions are history: they may expire or
decay away, and they never count towards capacity.

Forgetting is final, like ``delete``: the row, its content and its embedding go, and the audit log
keeps a ``forget`` event with the reason and the numbers but never the content. Preview with
``dry_run=True`` (or call this function on ``store.frame()``) before applying.

>>> from datetime import datetime, timedelta, timezone
>>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
>>> frame = pl.DataFrame({
...     "id": ["a", "b", "c"], "namespace": ["u"] * 3, "status": ["active"] * 3,
...     "importance": [0.9, 0.6, 0.9], "half_life_hours": [2160.0, 2.0, 2.0],
...     "created_at": [now - timedelta(hours=8)] * 3, "valid_until": [None, None, None],
...     "access_count": [0, 0, 0], "protected": [False, False, True]})
>>> plan_forget(frame, ForgetParams(), now).select("id", "reason", "strength").to_dicts()  # floor 0.05
[{'id': 'b', 'reason': 'weak', 'strength': 0.0375}]
>>> merged = frame.with_columns(status=pl.Series(["active", "superseded", "superseded"]),
...                             merged_from=pl.Series([[], ["c"], []], dtype=pl.List(pl.String)))
>>> plan_forget(merged, ForgetParams(), now).select("id", "reason", "detail").rows()   # b takes c
[('b', 'weak', 'strength 0.0375 < 0.05'), ('c', 'cascade', 'member of merged memory b')]
>>> said = ["Take care, bye!", "Maria volunteers at a homeless shelter", "Ok!"]
>>> chat = frame.with_columns(content=pl.Series(said), importance=pl.lit(0.9), protected=pl.lit(False),
...                           half_life_hours=pl.lit(2160.0))   # equal costs: the fewest words go first
>>> plan = plan_forget(chat, ForgetParams(capacity=1), now)
>>> plan["id"].to_list(), plan["detail"][0]
(['c', 'a'], 'over capacity 1; forget-cost 1.8, information 1.0')
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from .decay import age_hours_expr, below_floor, strength_expr
from .errors import ValidationError, check_frame
from .information import information
from .params import ForgetParams
from .schema import check_time

__all__ = ["COST_DECIMALS", "PLAN_SCHEMA", "forget_cost_expr", "plan_forget"]

COST_DECIMALS = 3
"""Forget-costs are compared (and shown) rounded to this many decimals: costs equal to it are a tie,
settled by what the memories say, then by age (module docstring)."""

PLAN_SCHEMA = {
    "id": pl.String,
    "namespace": pl.String,
    "reason": pl.String,
    "strength": pl.Float64,
    "forget_cost": pl.Float64,
    "detail": pl.String,
}
_NEEDS = ("id", "namespace", "status", "importance", "half_life_hours", "created_at", "valid_until",
          "access_count", "protected")  # fmt: skip
_LIVE = ("active",)
_ELIGIBLE = ("active", "superseded")  # conflict / quarantined wait for a human decision
_HELD_BY = ("active", "conflict", "quarantined")  # a merge in one of these keeps its members
_GROUP = ("namespace", "access", "owner", "created_by")  # a lineage is followed within these only


def _members(frame: pl.DataFrame) -> list[str]:
    """The ids a merge still in use holds (active, or waiting for a decision), at any depth: the
    members of a live merge, and of the (superseded) merges among them, and so on."""
    if "merged_from" not in frame.columns:
        return []
    links = frame.select("id", "merged_from", "status")
    found: set[str] = set()
    level = links.filter(pl.col("status").is_in(_HELD_BY))["merged_from"].explode().drop_nulls()
    while level.len():  # one pass per level of merging (a merge of merges: two), not per memory
        new = set(level.to_list()) - found
        found |= new
        level = links.filter(pl.col("id").is_in(list(new)))["merged_from"].explode().drop_nulls()
    return sorted(found)


def _cascade(frame: pl.DataFrame, dropped: pl.Series) -> pl.DataFrame:
    """What erasing ``dropped`` takes with it, as the store's erasure does -> ``id, detail``, in the
    order it goes: the members of an erased merge, level by level (only members of the merge's own
    namespace and access group: a forged ``merged_from`` reaches nothing), then each merge that lists
    an erased id and has no member of its own group left, up the lineage."""
    parts = [pl.DataFrame(schema={"id": pl.String, "detail": pl.String})]
    if "merged_from" not in frame.columns:
        return parts[0]
    group = [c for c in _GROUP if c in frame.columns]
    links = (  # (merge, member) pairs whose member is in the frame and in the merge's group
        frame.select("id", *group, member="merged_from")
        .explode("member")
        .join(frame.select("id", *group), left_on=["member", *group], right_on=["id", *group],
              nulls_equal=True, maintain_order="left")  # (null owner = null, as IS NOT DISTINCT FROM)
        .select(merge="id", member="member")
    )  # fmt: skip
    gone, frontier = set(dropped.to_list()), dropped
    while not frontier.is_empty():  # down: one pass per level of merging, not per memory
        step = links.filter(pl.col("merge").is_in(frontier.implode()), ~pl.col("member").is_in(list(gone)))
        step = step.unique("member", keep="first", maintain_order=True)
        parts.append(step.select(id="member", detail=pl.format("member of merged memory {}", "merge")))
        gone |= set(step["member"].to_list())
        frontier = step["member"]
    frontier = pl.Series(sorted(gone), dtype=pl.String)
    while not frontier.is_empty():  # up: a merge none of whose members is left goes too
        lists = pl.col("merged_from").list.eval(pl.element().is_in(frontier.implode())).list.any()
        parents = frame.filter(lists, ~pl.col("id").is_in(list(gone)))["id"]
        left = links.filter(pl.col("merge").is_in(parents.implode()), ~pl.col("member").is_in(list(gone)))
        frontier = parents.filter(~parents.is_in(left["merge"].implode()))
        parts.append(frontier.to_frame("id").with_columns(detail=pl.lit("merged memory with no member left")))
        gone |= set(frontier.to_list())
    return pl.concat(parts)


def forget_cost_expr(params: ForgetParams = ForgetParams()) -> pl.Expr:
    """``cost_importance · importance + access_count / cost_access`` as a polars expression."""
    return (
        params.cost_importance * pl.col("importance") + pl.col("access_count") / params.cost_access
    ).alias("forget_cost")


def _band(cost: pl.Expr) -> pl.Expr:
    """``cost`` to :data:`COST_DECIMALS` decimals, a half rounded up, computed so that float noise
    cannot move it across a half: scaled to whole units of the last decimal, then to 12 significant
    digits (the noise of ``2 · 0.45025`` and ``2 · (0.35025 + 0.1)``, 900.4999999999999 and
    900.5000000000001, goes), then to a whole number. A plain ``round(3)`` put those two in bands
    0.9 and 0.901."""
    scale = 10.0**COST_DECIMALS
    units = (cost * scale).round_sig_figs(12).round(0, mode="half_away_from_zero")
    return (units / scale).round(COST_DECIMALS)  # (the nearest float to it: 1.001, not 1.0010000000000001)


def _shown(strength: pl.Expr, floor: float) -> pl.Expr:
    """A strength below ``floor`` as ``detail`` shows it: to 4 decimals, or to the first of 6, 9
    decimals or all that stays below the floor (0.0999997 is below 0.1: "0.1 < 0.1" would not say so).
    """
    shown = [pl.when(below_floor(strength.round(d), floor)).then(strength.round(d)) for d in (4, 6, 9)]
    return pl.coalesce(*shown, strength)


def _capacity_order(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with ``order``, each capacity candidate's place in the queue of its namespace (1 goes
    first; null for the others), and ``information`` where it was needed.

    The queue is ``(band, information, created_at, _row)``, ``band`` the cost to :data:`COST_DECIMALS`
    and ``_row`` the place in the frame (the order written, from ``store.frame()``).
    What a memory says is counted only where it can matter, so an over-full namespace pays for it
    and the others do not: for the candidates of a namespace over capacity whose band is at most the
    band of the last one to go (the bands below go whole; in the last one the words decide). Without
    a ``content`` column, ties go by age alone.
    """
    said = pl.Series("information", [None] * df.height, dtype=pl.Float64)
    if not df.select((pl.col("excess") > 0).any()).item():  # no namespace over capacity: no queue
        return df.with_columns(said, order=pl.lit(None, dtype=pl.UInt32))
    in_queue = pl.col("candidate")
    first = pl.struct("band", "created_at", "_row").rank("ordinal").over("namespace", in_queue)
    df = df.with_columns(order=pl.when(in_queue).then(first))  # by cost and age: where the cut falls
    # (the band of the last to go; when protected memories leave fewer candidates than the excess, all go)
    cut = pl.col("band").filter(pl.col("order") <= pl.col("excess")).max().over("namespace")
    needs = (in_queue & (pl.col("excess") > 0) & (pl.col("band") <= cut)).fill_null(False)
    if "content" not in df.columns or not df.select(needs.any()).item():
        return df.with_columns(said)
    rows = df.filter(needs)
    df = df.with_columns(said.scatter(rows["_row"], information(rows["content"])))
    order = pl.struct("band", "information", "created_at", "_row").rank("ordinal").over("namespace", in_queue)
    return df.with_columns(order=pl.when(in_queue).then(order))


def plan_forget(frame: pl.DataFrame, params: ForgetParams, now: datetime) -> pl.DataFrame:
    """What ``params`` drops from ``frame`` at ``now``: one row per memory with its reason.

    ``frame`` needs ``id, namespace, status, importance, half_life_hours, created_at, valid_until,
    access_count, protected``, and ``merged_from`` when it holds merges (``store.frame()`` has them).
    Returns columns ``id, namespace, reason, strength, forget_cost, detail``, in the order they would
    be dropped (memories of one instant in the order of ``frame``: the plan of one frame is the same
    in every run).
    """
    check_frame(frame, "frame", ())
    if not isinstance(params, ForgetParams):
        raise ValidationError("params", f"must be a memkit.ForgetParams, got {type(params).__name__}")
    now = check_time("now", now)
    if frame.is_empty():
        return pl.DataFrame(schema=PLAN_SCHEMA)
    check_frame(frame, "frame", _NEEDS)
    # a live merge's members are its provenance: they go with it (or with an explicit delete), never
    # one by one as they decay (never recalled, they always would, and the merge would lose their facts)
    held = pl.Series([_members(frame)], dtype=pl.List(pl.String))
    # _row: the last tie, the order written (a column of that name the caller's frame holds is its own)
    df = (
        frame.drop("_row", strict=False)
        .with_row_index("_row")
        .with_columns(
            strength_expr(age_hours=age_hours_expr("created_at", now)),  # exact: rounded only in `detail`
            forget_cost_expr(params),
            eligible=pl.col("status").is_in(_ELIGIBLE) & ~pl.col("protected") & ~pl.col("id").is_in(held),
        )
    )
    expired = pl.col("valid_until").is_not_null() & (pl.col("valid_until") <= pl.lit(now))
    if not params.drop_expired:
        expired = pl.lit(False)
    df = df.with_columns(
        reason=pl.when(pl.col("eligible") & expired)
        .then(pl.lit("expired"))
        .when(pl.col("eligible") & below_floor(pl.col("strength"), params.min_strength))
        .then(pl.lit("weak"))
    )
    # capacity: among live memories that survive 1 and 2, drop the cheapest above the limit
    kept_live = pl.col("reason").is_null() & pl.col("status").is_in(_LIVE)
    df = _capacity_order(
        df.with_columns(
            excess=(kept_live.cast(pl.Int64).sum().over("namespace") - params.capacity).clip(lower_bound=0),
            candidate=kept_live & pl.col("eligible"),
            band=_band(pl.col("forget_cost")),
        )
    )
    df = df.with_columns(
        reason=pl.when(pl.col("reason").is_null() & (pl.col("order") <= pl.col("excess")))
        .then(pl.lit("capacity"))
        .otherwise(pl.col("reason"))
    )
    floor = pl.lit(params.min_strength)
    plan = df.filter(pl.col("reason").is_not_null()).with_columns(
        detail=pl.when(pl.col("reason") == "expired")
        .then(pl.format("valid until {}", pl.col("valid_until")))
        .when(pl.col("reason") == "weak")
        .then(pl.format("strength {} < {}", _shown(pl.col("strength"), params.min_strength), floor))
        .otherwise(
            pl.concat_str(
                pl.format("over capacity {}; forget-cost {}", pl.lit(params.capacity), pl.col("band")),
                pl.format(", information {}", pl.col("information")).fill_null(""),  # (none: no content)
            )
        )
    )
    rank = pl.col("reason").replace_strict({"expired": 0, "weak": 1, "capacity": 2}, return_dtype=pl.Int8)
    plan = plan.sort(rank, "namespace", "order", "forget_cost", "created_at", "_row")  # order: capacity's
    # then what their erasure takes with it, in the order it goes (with its own numbers)
    numbers = df.select("id", "namespace", "strength", "forget_cost")
    cascade = _cascade(frame, plan["id"]).join(numbers, on="id", maintain_order="left")
    cascade = cascade.with_columns(reason=pl.lit("cascade"))
    return pl.concat([p.select(list(PLAN_SCHEMA)).cast(PLAN_SCHEMA) for p in (plan, cascade)])
