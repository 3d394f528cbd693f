"""LangGraph's items and memkit's names: the encoding of namespaces and keys, the items a
:class:`~memkit.integrations.langgraph.MemkitStore` returns, the text of a value, and LangGraph's
filter and namespace-match semantics. Pure functions; the store is in :mod:`.langgraph`."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

try:
    from langgraph.store.base import Item, MatchCondition, SearchItem, get_text_at_path, tokenize_path
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("memkit.integrations.langgraph needs LangGraph: pip install 'memkit[langgraph]'") from e

from ..errors import ValidationError

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


# ----------------------------------------------------------------------------- names
def _escaped(c: str, edge: bool) -> bool:
    """Must character ``c`` be percent-escaped in a label (``edge``: at the label's start or end)?"""
    return c == "%" or unicodedata.category(c) in ("Cc", "Cs", "Cf") or (edge and c.isspace())


def encode_label(label: str) -> str:
    """A LangGraph label or key as a memkit name: ``%`` and what memkit names refuse become ``%XX``.

    >>> encode_label("alice"), encode_label(" 50% "), encode_label("用户")
    ('alice', '%2050%25%20', '用户')
    """
    last = len(label) - 1
    return "".join(
        "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) if _escaped(c, i in (0, last)) else c
        for i, c in enumerate(label)
    )


def decode_label(name: str) -> str:
    """The inverse of :func:`encode_label`.

    >>> decode_label("%2050%25%20")
    ' 50% '
    """
    return unquote(name, errors="surrogatepass") if "%" in name else name


def encode_namespace(namespace: Sequence[str]) -> str:
    """``("memories", "alice")`` -> ``"memories.alice"`` (labels hold no ``.``: LangGraph forbids it)."""
    return ".".join(encode_label(label) for label in namespace)


def decode_namespace(name: str) -> tuple[str, ...]:
    """``"memories.alice"`` -> ``("memories", "alice")``."""
    return tuple(decode_label(part) for part in name.split("."))


# ----------------------------------------------------------------------------- items
class MemkitItem(Item):
    """A LangGraph :class:`~langgraph.store.base.Item` that also says what memkit decided:
    ``memory_id``, ``status`` (``active``, or ``quarantined`` / ``conflict`` when nothing is current
    yet) and ``pending`` (the status of a newer version not in effect, else None)."""

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
    """Every string and number in a JSON value, in order (the text of ``"$"``)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [str(value)]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _leaves(v)]
    return []


def value_text(value: Mapping[str, Any], paths: Sequence[str]) -> str:
    """The memory text of a value: the strings at ``paths``, one per line (the JSON when none)."""
    texts: list[str] = []
    for path in paths:
        texts += _leaves(value) if path == "$" else get_text_at_path(value, tokenize_path(path))
    text = "\n".join(t for t in texts if t.strip())
    return text or json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def item_value(value: Any, content: str) -> dict[str, Any]:
    """The LangGraph value of a memory: its dict value, or ``{"content": text[, "value": v]}``."""
    if isinstance(value, str):
        value = json.loads(value)
    if isinstance(value, dict):
        return value
    return {"content": content} if value is None else {"content": content, "value": value}


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
    A comparison with a missing value or an incomparable type is False, never an error."""
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
    return value == condition


def check_filter(flt: Any, top: bool = True) -> None:
    """A filter is a dict; a dict with ``$`` keys holds only the known operators."""
    if top and flt is not None and not isinstance(flt, Mapping):
        raise ValidationError("filter", f"must be a dict, got {type(flt).__name__}")
    if isinstance(flt, Mapping):
        for k, v in flt.items():
            if isinstance(k, str) and k.startswith("$") and k not in _OPERATORS:
                raise ValidationError("filter", f"unsupported operator {k!r} (use one of {list(_OPERATORS)})")
            check_filter(v, top=False)


def matches_namespace(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Does a LangGraph namespace tuple satisfy a ``MatchCondition``? ``prefix``/``suffix`` compare
    label by label, and ``"*"`` in the condition's path matches any one label.
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
