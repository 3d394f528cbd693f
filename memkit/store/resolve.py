"""``resolve``: settle a key, one version kept, every other live one superseded.

Who may settle a key, and what (the access rule of :mod:`memkit.access`): the operator, or the kept
version's owner or creator who may also read it (the kept text is returned); and each version it
supersedes must be public or one the requester could replace itself. The checks run on the live
versions as they are read before the transaction and, on a server, again inside it: another process
may have written the key meanwhile (its version is then one the checks have not seen), and a
resolve that would be refused after that write is refused, changing nothing, whatever the order in
which the two arrived (``AccessDenied``, audited, for another writer's private or protected version;
``ValidationError`` for one dated after ``now``; ``NotFound`` when the kept version is no longer live).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..errors import NotFound
from ..schema import Memory, check_name
from .gate import key_matches
from .vectors import COLUMNS
from .versions import VersionsMixin, check_forward

__all__ = ["ResolveMixin"]


class ResolveMixin(VersionsMixin):
    """:meth:`resolve` (module doc)."""

    def resolve(
        self,
        key: str,
        *,
        namespace: str,
        keep: str,
        requester: str | None = None,
        now: datetime | None = None,
    ) -> Memory:
        """Settle a key: version ``keep`` becomes ``active``, every other live version ``superseded``.

        ``keep`` may be the current version (the conflict is rejected) or a pending one (it wins).
        Only the operator or the kept version's owner or creator may resolve, and only if it may read
        that version; one ``resolve`` event and a ``supersede`` event per loser record it. Every
        version it supersedes must be public or the requester's to change, also one another process
        wrote since the call began (module doc).
        """
        key, raw = self._key_names(key)
        names = key_matches(key, raw)  # its versions under every name (older stores': gate.key_matches)
        namespace = self._space(namespace)
        keep = check_name("keep", keep)
        requester = self._who(requester)
        now = self._now(now)
        with self._lock:

            def live_now() -> list[dict[str, Any]]:
                """The live versions of the key (active or conflict), oldest first."""
                return self._sql(
                    f"SELECT {COLUMNS} FROM memories WHERE namespace = ?"
                    " AND key IN (SELECT unnest(?::VARCHAR[])) AND status IN ('active', 'conflict')"
                    " ORDER BY version, created_at",
                    [namespace, names],
                ).to_dicts()

            winner, losers = self._settle(live_now(), keep, key, requester, now)

            def write() -> None:
                """Winner, losers and their events, in one transaction."""
                nonlocal winner, losers
                if self._pg is not None:  # another process may have written the key since: read again
                    # inside the serializable transaction, and check again: a refusal rolls it back
                    winner, losers = self._settle(live_now(), keep, key, requester, now, again=True)
                self._set_status([keep], "active", now)
                self._event(now, "resolve", namespace, keep, requester, key=key, status="active", over=losers)
                if losers:
                    self._set_status(losers, "superseded", now)
                self._events(now, "supersede", [namespace] * len(losers), losers, requester,
                             [{"by": keep, "status": "superseded"}] * len(losers))  # fmt: skip

            self._tx(write)

            def mirror() -> None:
                """The same statuses in the index, after the commit."""
                self._index.set_status([keep], "active")
                self._index.set_status(losers, "superseded")

            self._mirror(mirror)
        with self._lock:  # as get() shows it: no lineage id of a version the requester may not read
            return Memory.from_row(
                self._lineage_row({**winner, "status": "active", "updated_at": now}, requester)
            )

    def _settle(
        self,
        live: list[dict[str, Any]],
        keep: str,
        key: str,
        requester: str | None,
        now: datetime,
        again: bool = False,
    ) -> tuple[dict[str, Any], list[str]]:
        """The checks of :meth:`resolve` over the key's ``live`` versions -> the kept row and the
        ids it supersedes; NotFound, AccessDenied (audited) or ValidationError (``now``) otherwise.
        ``again``: the second look, inside the transaction (module doc)."""
        winner = next((r for r in live if r["id"] == keep), None)
        if winner is None:
            which = "no longer a" if again else "not a"
            raise NotFound(f"keep={keep!r} is {which} live (active or conflict) version of key {key!r}")
        # a refusal is logged (past a rollback too); the kept text is returned, so it must be readable
        # too (an owner may change a memory whose creator made it private, but not read it)
        self._check_modify(winner, requester, now, "resolve")
        self._check_read(winner, requester, now, "resolve")
        for r in live:  # each version it supersedes: public, or one the requester could replace
            if r["id"] != keep and r["access"] != "public":
                self._check_modify(r, requester, now, "supersede (by resolve)")
        check_forward(live, now)  # every live version changes (or is confirmed) at `now`
        return winner, [r["id"] for r in live if r["id"] != keep]
