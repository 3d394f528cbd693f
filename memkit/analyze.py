"""The memory analyzer: scan a store's memories the way a linter scans a program (pure).

:func:`analyze` takes ``store.frame()`` and returns findings, one row each: ``code, severity,
namespace, memory_id, key, message``. Codes are stable; the README lists them.

======  =========  ==============================================================================
code    severity   finding
======  =========  ==============================================================================
MK001   warning    unresolved key conflict: a ``conflict`` version waits for ``store.resolve``
MK002   warning    expired but still active: ``valid_until`` has passed (``forget`` drops it unless protected)
MK003   info       near-duplicates awaiting consolidation (one finding per cluster, on the survivor)
MK004   info       stale owner: its owner has written nothing for ``stale_days`` days
MK005   error      private memory with no creator: nobody but the operator can ever read it
MK006   info       weak and never accessed: below the retrieval floor and never recalled
MK007   warning    contradictory values for one key across layers (several active versions)
MK008   warning    PII or a secret in a stored text (written with the guard off, or imported)
MK009   error      a live memory reads like a prompt injection (the guard would quarantine it)
MK010   info       quarantined, waiting for review (``store.approve`` or ``store.delete``)
MK011   warning    unkeyed memories state one personal-fact slot with different values (a key is suggested)
======  =========  ==============================================================================

How the checks read ``frame``: it holds every version of every memory, whatever its status, so each
check picks its own rows. MK002, MK004, MK006, MK007 and MK011 look at ``active`` memories only, MK001,
MK009 and MK010 at the statuses they are about, MK005 and MK008 at every row. Strength is computed
at ``now`` from ``created_at`` (``importance · 0.5^(age / half-life)``, :mod:`memkit.decay`), the
clock forgetting uses. Every finding names one memory: a memory with two problems appears under
both codes, and MK003 names a cluster's survivor.

>>> from datetime import datetime, timezone
>>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
>>> f = pl.DataFrame({"id": ["a", "b"], "namespace": ["u", "u"], "key": ["addr", "addr"],
...     "content": ["杭州", "上海"], "value": [None, None], "layer": ["long_term"] * 2,
...     "status": ["active", "conflict"], "access": ["public"] * 2, "owner": ["x"] * 2,
...     "created_by": ["x"] * 2, "importance": [0.8, 0.8], "half_life_hours": [2160.0] * 2,
...     "created_at": [t, t], "valid_until": [None, None], "access_count": [0, 0]})
>>> analyze(f, t).select("code", "memory_id").rows()
[('MK001', 'b')]

Both versions active, in two layers, with two values: a contradiction (MK007) on each; once their
``valid_until`` has passed, each is also expired but still active (MK002):

>>> g = f.with_columns(status=pl.lit("active"), layer=pl.Series(["long_term", "episodic"]))
>>> analyze(g, t).select("code", "memory_id").rows()
[('MK007', 'a'), ('MK007', 'b')]
>>> analyze(g.with_columns(valid_until=pl.lit(t)), t)["code"].to_list()
['MK002', 'MK002', 'MK007', 'MK007']
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

from .commands.patterns import norm_expr
from .commands.slot_leads import slot_value_expr, without_now
from .commands.slots import with_slot_key
from .commands.subjects import first_person_expr
from .decay import age_hours_expr, below_floor, strength_expr
from .guard import screen_many
from .params import ForgetParams, GuardParams
from .schema import check_time

__all__ = ["CODES", "FINDING_SCHEMA", "analyze"]

# code -> (severity, short title): a finding's severity is looked up here, never written by hand
CODES = {
    "MK001": ("warning", "unresolved key conflict"),
    "MK002": ("warning", "expired but still active"),
    "MK003": ("info", "near-duplicates awaiting consolidation"),
    "MK004": ("info", "stale owner"),
    "MK005": ("error", "private memory with no creator"),
    "MK006": ("info", "weak and never accessed"),
    "MK007": ("warning", "contradictory values across layers"),
    "MK008": ("warning", "PII or secret in stored text"),
    "MK009": ("error", "live memory looks like a prompt injection"),
    "MK010": ("info", "quarantined, waiting for review"),
    "MK011": ("warning", "one fact slot, different values, no key"),
}
# the result's columns, one row per finding (also the schema of an empty result)
FINDING_SCHEMA = {
    "code": pl.String,
    "severity": pl.String,
    "namespace": pl.String,
    "memory_id": pl.String,
    "key": pl.String,
    "message": pl.String,
}


def _findings(df: pl.DataFrame, code: str, message: pl.Expr) -> pl.DataFrame:
    """Every row of ``df`` as a finding of ``code`` (its severity from :data:`CODES`), with the
    ``message`` expression evaluated per row; the caller filters ``df`` to the offending rows first."""
    return df.select(
        code=pl.lit(code),
        severity=pl.lit(CODES[code][0]),
        namespace="namespace",
        memory_id="id",
        key="key",
        message=message,
    )


def _guard_findings(df: pl.DataFrame, guard: GuardParams) -> list[pl.DataFrame]:
    """MK008-MK010 from the guard's rules (:mod:`memkit.guard`), screened as one batch.

    Every stored text is screened as if it were written today with ``guard``, without sources: every
    text is held to ``injection_threshold`` (the learned detector runs only when ``guard.learned``).
    """
    if not guard.enabled:
        return []
    screened = screen_many(df["content"].to_list(), guard)  # placeholders ([EMAIL]) are not PII
    # MK008 lists the distinct messages of a text's PII and secret findings. The built-in rules'
    # messages name the kind of data ("email address"), never the value, so the report is safe to print.
    leaks = (
        screened.findings.filter(pl.col("kind").is_in(["pii", "secret"]))
        .group_by("row")
        .agg(kinds=pl.col("message").unique(maintain_order=True).str.join(", "))
    )
    # subtle: findings number their rows as Int32, with_row_index as UInt32; cast before the join
    leaky = df.with_row_index("row").join(leaks.with_columns(pl.col("row").cast(pl.UInt32)), on="row")
    actions = pl.Series(screened.actions)
    # MK009 for live text only (active, or a conflict awaiting resolution): a quarantined memory is
    # MK010, a superseded one is not reported. A refused text (a secret) shows up as MK008 instead.
    suspect = df.filter((actions == "quarantine") & pl.col("status").is_in(["active", "conflict"]))
    return [
        _findings(leaky, "MK008", pl.format("stored text holds {}", pl.col("kinds"))),
        _findings(suspect, "MK009", pl.lit("reads like a prompt injection: quarantine it or learn a lesson")),
        _findings(
            df.filter(pl.col("status") == "quarantined"), "MK010", pl.lit("quarantined: approve or delete it")
        ),
    ]


def _slot_findings(active: pl.DataFrame, value: pl.Expr) -> pl.DataFrame:
    """MK011: unkeyed active memories of one namespace that state the user's own fact on one slot
    (:func:`memkit.commands.slots.slot_key_expr`: "I live in Boston", 我搬到上海了) with different
    values, among themselves or against the slot's keyed value (``fact.residence``): a store written
    by ``store.add`` without keys, or imported, keeps both as current. One finding per unkeyed row,
    naming the suggested key. The slot patterns run as polars expressions over the whole frame."""
    unkeyed = pl.col("key").is_null()
    who = [c for c in ("owner", "created_by") if c in active.columns]  # one user's facts, not a team's
    said = active.select(
        "namespace", "id", "key", v=value, norm=norm_expr("content"), given=pl.col("value").is_not_null(),
        who=pl.coalesce(*who).cast(pl.String) if who else pl.lit(None, pl.String),
    )  # fmt: skip
    said = with_slot_key(said, "norm", "slot", unkeyed)  # one regex pass; the rest on the few hits
    said = said.filter((unkeyed & pl.col("slot").is_not_null()) | pl.col("key").str.starts_with("fact."))
    said = said.with_columns(slot=pl.coalesce("key", "slot"))
    # the slot's value, as the statement gives it ("I moved to Boston": boston); a structured value
    # as it is, and a text without a lead of its slot whole
    said = said.with_columns(me=first_person_expr(pl.col("norm")))  # once: each slot's lead reads it
    stated = pl.when(pl.col("given")).then(None).otherwise(slot_value_expr(pl.col("me"), pl.col("slot")))
    said = said.with_columns(v=pl.coalesce(stated, _same_value(pl.col("v"))))
    over = ["namespace", "who", "slot"]
    split = said.with_columns(n=pl.len().over(over)).filter(unkeyed & (pl.col("v").n_unique().over(over) > 1))
    return _findings(
        split,
        "MK011",
        pl.format(
            "one of {} active memories stating {} with different values: suggested key '{}' "
            "(conflict_policy='supersede'), or delete the stale ones",
            pl.col("n"),
            pl.col("slot"),
            pl.col("slot"),
        ),
    )


def _same_value(text: pl.Expr) -> pl.Expr:
    """What MK011 compares when a memory states no value after a lead of its slot (a structured
    ``value``, a keyed text of another shape): the text lowercased, without punctuation and without
    the words that say it holds now ("Boston." = "boston now"), as a slot's value is compared
    (:func:`memkit.commands.slot_leads.without_now`)."""
    return without_now(text.str.to_lowercase())


def _before(now: datetime, span: timedelta) -> datetime:
    """``now - span``, or the earliest datetime when that is before year 1: a huge ``stale_days``
    (1e6 days, the check switched off) reaches back to the start of time instead of raising."""
    try:
        return now - span
    except OverflowError:
        return datetime.min.replace(tzinfo=now.tzinfo)


def analyze(
    frame: pl.DataFrame,
    now: datetime,
    *,
    min_strength: float = ForgetParams().min_strength,
    stale_days: float = 90.0,
    merge_plan: pl.DataFrame | None = None,
    guard: GuardParams = GuardParams(),
) -> pl.DataFrame:
    """Findings over ``frame`` at ``now``, most severe first.

    ``merge_plan`` is the output of :func:`memkit.consolidate.plan_merges` (``store.analyze`` passes
    it) for MK003; without it near-duplicates are not reported. ``guard`` sets the rules of
    MK008-MK009 (``GuardParams(enabled=False)`` skips them, and MK010 too).

    ``min_strength`` is MK006's floor: the forgetting policy's (0.05); ``store.analyze`` passes the
    store's retrieval floor when one is set (``DecayParams.min_strength``), else this one.
    ``stale_days`` is how long an owner must have written nothing for MK004.
    Returns :data:`FINDING_SCHEMA` columns; an empty frame of that schema when ``frame`` is empty.
    """
    now = check_time("now", now)  # in UTC, as the frame's columns are
    if frame.is_empty():
        return pl.DataFrame(schema=FINDING_SCHEMA)
    # strength at now, from the hours since created_at: the same number forget() compares to its floor
    df = frame.with_columns(strength_expr(age_hours=age_hours_expr("created_at", now)))
    active = df.filter(pl.col("status") == "active")  # the live memories most checks look at
    value = pl.coalesce(pl.col("value").cast(pl.String), pl.col("content"))  # what a memory says
    out = [
        _findings(
            df.filter(pl.col("status") == "conflict"),
            "MK001",
            pl.format("key '{}' has a pending conflicting version: resolve it", pl.col("key")),
        ),
        # expired yet active: reads already skip it (the read gate checks validity at now), but the
        # row, its text and its embedding stay until forget drops it
        _findings(
            active.filter(pl.col("valid_until").is_not_null() & (pl.col("valid_until") <= pl.lit(now))),
            "MK002",
            pl.format("valid until {} but still active", pl.col("valid_until")),
        ),
        # private is readable by its created_by only; with none, only the operator (no requester) reads it
        _findings(
            df.filter(pl.col("access") == "private", pl.col("created_by").is_null()),
            "MK005",
            pl.lit("private with no created_by: only the operator can read it"),
        ),
        # below the floor and never recalled (access_count 0)
        _findings(
            active.filter(below_floor(pl.col("strength"), min_strength), pl.col("access_count") == 0),
            "MK006",
            pl.format("strength {} below the floor and never recalled", pl.col("strength").round(3)),
        ),
    ]
    # MK004: an owner's last write in a namespace, over every version and status; when it is older
    # than stale_days, each of the owner's active memories there is a finding
    last_write = df.group_by("namespace", "owner").agg(last=pl.col("created_at").max())
    stale = last_write.filter(
        pl.col("owner").is_not_null(), pl.col("last") < pl.lit(_before(now, timedelta(days=stale_days)))
    )
    out.append(
        _findings(
            active.join(stale, on=["namespace", "owner"]),
            "MK004",
            pl.format("owner '{}' has written nothing since {}", pl.col("owner"), pl.col("last")),
        )
    )
    # MK007: one (namespace, key) active in several layers *and* with several values; the same value
    # in two layers is no contradiction. Every active row of such a key is a finding.
    keyed = active.filter(pl.col("key").is_not_null()).with_columns(v=value)
    split = keyed.filter(
        (pl.col("layer").n_unique().over("namespace", "key") > 1)
        & (pl.col("v").n_unique().over("namespace", "key") > 1)
    )
    out.append(
        _findings(
            split,
            "MK007",
            pl.format(
                "key '{}' holds different values in several layers ({})", pl.col("key"), pl.col("layer")
            ),
        )
    )
    out.append(_slot_findings(active, value))
    out += _guard_findings(df, guard)
    if merge_plan is not None and not merge_plan.is_empty():
        # one finding per cluster, on its survivor; n counts every member, the survivor included
        dup = merge_plan.select(
            namespace="namespace", id="survivor", key="key", n=pl.col("members").list.len()
        )
        out.append(_findings(dup, "MK003", pl.format("{} near-duplicates could be merged", pl.col("n"))))
    # error, warning, info; then code, namespace and id, so one store always lists in one order. Each
    # part is cast to one schema first: a column of nulls only can come typed Null.
    rank = pl.col("severity").replace_strict({"error": 0, "warning": 1, "info": 2}, return_dtype=pl.Int8)
    return pl.concat([o.cast(FINDING_SCHEMA) for o in out]).sort(rank, "code", "namespace", "memory_id")
