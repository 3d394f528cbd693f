"""The recent-turn buffer of :class:`~memkit.agent.MemoryAgent`: what it replays, and when a turn leaves it.

Each buffered turn (``agent.turns``: ``(user, assistant)``) keeps the ids of the memories it recalled,
wrote or listed. It replays nothing the store would not:

- **screened**: its texts went through the store's guard (``store.screen``), and go again when the
  namespace's lessons change (a turn like a memory a reviewer just rejected is withheld);
- **forgetting is final**: a turn leaves the buffer once one of its memories is erased, by any path: the
  agent's own forget or undo, ``store.delete``, ``store.forget`` (a policy, ``maintain``), a merge one of
  whose members was erased (re-derived under its own id without that text), the MCP server's
  ``delete_memory``, a LangGraph ``delete``, another process on a server. Before each prompt (and before a
  turn is added, or :meth:`why` answers) the agent compares ``store.erasures`` (a counter of committed
  erasures, other processes' too) with the one it last checked at; only when it moved does one query ask
  which of the buffered ids still exist (``store.frame(ids=...)``, as the agent's requester: a memory it may
  no longer read counts as gone). ``agent.last`` (what :meth:`why` shows) is dropped the same way. A
  superseded or merged memory still exists: its turn stays.

A turn that recalled and wrote nothing (filler such as "OK, thanks!", a message the admission rule did
not keep) is tied to no memory, so no erasure takes it: it leaves with the window (``window``
exchanges) or at :meth:`~memkit.agent.MemoryAgent.end_session`, as any conversation does.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import polars as pl

__all__ = ["RecentTurns"]

_HELD = {
    "refuse": "[withheld: the guard refused this text]",
    "quarantine": "[withheld: quarantined by the guard]",
}  # what stands for a text the guard keeps out of a prompt


class RecentTurns:
    """The buffer's bookkeeping, mixed into :class:`~memkit.agent.MemoryAgent` (module docstring)."""

    store: Any
    namespace: str
    requester: str
    turns: deque[tuple[str, str]]  # (user, assistant), screened
    _turn_ids: deque[frozenset[str]]  # the memories each turn recalled, wrote or listed
    _lessons_seen: tuple[str, ...]  # the lessons the buffered turns were screened with
    _erasures_seen: int | None  # store.erasures when the buffer was last checked
    last: Any  # the agent's last Reply, or None (memkit.agent.loop imports this module: not typed here)
    _last_ids: frozenset[str]  # the memories `last` recalled, wrote or listed

    def _remember_turn(self, message: str, reply: Any, ids: set[str]) -> None:
        """Buffer a turn with the ids it recalled, wrote or listed (to forget it with them). Its texts
        go through the store's guard (``store.screen``: the rules and the lessons), so the buffer
        replays nothing the store would not: PII redacted, refused or quarantined text withheld."""
        self._refresh_turns()  # the lessons they are screened with are the ones in the store now
        user, said = self._screened([message, reply.text])
        self.turns.append((user, said))
        self._turn_ids.append(frozenset(ids))
        self.last, self._last_ids = reply, frozenset(ids)

    def _screened(self, texts: list[str]) -> list[str]:
        """``texts`` as the guard lets them into a prompt: redacted, or withheld."""
        s = self.store.screen(texts, namespace=self.namespace)
        return [_HELD.get(a, t) for t, a in zip(s["text"], s["action"], strict=True)]

    def _refresh_turns(self) -> None:
        """The buffer as the store is now: without the turns of erased memories, screened with its lessons."""
        self._drop_erased()
        self._rescreen_turns()

    def _drop_erased(self) -> None:
        """Drop the turns (and ``last``) whose memories were erased by any path since the last check:
        nothing when ``store.erasures`` has not moved, else one query for the buffered ids."""
        erasures = self.store.erasures
        if erasures == self._erasures_seen:
            return
        held = frozenset().union(self._last_ids, *self._turn_ids)
        if held:  # (read as the agent's requester: what it may no longer read is gone for it too)
            there = self.store.frame(self.namespace, requester=self.requester, ids=sorted(held))
            gone = set(held - set(there["id"].to_list()))
            # a merge whose member was erased is re-derived under its own id, without the member's text:
            # the turn that quoted it goes too (merged_from still names the members it was made of)
            merges = there.filter(pl.col("merged_from").list.len() > 0).select("id", "merged_from")
            members = set(merges["merged_from"].explode().to_list())
            if members:
                alive = self.store.frame(self.namespace, requester=self.requester, ids=sorted(members))["id"]
                lost = members - set(alive.to_list())
                gone |= {m for m, of in merges.iter_rows() if lost.intersection(of)}
            self._forget_turns(gone)
        self._erasures_seen = erasures  # (read before the lookup: an erasure during it is seen next time)

    def _rescreen_turns(self) -> None:
        """A lesson learned (or unlearned) since the buffered turns were screened may quarantine one
        of them: screen them again, so a turn like a memory a reviewer just rejected is withheld."""
        seen = tuple(self.store.lessons(self.namespace)["id"])
        if seen == self._lessons_seen:
            return
        self._lessons_seen = seen
        if self.turns:
            texts = self._screened([text for turn in self.turns for text in turn])
            for i in range(len(self.turns)):
                self.turns[i] = (texts[2 * i], texts[2 * i + 1])

    def _forget_turns(self, erased: set[str]) -> None:
        """Drop the buffered turns, and ``last``, that recalled, wrote or listed an erased memory."""
        if not erased:
            return
        keep = [(turn, ids) for turn, ids in zip(self.turns, self._turn_ids, strict=True) if not ids & erased]
        self.turns.clear()
        self._turn_ids.clear()
        for turn, ids in keep:
            self.turns.append(turn)
            self._turn_ids.append(ids)
        if self._last_ids & erased:  # why() would show the erased text
            self.last, self._last_ids = None, frozenset()
