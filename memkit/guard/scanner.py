"""The guard's detection engine (pure): which rules apply, the batch pre-filter, exact spans.

:func:`scan_rows` is what :func:`memkit.guard.scan` and :func:`memkit.guard.screen_many` run: the
rules switched on by :class:`~memkit.params.GuardParams` (:mod:`memkit.guard.rules`, plus
never-remember topics and extra patterns), pre-filtered over the whole batch — one polars
``str.contains`` per rule, or Python's ``re`` for a handful of texts — then, only for the texts
with a candidate match, exact spans and checks in Python, decoded base64 payloads screened again,
overlapping PII resolved, and the custom detectors run.

For ``n`` texts and ``r`` rules switched on, the stages are:

1. :func:`_rules` — the ``r`` rules, in priority order;
2. :func:`_prefilter` — an ``(n, r)`` boolean matrix: does rule ``j``'s pattern occur in text ``i``?
   No checks run here, so it over-approximates but never misses a rule's finding (the patterns
   mean the same to both regex engines);
3. :func:`_scan_one` — per row with any ``True``, only its candidate rules: exact spans (a labelled
   value's group ``v`` only: :func:`_span`), each rule's ``check``, spans mapped back to the original text;
4. :func:`_no_overlaps` — one PII finding per overlapping group, so redaction replaces disjoint spans;
5. :func:`_custom` — ``GuardParams.detectors``, on every text.

Two passes because most texts match nothing: a bare regex search over a column is cheap in polars,
while the checks (Luhn, calendar dates, context words) are Python and run only where a pattern hit.

>>> rows = scan_rows(["plain", "mail a@b.co"], GuardParams())
>>> [(i, f.code, f.start, f.end) for i, fs in rows.items() for f in fs]
[(1, 'MG101', 5, 11)]
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl

from ..errors import MemkitError, ValidationError
from ..params import GuardParams
from ..schema import Finding
from ..text import CJK, FOLD, INVISIBLE, fold, strip_invisible
from . import rules as gr
from .gates import gate_part, gates

__all__ = ["ENCODED_INJECTION", "scan_rows"]

ENCODED_INJECTION = "encoded (base64) payload hiding an injection"  # an MG306 that hides one

# a PII rule's placeholder -> the GuardParams.pii type that switches the rule on
_PLACEHOLDER_TYPE = {
    "[EMAIL]": "email",
    "[PHONE]": "phone",
    "[ID_NUMBER]": "id_number",
    "[CARD]": "card",
    "[IP]": "ip",
    "[ACCOUNT]": "account",
}
_PRINTABLE = 0.85  # share of printable characters for a base64 run to count as a hidden text payload


def _rules(params: GuardParams) -> list[gr.Rule]:
    """The rules ``params`` switches on, built-ins first, then topics and extra patterns.

    >>> print(*[r.pattern for r in _rules(GuardParams(never_remember=("密码", "salary")))][-4:-2])
    (?i)密码 (?i)(?a:\\b)salary
    """
    rules = [
        r for r in gr.RULES
        if (r.kind == "pii" and params.redact_pii and _PLACEHOLDER_TYPE[r.placeholder] in params.pii)
        or (r.kind == "secret" and params.block_secrets)
        or (r.kind == "injection" and params.screen_injection)
    ]  # fmt: skip
    if params.block_secrets:
        # a topic is a plain phrase (escaped, any case). A word boundary goes in front only when it
        # starts with an ASCII letter or digit, and an ASCII one: CJK characters are all word
        # characters, so a Unicode \b before 密码 in 我的密码, or before salary in 我的salary, never
        # matches. There is none at the end: the phrase may start a longer word.
        for topic in params.never_remember:
            edge = gr.ASCII_B if topic[0].isascii() and topic[0].isalnum() else ""
            code, kind, sev, msg = gr.TOPIC
            rules.append(gr.Rule(code, kind, sev, "(?i)" + edge + re.escape(topic), f"{msg} ({topic})"))
        rules += [gr.Rule(*gr.EXTRA_SECRET[:3], p, gr.EXTRA_SECRET[3]) for p in params.extra_secret_patterns]
    if params.screen_injection:
        rules += [
            gr.Rule(*gr.EXTRA_INJECTION[:3], p, gr.EXTRA_INJECTION[3])
            for p in params.extra_injection_patterns
        ]
        # ENCODED is copied with the run length params asks for (hence _scan_one's test on its code)
        enc = params.min_encoded_chars
        rules += [gr.HIDDEN, gr.ENCODED._replace(pattern=rf"[A-Za-z0-9+/]{{{enc},}}={{0,2}}")]
    return rules


def _payload(run: str) -> str | None:
    """The text a base64 run decodes to, if it is mostly printable text (hashes and binary are not).

    >>> _payload("aGVsbG8gd29ybGQ"), _payload("LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE=")  # a SHA-256
    ('hello world', None)
    """
    try:  # a run in prose often lost its "=" padding: restore it to a multiple of 4 characters
        raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):  # subtle: UnicodeDecodeError is a ValueError (binary data)
        return None
    printable = sum(c.isprintable() or c in "\n\t" for c in text)
    return text if text and printable / len(text) >= _PRINTABLE else None


_ALWAYS_HIDDEN = re.compile("[\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")  # bidi overrides, tags
# scripts written without spaces (CJK, kana, hangul; Thai, Lao, Myanmar, Khmer), where a zero-width
# space is how a word boundary is marked: 欢迎\u200b来到\u200b杭州
_NO_SPACES = re.compile(f"[{CJK}\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]")


def _hidden(text: str) -> tuple[int, int, int] | None:
    """(first, last + 1, count) of the invisible characters that hide something (:data:`rules.HIDING
    <memkit.guard.rules.HIDING>`): bidi overrides and tag characters anywhere; zero-width characters
    only inside a word (splitting a token, the evasion trick). Copy-paste debris next to a space, a
    leading BOM, a zero-width joiner inside an emoji sequence and a zero-width space between two words
    of a script written without spaces are innocent.

    It reads the original text: every other rule sees the text with invisible characters removed.

    >>> _hidden("ig\u200bnore"), _hidden("hello \u200bworld"), _hidden("\ufeffhello")
    ((2, 3, 1), None, None)
    >>> _hidden("欢迎\u200b来到\u200b杭州"), _hidden("Donau\u00addampfschiff")
    (None, None)
    """
    pos = []
    for m in re.finditer(f"[{gr.HIDING}]+", text):
        s, e = m.span()
        before, after = text[s - 1 : s], text[e : e + 1]
        # the run splits a word (ig\u200bnore), not two words of a script without spaces
        spaceless = _NO_SPACES.match(before) or _NO_SPACES.match(after)
        inside = before.isalnum() and after.isalnum() and not spaceless
        if _ALWAYS_HIDDEN.search(m.group()) or inside:
            pos += range(s, e)
    return (pos[0], pos[-1] + 1, len(pos)) if pos else None


def _span(m: re.Match[str]) -> tuple[int, int]:
    """The span a match marks: its group named :data:`rules.VALUE <memkit.guard.rules.VALUE>` when the
    pattern has one and it took part (a label's value: ``SSN 123-45-6789`` marks the number only),
    else the whole match.

    >>> _span(re.search(r"SSN (?P<v>[0-9-]+)", "my SSN 123-45-6789")), _span(re.search("SSN", "my SSN"))
    ((7, 18), (3, 6))
    """
    if gr.VALUE in m.re.groupindex and m.start(gr.VALUE) >= 0:
        return m.span(gr.VALUE)
    return m.span()


def _scan_one(text: str, rules: Sequence[gr.Rule], every: Sequence[gr.Rule], depth: int = 0) -> list[Finding]:
    """Findings of ``rules`` in one text (spans in ``text``); a decoded payload is screened with
    ``every`` injection rule.

    Patterns and checks see ``clean``: the width fold (offsets unchanged) with invisible characters
    removed, so ``ig\\u200bnore`` reads ``ignore``. A base64 run that decodes to text is an ``info``
    signal; one whose payload holds an injection signal becomes a ``warning``, which quarantines on
    its own at the default ``quarantine_score``. ``depth`` stops at one level: a payload's own base64
    runs are not screened in turn.
    """
    clean, keep = strip_invisible(fold(text))
    # keep[i] is the offset in ``text`` of clean[i] (None: nothing was removed, offsets are equal)
    back = (lambda i: i) if keep is None else (lambda i: keep[i] if i < len(keep) else len(text))
    out: list[Finding] = []
    for r in rules:
        if r is gr.HIDDEN:  # no regex search: _hidden decides which invisible runs hide something
            if (h := _hidden(text)) is not None:
                out.append(Finding(r.code, r.kind, f"{r.message}: {h[2]} characters", r.severity, h[0], h[1]))
            continue
        for m in _compiled(r.pattern).finditer(clean):
            s, e = _span(m)
            if s == e or (r.check is not None and not r.check(clean, s, e)):
                continue  # an empty match (an extra pattern such as "a*") marks nothing
            msg, sev = r.message, r.severity
            if r is gr.ENCODED or r.code == gr.ENCODED.code:
                inner = _payload(m.group())
                if inner is None:
                    continue
                # the payload never went through the pre-filter: try every injection rule on it
                inj = [x for x in every if x.kind == "injection"]
                hidden = depth == 0 and any(f.kind == "injection" for f in _scan_one(inner, inj, inj, 1))
                if hidden:
                    msg, sev = ENCODED_INJECTION, "warning"
            # subtle: the end is mapped through the match's last character; back(e) would also take
            # in any invisible characters that follow the match
            out.append(Finding(r.code, r.kind, msg, sev, back(s), back(e - 1) + 1))
    return out


def _no_overlaps(findings: list[Finding]) -> list[Finding]:
    """Keep the first PII finding of any overlapping group: findings arrive in rule priority order
    (then by position), so an earlier rule's span wins. Findings of other kinds are all kept."""
    kept: list[Finding] = []
    for f in findings:
        if f.kind == "pii" and any(k.kind == "pii" and f.start < k.end and k.start < f.end for k in kept):
            continue
        kept.append(f)
    return kept


def _custom(detector: Any, text: str) -> list[Finding]:
    """One custom detector on the original ``text`` -> its findings. It may return ``Finding``
    objects, dicts of their fields, or None. Its own error becomes a :class:`MemkitError` naming
    the detector (a ``MemkitError`` passes through as it is); anything else it returns (a str, a
    number, a dict of other keys) is a ValidationError naming ``GuardParams.detectors`` and the
    detector; a span past the text's end is refused. Its findings are kept as they are: no
    pre-filter, no overlap resolution."""
    name = getattr(detector, "__name__", type(detector).__name__)
    try:
        found = detector(text)
        listed = (
            found is None
            or isinstance(found, (list, tuple))
            or (hasattr(found, "__iter__") and not isinstance(found, (str, bytes, dict, Finding)))
        )  # a generator is read here, inside the detector's own errors
        found = list(found or ()) if listed else found
    except MemkitError:
        raise
    except Exception as e:
        raise MemkitError(f"guard detector {name} failed: {type(e).__name__}: {e}") from e
    try:
        if not listed:
            raise TypeError
        out = [f if isinstance(f, Finding) else Finding(**f) for f in found]
    except TypeError:  # not a list of mappings, or keys a Finding has not
        got = "an item that is no Finding (nor dict)" if listed else f"a value of type {type(found).__name__}"
        raise ValidationError("GuardParams.detectors", f"detector {name} returned {got}: it must return"
                              " Finding objects (or dicts of their fields), or None") from None  # fmt: skip
    for f in out:
        if f.end is not None and f.end > len(text):
            raise ValidationError("finding.end", f"span {f.start}..{f.end} is outside the text ({len(text)})")
    return out


_POLARS_FROM = 64  # batches at least this long are pre-filtered in polars; shorter ones in Python
_FOLDING = [*map(chr, FOLD), "\u0130", "\u0131"], [*map(chr, FOLD.values()), "I", "i"]  # see _prefilter
_CHANGED = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in _FOLDING[0]) + INVISIBLE + "]"  # what they change


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    """``re.compile`` once per pattern: topics and extra patterns come with each ``GuardParams``."""
    return re.compile(pattern)


_WORD_BOUNDARY = re.compile(r"(?<!\\)((?:\\\\)*)\\b")  # a \b that is not an escaped backslash + b


@lru_cache(maxsize=1024)
def _relaxed(pattern: str) -> str:
    r"""``pattern`` without its word boundaries ``\b``: it matches wherever the pattern does (and
    more), so it may stand in for it in a pre-filter, whose hits the exact pattern re-checks. Rust's
    regex engine cannot run a Unicode ``\b`` in its fast automaton on non-ASCII text (one Chinese
    character is enough): with them the costliest rules took ~15 µs per text, without ~1 µs.

    The rules' ASCII boundaries (:data:`memkit.guard.rules.ASCII_B`, ``(?a:\b)``: Python's syntax,
    which Rust's regex spells ``(?-u:\b)``) go the same way.

    >>> print(_relaxed(r"(?i)\bignore\b and a\\b"), _relaxed(r"(?a:\b)password"))
    (?i)ignore and a\\b password
    """
    return _WORD_BOUNDARY.sub(r"\1", pattern.replace(gr.ASCII_B, ""))


def _prefilter(texts: list[str], rules: Sequence[gr.Rule]) -> tuple[np.ndarray, np.ndarray]:
    """Which rule may match which text -> ``(rows, hit)``: the texts any rule may match and their
    ``(len(rows), n rules)`` booleans (every other text matches none). For a handful of texts the
    fixed cost of polars expressions dominates, so they are checked with Python's ``re``.

    In polars (in Rust): a few *gates*, each an alternation of several rules (:mod:`memkit.guard.gates`),
    pick the texts any rule may match, and only those run one ``str.contains`` per rule, on the texts
    folded and stripped (most texts match nothing). The gates read the texts as they are: one of them
    also picks every text the fold or the stripping would change (:data:`_CHANGED`), and every other
    text is its own folded, stripped form."""
    if len(texts) < _POLARS_FROM:
        # HIDDEN looks for the invisible characters themselves: it searches the text before stripping
        folded = [fold(t) for t in texts]
        clean = [strip_invisible(t)[0] for t in folded]
        return np.arange(len(texts)), np.array(
            [[bool(_compiled(r.pattern).search(f if r is gr.HIDDEN else c)) for r in rules]
             for f, c in zip(folded, clean, strict=True)], dtype=bool,
        ).reshape(len(texts), len(rules))  # fmt: skip
    arrow = getattr(texts, "arrow", None)  # the texts as Arrow already (a bulk write's, from its frame)
    given = pl.Series("t", texts if arrow is None else arrow, dtype=pl.String)
    parts = [p for r in rules if r is not gr.HIDDEN and (p := gate_part(_relaxed(r.pattern)))]
    # HIDDEN looks for invisible characters, all of them among those _CHANGED finds: it needs no branch
    alone = [r for r in rules if r is not gr.HIDDEN and not gate_part(_relaxed(r.pattern))]  # in no gate
    tests = [
        pl.col("t").str.contains(p)
        for p in [*gates([*parts, _CHANGED]), *(_relaxed(r.pattern) for r in alone)]
    ]
    rows = pl.DataFrame([given]).select(pl.any_horizontal(*tests).arg_true()).to_series()
    # the fold and the stripping of the texts picked, in polars: FOLD is fold()'s one-character table;
    # and İ, ı as I, i, which Python's (?i) takes for them (simple case mappings) and Rust's regex does not
    raw = clean = given.gather(rows)
    odd = raw.str.contains(_CHANGED).arg_true()  # the texts the fold or the stripping changes
    if len(odd):
        folded = raw.gather(odd).str.replace_many(*_FOLDING)
        raw = raw.clone().scatter(odd, folded)
        clean = clean.clone().scatter(odd, folded.str.replace_all(f"[{INVISIBLE}]", ""))
    mask = pl.DataFrame({"t": clean, "raw": raw}).select(
        (pl.col("raw") if r is gr.HIDDEN else pl.col("t")).str.contains(_relaxed(r.pattern)).alias(f"r{j}")
        for j, r in enumerate(rules)
    )
    return rows.to_numpy(), mask.to_numpy().reshape(len(rows), len(rules))


def scan_rows(texts: list[str], params: GuardParams) -> dict[int, list[Finding]]:
    """Findings per text index, for the texts that have any (spans in the original texts).

    Spans are ``[start, end)`` character offsets. A text's rule findings come first, in rule order,
    then what the custom detectors found; nothing at all when ``params.enabled`` is False. The
    action (store, quarantine, refuse) is decided from these by :func:`memkit.guard.decide`.
    """
    out: dict[int, list[Finding]] = {}
    if not params.enabled or not texts:
        return out
    rules = _rules(params)
    rows, hit = _prefilter(texts, rules)  # the texts a rule may match, (len(rows), n rules) booleans
    for i, row in zip(rows.tolist(), hit, strict=True):
        candidates = [r for r, h in zip(rules, row, strict=True) if h]  # in priority order
        if candidates and (found := _no_overlaps(_scan_one(texts[i], candidates, rules))):
            out[i] = found
    for det in params.detectors:
        for i, t in enumerate(texts):  # custom detectors (an LLM judge) see every text
            if found := _custom(det, t):
                out.setdefault(i, []).extend(found)
    return out
