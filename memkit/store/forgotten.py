"""What an erasure takes out besides the rows: the traces of the erased texts in the audit log and in
the lessons (called inside the erasure's transaction by :meth:`MaintainMixin._erase
<memkit.store.maintain.MaintainMixin._erase>`, on both backends).

- **Keys.** The erased memories' keys leave their own events (``detail.key`` becomes null).
- **Context events** that list an erased id lose its key and every caller string its key or text
  holds, or that holds them (:func:`~memkit.store.audit.without_erased`).
- **Digests.** The log keeps free text as a digest (:func:`~memkit.store.audit.digest`: a search's
  query, a caller's string in ``log_context``, an imported history's). A digest is unsalted, so
  whoever holds the log can digest a guess and compare: a search for "I am allergic to peanuts"
  would confirm that text after the memory saying it was erased. So every digest, anywhere in an
  event of the erased memory's namespace (or of none: another tenant's search for the same words is
  that tenant's record and confirms nothing of this memory), equal to the digest of an erased text
  or key (each version the erasure removes, and a merge's text as it was before the erasure
  re-derived it) is taken out: ``null`` where it was a
  value, ``"[erased]"`` where it was an object key. The match is exact, as digests are (case and
  NFKC width folded): a query that held more than the text ("I am allergic to peanuts, what can
  I eat?"), or the text before the guard redacted it, digests otherwise and stays. The events are
  found in SQL (every digest of the log extracted and joined with the erased ones), not read one by
  one in Python.
- **Lessons.** A lesson keeps its vector (later writes and ``search(guard=True)`` still recognise
  repeats) but not the text: the lessons of an erased memory (and of a merge the erasure re-derived)
  lose their text and their reason (``[erased]``: the reviewer's words about it), and any other
  lesson of the namespace whose reason quotes an erased text or key whole (:func:`quotes_whole`:
  3 characters or more, normalized: :func:`memkit.text.normalize`; not inside a word) loses its reason. A
  lesson is erased when both its text and its reason are ``[erased]`` (:func:`erased_lessons`; no
  reviewer may give that reason): ``reembed`` cannot recompute its vector (:mod:`memkit.store.reembed`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..text import CJK, normalize
from .audit import digest, without_erased
from .core import StoreCore
from .names import log_names

__all__ = ["ERASED", "ForgottenMixin", "erased_lessons", "quotes_whole", "without_digests"]

ERASED = "[erased]"
"""What stands where an erased text was: a lesson's text and reason, an object key that was its digest."""
_QUOTE_MIN = 3  # characters: a shorter text or key ("ok", "名字") would take any reason that uses it
# a character of a word of a script written with spaces (a letter, a digit, "_", a combining accent):
# a quote that starts or ends with one must not continue a word there ("age" is not in "page"); a
# CJK character needs no such edge (Chinese has no spaces: 用户住在杭州 is quoted in 他说用户住在杭州)
_WORD_CHAR = f"(?:[^\\W{CJK}]|[\u0300-\u036f])"
_STARTS_WORD = re.compile(f"^{_WORD_CHAR}")
_ENDS_WORD = re.compile(f"{_WORD_CHAR}$")

# context events whose detail mentions one of the ids the pattern ? names (then checked in Python)
_CONTEXTS = (
    "SELECT seq, d FROM (SELECT seq, CAST(detail AS VARCHAR) AS d FROM events WHERE op = 'context') e"
    " WHERE regexp_matches(d, ?)"
)
# the events whose detail holds one of the digests ?: each event's digests extracted, joined with them
# (a hash join: no pattern of thousands of digests run over every event); PostgreSQL has no
# regexp_extract_all, its regexp_matches(..., 'g') returns one row per match
_EXTRACT = {
    False: "unnest(regexp_extract_all(CAST(detail AS VARCHAR), 'b2:[0-9a-f]{16}'))",
    True: "(regexp_matches(CAST(detail AS VARCHAR), 'b2:[0-9a-f]{16}', 'g'))[1]",
}
_DIGESTED = (  # -> seq, detail, the erased digest it holds (a row per digest)
    "SELECT e.seq, e.d, e.g FROM (SELECT seq, CAST(detail AS VARCHAR) AS d, {extract} AS g FROM events"
    " WHERE (namespace IS NULL OR namespace IN (SELECT unnest(?::VARCHAR[])))"
    " AND CAST(detail AS VARCHAR) LIKE '%b2:%') e JOIN (SELECT unnest(?::VARCHAR[]) AS g) d ON e.g = d.g"
)
# the same for a few digests (a delete: its text and key): each event's text searched for each one,
# ~8x faster than extracting every digest of the log (400k events: 0.05 s against 0.4 s); past ~16
# digests (a forget) the join wins
_DIGESTED_FEW = (
    "SELECT e.seq, e.d, g.g FROM (SELECT seq, CAST(detail AS VARCHAR) AS d FROM events"
    " WHERE namespace IS NULL OR namespace IN (SELECT unnest(?::VARCHAR[]))) e,"
    " (SELECT unnest(?::VARCHAR[]) AS g) g WHERE position(g.g IN e.d) > 0"
)
_FEW = 16
_SET_DETAIL = (
    "UPDATE events SET detail = u.d FROM"
    " (SELECT unnest(?::BIGINT[]) AS s, unnest(?::JSON[]) AS d) u WHERE events.seq = u.s"
)
_ERASE_LESSONS = (  # the lessons of the ids ?: text and reason become ? (ERASED), the vector stays
    "UPDATE lessons SET content = ?, reason = ? WHERE memory_id IN (SELECT unnest(?::VARCHAR[]))"
)


def _ids(detail: Any) -> set[str]:
    """The ids a context event's detail names: its ``ids`` and every ``id`` field (``dropped``).

    >>> sorted(_ids({"ids": ["a1", "b2"], "dropped": [{"id": "c3", "reason": "over budget"}], "k": "x"}))
    ['a1', 'b2', 'c3']
    """
    if isinstance(detail, list):
        return {i for v in detail for i in _ids(v)}
    if not isinstance(detail, dict):
        return set()
    ids = detail.get("ids")
    found = {i for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()
    if isinstance(detail.get("id"), str):
        found.add(detail["id"])
    return found.union(*(_ids(v) for k, v in detail.items() if k != "ids"))


def quotes_whole(quote: str) -> re.Pattern[str] | None:
    """A pattern that finds ``quote`` (an erased text or key, normalized: :func:`~memkit.text.normalize`)
    whole in a normalized text: not inside a word where the quote starts or ends with a letter or digit of a
    script written with spaces; anywhere where it starts or ends with a CJK character or punctuation.
    None for a quote shorter than 3 characters, which quotes nothing (a key ``id`` is a word of
    any reason).

    >>> [bool(quotes_whole("age").search(t)) for t in ("a web page message", "the age: 30", "user_age")]
    [False, True, False]
    >>> bool(quotes_whole("用户住在杭州").search("他说用户住在杭州是假的")), quotes_whole("名字")
    (True, None)
    """
    if len(quote) < _QUOTE_MIN:
        return None
    head = f"(?<!{_WORD_CHAR})" if _STARTS_WORD.search(quote) else ""
    tail = f"(?!{_WORD_CHAR})" if _ENDS_WORD.search(quote) else ""
    return re.compile(head + re.escape(quote) + tail)


def erased_lessons(content: Sequence[str], reason: Sequence[str]) -> list[bool]:
    """Which lessons an erasure emptied: both their text and their reason are ``[erased]`` (the text
    alone may be a memory's own, ``[erased]``; the reason alone, a reason that quoted an erased text).

    >>> erased_lessons(["[erased]", "[erased]", "wire the money"], ["[erased]", "a test", "[erased]"])
    [True, False, False]
    """
    return [c == ERASED and r == ERASED for c, r in zip(content, reason, strict=True)]


def without_digests(detail: Any, gone: set[str]) -> Any:
    """``detail`` without the digests in ``gone``: a value becomes None, an object key ``[erased]``
    (``[erased 2]``... when one object has several).

    >>> gone = {digest("I am allergic to peanuts")}
    >>> without_digests({"query": digest("i am ALLERGIC to peanuts"), "k": 5, "ids": ["a1"]}, gone)
    {'query': None, 'k': 5, 'ids': ['a1']}
    >>> without_digests({digest("I am allergic to peanuts"): [digest("tea")]}, gone)
    {'[erased]': ['b2:ba6587c1bb84c490']}
    """
    if isinstance(detail, str):
        return None if detail in gone else detail
    if isinstance(detail, (list, tuple)):
        return [without_digests(v, gone) for v in detail]
    if not isinstance(detail, dict):
        return detail
    out: dict[str, Any] = {}
    for k, v in detail.items():
        name, n = k, 1
        while name in gone or (name != k and name in out):  # (never over another key)
            name, n = ERASED if n == 1 else f"[erased {n}]", n + 1
        out[name] = without_digests(v, gone)
    return out


class ForgottenMixin(StoreCore):
    """The log's and the lessons' part of an erasure (see the module docstring)."""

    def _forget_in_log(
        self, erased: list[str], said: dict[str, tuple[str | None, str]], spaces: Iterable[str]
    ) -> None:
        """Inside an erasure: the erased memories' keys leave their events (add, read, delete...;
        selected by memory id, which both backends index), the ``context`` events that name one lose
        its key and what the caller wrote of it, and every event loses the digests of what an erased
        memory said (``said``: id -> key, text; the merges re-derived included, as they were) in an
        event of its namespace (``spaces``; or of none): another tenant's search for the same words
        confirms nothing of this memory, and is that tenant's record."""
        rows = self._run(
            "SELECT seq, detail FROM events WHERE memory_id IN (SELECT unnest(?::VARCHAR[]))"
            " AND detail->>'key' IS NOT NULL",
            [erased],
        )
        changed: dict[int, Any] = {}  # seq -> its new detail
        for seq, text in rows:  # the events of the erased memories
            detail = json.loads(text)
            detail["key"] = None
            changed[seq] = detail
        listing: dict[int, str] = {}  # the context events that mention an erased id
        for start in range(0, len(erased), 1000):  # (a forget may erase thousands: patterns stay small)
            pattern = "|".join(re.escape(i) for i in erased[start : start + 1000])
            listing.update(self._run(_CONTEXTS, [pattern]))
        gone = set(erased)
        gone_digests = {digest(t) for key_text in said.values() for t in key_text if t}
        for seq, text in listing.items():
            detail = changed.get(seq, json.loads(text))
            ids = _ids(detail)
            named = [said[i] for i in gone & ids if i in said]  # (a mention may be another string)
            if named and (clean := without_erased(detail, named, ids)) != detail:
                detail = changed[seq] = clean
            # an event that names the memory loses its digests in any namespace (the filter below
            # spares only other tenants' own records)
            if named and (clean := without_digests(detail, gone_digests)) != detail:
                changed[seq] = clean
        texts = {seq: json.dumps(d, ensure_ascii=False) for seq, d in changed.items()}
        texts.update(self._without_digests(gone_digests, changed, spaces))
        if texts:
            self._run(_SET_DETAIL, [list(texts), list(texts.values())])

    def _without_digests(
        self, digests: set[str], changed: dict[int, Any], spaces: Iterable[str]
    ) -> dict[int, str]:
        """The events that hold one of ``digests`` (a detail in ``changed`` is that event's, changed
        already) -> seq: their detail without them, as JSON text (:func:`without_digests`). A digest
        is replaced only where it is a whole JSON value or object key (:func:`without_digests`)."""
        found: dict[int, tuple[str, set[str]]] = {}  # seq -> detail, its erased digests
        if digests:
            query = (
                _DIGESTED_FEW
                if len(digests) <= _FEW
                else _DIGESTED.format(extract=_EXTRACT[self._pg is not None])
            )
            # the erased memories' namespaces, as they are and as the log names them (names.log_names)
            names = sorted({n for ns in spaces for n in log_names(ns)})
            for seq, text, g in self._run(query, [names, sorted(digests)]):
                found.setdefault(seq, (text, set()))[1].add(g)
        # (parsed, never edited as text: a digest can also end another string, '"x \\"b2:…"')
        return {
            seq: json.dumps(without_digests(changed.get(seq, json.loads(text)), held), ensure_ascii=False)
            for seq, (text, held) in found.items()
        }

    def _forget_in_lessons(
        self, changed: list[str], spaces: Iterable[str], said: dict[str, tuple[str | None, str]]
    ) -> None:
        """Inside an erasure: the lessons of ``changed`` (erased, or a merge re-derived) keep only
        their vector; another lesson of ``spaces`` (the erased memories' namespaces) whose reason
        quotes an erased text or key whole (:func:`quotes_whole`) loses its reason (under either of a
        namespace's names: :func:`~memkit.store.names.log_names`)."""
        self._run(_ERASE_LESSONS, [ERASED, ERASED, changed])
        rows = self._run(
            "SELECT id, reason FROM lessons WHERE namespace IN (SELECT unnest(?::VARCHAR[])) AND reason <> ?"
            f" ORDER BY {self._lesson_order}",
            [sorted({n for ns in spaces for n in log_names(ns)}), ERASED],
        )  # (lessons are few: a reviewer's)
        texts = {t for key_text in said.values() for t in key_text if t} if rows else ()
        quoted = [q for q in map(quotes_whole, map(normalize, texts)) if q is not None]
        hit = [i for i, reason in rows if (f := normalize(reason)) and any(q.search(f) for q in quoted)]
        if hit:
            self._run(
                "UPDATE lessons SET reason = ? WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ERASED, hit]
            )
