"""What each memory command does to the store (the commands themselves are parsed in
:mod:`memkit.commands`).

=========== =====================================================================================
op          store operation
=========== =====================================================================================
remember    ``store.add`` in ``long_term``, importance 0.9, protected, kind from the text; a stated
            preference on a known topic is a keyed write (``preference.drink``) that supersedes
            the old value
forget      every memory the requester may read that says what the payload names (every word of
            it, or restated whole by it: :mod:`memkit.agent.matching`) is deleted, a current value
            with all versions of its key, an old one alone; when none does, the nearest search hit
            scoring at least ``threshold`` is named, not deleted. An explicit user forget
            overrides ``protected`` (it is the user's data; protection only stops *automatic*
            forgetting). Memories the requester may not modify (:func:`memkit.access.can_modify`)
            are kept and reported.
delete_last the newest memory this requester added to this namespace that still exists and is more
            than an ordinary turn (importance >= the 0.3 admission gate, or a durable layer) is
            deleted; found from the audit log, so it works across sessions and processes. Undoing a
            changed value brings back the one it replaced (a new version of the key)
show        the active memories of the namespace the requester may read that are more than ordinary
            turns (those fade from short-term memory by themselves), durable layers first
=========== =====================================================================================

Every operation returns a frame ``id, content, kind, key, layer, action`` (``added``, ``deleted``,
``kept``: what the requester may read but not erase, ``listed``, ``restored``, ``closest``: what a
forget found near the payload but not saying it) describing what it touched, so an agent can confirm
it and a test can check it.

Why these rules: a memory command is the user speaking about their own data, so it is obeyed
literally and reported exactly. "Remember" is protected, because the user asked for it; "forget"
erases every version, because a superseded value is still the user's data; "forget" matches on
wording only (no importance, no recency, no neighbours: what it erases must be what the user
named, not something ranked near it), and it reports what it could not erase instead of failing.
:func:`execute` dispatches on the op, one private function per op; :func:`confirm` turns the
result frame into the sentence the agent replies with, in the language of the command.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import polars as pl

from .. import access as acl
from ..commands import Command, admit
from ..errors import AccessDenied, ConflictError, NotFound, ValidationError
from ..guard import identity
from ..params import Weights, check_number
from ..schema import ADMISSION_MIN_IMPORTANCE, check_name
from ..store.gate import QUARANTINED_TEXT
from .matching import names_it

__all__ = ["ACTION_SCHEMA", "FORGET_WEIGHTS", "add_keyed", "confirm", "execute"]

# the frame every op returns (an empty one has these columns too, so callers never special-case it)
# (status: the memory's, as stored: a remember dated before its key's current value is "superseded")
ACTION_SCHEMA = {c: pl.String for c in ("id", "content", "kind", "key", "layer", "status", "action")}
# forget matches on wording: lexical and embedding similarity count equally; importance and recency not
# what a "forget X" command matches: the memory that says X, never a neighbour of it
FORGET_WEIGHTS = Weights(similarity=0.5, importance=0.0, recency=0.0, keyword=0.5, neighbour=0.0, tie=0.0)
_FORGET_K = 20  # at most this many memories erased by one forget command (a bound on a vague request)
# more than an ordinary turn: past the admission gate, or in a durable layer
_NOTABLE = (pl.col("importance") >= ADMISSION_MIN_IMPORTANCE) | (pl.col("layer") != "short_term")
_CJK = re.compile(r"[\u4e00-\u9fff]")  # a Chinese character: the command was given in Chinese
_LAYER_ORDER = {"long_term": 0, "episodic": 1, "short_term": 2}  # "show" lists durable memories first


def _frame(rows: list[dict[str, Any]], action: str) -> pl.DataFrame:
    """Memory rows (``Memory.to_dict()`` or frame rows) -> the :data:`ACTION_SCHEMA` frame, every
    row marked ``action``; extra fields are dropped and missing ones are null."""
    return pl.DataFrame(
        [{**{c: r.get(c) for c in ACTION_SCHEMA if c != "action"}, "action": action} for r in rows],
        schema=ACTION_SCHEMA,
    )


def execute(
    command: Command,
    store: Any,
    *,
    namespace: str,
    requester: str | None,
    now: datetime,
    threshold: float = 0.6,
    tags: tuple[str, ...] = (),
) -> pl.DataFrame:
    """Apply ``command`` to ``store`` in ``namespace`` as ``requester`` -> what it touched.

    ``threshold`` is the search score (``FORGET_WEIGHTS``: 0.5·similarity + 0.5·keyword) the nearest
    memory needs to be named when a forget payload names none; ``tags`` are added to a remembered
    memory.

    The store's own rules still apply: ``requester`` reads and writes under the access rules, and
    every change is in the audit log under its name. ``requester=None`` is the operator.
    """
    if not isinstance(command, Command):
        raise ValidationError("command", f"must be a memkit.commands.Command, got {type(command).__name__}")
    threshold = check_number("threshold", threshold, lo=0.0, hi=1.0)
    # compared with stored owners, creators and audit requesters below: the name as the store keeps it
    requester = None if requester is None else identity(check_name("requester", requester))
    if command.op == "remember":
        return _remember(command, store, namespace, requester, now, tags)
    if command.op == "forget":
        return _forget(command.text, store, namespace, requester, now, threshold, said=command.raw)
    if command.op == "delete_last":
        return _delete_last(store, namespace, requester, now)
    if command.op == "show":
        return _show(store, namespace, requester, now)
    raise ValidationError("command.op", f"unknown op {command.op!r}")


def _remember(
    command: Command, store: Any, namespace: str, requester: str | None, now: datetime, tags: tuple[str, ...]
) -> pl.DataFrame:
    """Store the command's payload in long-term memory, protected, importance and kind from the
    admission rule; a keyed preference supersedes the old value (the user just restated it)."""
    # the raw message: its "remember" makes the write explicit (importance 0.9), its wording gives
    # kind and key ("remember that I prefer tea" -> preference, preference.drink)
    a = admit(command.raw)
    m = add_keyed(store, command.text, a.key, namespace=namespace, requester=requester, layer="long_term",
                  kind=a.kind, importance=a.importance, protected=True, source="user", tags=list(tags),
                  now=now)  # fmt: skip
    # the row as stored: redacted, and a quarantined one's text withheld, as every other op reports it
    return _frame(
        [m.to_dict() | ({"content": QUARANTINED_TEXT} if m.status == "quarantined" else {})], "added"
    )


def add_keyed(store: Any, text: str, key: str | None, **fields: Any) -> Any:
    """``store.add`` of a statement under ``key`` (superseding its value), or without a key when the
    key's current version is not the requester's to change (another requester's private or protected
    one: AccessDenied). The user's statement is then kept as a plain memory, not lost, and the chat
    goes on; the denial is in the audit log."""
    try:
        return store.add(text, key=key, conflict_policy="supersede" if key else None, **fields)
    except AccessDenied:
        if key is None:
            raise
        return store.add(text, **fields)


def _show(store: Any, namespace: str, requester: str | None, now: datetime) -> pl.DataFrame:
    """The notable memories ``requester`` could recall at ``now``, durable layers first, each
    layer oldest first. Ordinary turns are left out: they fade from short-term memory anyway, and
    a list of every "OK, thanks" would bury what the user asked to be remembered."""
    held = (  # what a search at `now` could recall: active, readable, and valid at `now`
        (pl.col("status") == "active") & acl.readable_expr(requester) & _NOTABLE
        & (pl.col("created_at") <= now)
        & (pl.col("valid_from").is_null() | (pl.col("valid_from") <= now))
        & (pl.col("valid_until").is_null() | (pl.col("valid_until") > now))
    )  # fmt: skip
    mine = store.frame(namespace, as_of=now).filter(held)  # the statuses of `now`, as a search sees them
    mine = mine.sort(pl.col("layer").replace_strict(_LAYER_ORDER, default=3), pl.col("created_at"))
    return _frame(mine.to_dicts(), "listed")


def _forget(
    query: str, store: Any, namespace: str, requester: str | None, now: datetime, threshold: float,
    said: str | None = None,
) -> pl.DataFrame:  # fmt: skip
    """Erase the memories that say ``query`` (:func:`~memkit.agent.matching.names_it`; ``said``, the
    whole message, may make it a topic) and every
    version of their keys -> ``deleted`` rows, plus ``kept`` rows for those the requester may read but
    not change (:func:`memkit.access.can_modify`). When nothing says it, the nearest search hit scoring
    at least ``threshold`` is named (``closest``; ``kept`` when it is not the requester's to erase, so
    the reply never invites a retry that cannot work). One transaction: all erased, or none."""
    # what exists at `now`: an agent replaying a conversation on a past clock erases nothing the user
    # has not said yet (as `_show` lists nothing written later)
    frame = store.frame(namespace).filter(pl.col("created_at") <= now)
    # the words decide, for current and old values alike: an old value the user names ("forget that I
    # liked green tea" once it is coffee), one the guard holds or a disputed one is not searched, and
    # a current one must not need a search score the old one is spared ("I prefer tea" is what "forget
    # that I like tea" names, whether tea is still the preference or not)
    # a held (quarantined) text is matched only for who may erase it: another writer's stays withheld,
    # and a word-by-word guess at it must get the answer a made-up one gets
    seen = (pl.col("status") != "quarantined") | acl.modifiable_expr(requester)
    live = frame.filter(
        pl.col("status").is_in(["active", *_UNSEARCHED]) & acl.readable_expr(requester) & seen
    )
    named = live.filter(pl.Series(names_it(query, live["content"].to_list(), said=said), dtype=pl.Boolean))
    named = named.sort("created_at", descending=True).head(_FORGET_K)
    if named.is_empty():  # nothing says it; the nearest is named, not erased
        return _closest(query, store, frame, namespace, requester, now, threshold)
    # every version of a current value's key goes too: a superseded value is still the user's data;
    # an old value goes alone, and the current value of its key stays
    keys = named.filter(pl.col("status") == "active")["key"].drop_nulls().unique()
    doomed = frame.filter(pl.col("id").is_in(named["id"].implode()) | pl.col("key").is_in(keys.implode()))
    # never report what the requester may not read; erase only what it may modify
    doomed = _with_may_modify(doomed.filter(acl.readable_expr(requester)), requester)
    # the reply quotes these rows: a quarantined version's text (key, value, tags) stays withheld
    held = store.frame(namespace, withhold=True).select("id", "content", "key", "value", "tags")
    doomed = doomed.drop("content", "key", "value", "tags").join(held, on="id", how="left")
    gone = doomed.filter("_ok")
    with store.transaction():  # all or nothing, and the file is compacted once
        for memory_id in gone["id"].to_list():  # one erasure per matched memory (a handful at most)
            try:
                store.delete(memory_id, namespace=namespace, requester=requester, now=now)
            except NotFound:  # went with a merge it belonged to
                continue
    return pl.concat(
        [_frame(gone.to_dicts(), "deleted"), _frame(doomed.filter(~pl.col("_ok")).to_dicts(), "kept")]
    )


def _with_may_modify(rows: pl.DataFrame, requester: str | None) -> pl.DataFrame:
    """``rows`` with a boolean ``_ok``: may ``requester`` erase each? :func:`memkit.access.can_modify`,
    the store's own rule, so a memory the operator wrote (no owner, no creator) is kept and reported
    like another requester's, never lost between "deleted" and "kept" as a null comparison was."""
    return rows.with_columns(_ok=acl.modifiable_expr(requester))


def _closest(
    query: str, store: Any, frame: pl.DataFrame, namespace: str, requester: str | None, now: datetime,
    threshold: float,
) -> pl.DataFrame:  # fmt: skip
    """The search hit nearest ``query`` scoring at least ``threshold`` -> one ``closest`` row (the user
    can name it as stored), ``kept`` when the requester may not erase it, or an empty frame.
    ``frame`` is the namespace's: it tells whose each hit is."""
    # min_strength=0: a faded memory is still the user's data, and forget must find it too
    hits = store.search(
        query, namespace=namespace, requester=requester, k=1, weights=FORGET_WEIGHTS, now=now,
        min_strength=0.0, reinforce=False,
    )  # fmt: skip
    near = hits.filter(pl.col("score") >= threshold).join(frame.select("id", "owner", "created_by"), on="id")
    near = _with_may_modify(near, requester)
    return pl.concat([_frame(near.filter("_ok").to_dicts(), "closest"),
                      _frame(near.filter(~pl.col("_ok")).to_dicts(), "kept")])  # fmt: skip


_UNSEARCHED = ("superseded", "quarantined", "conflict")  # a forget command finds these by their words


def _delete_last(store: Any, namespace: str, requester: str | None, now: datetime) -> pl.DataFrame:
    """Erase the newest notable memory ``requester`` added here that still exists -> its row, or
    an empty frame. "Undo" means the last thing the user made the agent keep, so ordinary turns
    (short-term, below the admission gate) are skipped."""
    # the audit log, not the frame: it knows who added what, across sessions and processes
    adds = store.audit(namespace, op="add")
    mine = adds.filter(pl.col("requester").eq_missing(requester)).sort("seq", descending=True)
    frame = store.frame(namespace, withhold=True)  # the reply quotes it: quarantined text stays withheld
    notable = frame.filter(_NOTABLE & (pl.col("created_at") <= now))  # written by `now`, as forget
    alive = mine.join(
        notable.select("id"), left_on="memory_id", right_on="id", how="semi", maintain_order="left"
    )
    if alive.is_empty():
        return _frame([], "deleted")
    memory_id = alive["memory_id"][0]
    row = frame.filter(pl.col("id") == memory_id).to_dicts()[0]
    with store.transaction():  # the erasure and the value it brings back, together
        try:
            store.delete(memory_id, namespace=namespace, requester=requester, now=now)
        except NotFound:  # erased meanwhile by another writer
            return _frame([], "deleted")
        back = _restore_previous(store, row, namespace, requester, now)
    return pl.concat([_frame([row], "deleted"), _frame([back.to_dict()] if back else [], "restored")])


def _restore_previous(
    store: Any, row: dict[str, Any], namespace: str, requester: str | None, now: datetime
) -> Any:
    """Undoing a changed value brings the value it replaced back: "remember that I prefer coffee",
    then "undo that", and tea is the preference again (not no preference at all). It comes back as a
    new version of the key with the old value's text and fields, so the history says what happened;
    nothing comes back when the key has another current value or the old one is gone or not readable.
    A value promoted by end_session supersedes its short-term twin (the same text): undo looks past it."""
    if row.get("key") is None or row.get("supersedes") is None:
        return None
    try:  # another requester's value of the key (private, or kept by a resolve) is not this undo's
        if store.read(row["key"], namespace=namespace, requester=requester, now=now) is not None:
            return None
        old = store.get(row["supersedes"], namespace=namespace, requester=requester, now=now)
        while old.content == row.get("content") and old.supersedes is not None:  # a promoted copy's twin
            old = store.get(old.supersedes, namespace=namespace, requester=requester, now=now)
        if old.status != "superseded" or old.content == row.get("content"):  # the same text: nothing back
            return None
        # both said in one session: the old value is the short-term original, the undone one was promoted;
        # it comes back where the undone value was (long_term), not to fade in hours
        up = old.layer == "short_term" and row.get("layer") not in (None, "short_term")
        layer, half = (row["layer"], row["half_life_hours"]) if up else (old.layer, old.half_life_hours)
        weight = max(old.importance, row.get("importance") or 0.0) if up else old.importance
        back = store.add(old.content, key=old.key, value=old.value, kind=old.kind, importance=weight,
                         layer=layer, half_life_hours=half, protected=old.protected,
                         tags=list(old.tags), access=old.access, source=old.source, namespace=namespace,
                         requester=requester, conflict_policy="supersede", now=now)  # fmt: skip
    except (AccessDenied, ConflictError, NotFound):
        return None
    return back if back.status == "active" else None  # held by the guard: it is not the value again


def confirm(command: Command, affected: pl.DataFrame) -> str:
    """A short confirmation of a carried-out command, in the language of its command words.

    >>> confirm(Command("delete_last", "", "undo that"), pl.DataFrame(schema=ACTION_SCHEMA))
    'I found no matching memory to delete.'

    The language is decided by the command words alone (the raw message minus the payload), so
    "forget 我的地址" is confirmed in English. It reports exactly what ``affected`` says: the texts
    deleted, and how many matches were kept as not the agent's to delete.
    """
    zh = bool(_CJK.search(command.raw.replace(command.text, "")))  # the language of the command words
    n = affected.filter(pl.col("action") == ("listed" if command.op == "show" else "deleted")).height
    if command.op == "remember":  # quoting what was stored (PII redacted), not what was said
        said = affected["content"][0] if affected.height else command.text
        if said == QUARANTINED_TEXT:  # the guard held it: it will not be recalled until approved
            return "这条内容被安全检查拦下，审核通过前我不会使用它。" if zh else (
                "The guard held that for review; I won't use it unless it is approved.")  # fmt: skip
        if affected.height and affected["status"][0] == "superseded":  # dated before the key's value
            return f"好的，我把它记作较早的情况：{said}（之后记下的仍然有效）" if zh else (
                f"Noted as an earlier value: {said} (what you told me later still stands)")  # fmt: skip
        return f"好的，我记住了：{said}" if zh else f"OK, I'll remember: {said}"
    if command.op == "show":
        items = affected["content"].to_list()
        if not items:
            return "我还没有记住关于你的任何事。" if zh else "I don't remember anything about you yet."
        head = f"我记得关于你的 {n} 件事：" if zh else f"I remember {n} things about you:"
        return head + "\n" + "\n".join(f"- {c}" for c in items)
    kept = affected.filter(pl.col("action") == "kept").height
    if n == 0 and kept == 0:
        closest = affected.filter(pl.col("action") == "closest")["content"].to_list()
        if closest:  # near the words, but not saying them: the user can name it as it is stored
            c = closest[0]
            if zh:
                return f"没有找到完全相符的记忆。最接近的是：{c}（要删除它，请说“忘掉{c}”）"
            return f'I found no memory that says that. The closest: "{c}" (say "forget {c}" to delete it).'
        return "没有找到要删除的记忆。" if zh else "I found no matching memory to delete."
    if n == 0:
        return (
            f"找到 {kept} 条相关记忆，但不属于我，未删除。"
            if zh
            else f"{kept} matching memories are not mine to delete."
        )
    what = (
        "、".join(affected.filter(pl.col("action") == "deleted")["content"].to_list())
        if zh
        else "; ".join(affected.filter(pl.col("action") == "deleted")["content"].to_list())
    )
    text = f"已删除 {n} 条记忆：{what}" if zh else f"Deleted {n} memor{'y' if n == 1 else 'ies'}: {what}"
    back = affected.filter(pl.col("action") == "restored")["content"].to_list()
    if back:  # an undone change: the value it replaced is current again
        text += f"（恢复为：{back[0]}）" if zh else f" (back to: {back[0]})"
    if kept:
        text += f"（另有 {kept} 条不属于我，未删除）" if zh else f" ({kept} not mine to delete, kept)"
    return text
