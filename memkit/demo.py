"""``memkit demo``: the main job end to end, on a DuckDB file and the offline embedder.

Loads the bundled sample set and shows, in printed tables, each part of memkit at work. Time is
simulated (``now=``): the demo never reads the wall clock, so every run prints the same rankings.

The sample (:mod:`memkit.portable.sample`): 270 memories of ``user_87`` (Chinese), ``alice``
(English) and ``bob`` (both). The sections:

====  ============================================================================================
1     load the set into ``db``; memories per user and layer
2     recall three questions, every score component a column; 2b memkit's default weights: 乌龙茶
3     one memory per layer fading over simulated time; 3b how many stay reachable
4     a new address for ``user.address`` is flagged as a conflict; 4b resolving it
5     the same query in two namespaces: nothing crosses
6     a protected memory denied to the assistant, readable by its owner module
7     near-duplicate episodes merged (a dry run, then applied, then again: nothing left)
8     forgetting 30 days later with room for 30 memories: the plan, its reasons, applied
9     the audit trail of everything above
10    a conversation through :class:`~memkit.agent.MemoryAgent`, moved to a fresh store
11    the write-time guard: a redaction, a refused secret, quarantined injections
====  ============================================================================================

:func:`run_demo` reads as that list, one private function per section, each printing its tables
and returning the facts its tests check (``run_demo("x.duckdb", out=io.StringIO())`` keeps them).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import TextIO

import numpy as np
import polars as pl

from .agent.tour import conversation_section, guard_section, show_section
from .decay import hours_until
from .errors import AccessDenied, MemkitError, StoreLocked, ValidationError
from .params import ForgetParams, Weights
from .portable.sample import SAMPLE_NOW, load_into, load_sample
from .store import MemoryStore
from .store.files import NEEDS_UPGRADE, is_database

__all__ = ["run_demo"]

# the columns of a recall table: the score and every component it is made of
_SCORE_COLS = ["rank", "content", "score", "similarity", "importance", "recency", "strength"]


def run_demo(db: str | Path = "demo.duckdb", out: TextIO = sys.stdout) -> dict[str, object]:
    """Run the demo against a fresh database file ``db`` (:func:`_clear`) -> a few facts of the run
    (used by the tests): counts, the conflict's statuses and so on."""
    db = Path(db)
    _clear(db)
    now = SAMPLE_NOW  # the day after the sample's last memory; every section counts from it
    facts: dict[str, object] = {}
    with MemoryStore(str(db)) as store:
        facts.update(_load(store, db, now, out))
        facts.update(_recall(store, now, out))
        _decay(store, now, out)
        facts.update(_conflict(store, now, out))
        facts.update(_isolation(store, now, out))
        facts.update(_access(store, now, out))
        facts.update(_consolidation(store, now, out))
        facts.update(_forgetting(store, now, out))
        facts.update(_audit_trail(store, out))
    # sections 10 and 11 run on in-memory stores of their own; the demo's file is complete here
    facts.update(conversation_section(db, out))
    facts.update(guard_section(out, now))
    out.write(f"\nDone. The memories are in {db}; open it again with memkit.MemoryStore({str(db)!r}).\n")
    return facts


def _clear(db: Path) -> None:
    """Make room for the demo at ``db``: an earlier demo's file (or an empty store) is kept as
    ``<db>.previous`` (what a user added to it survives); anything else, or a file another process
    has open, is refused (ValidationError) and left as it was."""
    if not db.exists():
        return
    if not db.is_file() or not is_database(db) or not _replaceable(db):  # a folder, someone's memories
        what = "is not a regular file" if not db.is_file() else "holds data the demo did not write"
        raise ValidationError("db", f"{str(db)!r} {what}: not replaced")
    try:  # no other process has it open, a reader included (the read-only look shared its lock)
        MemoryStore(str(db)).close()
    except StoreLocked:
        raise ValidationError("db", f"{str(db)!r} is open in another process: not replaced") from None
    for p in (Path(os.path.realpath(db)), Path(f"{db}.wal")):  # a link's file, moved (the link stays)
        if p.exists():
            os.replace(p, p.with_name(p.name + ".previous"))


def _replaceable(db: Path) -> bool:
    """Whether ``db`` is an empty memkit store or an earlier demo's (it holds the sample's first
    memory), looked at without changing it (an older memkit's store: through a copy)."""
    first = load_sample().row(0, named=True)

    def demos(path: Path, read_only: bool) -> bool:
        with MemoryStore(str(path), read_only=read_only, create=False) as store:
            mine = store.frame(first["namespace"]).filter(pl.col("content") == first["content"])
            return store.count() == 0 or mine.height > 0

    try:
        return demos(db, read_only=True)
    except MemkitError as e:  # open elsewhere (StoreLocked), not memkit's, damaged: someone's
        if NEEDS_UPGRADE not in str(e):
            return False
        with tempfile.TemporaryDirectory() as tmp:  # an older memkit's: it opens only once upgraded
            for f in (db, Path(f"{db}.wal")):
                if f.exists():
                    shutil.copyfile(f, Path(tmp) / f.name)
            try:
                return demos(Path(tmp) / db.name, read_only=False)
            except MemkitError:
                return False


def _load(store: MemoryStore, db: Path, now: datetime, out: TextIO) -> dict[str, object]:
    """1. Load the bundled sample set; show each user's memories by layer. The load goes through the
    whole write pipeline: its time is what writing 270 memories costs, embedding included."""
    t0 = time.perf_counter()
    sample = load_sample()
    load_into(store, sample, now=now)
    ms = (time.perf_counter() - t0) * 1e3
    facts: dict[str, object] = {"loaded": store.count()}
    by_layer = (  # one row per user, one column per layer: counts
        store.frame()
        .group_by("namespace", "layer")
        .len()
        .pivot(on="layer", index="namespace", values="len")
        .sort("namespace")
        .fill_null(0)
        .select("namespace", "short_term", "episodic", "long_term")
    )
    title = (
        f"1. Loaded {store.count()} memories of 3 users into {db} in {ms:.0f} ms "
        f"(embedder: {store.embedder.name}; now = {now:%Y-%m-%d})"
    )
    show_section(out, title, by_layer)
    return facts


def _recall(store: MemoryStore, now: datetime, out: TextIO) -> dict[str, object]:
    """2. Recall with the articles' weights, every score component a column; 2b. the default weights.

    What to look at: with the articles' formula, importance and recency can outvote similarity
    (an important rule about Bob's roadmap outranks his tea), and the hash embedder alone does
    not know that 乌龙茶 is a tea. memkit's default leans on the keyword score (BM25 over the same
    tokens), which matches the characters of the question, and ranks the tea first. Returns
    ``tea_rank`` (0 = first).
    """
    articles = Weights.articles()  # 0.6 similarity, 0.3 importance, 0.1 recency
    for ns, q in (("user_87", "我住在哪里？"), ("alice", "where does Alice live"), ("bob", "Bob 喝什么茶？")):
        hits = store.search(q, namespace=ns, requester="assistant", k=3, weights=articles, now=now)
        title = f"2. Recall in {ns!r}: {q!r}  (the articles': 0.6·similarity + 0.3·importance + 0.1·recency)"
        show_section(out, title, hits.select(_SCORE_COLS))
    hits = store.search("Bob 喝什么茶？", namespace="bob", requester="assistant", k=3, now=now)
    title = (
        "2b. The hash embedder misses 乌龙茶 for Bob; memkit's default (0.3·similarity + 0.7·keyword,"
        " neighbours) finds it"
    )
    show_section(out, title, hits.select([*_SCORE_COLS, "keyword"]))
    return {"tea_rank": hits["content"].str.contains("乌龙茶").arg_max()}


def _decay(store: MemoryStore, now: datetime, out: TextIO) -> None:
    """3. One memory per layer as simulated time passes; 3b. how many of user_87's stay reachable.

    In 3, read a row left to right: the short-term remark (2-hour half-life) is below 0.1 already,
    the episode fades over months, the long-term fact is still above 0.3 after 90 days. ``recallable_h_left``
    is how many hours remain before it falls below 0.1 (:func:`memkit.decay.hours_until`).
    """
    offsets = {"now": 0, "+6 h": 6, "+7 d": 24 * 7, "+30 d": 24 * 30, "+90 d": 24 * 90, "+1 y": 24 * 365}
    title = "3. Decay over simulated time: strength = importance · 0.5^(age / half-life), floor 0.1"
    table = _decay_table(store.frame("user_87"), now, {k: h for k, h in offsets.items() if k != "+6 h"})
    show_section(out, title, table)
    # subtle: the search uses the store's retrieval floor, DecayParams.min_strength, which is 0 by
    # default (a floor of 0.1 hid evidence on LoCoMo), so every memory stays reachable here: decay
    # lowers a memory's rank, and forgetting (section 8) is what removes it
    recallable = []
    for label, h in offsets.items():
        at = now + timedelta(hours=h)
        ask = dict(namespace="user_87", k=1000, now=at, reinforce=False)
        counts = [store.search("用户", **ask, min_strength=floor).height for floor in (None, 0.1)]
        recallable.append({"time": label, "reachable (floor 0)": counts[0], "strength >= 0.1": counts[1]})
    title = "3b. How many of user_87's memories a search still reaches, and how many a 0.1 floor would keep"
    show_section(out, title, pl.DataFrame(recallable))


def _decay_table(frame: pl.DataFrame, now: datetime, offsets: dict[str, int]) -> pl.DataFrame:
    """The newest memory of each layer and its strength at ``now`` plus each offset (hours).

    One column per offset: ``importance · 0.5^((age + offset) / half-life)``, computed here with
    numpy, as a reader would by hand, rather than through the store.
    """
    picks = pl.concat(
        [
            frame.filter(pl.col("layer") == layer).sort("created_at").tail(1)
            for layer in ("short_term", "episodic", "long_term")
        ]
    )
    age0 = np.array([(now - t).total_seconds() / 3600 for t in picks["created_at"]])  # (3,) hours
    imp, hl = picks["importance"].to_numpy(), picks["half_life_hours"].to_numpy()
    return pl.DataFrame(
        {
            "content": picks["content"],
            "layer": picks["layer"],
            "importance": imp,
            "half_life_h": hl,
            **{k: imp * 0.5 ** ((age0 + h) / hl) for k, h in offsets.items()},
            "recallable_h_left": np.maximum(hours_until(0.1, imp, hl) - age0, 0),
        }
    )


def _conflict(store: MemoryStore, now: datetime, out: TextIO) -> dict[str, object]:
    """4. A new value for a key is flagged, not applied; 4b. resolving it makes it the value.

    The store's default ``conflict_policy="flag"`` (:mod:`memkit.conflicts`): a different value
    for ``user.address`` is kept beside the old one as ``conflict``, and ``read`` keeps answering
    with the old value, until ``resolve`` picks one; the other becomes ``superseded``.
    """
    ns, who, key = "user_87", "assistant", "user.address"
    t1, t2 = now + timedelta(hours=1), now + timedelta(hours=2)
    old = store.read(key, namespace=ns, requester=who, now=now)
    # "the user moved to Pudong, Shanghai" (the stored value: "the user lives in Binjiang, Hangzhou")
    new = store.add(
        "用户搬到了上海浦东新区",
        namespace=ns,
        requester=who,
        key=key,
        importance=0.8,
        tags=["address"],
        now=t1,
    )
    current = store.read(key, namespace=ns, requester=who, now=t1)
    title = f"4. Conflict: a new value for 'user.address' is stored as {new.status!r}; read() still returns "
    versions = store.versions(key, namespace=ns).select("version", "content", "status", "created_at")
    show_section(out, title + f"{current.content!r}", versions)
    store.resolve(key, namespace=ns, keep=new.id, requester=who, now=t2)
    after = store.read(key, namespace=ns, requester=who, now=t2)
    versions = store.versions(key, namespace=ns).select("version", "content", "status")
    show_section(out, f"4b. resolve(keep=new): read() now returns {after.content!r}", versions)
    return {"conflict_status": new.status, "old": old.content, "resolved": after.content}


def _isolation(store: MemoryStore, now: datetime, out: TextIO) -> dict[str, object]:
    """5. The same query in two namespaces: each sees only its own memories.

    Alice's marathon ranks first in ``alice``; in ``user_87`` the best matches are unrelated, with
    similarities near 0.1. Returns ``leak`` (whether any of Alice's memories reached ``user_87``).
    """
    q = "Berlin marathon"
    iso = pl.concat(
        [
            # reinforce=False: looking must not raise the importance the later sections see
            store.search(q, namespace=ns, k=2, now=now, reinforce=False).select(
                pl.lit(ns).alias("namespace"), "rank", "content", "similarity"
            )
            for ns in ("alice", "user_87")
        ]
    )
    title = f"5. Namespace isolation: {q!r} in 'alice' and in 'user_87' (nothing of Alice's leaks)"
    show_section(out, title, iso)
    return {"leak": bool(iso.filter(pl.col("namespace") == "user_87")["content"].str.contains("Alice").any())}


def _access(store: MemoryStore, now: datetime, out: TextIO) -> dict[str, object]:
    """6. A protected memory is readable by its owner module only.

    ``user.diet`` (a peanut allergy) belongs to the ``health`` module with access ``protected``:
    the assistant gets :class:`~memkit.errors.AccessDenied`, whose message names the rule, and the
    owner reads it. Returns ``denied``.
    """
    diet = store.frame("user_87").filter(pl.col("key") == "user.diet").row(0, named=True)
    try:
        store.get(diet["id"], namespace="user_87", requester="assistant", now=now)
        denied = "not denied (bug)"
    except AccessDenied as e:
        denied = f"AccessDenied: {e}"
    # the same call as the memory's owner: access is decided per requester, within the namespace
    owner_view = store.get(diet["id"], namespace="user_87", requester=diet["owner"], now=now)
    body = f"assistant -> {denied}\nhealth    -> {owner_view.content}"
    show_section(out, "6. Access: 'user.diet' is protected (owner 'health')", body)
    return {"denied": denied.startswith("AccessDenied")}


def _consolidation(store: MemoryStore, now: datetime, out: TextIO) -> dict[str, object]:
    """7. Near-duplicate episodes: the plan (dry run); 7b. applied, and applied again (idempotent).

    The dry run returns the plan without writing (members, merged text, weakest cosine); applying
    it turns each cluster into one memory, and a second run finds nothing left to merge. Returns
    ``merged`` and ``merged_again`` (0).
    """
    preview = store.consolidate("alice", now=now, dry_run=True)
    title = f"7. Consolidation (dry run): {preview.height} clusters of near-duplicates in 'alice' "
    title += "(cosine >= 0.85)"
    clusters = preview.head(5).select("members", "content", "min_similarity")
    show_section(out, title, clusters.with_columns(pl.col("members").list.len().alias("members")))
    # a merge retires its members (superseded, still in the file) and adds one memory per cluster
    before = store.frame("alice").filter(pl.col("status") == "active").height
    merged = store.consolidate("alice", now=now)
    after = store.frame("alice").filter(pl.col("status") == "active").height
    again = store.consolidate("alice", now=now)
    body = f"{merged.height} merged memories; active memories {before} -> {after}; "
    body += f"a second run merges {again.height}"
    show_section(out, "7b. Applied", body)
    return {"merged": merged.height, "merged_again": again.height}


def _forgetting(store: MemoryStore, now: datetime, out: TextIO) -> dict[str, object]:
    """8. Forgetting 30 days on with room for 30 memories: the plan and why, examples, applied.

    Two reasons appear: ``weak`` (strength below the policy's 0.05) and
    ``capacity`` (beyond the 30 kept, the lowest forget-cost, ``2 · importance + access_count /
    1.1``, go first). Protected memories are never forgotten automatically. Returns
    ``forgotten`` and ``remaining``.
    """
    later = now + timedelta(days=30)
    policy = ForgetParams(capacity=30)
    plan = store.forget("user_87", now=later, policy=policy, dry_run=True)
    title = f"8. Forgetting at {later:%Y-%m-%d} with {policy} (dry run): what would go, and why"
    show_section(out, title, plan.group_by("reason").len().sort("reason"))
    texts = store.frame("user_87").select("id", "content")
    examples = plan.group_by("reason", maintain_order=True).head(2).join(texts, on="id")  # two per reason
    show_section(out, "8b. Examples from the plan", examples.select("reason", "content", "detail"))
    dropped = store.forget("user_87", now=later, policy=policy)
    kept = store.frame("user_87").filter(pl.col("status") == "active")
    body = f"{dropped.height} memories forgotten; {kept.height} active remain; "
    body += f"protected kept: {kept['protected'].sum()}"
    show_section(out, "8c. Applied", body)
    return {"forgotten": dropped.height, "remaining": kept.height}


def _audit_trail(store: MemoryStore, out: TextIO) -> dict[str, object]:
    """9. Every write above, in the audit log: counts by operation and the last events.

    Reads and searches are logged too (``read``, ``search``), and so is the denial of section 6
    (``deny``): the log answers "who saw what", not only "who changed what". Returns ``events``.
    """
    audit = store.audit()
    by_op = audit.group_by("op").len().sort(["len", "op"], descending=[True, False])  # most frequent first
    show_section(out, "9. Audit trail: events by operation", by_op)
    last = audit.tail(4).select("seq", "ts", "namespace", "op", "requester", "detail")
    show_section(out, "9b. The last events", last)
    return {"events": audit.height}
