"""The store's parameters that may be assigned after it is open, each checked as the constructor
checks it: ``store.guard = mk.GuardParams(...)`` (a later open with other rules, a reviewer turning
the guard back on), ``store.conflict_policy = "supersede"``, ``store.decay``, ``store.keyword``, and the
defaults of ``search``, ``forget`` and ``consolidate`` (``store.weights``, ``store.forget_policy``,
``store.merge_threshold``), which :class:`~memkit.settings.Settings` sets all at once, and
``store.compact_on_erase``. What works over a store (the agent, the LangGraph adapter, the time
machine) follows such an assignment through :class:`FromStore`: unless given its own value, it reads
the store's at each use, never a copy.

A wrong value raises :class:`~memkit.errors.ValidationError` naming the attribute and changes nothing:
a dict given for ``guard`` would otherwise be accepted and fail the next write with an AttributeError.

What the open fixed is :class:`Fixed`: ``path``, ``read_only``, ``index`` and ``embedder``. Assigning
one raises ValidationError naming it (``store.read_only = False`` would otherwise reach DuckDB's own
error at the next write; another ``embedder`` would write another model's vectors into a file that
records the old one, and a search would compare the two spaces). The same value again is harmless
and taken (for ``embedder``: the same name and dimension). The store itself changes one through
:func:`refix` only: ``reembed`` its embedder, the open of a PostgreSQL URL its path (the password hidden).

>>> import memkit as mk
>>> with mk.MemoryStore() as store:
...     store.guard = {"extra_secret_patterns": ("ACME-[0-9]{6}",)}
Traceback (most recent call last):
    ...
memkit.errors.ValidationError: guard: must be a memkit.GuardParams, got dict
>>> with mk.MemoryStore() as store:
...     store.read_only = True  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
memkit.errors.ValidationError: read_only: is fixed when the store opens: close it and reopen it with ...
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ..conflicts import POLICIES
from ..consolidate import MergeParams
from ..embed import Embedder, check_embedder, embedder_from_spec, spec_of
from ..errors import MissingDependency, ValidationError, check_bool
from ..params import GuardParams
from ..schema import check_choice
from ..settings import Settings, load_settings

__all__ = [
    "Checked",
    "Fixed",
    "FromStore",
    "a_bool",
    "a_path",
    "a_policy",
    "a_settings",
    "a_threshold",
    "an_embedder",
    "an_instance",
    "opening_embedder",
    "read_settings",
    "refix",
    "unscreened",
    "warn_other_embedder",
    "warn_unscreened",
]

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


class FromStore(Checked[Any]):
    """A data descriptor of an object over a store (``obj.store``): the value assigned (passed through
    ``check``), or, while None is assigned, the store's attribute ``attr`` read at each use (through
    ``derive``), so ``store.weights = ...`` reaches an agent built before it. Never a copy made at
    construction: a stale copy would rank with the old weights without a word.

    >>> import memkit as mk
    >>> class Ranker:
    ...     weights = FromStore("weights", an_instance(mk.Weights))
    ...     def __init__(self, store, weights=None):
    ...         self.store, self.weights = store, weights
    >>> store = mk.MemoryStore()
    >>> r = Ranker(store)
    >>> store.weights = mk.Weights.articles()
    >>> r.weights == mk.Weights.articles()      # the store's, as it is now
    True
    >>> r.weights = mk.Weights(); store.weights = mk.Weights.articles()
    >>> r.weights == mk.Weights()               # its own, once given one
    True
    >>> store.close()
    """

    def __init__(
        self, attr: str, check: Callable[[str, Any], Any], derive: Callable[[Any], Any] | None = None
    ) -> None:
        super().__init__(check)
        self.attr, self.derive = attr, derive

    def __get__(self, obj: object | None, owner: type) -> Any:
        if obj is None:  # the class's attribute: the descriptor itself
            return self
        own = obj.__dict__.get(self.name)
        if own is not None:
            return own
        value = getattr(obj.store, self.attr)  # type: ignore[attr-defined]
        return value if self.derive is None else self.derive(value)

    def __set__(self, obj: object, value: Any) -> None:
        # checked first: a refusal changes nothing; None: follow the store again
        obj.__dict__[self.name] = None if value is None else self.check(self.name, value)


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


def a_bool(name: str, value: Any) -> bool:
    """The check of a flag (``compact_on_erase``): a bool, not a truthy stand-in such as ``"no"``
    (:func:`memkit.errors.check_bool`, every public switch's check)."""
    return check_bool(name, value)


def a_path(name: str, value: Any) -> str:
    """The check of ``path``: a non-empty str (the constructor's own checks of the file come first)."""
    if not isinstance(value, str) or not value:
        raise ValidationError(name, f"must be a non-empty str or path, got {value!r}")
    return value


def an_embedder(name: str, value: Any) -> Embedder:
    """The check of ``embedder``: :func:`memkit.embed.check_embedder` (name, dim, embed)."""
    return check_embedder(value)


class Fixed(Checked[T]):
    """An attribute the open fixes: its first assignment (in the constructor) passes ``check``; a later
    one raises ValidationError naming it, ``hint`` saying what to do instead, unless ``same(old, new)``
    (then it is taken: nothing changes that matters). Only :func:`refix` replaces it on purpose."""

    def __init__(
        self, check: Callable[[str, Any], T], hint: str, same: Callable[[T, T], bool] | None = None
    ) -> None:
        super().__init__(check)
        self.hint, self.same = hint, same or (lambda old, new: type(old) is type(new) and old == new)

    def __set__(self, obj: object, value: Any) -> None:
        new = self.check(self.name, value)  # checked first: a refusal changes nothing
        if self.name in obj.__dict__ and not self.same(obj.__dict__[self.name], new):
            raise ValidationError(self.name, self.hint.format(old=obj.__dict__[self.name]))
        obj.__dict__[self.name] = new


def refix(obj: object, name: str, value: Any) -> None:
    """Replace the :class:`Fixed` attribute ``name`` of ``obj`` on purpose (checked as at the open):
    the store's own way (``reembed``'s new embedder, a server URL's redacted path), never a user's."""
    fixed = getattr(type(obj), name)
    if not isinstance(fixed, Fixed):
        raise TypeError(f"{type(obj).__name__}.{name} is not a Fixed attribute")
    obj.__dict__[name] = fixed.check(name, value)


def read_settings(name: str, path: str | os.PathLike[str]) -> Settings:
    """:func:`~memkit.settings.load_settings`, its error renamed to the argument ``name`` (``settings``):
    ``settings: weights.similarty: unknown field; ... (settings file 'x.toml')`` (load_settings names the
    file; an error about the path itself, ``settings: path: cannot read 'x.toml': ...``, names it too)."""
    try:
        return load_settings(path)
    except ValidationError as e:
        raise type(e)(name, str(e)) from None


def a_settings(name: str, value: Any) -> Settings:
    """The check of ``settings``: a :class:`~memkit.settings.Settings`, or a file that
    :func:`read_settings` reads."""
    if isinstance(value, (str, os.PathLike)):
        value = read_settings(name, value)
    if not isinstance(value, Settings):
        raise ValidationError(name, f"must be a memkit.Settings or a file path, got {type(value).__name__}")
    return value


def opening_embedder(embedder: Embedder | None, settings: Any) -> tuple[Embedder | None, Settings | None]:
    """``(embedder=, settings=)`` of a store's constructor -> (the embedder it opens with, the settings
    read and checked). The embedder: ``embedder=`` when given (it wins; a settings' SPEC naming another
    embedder is a UserWarning naming ``embedder``); else the settings' ``embedder`` SPEC, built now (a
    model that does not load is a ValidationError on ``settings``, a missing extra MissingDependency,
    both naming ``embedder`` and the file); else None: the store's default."""
    if settings is None:
        return embedder, None
    where = f" (settings file {os.fspath(settings)!r})" if isinstance(settings, (str, os.PathLike)) else ""
    settings = a_settings("settings", settings)
    if settings.embedder is None:
        return embedder, settings
    if embedder is not None:  # (checked first: the warning names it)
        warn_other_embedder(settings.embedder, check_embedder(embedder), "embedder= wins", stacklevel=4)
        return embedder, settings
    try:
        return embedder_from_spec(settings.embedder, "embedder"), settings
    except MissingDependency as e:
        raise MissingDependency(f"settings: {e}{where}") from None
    except ValidationError as e:
        raise ValidationError("settings", f"{e}{where}") from None


def warn_other_embedder(spec: str, embedder: Embedder, kept: str, stacklevel: int = 3) -> None:
    """A UserWarning naming ``embedder`` when a settings' SPEC is not the one of ``embedder`` (the one
    kept, ``kept`` says why): the settings were tuned with another embedder than the store ranks with."""
    own = spec_of(embedder)
    if own != spec:
        warnings.warn(
            f"embedder: the settings name {spec!r}, the store's embedder is {own or embedder.name!r}"
            f" ({kept})",
            UserWarning,
            stacklevel=stacklevel,
        )


def unscreened(guard: GuardParams) -> dict[str, Any]:
    """What the events of a write under ``guard`` record of a guard turned off, or partly -> ``{}`` for
    the default guard (every switch on: the events unchanged), ``{"guard": "off"}`` (``enabled`` false),
    or ``{"unscreened": [...]}``: the switches off (``redact_pii``, ``block_secrets``,
    ``screen_injection``, the last taking lessons along) and ``pii`` when it lists no type.

    >>> unscreened(GuardParams()), unscreened(GuardParams(enabled=False))
    ({}, {'guard': 'off'})
    >>> unscreened(GuardParams(redact_pii=False, screen_injection=False))
    {'unscreened': ['redact_pii', 'screen_injection']}
    """
    if not guard.enabled:
        return {"guard": "off"}
    off = [f for f in ("redact_pii", "block_secrets", "screen_injection") if not getattr(guard, f)]
    if guard.redact_pii and not guard.pii:
        off.append("pii")
    return {"unscreened": off} if off else {}


def warn_unscreened(settings: Settings, source: str | None, stacklevel: int = 3) -> None:
    """A UserWarning naming the parts of the guard that the settings file ``source`` turns off
    (:func:`unscreened`), if any: a file is read out of sight of the code that opens the store. Settings
    given in code (a ``Settings`` or ``GuardParams`` object: ``settings=``, ``guard=``, ``store.settings
    = ...``) say it where they are written (``source`` None): no warning; their writes record it too."""
    off = unscreened(settings.guard) if source is not None else {}
    if off:
        parts = ", ".join(off.get("unscreened", ["enabled (the whole guard)"]))
        where = f"the settings file {source!r}" if source else "the settings"
        warnings.warn(
            f"guard: {parts} turned off by {where}: writes are not screened for it"
            f" (each write's audit event records {json.dumps(off)})",
            UserWarning,
            stacklevel=stacklevel,
        )
