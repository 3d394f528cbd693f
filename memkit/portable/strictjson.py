"""Strict JSON for files memkit reads: one line of text -> a value, or a FormatError naming the line.

Python's ``json`` is lenient in three ways that matter for an all-or-nothing import, and
:func:`loads` closes each of them:

- a repeated key (``{"a": 1, "a": 2}``) silently keeps the last value: here it is an error, since a
  hand-edited line could otherwise carry a second ``namespace`` that a reviewer never sees;
- ``NaN``, ``Infinity`` and ``-Infinity`` are accepted as tokens: they are not JSON;
- a number such as ``1e999`` overflows to ``inf`` without going through the ``NaN`` hook.

Errors are :class:`~memkit.errors.FormatError`\\ s built by :func:`fail`, whose message starts with
the line: ``line 3: json: duplicate key 'a'``.

>>> loads('{"a": 1}', 1)
{'a': 1}
>>> loads('{"a": 1, "a": 2}', 3)
Traceback (most recent call last):
...
memkit.errors.FormatError: line 3: json: duplicate key 'a'
>>> loads('[1e999]', 4)
Traceback (most recent call last):
...
memkit.errors.FormatError: line 4: json: 1e999 overflows to infinity
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..errors import FormatError

__all__ = ["fail", "loads"]


def fail(line: int | None, name: str, message: str, *, file: str | None = None) -> FormatError:
    """A FormatError about field ``name`` of line ``line`` (returned, for the caller to raise).

    The line number is also kept as the error's ``line`` attribute, so a caller (the CLI, a
    notebook) can point at the line without parsing the message. ``file`` names the file too (a
    COGX archive has several): ``facts.jsonl line 3: json: ...``; ``line=None`` is a whole file
    parsed as one JSON value (a manifest, a mem0 export): ``manifest.json: json: ...``.

    >>> str(fail(3, "json", "bad", file="facts.jsonl")), str(fail(None, "json", "bad", file="m.json"))
    ('facts.jsonl line 3: json: bad', 'm.json: json: bad')
    """
    at = " ".join(p for p in (file, None if line is None else f"line {line}") if p)
    err = FormatError(f"{at}: {name}" if at else name, message)
    err.line = line  # type: ignore[attr-defined]
    return err


def _reject_constant(token: str) -> Any:
    """``parse_constant`` hook: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON."""
    raise ValueError(f"{token} is not valid JSON (non-finite numbers are rejected)")


def _finite_float(token: str) -> float:
    """``parse_float`` hook: the number, unless it overflows a float."""
    v = float(token)
    if not np.isfinite(v):  # subtle: "1e999" parses to inf without going through parse_constant
        raise ValueError(f"{token} overflows to infinity")
    return v


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: the object as a dict, unless a key repeats (then name the first one)."""
    d = dict(pairs)
    if len(d) != len(pairs):  # the slow search runs only on the error path
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {dup!r}")
    return d


def loads(text: str, line: int | None, *, file: str | None = None) -> Any:
    """Parse one line of JSON strictly (see the module docstring) -> the value.

    ``line`` and ``file`` only name the place in the error (:func:`fail`; ``line=None``: a whole
    file); nesting too deep for Python's parser is an error too, rather than a RecursionError
    escaping from a file read.
    """
    try:
        return json.loads(
            text, parse_constant=_reject_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
        )
    except RecursionError:
        raise fail(line, "json", "is nested too deeply", file=file) from None
    except ValueError as e:  # JSONDecodeError is a ValueError, and so are the hooks' errors
        raise fail(line, "json", str(e), file=file) from None
