"""LangGraph's items and memkit's names: the encoding of namespaces and keys, the items a
:class:`~memkit.integrations.langgraph.MemkitStore` returns, the text of a value, and LangGraph's
filter and namespace-match semantics. Pure functions; the store is in :mod:`.langgraph`.

- names: :func:`encode_label` / :func:`decode_label` and the namespace forms, a lossless round trip
  between LangGraph's tuples of free-form labels and memkit's dotted names (defined in
  :mod:`memkit.guard.labels`, since the guard reads a name as it decodes; re-exported here);
- items: :class:`MemkitItem` (a ``get``) and :class:`MemkitSearchItem` (a hit), LangGraph's own
  classes plus what memkit decided (the memory id, its status, the score's parts);
- values: :func:`value_text` (what is embedded and screened) and :func:`item_value` (what is read);
- filters: :func:`matches_filter` (:func:`matches` after :func:`field`), :func:`check_filter` and
  :func:`matches_namespace`.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

try:
    from langgraph.store.base import Item, MatchCondition, SearchItem, get_text_at_path, tokenize_path
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("memkit.integrations.langgraph needs LangGraph: pip install 'memkit[langgraph]'") from e

from ..errors import ValidationError
from ..guard.labels import decode_label, decode_namespace, encode_label, encode_namespace
from ..text import is_blank

NOINDEX = "langgraph:noindex"
"""The tag memkit gives an item put with ``index=False``: stored and listed, never ranked by a query."""

__all__ = [
    "NOINDEX",
    "MemkitItem",
    "MemkitSearchItem",
    "decode_label",
    "decode_namespace",
    "encode_label",
    "encode_namespace",
]


# ----------------------------------------------------------------------------- items
class MemkitItem(Item):
    """A LangGraph :class:`~langgraph.store.base.Item` that also says what memkit decided:
    ``memory_id``, ``status`` (``active``, or ``quarantined`` / ``conflict`` when nothing is current
    yet) and ``pending`` (the status of a newer version not in effect, else None)."""

    # LangGraph's Item declares __slots__; so do its memkit subclasses, for their extra fields
    __slots__ = ("memory_id", "pending", "status")

    def __init__(self, *, memory_id: str, status: str = "active", pending: str | None = None, **item: Any):
        """A LangGraph Item plus memkit's ``memory_id``, the version's ``status`` and ``pending``."""
        super().__init__(**item)
        self.memory_id, self.status, self.pending = memory_id, status, pending

    def dict(self) -> dict:
        """LangGraph's dict of the item, with memkit's extra fields added."""
        return {**super().dict(), "memory_id": self.memory_id, "status": self.status, "pending": self.pending}


class MemkitSearchItem(SearchItem):
    """A search hit: ``score`` is memkit's hybrid score, ``breakdown`` its components
    (``similarity, importance, strength, recency`` and ``keyword`` when weighted)."""

    __slots__ = ("breakdown", "memory_id")

    def __init__(self, *, memory_id: str, breakdown: dict[str, float] | None = None, **item: Any) -> None:
        """A LangGraph SearchItem plus memkit's ``memory_id`` and the score's ``breakdown``."""
        super().__init__(**item)
        self.memory_id, self.breakdown = memory_id, breakdown or {}

    def dict(self) -> dict:
        """LangGraph's dict of the hit, with memkit's extra fields added."""
        return {**super().dict(), "memory_id": self.memory_id, "breakdown": self.breakdown}


def _leaves(value: Any) -> list[str]:
    """Every string and number in a JSON value, in order (the text of ``"$"``). Unlike
    ``get_text_at_path``'s ``"$"`` (the JSON dump), field names, booleans and JSON punctuation are
    not part of the memory text."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool) or value is None:  # subtle: before int, as bool is an int subclass
        return []
    if isinstance(value, (int, float)):
        return [str(value)]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _leaves(v)]
    return []


def value_text(value: Mapping[str, Any], paths: Sequence[str]) -> str:
    """The memory text of a value: the strings at ``paths``, one per line (the JSON when none).

    Paths use LangGraph's syntax (``"text"``, ``"meta.lang"``, ``"tags[*]"``); blank strings (spaces
    and invisible characters only) are skipped. A value with no text at all is stored as its JSON, so
    a memory's text is never empty.

    >>> value_text({"text": "I like tea", "meta": {"lang": "en"}, "ok": True}, ["$"]).splitlines()
    ['I like tea', 'en']
    """
    texts: list[str] = []
    for path in paths:
        texts += _leaves(value) if path == "$" else get_text_at_path(value, tokenize_path(path))
    text = "\n".join(t for t in texts if not is_blank(t))  # (spaces, invisible characters)
    return text or json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def item_value(value: Any, content: str, *, parsed: bool = False) -> dict[str, Any]:
    """The LangGraph value of a memory: its dict value, or ``{"content": text[, "value": v]}``.

    ``value`` is JSON text (a frame's column), or with ``parsed=True`` already parsed (a
    :class:`~memkit.Memory`'s ``value``, which may itself be a plain string: ``"Berlin"``). A value
    that is not a dict (a memory written without LangGraph) reads as the memory's text, plus that
    value when there is one.

    >>> item_value('{"city": "Berlin"}', "my city"), item_value(None, "I like tea")
    ({'city': 'Berlin'}, {'content': 'I like tea'})
    >>> item_value("Berlin", "my city", parsed=True)
    {'content': 'my city', 'value': 'Berlin'}
    """
    if isinstance(value, str) and not parsed:
        value = json.loads(value)
    if isinstance(value, dict):
        return value
    return {"content": content} if value is None else {"content": content, "value": value}


# LangGraph's comparison operators; an order comparison of mixed types ("a" > 1) raises TypeError,
# which matches() reads as "no match"
_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def matches(value: Any, condition: Any) -> bool:
    """LangGraph's filter semantics (as its JSONB stores): exact match, nested dicts, operators.
    A comparison with a missing value or an incomparable type is False, never an error.

    A dict whose keys start with ``$`` is a set of operators that must all hold; any other dict
    descends field by field. Subtle: a missing field reads as None, so ``{"f": None}`` also
    matches values without ``f``.

    >>> matches({"a": 1, "b": {"c": "x"}}, {"a": {"$gt": 0, "$lt": 2}, "b": {"c": "x"}})
    True
    >>> matches({"a": "x"}, {"a": {"$gt": 1}})
    False
    """
    if isinstance(condition, Mapping):
        if any(str(k).startswith("$") for k in condition):
            for op, operand in condition.items():  # the operators were checked by check_filter
                try:
                    if not _OPERATORS[op](value, operand):
                        return False
                except TypeError:
                    return False
            return True
        return isinstance(value, Mapping) and all(matches(value.get(k), c) for k, c in condition.items())
    if isinstance(condition, (list, tuple)):  # element by element: a tuple operand matches a JSON list
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(condition)
            and all(matches(v, c) for v, c in zip(value, condition, strict=True))
        )
    return value == condition


def field(value: Any, key: str) -> Any:
    """The value a top-level filter key names: the field of that name, else, for a dotted key, the
    nested path (``"user.level"`` is ``value["user"]["level"]``); None when missing.

    A literal key wins, as LangGraph 1.2's stores read every key; newer LangGraph reads a dotted key
    as a path, which is the answer here whenever no field has the dotted name itself.

    >>> both = {"user.level": 1, "user": {"level": 3}}
    >>> field({"user": {"level": 3}}, "user.level"), field(both, "user.level")
    (3, 1)
    """
    if not isinstance(value, Mapping):
        return None
    if key in value or "." not in key:
        return value.get(key)
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def matches_filter(value: Any, flt: Mapping[str, Any]) -> bool:
    """A search's ``filter`` against an item's value: every top-level key (:func:`field`, dotted paths
    included) :func:`matches` its condition.

    >>> value = {"user": {"level": 3}, "tags": ["a", "b"]}
    >>> matches_filter(value, {"user.level": {"$gte": 2}, "tags": ("a", "b")})
    True
    """
    if any(str(k).startswith("$") for k in flt):  # operators on the whole value
        return matches(value, flt)
    return all(matches(field(value, str(k)), c) for k, c in flt.items())


def _finite(v: Any) -> bool:
    """A finite number (NaN matches nothing and orders against nothing; infinity is not JSON)."""
    return isinstance(v, (numbers.Real, np.bool_)) and math.isfinite(v)


def check_filter(flt: Any, top: bool = True) -> None:
    """A filter is a dict; a dict with ``$`` keys holds only the known operators.

    Checked once, before a batch runs, so :func:`matches` can look operators up without a guard;
    nested dicts are checked too. Raises :class:`~memkit.errors.ValidationError` naming ``filter``.
    """
    if top and flt is not None and not isinstance(flt, Mapping):
        raise ValidationError("filter", f"must be a dict, got {type(flt).__name__}")
    if isinstance(flt, Mapping):
        for k, v in flt.items():
            if isinstance(k, str) and k.startswith("$") and k not in _OPERATORS:
                raise ValidationError("filter", f"unsupported operator {k!r} (use one of {list(_OPERATORS)})")
            check_filter(v, top=False)
    elif isinstance(flt, (list, tuple)):
        for v in flt:
            check_filter(v, top=False)
    elif not top and not (flt is None or isinstance(flt, str) or _finite(flt)):
        # a value can only equal, or be ordered against, what a JSON value holds
        raise ValidationError("filter", f"operands must be JSON values, got {type(flt).__name__} {flt!r:.40}")


def matches_namespace(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Does a LangGraph namespace tuple satisfy a ``MatchCondition``? ``prefix``/``suffix`` compare
    label by label, and ``"*"`` in the condition's path matches any one label.

    ``prefix`` compares the namespace's first labels, ``suffix`` its last; a namespace shorter than
    the path never matches.

    >>> matches_namespace(MatchCondition("prefix", ("memories", "*")), ("memories", "alice", "notes"))
    True
    """
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        part = namespace[: len(path)]
    elif condition.match_type == "suffix":
        part = namespace[len(namespace) - len(path) :]
    else:  # checked by MemkitStore._check
        return False
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))
