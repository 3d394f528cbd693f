"""LangGraph's operations as :class:`~memkit.integrations.langgraph.MemkitStore` takes them: every op of a
batch checked before the first put runs, a ``ttl`` as a validity window, and the text a put indexes.

Pure functions (no store, no clock of their own), so a batch that holds one bad op is refused whole:

- :func:`check_op` — one ``GetOp`` / ``PutOp`` / ``SearchOp`` / ``ListNamespacesOp`` -> raises
  :class:`~memkit.errors.ValidationError` naming the field, or LangGraph's ``InvalidNamespaceError``;
- :func:`check_path` — a value path in LangGraph's syntax (``"$"``, ``"a.b"``, ``"tags[*]"``,
  ``"items[0].text"``, ``"*"``, a last ``"{a,b.c}"``), else a ValidationError naming the argument;
- :func:`until` — the end of a ``ttl`` (minutes) from ``now``;
- :func:`put_text` — the memory text of a put: the text at the paths it indexes, limited as every
  memkit text is (:data:`~memkit.schema.MAX_CONTENT_CHARS`); with ``index=False`` the value's text cut
  to that limit, since nothing of it is searched by a query.

What LangGraph's own stores refuse, and what memkit adds (LangGraph 1.2): the public ``put`` /
``aput`` refuse an empty namespace and the root label ``"langgraph"`` (LangGraph's ``BaseStore``
does, before the batch); ``batch`` takes the reserved root, as LangGraph's ``InMemoryStore`` does
and LangGraph's own store tests check (the root is reserved *for* LangGraph's writes, which go
through ``batch``). Every op's labels are checked as LangGraph's ``validate_op_namespace`` checks
them (no ``.``, no NUL, none empty). memkit refuses one thing more in ``batch``: a put to the empty
namespace ``()``, which no memkit namespace can hold.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    PutOp,
    SearchOp,
    tokenize_path,
    validate_op_namespace,
)

from ..errors import ValidationError
from ..schema import MAX_CONTENT_CHARS, check_text
from ..text import is_blank
from .langgraph_items import check_filter, value_text

__all__ = ["TTL_MAX", "check_op", "check_path", "put_text", "until"]

TTL_MAX = 10**9  # minutes: ~1,900 years, so now + ttl stays a date


def until(now: datetime, ttl: float) -> datetime:
    """The end of a ``ttl`` (minutes) from ``now`` (UTC: a wall-clock sum in a named zone would be
    an hour off across a daylight-saving change) -> raises ValidationError past the calendar's end."""
    try:
        return now + timedelta(minutes=float(ttl))
    except OverflowError:
        raise ValidationError("ttl", f"{ttl} minutes from {now.isoformat()} is past year 9999") from None


def _field(token: str) -> bool:
    """A dict key as LangGraph reads one: not empty, no bracket or brace (a malformed index or
    selection), no space at either end, not all digits (``items.0.text`` is a list index mistaken)."""
    return bool(token) and token == token.strip() and not token.isdigit() and not _MARKS.search(token)


_MARKS = re.compile(r"[\[\]{}]")


def _token(token: str, last: bool) -> bool:
    """One token of ``tokenize_path`` that LangGraph reads as written."""
    if token.startswith("["):  # [*] or an integer, as get_text_at_path reads it
        inner = token[1:-1].strip() if token.endswith("]") else None
        return inner == "*" or (inner is not None and re.fullmatch(r"[+-]?[0-9]+", inner) is not None)
    if token.startswith("{"):  # a selection: last (LangGraph reads nothing after it), of plain fields
        fields = [f.strip() for f in token[1:-1].split(",")] if token.endswith("}") else []
        return (
            last
            and bool(fields)
            and all(
                (parts := tokenize_path(f)) and all(p != "*" and _field(p) for p in parts) for f in fields
            )
        )
    return token == "*" or _field(token)


def check_path(name: str, path: Any) -> None:
    """A value path LangGraph reads as written, by its own ``langgraph.store.base.tokenize_path``
    (dotted fields, ``*``, list indexes ``[0]`` ``[-1]`` ``[*]``, a multi-field selection ``{a,b.c}``
    last), or ``"$"`` (the whole value) -> raises ValidationError naming ``name``. What LangGraph
    misreads (``"a["``, ``"a[x]"``, ``"items.0.text"``, ``" a"``, ``"a.{b}.c"``) would find no text,
    silently; what it reads alike is taken (``"a..b"`` is ``"a.b"``, ``"items[0]text"``).

    >>> check_path("index", "items[*].text"), check_path("index", "meta.{lang,source.url}")
    (None, None)
    >>> check_path("index", "a[x]")
    Traceback (most recent call last):
    ...
    memkit.errors.ValidationError: index: 'a[x]' is not a value path: ...
    """
    ok = isinstance(path, str) and bool(path)
    if ok and path != "$":
        tokens = tokenize_path(path)
        ok = bool(tokens) and all(_token(t, i == len(tokens) - 1) for i, t in enumerate(tokens))
    if not ok:
        raise ValidationError(
            name, f"{path!r} is not a value path: use LangGraph's syntax, such as '$' (the whole value),"
            " 'text', 'meta.lang', 'tags[*]', 'items[0].text' or 'meta.{lang,source}'",
        )  # fmt: skip


def _paths(index: Any, fields: Sequence[str]) -> Sequence[str]:
    """The value paths a put indexes: its ``index`` list, else the store's ``fields`` (``index=False``
    too: the text the memory keeps, though no query ranks it) -> raises ValidationError naming ``index``."""
    if index is None or index is False:
        return fields
    if isinstance(index, list) and all(isinstance(p, str) for p in index):
        for p in index:
            check_path("index", p)
        return index
    raise ValidationError("index", f"must be None, False or a list of paths, got {index!r}")


def put_text(value: Mapping[str, Any], index: Any, fields: Sequence[str]) -> str:
    """The memory text of a put (embedded, matched by keywords, screened with the value's strings).

    Indexed (``index=None`` or a list of paths): the text at those paths, at most
    :data:`~memkit.schema.MAX_CONTENT_CHARS` characters, else a ValidationError naming ``value`` and the
    paths (index fewer, or put it with ``index=False``). ``index=False``: nothing is ranked, so the
    text is only what memkit's own views show: the value's text cut to the limit, at the last line
    break or space before it (the whole value is stored, and screened, as it is).

    >>> put_text({"title": "Report", "body": "word " * 30_000}, ["title"], ["$"])
    'Report'
    >>> len(put_text({"body": "word " * 30_000}, False, ["$"]))
    99999
    """
    paths = _paths(index, fields)
    text = value_text(value, paths)
    if len(text) <= MAX_CONTENT_CHARS:
        return text
    if index is not False:
        raise ValidationError(
            "value", f"the text at the paths it indexes ({list(paths)}) is {len(text)} characters; the limit"
            f" is {MAX_CONTENT_CHARS}: index fewer fields (index=[paths]) or put it with index=False",
        )  # fmt: skip
    cut = text[:MAX_CONTENT_CHARS]
    # subtle: cut between words, so no token (a number, a name) is stored half
    at = max(cut.rfind("\n"), cut.rfind(" "))
    return cut[:at].rstrip() if at > 0 and cut[:at].strip() else cut


def check_op(op: Any, fields: Sequence[str]) -> None:
    """Validate one operation before anything in the batch runs -> raises ValidationError naming the
    field, or LangGraph's InvalidNamespaceError for a namespace LangGraph's stores refuse too.

    A put's value, index and the length of the text it indexes (``fields``: the store's, for a put
    that names no paths) are checked here, so a long value fails before the batch's first write.
    """
    if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
        raise ValidationError("op", f"unknown operation {type(op).__name__}")
    validate_op_namespace(op)
    if isinstance(op, PutOp) and not op.namespace:  # memkit has no empty namespace (module docstring)
        raise InvalidNamespaceError("Namespace cannot be empty.")
    if isinstance(op, PutOp) and op.ttl is not None:  # a window the calendar can hold (~1,900 years)
        t = op.ttl
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not 0 < t <= TTL_MAX:
            raise ValidationError("ttl", f"must be minutes in (0, {TTL_MAX}] or None, got {t!r}")
    if isinstance(op, (GetOp, PutOp)) and not (isinstance(op.key, str) and op.key):
        raise ValidationError("key", f"must be a non-empty str, got {op.key!r}")
    if isinstance(op, PutOp) and op.value is not None:
        if not isinstance(op.value, Mapping):
            raise ValidationError(
                "value", f"must be a dict (or None to delete), got {type(op.value).__name__}"
            )
        put_text(op.value, op.index, fields)
    if isinstance(op, (SearchOp, ListNamespacesOp)):
        for name in ("limit", "offset"):
            v = getattr(op, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
                raise ValidationError(name, f"must be an int >= 0, got {v!r}")
    if isinstance(op, SearchOp):
        check_filter(op.filter)
        # a blank query lists, unranked, as LangGraph's stores list for query="" (never an error);
        # any other is checked as the store's search checks it (a str, no NUL or lone surrogate, length)
        if op.query is not None and not (isinstance(op.query, str) and is_blank(op.query)):
            check_text("query", op.query)
    if isinstance(op, ListNamespacesOp):
        d = op.max_depth
        if d is not None and (isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1):
            raise ValidationError("max_depth", f"must be an int >= 1 or None, got {d!r}")
        for c in op.match_conditions or ():
            if c.match_type not in ("prefix", "suffix"):
                raise ValidationError("match_type", f"must be 'prefix' or 'suffix', got {c.match_type!r}")
