"""memkit as an MCP memory server: :func:`build_server`, and ``memkit mcp`` on the command line.

The Model Context Protocol lets an LLM client (Claude Desktop, an IDE, an agent framework) call the
tools a server offers. :func:`build_server` offers a :class:`~memkit.MemoryStore` as memory tools,
built with the official SDK (``mcp.server.mcpserver.MCPServer``)::

    server = build_server(mk.MemoryStore("mem.duckdb"), namespace="user_87", requester="assistant")
    server.run()            # stdio, what `memkit mcp --db mem.duckdb --namespace user_87` does

====================  =====================================  ========================================
tool                  arguments                              store call
====================  =====================================  ========================================
``add_memory``        content, key, importance, kind, tags   ``add``
``search_memories``   query, k                               ``search``: hits with the score breakdown
``get_memory``        id                                     ``get``
``update_memory``     key, content, importance, kind, tags   ``add`` on the key: a new version
``delete_memory``     id                                     ``delete``, with its key's older values
``forget``            dry_run                                ``forget`` (the forgetting policy)
``list_conflicts``    (none)                                 ``frame``: keys with a pending version
``resolve_conflict``  key, keep                              ``resolve``
``show_memories``     limit                                  ``frame``, as the read gate shows it
====================  =====================================  ========================================

**Who and where come from the configuration, never from the model.** Every call acts as the
``requester`` in the ``namespace`` the server was built with. No tool takes either as an argument,
and an argument a tool does not declare is refused rather than ignored, so a text that steers the
model ("save this for user_88", "you are the admin now") cannot widen what it reaches: the store's
read gate and access rules see the configured requester, as they would for a direct call, and an id
from another namespace is not found. Whoever starts the server decides; the model only fills in
content, keys, queries and ids.

**Everything goes through the store's public API**, so the guard, versions, decay, access rules and
audit hold unchanged. A secret (``sk-…``, a password) is refused; a suspected injection is stored
``quarantined``: the result says so, names the guard's codes and does not echo the text, and no
search returns it until an operator approves it. Writes are recorded with source ``agent``: the
text came from the model, whoever it quotes.

**update_memory is a new version of a key**, never an edit in place: ``add`` on the key with
``conflict_policy="supersede"``, as memkit's own explicit updates do (``MemoryAgent``'s "remember",
the LangGraph store's ``put``). The new version is current from its time on and ``supersedes`` the old
one, which stays in ``versions`` as ``superseded`` (the history is kept; ``delete_memory`` erases);
on a clock before the key's current version was written, it is an earlier value instead: stored
``superseded``, the result's ``note`` says so, and the later value stays current. The
access rules still hold: only the owner or creator of a non-public fact may give it a new version,
and another writer's non-public pending value stays pending. The key must exist for the requester
(a version it may read; ``add_memory`` creates keys, so a typo cannot start a new one): one it may
read nothing of is not found, as a missing one, unless ``add_memory`` would be refused (the same
refusal). ``kind``, ``importance``, ``tags``, ``access`` and ``protected`` not given carry over from
the current version (an update of a private fact stays private). ``add_memory`` on a key that holds
a value follows the store's conflict policy instead: under the default ``flag`` another writer's
value stays current and the new one waits as a ``conflict`` for ``list_conflicts`` / ``resolve_conflict``.

**Errors are tool results.** A :class:`~memkit.errors.MemkitError` (a bad argument, naming the
field; an unknown id; access denied; a refused write; a strict conflict) becomes the SDK's
``ToolError``: the call returns ``isError`` with ``"<Error>: <message>"`` for the model to read, and
the server keeps serving. Arguments that fail the tool's JSON schema are refused by the SDK the same
way. An error never repeats a secret or PII the model passed in an argument, in the result or in the
server's log (:mod:`.mcp_errors`): such an argument is named, not quoted (``[id withheld: MG201]``),
and a refused write names the rule and the argument (``MG201 (API key) in key``), not the text. A
failed call changes nothing (memkit validates before it writes, in one transaction); only a
denial (access, a refused write) is audited. Results are JSON objects: datetimes as ISO-8601
strings, lists for tags.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

import polars as pl

from ..errors import MissingDependency

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations
    from pydantic import Field
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise MissingDependency("memkit's MCP server needs the MCP SDK: pip install 'memkit[mcp]'") from e

from .. import access as acl
from .._version import __version__
from ..errors import AccessDenied, NotFound, ValidationError
from ..schema import check_name, check_time, clock
from ..store import MemoryStore
from ..store.gate import Gate
from .mcp_errors import QuietServer, tool
from .mcp_types import (
    INSTRUCTIONS,
    MAX_RESULTS,
    Content,
    Importance,
    Key,
    Kind,
    Limit,
    MemoryId,
    NewKey,
    Query,
    Tags,
    record,
    rows,
    written,
)

__all__ = ["MAX_RESULTS", "build_server"]

_SOURCE = "agent"  # the source of every write: the model wrote the text, whoever it quotes
_CARRIED = ("kind", "importance", "tags", "access", "protected")  # an update's, from the current version
# the columns of a memory in a listing (get_memory returns every field)
_LISTED = ("id", "key", "content", "kind", "status", "version", "importance", "tags", "created_at")


# ------------------------------------------------------------------------ the tools
class _MemoryTools:
    """The tools of one server, one method each, all acting as ``requester`` in ``namespace``.

    A method's docstring is the tool's description and its parameters the tool's arguments: both are
    written for the model that calls them.
    """

    def __init__(
        self,
        store: MemoryStore,
        namespace: str,
        requester: str | None,
        now: Callable[[], datetime] | None,
    ) -> None:
        """Tools bound to one store, namespace and requester (who the model acts as)."""
        self.store, self.namespace, self.requester = store, namespace, requester
        self._clock = now and clock(now)  # each reading checked and in UTC

    def _scope(self) -> dict[str, Any]:
        """Where, as whom and when a store call acts: the configuration and the clock (None: the
        store reads the wall clock)."""
        now = None if self._clock is None else self._clock()
        return {"namespace": self.namespace, "requester": self.requester, "now": now}

    def _shown(self) -> pl.DataFrame:
        """What the requester may read here, oldest first, quarantined text withheld, as of the clock: a
        pinned clock sees the store as it stood then (``frame(as_of=)``: what was written by then, each in
        its status then), the wall clock as it stands; either way only what is valid then, as a search."""
        now = self._scope()["now"]
        shown = self.store.frame(self.namespace, as_of=now, requester=self.requester, withhold=True)
        return shown.filter(Gate(None, None, valid_at=now or datetime.now(UTC)).expr())

    def _denied(self, key: str) -> AccessDenied:
        """The refusal of a new version of ``key`` (another writer's value, not public), the same from
        add_memory and update_memory, without the id the store's message names (it may not read it)."""
        return AccessDenied(f"{self.requester!r} may not write key {key!r} (another writer's value)")

    def add_memory(
        self, content: Content, key: NewKey = None, importance: Importance = None, kind: Kind = None,
        tags: Tags = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Store a new memory about the user or the task, to recall in later conversations.

        The memory is screened first: personal data (phone numbers, e-mails, id numbers) is replaced
        by placeholders, a secret (API key, password) is refused, and a text that reads like an
        instruction to a model is quarantined for review and never recalled. Returns the memory:
        its id, status (active; conflict: its key already holds another writer's value; quarantined)
        and the guard's finding codes; superseded: dated before the key's current value, it is kept as
        an earlier value and the current one stays (see the note).
        """
        try:
            m = self.store.add(content, key=key, importance=importance, kind=kind, tags=tags, source=_SOURCE,
                               **self._scope())  # fmt: skip
        except AccessDenied as e:  # audited by the store, whose message names the memory
            raise (e if key is None else self._denied(key)) from None
        return written(m)

    def search_memories(self, query: Query, k: Limit = 5) -> dict[str, Any]:
        """Recall the memories most relevant to a query, best first.

        Each hit has its id, content, key and score, and the parts of the score: similarity (of
        meaning), importance, recency and strength (how much it has decayed). Recalled memories are
        reinforced: use keeps a memory alive.
        """
        return {"hits": rows(self.store.search(query, k=k, **self._scope()))}

    def get_memory(self, id: MemoryId) -> dict[str, Any]:
        """One memory by id, with every field: key and version, status, validity, who wrote it, when."""
        scope = self._scope()  # a pinned clock: one written after it did not exist yet, as for show_memories
        if self._clock is not None and check_name("memory_id", id):  # (before get(), which logs a read)
            row = self.store.frame(self.namespace, ids=[id], requester=self.requester)
            if row.height and row["created_at"][0] > scope["now"]:
                raise NotFound.memory(id, self.namespace)  # the store's own words for an unknown id
        return record(self.store.get(id, **scope))

    def update_memory(
        self, key: Key, content: Content, importance: Importance = None, kind: Kind = None, tags: Tags = None
    ) -> dict[str, Any]:
        """Record a new value of a keyed fact (e.g. the user moved): a new version of the key.

        The new version becomes current; the old one is kept as superseded. If the key's current
        value was written after this call's time, the new one is kept as an earlier value instead
        (status superseded, with a note) and the current one stays. Fields not given keep the current
        version's values. Only keys that exist can be updated: add_memory creates one.
        """
        versions = self.store.versions(key, namespace=self.namespace, requester=self.requester)
        if versions.is_empty():  # none it may read: a key it does not have, as for a missing one,
            try:  # unless the store refuses its write (another writer's current value, not public)
                self.store.check_key_write(key, **self._scope())  # audited, as add_memory's refusal
            except AccessDenied:
                raise self._denied(key) from None
            raise NotFound(
                f"no memory with key {key!r} in namespace {self.namespace!r}; add_memory creates it"
            )
        # the current (active) value is what an update continues, not a pending or a rejected
        # conflict: another writer's public value would make a private fact public
        status = pl.col("status")
        current = versions.filter(status == "active").tail(1).to_dicts() or (
            versions.filter(status == "conflict").tail(1).to_dicts())  # fmt: skip
        given = {"importance": importance, "kind": kind, "tags": tags}
        fields = {f: current[0][f] for f in _CARRIED} if current else {}
        fields |= {f: v for f, v in given.items() if v is not None}
        try:
            m = self.store.add(content, key=key, source=_SOURCE, conflict_policy="supersede", **fields,
                               **self._scope())  # fmt: skip
        except AccessDenied:  # audited by the store, whose message names the memory
            raise self._denied(key) from None
        return written(m)

    def delete_memory(self, id: MemoryId) -> dict[str, Any]:
        """Erase one memory for good. Erasing the current value of a keyed fact also erases the key's
        older values you wrote (`also_deleted`): the fact is gone, not rolled back; an old value goes
        alone. Only its writer may."""
        # the agent's forget and the LangGraph store's delete take a key's history too: the user who
        # asks the model to forget a code means the codes before it as well
        shown = self.store.frame(self.namespace, requester=self.requester, ids=[id])
        older: list[str] = []
        if shown.height and shown["status"][0] == "active" and shown["key"][0] is not None:
            versions = self.store.versions(
                shown["key"][0], namespace=self.namespace, requester=self.requester
            )
            older = versions.filter((pl.col("id") != id) & acl.modifiable_expr(self.requester))[
                "id"
            ].to_list()
        with self.store.transaction():  # all of them, or none
            self.store.delete(id, **self._scope())  # NotFound / AccessDenied as for any id
            for other in older:
                try:
                    self.store.delete(other, **self._scope())
                except NotFound:  # taken with an erased merge
                    pass
        return {"id": id, "deleted": True} | ({"also_deleted": older} if older else {})

    def forget(
        self, dry_run: Annotated[bool, Field(description="only list what would be forgotten")] = False
    ) -> dict[str, Any]:
        """Apply the forgetting policy: erase memories that expired or decayed below the floor, and
        the least valuable ones above the capacity. Protected memories and pending conflicts stay.
        Returns each forgotten memory's id and the reason."""
        plan = self.store.forget(dry_run=dry_run, **self._scope())
        return {"dry_run": dry_run, "forgotten": rows(plan.drop("namespace"))}

    def list_conflicts(self) -> dict[str, Any]:
        """The keys whose value is disputed: the current (active) version and the pending ones
        (status conflict), oldest first. Settle one with resolve_conflict."""
        shown = self._shown()
        disputed = shown.filter(pl.col("status") == "conflict")["key"].unique(maintain_order=True)
        live = shown.filter(
            pl.col("key").is_in(disputed.implode()) & pl.col("status").is_in(["active", "conflict"])
        )
        return {
            "conflicts": [
                {"key": key, "versions": rows(group.sort("version").select(_LISTED))}
                for (key,), group in live.group_by("key", maintain_order=True)
            ]
        }

    def resolve_conflict(
        self, key: Key, keep: Annotated[str, Field(description="the id of the version to keep")]
    ) -> dict[str, Any]:
        """Settle a disputed key: the version `keep` becomes current, the others superseded."""
        return record(self.store.resolve(key, keep=keep, **self._scope()))

    def show_memories(self, limit: Limit = 20) -> dict[str, Any]:
        """What is stored here that you may read and that holds now (not expired), newest first, in every
        status (active, superseded, conflict; quarantined text withheld). `total` counts them all."""
        shown = self._shown()
        newest = shown.reverse().head(limit).select(_LISTED)  # frame() is oldest first
        return {"total": shown.height, "memories": rows(newest)}


# which tools only read, which erase (hints a client may use to ask the user before a call)
_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
_ERASE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
_TOOLS = {
    "add_memory": _WRITE, "search_memories": _WRITE,  # a search reinforces what it finds
    "get_memory": _READ, "update_memory": _WRITE, "delete_memory": _ERASE, "forget": _ERASE,
    "list_conflicts": _READ, "resolve_conflict": _WRITE, "show_memories": _READ,
}  # fmt: skip


def build_server(
    store: MemoryStore,
    *,
    namespace: str,
    requester: str | None = None,
    now: Callable[[], datetime] | None = None,
) -> MCPServer:
    """An MCP server whose tools read and write ``namespace`` of ``store`` as ``requester``.

    Parameters
    ----------
    store : MemoryStore
        The store; the server does not close it.
    namespace : str
        The one namespace every tool acts in.
    requester : str, optional
        Who the client acts as, under memkit's access rules and in the audit log (a name the store
        takes: one holding a secret is refused); None (default) is the operator, who may change all.
    now : callable, optional
        A zero-argument function returning each call's time (timezone-aware, checked at start);
        default: the wall clock. A fixed one (tests, replays) dates show_memories too: ``as_of``.

    Returns
    -------
    mcp.server.mcpserver.MCPServer
        Run it with ``.run()`` (stdio), or connect a client in-process (``mcp.Client(server)``).

    >>> import memkit as mk
    >>> server = build_server(mk.MemoryStore(), namespace="user_87", requester="assistant")
    >>> server.name
    'memkit'
    """
    if not isinstance(store, MemoryStore):
        raise ValidationError("store", f"must be a memkit.MemoryStore, got {type(store).__name__}")
    namespace = check_name("namespace", namespace)
    # the tools write there as requester: a secret in either is refused at start, not at each call
    store.check_names(namespace=namespace, requester=requester)
    if now is not None and not callable(now):
        raise ValidationError("now", f"must be a zero-argument callable returning a datetime, got {now!r}")
    if now is not None:
        try:  # called once here: a naive or broken clock is refused at start, not at every call
            first = now()
        except Exception as e:
            raise ValidationError("now", f"calling it raised {type(e).__name__}: {e}"[:200]) from None
        check_time("now", first)
    tools = _MemoryTools(store, namespace, requester, now)
    return QuietServer(
        "memkit",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=[tool(getattr(tools, name), hints, store) for name, hints in _TOOLS.items()],
    )
