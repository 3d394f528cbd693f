"""Re-identification: a store written by an older memkit carried over to the pseudonyms of today
(:meth:`IdentitiesMixin.reidentify`).

An identity (a requester, owner or creator) and a name (a key, a tag) hold PII as a pseudonym
(:func:`memkit.guard.names.pseudonym`). Older stores hold older forms of it:

- ``legacy`` (the first stores): every dot and hyphen of an e-mail or IP address was dropped
  before the digest, so ``john.smith@corp.com`` and ``johnsmith@corp.com`` were one identity;
- ``short`` (until December 2026): a digest of 32 bits for a number (phone, card, ID), 48 for an
  address, so two phone numbers in ~33k shared one (a birthday search finds a pair in a second):
  each read the other's private memories, and a key of one overwrote the other's.

Today's are 96 bits, which changes the pseudonym of every name holding PII. The store holds digests,
not the names, so it cannot translate them itself, nor tell the person who wrote a row from another
whose name shares its digest: a requester's identity never matches an older pseudonym (and a
requester holding one is refused: :func:`memkit.guard.names.old_pseudonym`), so what those rows
hold stays with its readers of today (public rows, the operator) until the operator names the
people (their addresses, numbers), and each older pseudonym becomes the new one in owners, creators,
keys, tags and the requesters of the audit log and of the lessons, in one transaction. Two names
that shared an older pseudonym cannot be told apart in what the store holds, and are refused.
Carrying a requester over by itself, the first time it presents its name, was not chosen: the first
of two names sharing a digest would take the other's rows for good.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import polars as pl

from ..errors import MemkitError, ValidationError
from ..guard.names import SECRET_IN_NAME, holds_secret, identity, old_pseudonym
from ..params import GuardParams
from ..schema import check_name
from .core import StoreCore

__all__ = ["IdentitiesMixin", "warn_older_identities"]

# the columns that hold identities or names with pseudonyms in them (a tag list apart)
_TEXT_COLUMNS = (("memories", "owner"), ("memories", "created_by"), ("memories", "key"),
                 ("events", "requester"), ("lessons", "requester"))  # fmt: skip
_PSEUDONYM = re.compile(r"\[[A-Z_]+:[0-9a-f]+\]")
_OLDER = ("legacy", "short")  # the forms older stores kept (memkit.guard.names.FORMS), oldest first


def _renames(names: Iterable[Any], guard: GuardParams) -> dict[str, str]:
    """People's names (addresses) -> ``{old pseudonym: new one}`` for each PII span whose pseudonym
    changed; ValidationError naming ``names`` for a bad name (one holding a secret by the store's
    ``guard``: memkit.store.names) or two that shared an old pseudonym."""
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise ValidationError("names", f"must be a list of names, got {type(names).__name__}")
    out: dict[str, str] = {}
    owner: dict[str, str] = {}  # old pseudonym -> the name that gave it
    for name in names:
        name = check_name("names", name)
        if holds_secret(name, guard):
            raise ValidationError("names", SECRET_IN_NAME)
        new = identity(name)
        for form in _OLDER:
            old = identity(name, form=form)
            # the pseudonyms themselves: a name is its text with each span replaced, so the parts that
            # differ between the two identities are the old and new pseudonyms, in the same order
            for o, n in zip(_pseudonyms(old), _pseudonyms(new), strict=True):
                if o == n:  # (no PII in the name: old == new, nothing to carry)
                    continue
                if out.get(o, n) != n:
                    raise ValidationError(
                        "names",
                        f"{owner[o]!r} and {name!r} shared the pseudonym {o} in a store an older memkit"
                        " wrote: what either wrote cannot be told apart",
                    )
                out[o], owner[o] = n, name
    return out


# an owner or creator that may hold an older pseudonym (``:`` and 8 or 12 characters before ``]``;
# ``old_pseudonym`` decides): a scan of two columns, so an open tells the operator at no real cost
_MAYBE_OLDER = ("%:________]%", "%:____________]%")


def warn_older_identities(run: Callable[[str, Sequence[Any]], list[tuple[Any, ...]]], path: str) -> None:
    """A UserWarning when the store holds memories whose owner or creator is an older pseudonym (a
    store written before December 2026, not yet re-identified): their writers read none of the private
    ones, nor write the next version of a key they hold, until the operator names them to
    :meth:`IdentitiesMixin.reidentify`. ``run`` is the store's query function; at every open of a
    stored database (a new one holds nothing), writable or read-only."""
    where = " OR ".join(f"{c} LIKE ?" for c in ("owner", "created_by") for _ in _MAYBE_OLDER)
    found = run(f"SELECT owner, created_by, count(*) FROM memories WHERE {where} GROUP BY owner, created_by",
                [*_MAYBE_OLDER, *_MAYBE_OLDER])  # fmt: skip
    rows, olds = 0, set()
    for owner, creator, n in found:  # few: one per (owner, creator) pair that matched
        old = {o for o in (old_pseudonym(owner or ""), old_pseudonym(creator or "")) if o}
        rows, olds = rows + (n if old else 0), olds | old
    if rows:
        warnings.warn(
            f"{path} holds {rows} memor{'y' if rows == 1 else 'ies'} whose owner or creator is the"
            f" pseudonym of an older memkit ({len(olds)} distinct): their writers cannot read their private"
            " memories until the operator runs store.reidentify(names) (`memkit reidentify --db FILE"
            " NAME...`) with the people's addresses and numbers",
            UserWarning,
            stacklevel=4,  # the caller of MemoryStore(...): warn <- _open <- __init__ <- it
        )


def _pseudonyms(name: str) -> list[str]:
    """The pseudonyms in an identity, in order: ``[EMAIL:…]`` spans."""
    return _PSEUDONYM.findall(name)


class IdentitiesMixin(StoreCore):
    """:meth:`reidentify` (module doc)."""

    def reidentify(self, names: Iterable[str], *, now: datetime | None = None) -> pl.DataFrame:
        """Carry the people ``names`` (e-mail or IP addresses, phone, card or ID numbers, or names
        holding them) over from the pseudonyms older stores kept (module doc) -> one row per
        pseudonym replaced: ``old, new, rows`` (values changed across owners, creators, keys, tags
        and the requesters of the audit log and the lessons).

        For a store written before December 2026: until then, an owner named by an address or a
        number does not match its requester (private memories are unreadable to it) and a key
        holding one is not found by it. Operator only (it takes no requester); one transaction,
        audited as a ``reidentify`` event with the pseudonyms, never the names. Refused (nothing changed):
        two names that shared an old pseudonym (their memories cannot be told apart: name everyone,
        as a name left out loses its rows to one that shares its old pseudonym), a key held under
        both pseudonyms as two chains (a version number under each: resolve by hand; one that today's
        writes continued is one chain), a read-only store, inside
        :meth:`transaction`. Values of structured ``value`` objects and the audit log's details
        keep their old pseudonyms.
        """
        renames = _renames(names, self.guard)
        self._check_writable()
        if self._depth:  # it reloads the index, which a rollback could not restore
            raise ValidationError("reidentify", "cannot run inside store.transaction(); call it on its own")
        with self._lock:
            now = self._now(now)
            counts = self._tx(lambda: self._reidentify(renames, now))
            if any(counts.values()):
                self._load_index()
        return pl.DataFrame(
            {"old": list(renames), "new": list(renames.values()), "rows": [counts[o] for o in renames]},
            schema={"old": pl.String, "new": pl.String, "rows": pl.Int64},
        )

    def _reidentify(self, renames: dict[str, str], now: datetime) -> dict[str, int]:
        """The writes of :meth:`reidentify` (inside its transaction) -> values changed per old one."""
        counts = dict.fromkeys(renames, 0)
        moved = "" if self._pg is None else ", rowid = DEFAULT"  # a rewritten row moves, as on DuckDB
        for old, new in renames.items():
            # a key held under both: one chain when today's versions continue the older ones (a keyed
            # write finds a key by its older name: gate.key_matches); two that share a version number
            # were begun apart (by a memkit that did not find it)
            clash = self._run(
                "SELECT DISTINCT a.key FROM memories a JOIN memories b ON a.namespace = b.namespace"
                " AND b.key = replace(a.key, ?, ?) AND b.version = a.version WHERE strpos(a.key, ?) > 0"
                " LIMIT 1",
                [old, new, old],
            )
            if clash:
                raise MemkitError(
                    f"key {clash[0][0]!r} is also held as {clash[0][0].replace(old, new)!r} (written"
                    " after the upgrade): two chains of one key; resolve them by hand, then run this again"
                )
            for table, column in _TEXT_COLUMNS:  # (no RETURNING: on DuckDB it moves the rows)
                where = f"WHERE strpos({column}, ?) > 0"
                counts[old] += self._run(f"SELECT count(*) FROM {table} {where}", [old])[0][0]
                cols = f"{column} = replace({column}, ?, ?)" + (moved if table == "memories" else "")
                self._run(f"UPDATE {table} SET {cols} {where}", [old, new, old])
            tagged = self._run(
                "SELECT id, tags FROM memories WHERE strpos(array_to_string(tags, ' '), ?) > 0", [old]
            )
            for memory_id, tags in tagged:  # few rows: those whose tags name this person
                cols = "tags = ?" + moved
                self._run(
                    f"UPDATE memories SET {cols} WHERE id = ?",
                    [[t.replace(old, new) for t in tags], memory_id],
                )
            counts[old] += len(tagged)
        done = {o: n for o, n in renames.items() if counts[o]}
        if done:
            self._event(now, "reidentify", None, None, None, pseudonyms=done)
        return counts
