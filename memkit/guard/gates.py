"""Gates for the guard's batch pre-filter (:func:`memkit.guard.scanner.scan_rows`): several rules'
patterns as one alternation, which picks the texts any of them may match.

Over a million short texts, one polars ``str.contains`` per rule (41 of them) took ~3 s, though most
texts match none; five gates of eight rules each take ~0.4 s, and the rules run one by one only on
the texts a gate let through. A gate must match wherever one of its rules does, so each pattern goes
in as written but for two changes that only widen what it matches (:func:`gate_part`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

__all__ = ["APART", "GATE_RULES", "WIDE", "gate_part", "gates"]

GATE_RULES = 8
"""Rules per gate: a few big automata, none so big that the regex engine's lazy DFA thrashes its cache."""
WIDE = 4
"""A bounded repetition ``{m,n}`` with ``n - m`` at least this is opened to ``{m,}`` in a gate."""
APART = 4
"""A branch with at least this many open repetitions (``{m,}``: gaps such as ``[^.!?\n]{0,}?``) gets a gate of
its own: in a union, the automaton tracks every branch's gaps at once and grows with their product (five
such rules in one gate: 2.2 s over the guard benchmark's 13k texts; each alone 0.02 s)."""
_REPEAT = re.compile(r"\{(\d+),(\d+)\}")
_OPENED = re.compile(r"\{\d+,\}")
_NAMED = re.compile(r"\(\?P?<[A-Za-z_][A-Za-z0-9_]*>")  # (?P<v>, (?<v>; not (?<= or (?<!
_OPEN = re.compile(r"\^?\]?")  # what may follow a class's "[" and still belong to it: ^ and a literal ]
_VERBOSE = re.compile(r"\(\?[a-zA-Z-]*x")  # the x flag: a "#" comment would swallow the gate's ")"


@lru_cache(maxsize=1024)
def gate_part(pattern: str) -> str | None:
    r"""A pre-filter ``pattern`` (Rust's regex syntax) as one branch of a gate, or None when it is not
    sure to mean there what it means alone (the ``x`` flag; an unclosed class).

    Outside character classes, named groups become plain ones (two rules may name theirs alike, which
    one regex refuses) and wide bounded repetitions open: ``[^.!?\n]{0,40}?`` -> ``[^.!?\n]{0,}?``. The
    automaton of a union of counted repetitions is too big for the fast engine (all 41 rules in one
    alternation: 30 s for a million texts; opened: 0.4 s). Both only widen what matches.

    >>> print(gate_part(r"(?i)say(?P<v>[^.!?\n]{0,40}?) now[]{0,40}]a{2,3}\{0,9}"))
    (?i)say(?:[^.!?\n]{0,}?) now[]{0,40}]a{2,3}\{0,9}
    >>> gate_part("(?x)a # b"), gate_part("[[a]")
    (None, None)
    """
    if _VERBOSE.search(pattern):
        return None
    out, i, depth = [], 0, 0  # depth: inside how many character classes (Rust's may nest)
    while i < len(pattern):
        c, m = pattern[i], None
        if c == "\\":  # an escaped character, in a class or not, as it is
            take = put = pattern[i : i + 2]
        elif c == "[":
            take = put = "[" + _OPEN.match(pattern, i + 1).group()
            depth += 1
        elif depth:
            take = put = c
            depth -= c == "]"
        elif m := _REPEAT.match(pattern, i):
            take, put = m.group(), f"{{{m[1]},}}" if int(m[2]) - int(m[1]) >= WIDE else m.group()
        elif m := _NAMED.match(pattern, i):
            take, put = m.group(), "(?:"
        else:
            take = put = c
        out.append(put)
        i += len(take)
    return "".join(out) if depth == 0 else None


def gates(parts: Sequence[str]) -> list[str]:
    """Branches (:func:`gate_part`) -> alternations of :data:`GATE_RULES` each, but for a branch with
    :data:`APART` open gaps or more, which is a gate alone. A rule's flags stay in its own group:
    ``(?:(?i)abc)|(?:DEF)`` does not match ``def``.

    >>> gates(["(?i)abc", "DEF", "a.{0,}b.{0,}c.{0,}d.{1,}e"])
    ['(?:(?i)abc)|(?:DEF)', '(?:a.{0,}b.{0,}c.{0,}d.{1,}e)']
    """
    apart = [len(_OPENED.findall(p)) >= APART for p in parts]
    rest = [p for p, a in zip(parts, apart, strict=True) if not a]
    return [
        *("|".join(f"(?:{p})" for p in rest[k : k + GATE_RULES]) for k in range(0, len(rest), GATE_RULES)),
        *(f"(?:{p})" for p, a in zip(parts, apart, strict=True) if a),
    ]
