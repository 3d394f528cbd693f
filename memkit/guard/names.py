"""Names as memkit keeps them: requesters, owners and creators without the PII they may hold.

A requester may be given as an e-mail address. The store compares requesters with the owners and
creators of memories, and writes them into the audit log, so a name is mapped once to an
*identity*: every PII span in it becomes a :func:`pseudonym` (a typed placeholder plus a short
digest of the value), by the guard's default rules whatever a store's own guard settings. The same
person always gets the same identity, two people stay two, and neither the store nor its log keeps
the address. The engine's redaction uses the same pseudonyms for keys, tags and the keys of
structured values (``screen_many(..., pseudonyms=True)``).

Names a store keeps as they are (namespaces, requesters, an import's ids) must not hold a secret:
:func:`holds_secret`, :func:`secret_names` and :func:`names_findings` judge them by the default rules,
plus, given a store's ``GuardParams``, its own ``extra_secret_patterns`` (whatever its switches, as
the default rules apply whatever they are). Nothing else of it: ``never_remember`` topics refuse a
*subject* in a text (a namespace ``salary`` names one, it does not hold a secret), PII switches and
custom detectors (an LLM call per name) are the text's business.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ..errors import ValidationError
from ..params import GuardParams
from ..schema import Finding
from . import rules as gr
from .labels import unescape
from .scanner import scan_rows

__all__ = [
    "FORMS",
    "OLD_PSEUDONYM",
    "PLACEHOLDERS",
    "SECRET_IN_NAME",
    "holds_secret",
    "identity",
    "names_findings",
    "old_pseudonym",
    "older_names",
    "outside_pseudonyms",
    "pseudonym",
    "secret_names",
]

SECRET_IN_NAME = "holds something that looks like a secret (a key or password)"
"""The message of every refusal of a name (namespace, requester, id) that holds a secret."""

PLACEHOLDERS = {r.code: r.placeholder for r in gr.RULES if r.placeholder}
"""Rule code -> its typed placeholder (``MG101`` -> ``[EMAIL]``, ...)."""
_SEPARATORS = re.compile(r"[\s\-().]")
# placeholders whose value's separators are formatting (a number written 138-1234-5678 or 13812345678;
# a secret namespace's pseudonym in the audit log, kept as it was): dropped before the digest
_FORMATTED = frozenset({"[PHONE]", "[CARD]", "[ID_NUMBER]", "[SECRET]"})
# the digest's bytes by form: (a formatted value's, an address's)
_DIGEST_BYTES = {"long": (12, 12), "short": (4, 6), "legacy": (4, 4)}
FORMS = tuple(_DIGEST_BYTES)
"""The forms of a pseudonym: ``long`` (names and identities today: 96 bits), ``short`` (what stores
kept before December 2026: 32 bits for a number, 48 for an address; still the audit log's name for a
namespace that holds a secret) and ``legacy`` (before addresses kept their separators: 32 bits)."""
# a pseudonym memkit writes, of any form: its digest is never PII to redact again
_TYPES = "|".join(sorted({re.escape(p[1:-1]) for p in [*PLACEHOLDERS.values(), "[SECRET]"]}))
_OWN = re.compile(rf"\[(?:{_TYPES}):(?:[0-9a-f]{{8}}|[0-9a-f]{{12}}|[0-9a-f]{{24}})\]")
_LONG = re.compile(rf"(\[(?:{_TYPES}):[0-9a-f]{{24}}\])")  # today's, split out (a capturing group)
OLD_PSEUDONYM = re.compile(rf"\[(?:{_TYPES}):(?:[0-9a-f]{{8}}|[0-9a-f]{{12}})\]")  # memkit's types only
"""A pseudonym of a ``short`` or ``legacy`` form (8 or 12 hex digits): never today's identity."""


def pseudonym(placeholder: str, span: str, *, form: str = "long", legacy: bool = False) -> str:
    """A placeholder that keeps distinct values apart, for names such as keys and owners, where two
    phone numbers must stay two keys and one number must always give the same key: the placeholder
    plus a blake2b digest of the normalized span (NFKC, case-folded), 96 bits (24 hex), so that no
    two values found in practice share one (a birthday search over 32 bits finds two phone numbers
    that do among ~33k). A number's separators are formatting and dropped first; an address's dots
    and hyphens tell people apart (``john.smith@`` is not ``johnsmith@``, ``10.1.0.11`` not
    ``10.10.1.1``) and are kept.

    >>> pseudonym("[PHONE]", "138-1234-5678") == pseudonym("[PHONE]", "13812345678")
    True
    >>> pseudonym("[EMAIL]", "a@example.com")
    '[EMAIL:b53fd45df8db284616069b41]'
    >>> pseudonym("[EMAIL]", "a.b@example.com") == pseudonym("[EMAIL]", "ab@example.com")
    False

    ``form`` (:data:`FORMS`): ``"short"`` is what stores written before December 2026 hold (8 hex for
    a number, 12 for an address; :meth:`MemoryStore.reidentify` replaces it) and the audit log's
    name of a namespace holding a secret (:func:`memkit.store.names.log_space`); ``"legacy"``
    (``legacy=True``), what stores written before addresses kept their separators hold (every
    separator dropped, 8 hex: such addresses shared one).
    The digest separates values; it does not hide them from someone who can enumerate the
    candidates (every phone number): identities and keys should not be PII in the first place.
    """
    form = "legacy" if legacy else form
    if form not in _DIGEST_BYTES:
        raise ValidationError("form", f"must be one of {FORMS}, got {form!r}")
    folded = unicodedata.normalize("NFKC", span).casefold()
    formatted, address = _DIGEST_BYTES[form]
    size = address
    if form == "legacy" or placeholder in _FORMATTED:
        folded, size = _SEPARATORS.sub("", folded), formatted
    tag = hashlib.blake2b(folded.encode("utf-8"), digest_size=size, person=b"memkit-pseudonym").hexdigest()
    return f"{placeholder[:-1]}:{tag}]"


_IDENTITY_GUARD = GuardParams()  # identities are mapped by the default rules, whatever a store's guard


@lru_cache(maxsize=64)
def _name_guard(patterns: tuple[str, ...], only_secrets: bool = False) -> GuardParams:
    """The rules names are judged by: the default ones (or only their secret rules), plus
    ``patterns`` as extra secret patterns (one GuardParams per set: building one checks each pattern
    in polars)."""
    if only_secrets:  # the same secret findings: no secret rule depends on another rule's finding
        return GuardParams(redact_pii=False, screen_injection=False, extra_secret_patterns=patterns)
    return GuardParams(extra_secret_patterns=patterns) if patterns else _IDENTITY_GUARD


def _patterns(params: GuardParams | None) -> tuple[str, ...]:
    """A store's ``extra_secret_patterns`` (none for ``params=None``), or ValidationError."""
    if params is None:
        return ()
    if not isinstance(params, GuardParams):
        raise ValidationError("params", f"must be a memkit.GuardParams, got {type(params).__name__}")
    return params.extra_secret_patterns


@lru_cache(maxsize=8192)
def _name_findings(name: str) -> tuple[Finding, ...]:
    """The guard's findings with a span in ``name`` (cached: the same names recur on every call)."""
    return tuple(f for f in scan_rows([name], _IDENTITY_GUARD).get(0, []) if f.start is not None)


@lru_cache(maxsize=8192)
def _secrets_in(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether the secret rules (plus ``patterns``) find a secret in ``name``: only those rules run
    (~4x faster than every rule: a namespace or an id met for the first time), cached."""
    return any(f.kind == "secret" for f in scan_rows([name], _name_guard(patterns, True)).get(0, []))


def identity(name: str, *, form: str = "long", legacy: bool = False) -> str:
    """A requester, owner or creator name as memkit keeps it: PII in it replaced by
    :func:`pseudonym`\\ s, by the default rules whatever a store's guard settings, so that the same
    person always has the same identity, distinct people stay distinct, and the store and its audit
    log never hold the address. Names without PII are unchanged (``identity`` of an identity is
    itself). A secret in a name is not an identity's business: the store refuses it.

    >>> identity("assistant"), identity("alice@example.com")
    ('assistant', '[EMAIL:8c7d2f7a9e16d94ac8c1c560]')

    ``form="short"`` / ``legacy=True``: the identity as older stores hold it (:func:`pseudonym`).
    A requester holding a pseudonym of those forms is refused by the store (:func:`old_pseudonym`).
    """
    found = outside_pseudonyms(name, _name_findings(name))  # (an identity given again stays itself)
    edits = sorted((f for f in found if f.kind == "pii"), key=lambda f: f.start or 0)
    out, last = [], 0
    for f in edits:
        if (f.start or 0) < last:  # overlapping spans: the first one covers it
            continue
        ph = PLACEHOLDERS.get(f.code, f"[{f.code.upper()}]")
        out += [name[last : f.start], pseudonym(ph, name[f.start : f.end], form=form, legacy=legacy)]
        last = f.end or last
    return "".join(out) + name[last:] if out else name


def outside_pseudonyms(name: str, found: Iterable[Finding]) -> list[Finding]:
    """``found`` (findings in ``name``) less the PII ones inside a pseudonym memkit wrote: a digest's
    digits may read as a number (``[PHONE:…14722405923…]``, one 96-bit digest in ~1,000), and a name
    given back as it is stored (an identity as a requester, a stored key) must map to itself.

    >>> from memkit.guard import scan
    >>> name = "[PHONE:1c483db85846b14722405923]"
    >>> [f["code"] for f in scan([name]).to_dicts()], outside_pseudonyms(name, _name_findings(name))
    (['MG102'], [])
    """
    spans = [m.span() for m in _OWN.finditer(name)] if "[" in name else []
    return [f for f in found if not (spans and f.kind == "pii" and f.start is not None and f.end is not None
                                     and any(a <= f.start and f.end <= b for a, b in spans))]  # fmt: skip


def old_pseudonym(name: str) -> str | None:
    """The first pseudonym of an older form (``short`` or ``legacy``: :data:`OLD_PSEUDONYM`) that
    ``name`` holds, or None. No requester today has one in its identity (every pseudonym it gets is
    ``long``), so a requester that holds one names the rows of someone an older store kept so (what
    they wrote before the upgrade, until :meth:`MemoryStore.reidentify`): the store refuses it, as a
    name is compared with owners and creators as it is.

    >>> old_pseudonym("[PHONE:b2b806ff]"), old_pseudonym(identity("13812345678")), old_pseudonym("bob")
    ('[PHONE:b2b806ff]', None, None)
    """
    found = OLD_PSEUDONYM.search(name) if "[" in name else None
    return None if found is None else found.group()


def older_names(stored: str, given: str) -> list[str]:
    """A name as stores written before December 2026 kept it: ``stored`` (``given`` as a write keeps
    it today, each PII span replaced by its :func:`pseudonym`) with those spans' ``short`` and then
    ``legacy`` pseudonyms (:data:`FORMS`), each once and unlike ``stored``. What a *key* lookup also
    matches, so that a key written before the upgrade is read and continued by the name it was
    written with; never an identity's (:func:`old_pseudonym`: that was the leak).

    >>> older_names("contact.[PHONE:fe06744d3e1a9a5be4d35e59]", "contact.13812345678")
    ['contact.[PHONE:6798e7e2]']
    >>> older_names("c:[EMAIL:953edf58e1da7dbe5040581f]", "c:john.smith@corp.com")
    ['c:[EMAIL:c86abe8b21d1]', 'c:[EMAIL:94160545]']

    The spans are found between the parts ``stored`` and ``given`` share, each left to right, and
    kept only if the pseudonym of the span is the one ``stored`` holds: [] when they do not line up
    (two spans written side by side, a name whose ``%XX`` escapes the guard decoded), and a span
    given as its pseudonym stays so (there is no value to digest again).
    """
    parts = _LONG.split(stored) if stored != given and "[" in stored else [stored]
    if len(parts) == 1 or not given.startswith(parts[0]) or not given.endswith(parts[-1]):
        return []
    spans, at = [], len(parts[0])  # (placeholder, the span, or None: given as the pseudonym)
    for i in range(1, len(parts), 2):
        after, last = parts[i + 1], i + 2 == len(parts)
        if not (after or last):  # two spans side by side: where one ends is not known
            return []
        end = len(given) - len(after) if last else given.find(after, at)
        span, at = given[at:end], end + len(after)
        placeholder = parts[i][: parts[i].index(":")] + "]"
        if end < 0 or not span or (span != parts[i] and pseudonym(placeholder, span) != parts[i]):
            return []
        spans.append((placeholder, None if span == parts[i] else span))
    out: list[str] = []
    for form in ("short", "legacy"):
        pieces = [parts[0]]
        for (placeholder, span), ours, after in zip(spans, parts[1::2], parts[2::2], strict=True):
            pieces += [ours if span is None else pseudonym(placeholder, span, form=form), after]
        if (name := "".join(pieces)) != stored and name not in out:
            out.append(name)
    return out


def holds_secret(name: str, params: GuardParams | None = None) -> bool:
    """Whether a name (a requester's) holds a secret by the default rules, plus the
    ``extra_secret_patterns`` of ``params`` (a store's guard: the module docstring): ``"sk-…"`` does,
    and so does a name whose ``%XX`` escapes decode to one (a LangGraph label: :func:`.labels.unescape`).

    >>> acme = GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",))
    >>> holds_secret("team-ACME-123456"), holds_secret("team-ACME-123456", acme), holds_secret("salary", acme)
    (False, True, False)
    """
    patterns = _patterns(params)
    return any(_secrets_in(x, patterns) for x in {name, unescape(name)})


def secret_names(names: Iterable[str | None], params: GuardParams | None = None) -> set[str]:
    """The distinct ``names`` that hold a secret by the default rules (plus ``params``' extra secret
    patterns), as written or as their ``%XX`` escapes decode, scanned in one batch (an import's ids:
    thousands at once, where :func:`holds_secret` looks at one).

    >>> sorted(secret_names(["9f3a", None, "sk-live-4eC39HqLyjWDarjtT1zdp7dc", "9f3a"]))
    ['sk-live-4eC39HqLyjWDarjtT1zdp7dc']
    """
    distinct = list(dict.fromkeys(n for n in names if n is not None))
    views = [(n, v) for n in distinct if "%" in n and (v := unescape(n)) != n]  # few: names with a %
    found = names_findings([*distinct, *(v for _, v in views)], params)
    owner = [*distinct, *(n for n, _ in views)]  # the name each scanned text belongs to
    return {owner[i] for i, fs in found.items() if any(f.kind == "secret" for f in fs)}


def names_findings(names: Sequence[str], params: GuardParams | None = None) -> dict[int, list[Finding]]:
    """The guard's findings in ``names`` by the default rules (whatever a store's guard settings) plus
    the ``extra_secret_patterns`` of ``params``, scanned in one batch -> the index of each name it found
    something in, and those findings (how an import judges the ids a file brings).

    >>> {i: [f.code for f in fs] for i, fs in names_findings(["9f3a", "13812345678"]).items()}
    {1: ['MG102']}
    """
    return scan_rows(list(names), _name_guard(_patterns(params))) if names else {}
