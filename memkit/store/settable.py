"""The store's parameters that may be assigned after it is open, each checked as the constructor
checks it: ``store.guard = mk.GuardParams(...)`` (a later open with other rules, a reviewer turning
the guard back on), ``store.conflict_policy = "supersede"``, ``store.decay``, ``store.keyword``, and the
defaults of ``search``, ``forget`` and ``consolidate`` (``store.weights``, ``store.forget_policy``,
``store.merge_threshold``), which :class:`~memkit.settings.Settings` sets all at once.

A wrong value raises :class:`~memkit.errors.ValidationError` naming the attribute and changes nothing:
a dict given for ``guard`` would otherwise be accepted and fail the next write with an AttributeError.

>>> import memkit as mk
>>> with mk.MemoryStore() as store:
...     store.guard = {"extra_secret_patterns": ("ACME-[0-9]{6}",)}
Traceback (most recent call last):
    ...
memkit.errors.ValidationError: guard: must be a memkit.GuardParams, got dict
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ..conflicts import POLICIES
from ..consolidate import MergeParams
from ..errors import ValidationError
from ..schema import check_choice

__all__ = ["Checked", "a_policy", "a_threshold", "an_instance"]

T = TypeVar("T")


class Checked(Generic[T]):
    """A data descriptor: an attribute whose every assignment passes ``check(name, value) -> value``
    (which raises ValidationError), stored in the instance's ``__dict__`` under the same name."""

    def __init__(self, check: Callable[[str, Any], T]) -> None:
        self.check = check
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: object | None, owner: type) -> Any:
        if obj is None:  # the class's attribute: the descriptor itself
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:  # (before the constructor sets it)
            raise AttributeError(self.name) from None

    def __set__(self, obj: object, value: Any) -> None:
        obj.__dict__[self.name] = self.check(self.name, value)  # checked first: a refusal changes nothing


def an_instance(kind: type[T]) -> Callable[[str, Any], T]:
    """The check of a parameters attribute: an instance of ``kind`` (a frozen dataclass, already valid).

    >>> from memkit.params import Weights
    >>> an_instance(Weights)("weights", {"similarity": 1.0})
    Traceback (most recent call last):
        ...
    memkit.errors.ValidationError: weights: must be a memkit.Weights, got dict
    """

    def check(name: str, value: Any) -> T:
        if not isinstance(value, kind):
            raise ValidationError(name, f"must be a memkit.{kind.__name__}, got {type(value).__name__}")
        return value

    return check


def a_policy(name: str, value: Any) -> str:
    """The check of ``conflict_policy``: one of :data:`memkit.conflicts.POLICIES`."""
    return check_choice(name, value, POLICIES)


def a_threshold(name: str, value: Any) -> float:
    """The check of ``merge_threshold``: :class:`~memkit.consolidate.MergeParams`' own rule.

    >>> a_threshold("merge_threshold", 0.4)
    Traceback (most recent call last):
        ...
    memkit.errors.ValidationError: merge_threshold: must be >= 0.5, got 0.4
    """
    try:
        return MergeParams(threshold=value).threshold
    except ValidationError as e:
        raise ValidationError(name, str(e).split(": ", 1)[-1]) from None
