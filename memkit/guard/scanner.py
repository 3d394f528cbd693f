"""The guard's detection engine (pure): which rules apply, the batch pre-filter, exact spans.

:func:`scan_rows` is what :func:`memkit.guard.scan` and :func:`memkit.guard.screen_many` run: the
rules switched on by :class:`~memkit.params.GuardParams` (:mod:`memkit.guard_rules`, plus
never-remember topics and extra patterns), pre-filtered over the whole batch — one polars
``str.contains`` per rule, or Python's ``re`` for a handful of texts — then, only for the texts
with a candidate match, exact spans and checks in Python, decoded base64 payloads screened again,
overlapping PII resolved, and the custom detectors run.

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
from ..text import FOLD, INVISIBLE, fold, strip_invisible
from . import rules as gr

__all__ = ["scan_rows"]

_PLACEHOLDER_TYPE = {
    "[EMAIL]": "email",
    "[PHONE]": "phone",
    "[ID_NUMBER]": "id_number",
    "[CARD]": "card",
    "[IP]": "ip",
}
_PRINTABLE = 0.85  # share of printable characters for a base64 run to count as a hidden text payload


def _rules(params: GuardParams) -> list[gr.Rule]:
    """The rules ``params`` switches on, built-ins first, then topics and extra patterns."""
    rules = [
        r for r in gr.RULES
        if (r.kind == "pii" and params.redact_pii and _PLACEHOLDER_TYPE[r.placeholder] in params.pii)
        or (r.kind == "secret" and params.block_secrets)
        or (r.kind == "injection" and params.screen_injection)
    ]  # fmt: skip
    if params.block_secrets:
        for topic in params.never_remember:
            edge = r"\b" if topic[0].isascii() and topic[0].isalnum() else ""
            code, kind, sev, msg = gr.TOPIC
            rules.append(gr.Rule(code, kind, sev, "(?i)" + edge + re.escape(topic), f"{msg} ({topic})"))
        rules += [gr.Rule(*gr.EXTRA_SECRET[:3], p, gr.EXTRA_SECRET[3]) for p in params.extra_secret_patterns]
    if params.screen_injection:
        rules += [
            gr.Rule(*gr.EXTRA_INJECTION[:3], p, gr.EXTRA_INJECTION[3])
            for p in params.extra_injection_patterns
        ]
        enc = params.min_encoded_chars
        rules += [gr.HIDDEN, gr.ENCODED._replace(pattern=rf"[A-Za-z0-9+/]{{{enc},}}={{0,2}}")]
    return rules


def _payload(run: str) -> str | None:
    """The text a base64 run decodes to, if it is mostly printable text (hashes and binary are not)."""
    try:
        raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\n\t" for c in text)
    return text if text and printable / len(text) >= _PRINTABLE else None


_ALWAYS_HIDDEN = re.compile("[\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")  # bidi overrides, tags


def _hidden(text: str) -> tuple[int, int, int] | None:
    """(first, last + 1, count) of the invisible characters that hide something: bidi overrides and
    tag characters anywhere; zero-width characters only inside a word (splitting a token, the
    evasion trick). Copy-paste debris next to a space, a leading BOM and a zero-width joiner
    inside an emoji sequence are innocent."""
    pos = []
    for m in re.finditer(f"[{INVISIBLE}]+", text):
        s, e = m.span()
        before, after = text[s - 1 : s], text[e : e + 1]
        inside = before.isalnum() and after.isalnum()  # the run splits a word: ig\u200bnore
        if _ALWAYS_HIDDEN.search(m.group()) or inside:
            pos += range(s, e)
    return (pos[0], pos[-1] + 1, len(pos)) if pos else None


def _scan_one(text: str, rules: Sequence[gr.Rule], every: Sequence[gr.Rule], depth: int = 0) -> list[Finding]:
    """Findings of ``rules`` in one text (spans in ``text``); a decoded payload is screened with
    ``every`` injection rule."""
    clean, keep = strip_invisible(fold(text))
    back = (lambda i: i) if keep is None else (lambda i: keep[i] if i < len(keep) else len(text))
    out: list[Finding] = []
    for r in rules:
        if r is gr.HIDDEN:
            if (h := _hidden(text)) is not None:
                out.append(Finding(r.code, r.kind, f"{r.message}: {h[2]} characters", r.severity, h[0], h[1]))
            continue
        for m in _compiled(r.pattern).finditer(clean):
            s, e = m.span()
            if s == e or (r.check is not None and not r.check(clean, s, e)):
                continue
            msg, sev = r.message, r.severity
            if r is gr.ENCODED or r.code == gr.ENCODED.code:
                inner = _payload(m.group())
                if inner is None:
                    continue
                inj = [x for x in every if x.kind == "injection"]
                hidden = depth == 0 and any(f.kind == "injection" for f in _scan_one(inner, inj, inj, 1))
                if hidden:
                    msg, sev = "encoded (base64) payload hiding an injection", "warning"
            out.append(Finding(r.code, r.kind, msg, sev, back(s), back(e - 1) + 1))
    return out


def _no_overlaps(findings: list[Finding]) -> list[Finding]:
    """Keep the first PII finding (rule priority, then longest) of any overlapping group."""
    kept: list[Finding] = []
    for f in findings:
        if f.kind == "pii" and any(k.kind == "pii" and f.start < k.end and k.start < f.end for k in kept):
            continue
        kept.append(f)
    return kept


def _custom(detector: Any, text: str) -> list[Finding]:
    try:
        found = detector(text)
        out = [f if isinstance(f, Finding) else Finding(**f) for f in (found or ())]
    except MemkitError:
        raise
    except Exception as e:
        name = getattr(detector, "__name__", type(detector).__name__)
        raise MemkitError(f"guard detector {name} failed: {type(e).__name__}: {e}") from e
    for f in out:
        if f.end is not None and f.end > len(text):
            raise ValidationError("finding.end", f"span {f.start}..{f.end} is outside the text ({len(text)})")
    return out


_POLARS_FROM = 64  # batches at least this long are pre-filtered in polars; shorter ones in Python


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _prefilter(texts: list[str], rules: Sequence[gr.Rule]) -> np.ndarray:
    """Which rule may match which text: ``(n texts, n rules)`` booleans. One polars
    ``str.contains`` per rule over the batch (parallel, in Rust); for a handful of texts the fixed
    cost of building polars expressions dominates, so they are checked with Python's ``re``."""
    if len(texts) < _POLARS_FROM:
        folded = [fold(t) for t in texts]
        clean = [strip_invisible(t)[0] for t in folded]
        return np.array(
            [[bool(_compiled(r.pattern).search(f if r is gr.HIDDEN else c)) for r in rules]
             for f, c in zip(folded, clean, strict=True)], dtype=bool,
        ).reshape(len(texts), len(rules))  # fmt: skip
    src = pl.Series("t", texts, dtype=pl.String).str.replace_many(
        [chr(k) for k in FOLD], [chr(v) for v in FOLD.values()]
    )
    clean = src.str.replace_all(f"[{INVISIBLE}]", "")
    mask = pl.DataFrame({"t": clean, "raw": src}).select(
        (pl.col("raw") if r is gr.HIDDEN else pl.col("t")).str.contains(r.pattern).alias(f"r{i}")
        for i, r in enumerate(rules)
    )  # computed in parallel by polars
    return mask.to_numpy()


def scan_rows(texts: list[str], params: GuardParams) -> dict[int, list[Finding]]:
    """Findings per text index, for the texts that have any (spans in the original texts)."""
    out: dict[int, list[Finding]] = {}
    if not params.enabled or not texts:
        return out
    rules = _rules(params)
    hit = _prefilter(texts, rules)
    for i in np.flatnonzero(hit.any(axis=1)):  # only rows with at least one candidate match
        candidates = [r for r, h in zip(rules, hit[i], strict=True) if h]
        if found := _no_overlaps(_scan_one(texts[i], candidates, rules)):
            out[int(i)] = found
    for det in params.detectors:
        for i, t in enumerate(texts):  # custom detectors (an LLM judge) see every text
            if found := _custom(det, t):
                out.setdefault(i, []).extend(found)
    return out
