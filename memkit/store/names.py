"""The names a store keeps as they are, judged by the store's own secret rules.

A namespace is stored with every row and every event, a requester with every event it causes, an
imported id in its row, its lineage and its events; none of them is ever redacted. So a name must
not hold a secret, and "a secret" means what it means for the store's texts: the guard's built-in
secret rules (MG201–MG205) **plus the store's own** ``GuardParams.extra_secret_patterns`` (MG290).
A store built with ``extra_secret_patterns=(r"ACME-[0-9]{6}",)`` refuses ``namespace="team-ACME-123456"``
and ``requester="ACME-123456"`` exactly as it refuses ``team-AKIAIOSFODNN7EXAMPLE``: a
``ValidationError`` naming the field, nothing written.

Which rules, and which not (:mod:`memkit.guard.names`):

- the secret rules apply whatever the store's switches (``enabled``, ``block_secrets``): a name is
  judged as the default rules always judged it, now with the store's patterns beside them;
- ``never_remember`` topics do not: a topic is a *subject* a text may not be about ("salary"); a
  namespace or requester called ``salary`` names it without holding anything secret;
- PII switches and custom detectors do not: PII in a requester becomes a pseudonym (its identity),
  and a detector may be an LLM call, too costly for every call's names.

An id (one given to ``log_context``, an import's: :mod:`memkit.portable.ids`) of exactly the shape
memkit mints (16 lowercase hex digits) is judged by the built-in rules only (:func:`id_holds_secret`):
memkit names every memory so, and a pattern matching that shape would refuse the store's own ids.

Rows already in such a namespace (a store written before, or under other rules) stay readable,
erasable and forgettable; the audit log names that namespace by a pseudonym (:func:`log_space`).

:class:`SecretNames` is the per-store cache: every call names its namespace and requester, so each
distinct name is judged once per store (a dict lookup after that, ~0.1 µs), and the cache starts
again when the store's guard gets other patterns (``store.guard = ...``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..guard.names import holds_secret, pseudonym
from ..params import GuardParams
from ..portable.ids import own_id

__all__ = ["MAX_CACHED", "PSEUDONYM", "SecretNames", "id_holds_secret", "log_names", "log_space"]

PSEUDONYM = re.compile(r"\[SECRET:[0-9a-f]{8}\]")  # what log_space writes: never a namespace of rows
MAX_CACHED = 4096  # distinct names a store remembers its verdict on (then it starts again)


def log_space(namespace: str | None, secret: Callable[[str], bool] = holds_secret) -> str | None:
    """A namespace as the audit log keeps it: as it is, unless it holds a secret (``secret``: the
    default rules, or a store's own), then as a pseudonym (``[SECRET:1f2e3d4c]``: the same namespace
    always gets the same one).

    >>> log_space("user_87"), log_space("team-AKIAIOSFODNN7EXAMPLE")
    ('user_87', '[SECRET:bbd4db5c]')
    >>> acme = GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",))
    >>> log_space("team-ACME-123456"), log_space("team-ACME-123456", SecretNames().judge(acme))
    ('team-ACME-123456', '[SECRET:6fe47100]')
    """
    if namespace is None or not secret(namespace):
        return namespace
    return pseudonym("[SECRET]", namespace, form="short")  # (the log's name for it since it began)


def id_holds_secret(value: str, secret: Callable[[str], bool] = holds_secret) -> bool:
    """Whether an id kept as it is holds a secret by a store's rules (``secret``: its judge, as for
    :func:`log_space`), one of memkit's own shape (:func:`memkit.portable.ids.own_id`) by the built-in
    rules only: the store's extra patterns do not judge the ids memkit mints (the module docstring).

    >>> hexes = GuardParams(extra_secret_patterns=(r"\\b[0-9a-f]{16}\\b",))
    >>> judge = SecretNames().judge(hexes)
    >>> id_holds_secret("9f3ad0c4e1b27a65", judge), id_holds_secret("doc-9f3ad0c4e1b27a65", judge)
    (False, True)
    >>> id_holds_secret("sk-live-4eC39HqLyjWDarjtT1zdp7dc", judge)
    True
    """
    return secret(value) and (not own_id(value) or holds_secret(value))


def log_names(namespace: str) -> list[str]:
    """The names a namespace's lessons and events may be stored under: as it is, and as the log names it
    when it holds a secret (:func:`log_space`) — under *any* rules, whatever the store's judge now: a
    store's guard is not saved with it, so what one process logged under a pattern another may not
    have (or a pattern removed since) is under the pseudonym. A pseudonym is never a namespace of rows
    (writes refuse one), so matching it reaches nothing of another tenant.

    >>> log_names("user_87")
    ['user_87', '[SECRET:58e82149]']
    """
    return [namespace, pseudonym("[SECRET]", namespace, form="short")]


class SecretNames:
    """Whether a name holds a secret by a store's rules (the module docstring), remembered per name.

    >>> names = SecretNames(); acme = GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",))
    >>> names("ACME-123456", acme), names("ACME-123456", GuardParams()), names("assistant", acme)
    (True, False, False)
    """

    def __init__(self) -> None:
        """An empty cache, for a store without extra patterns."""
        # (the patterns, name -> holds a secret), replaced whole when the patterns change: a verdict
        # made under the old patterns by another thread lands in the old dict, which no one reads
        self.state: tuple[tuple[str, ...], dict[str, bool]] = ((), {})

    def __call__(self, name: str, guard: GuardParams) -> bool:
        """Whether ``name`` holds a secret by the built-in rules plus ``guard.extra_secret_patterns``."""
        patterns = guard.extra_secret_patterns
        state = self.state
        if patterns is not state[0] and patterns != state[0]:  # the store's guard changed
            state = self.state = (patterns, {})
        seen = state[1]
        hit = seen.get(name)
        if hit is None:  # first time this store meets the name (a race only judges it twice)
            if len(seen) >= MAX_CACHED:
                self.state = (patterns, seen := {})
            hit = seen[name] = holds_secret(name, guard)
        return hit

    def judge(self, guard: GuardParams) -> Callable[[str], bool]:
        """``name -> bool`` by ``guard``'s rules, through this cache (what :func:`log_space` takes)."""
        return lambda name: self(name, guard)
