"""The one JSONL line reader: bytes -> numbered lines of text, split on ``\\n`` only.

JSONL (https://jsonlines.org) ends a record at ``\\n``; a ``\\r`` before it is tolerated (a file
saved with Windows line ends). Python's ``str.splitlines`` splits on more: U+2028 and U+2029 (the
line and paragraph separators), U+0085 (NEL), ``\\x0b``, ``\\x0c`` and ``\\x1c``-``\\x1e``, all of
which JSON allows *unescaped inside a string* (``json.dumps(..., ensure_ascii=False)`` writes them
raw). A text pasted from a web page often holds U+2028, so a reader built on ``splitlines`` cuts such
a record in two and refuses a valid file (or, worse, numbers every later line wrongly). Every JSONL
reader of memkit (its own format, chat logs, COGX archives, the sample sets) goes through
:func:`numbered`, so they all split the same way.

>>> [(n, t, ended) for n, t, ended in numbered(b'{"a": "x\\xe2\\x80\\xa8y"}\\r\\n{"b": 2}')]
[(1, '{"a": "x\\u2028y"}', True), (2, '{"b": 2}', False)]
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator

from .strictjson import fail

__all__ = ["numbered"]


def numbered(source: bytes | Iterable[bytes], file: str | None = None) -> Iterator[tuple[int, str, bool]]:
    """``(line number, text, ended)`` for each line of ``source``: the bytes of a whole file, or a file
    opened in binary mode (read as it goes: a large export is never held whole).

    ``text`` is the line decoded as UTF-8 without its ``\\n`` (nor a ``\\r`` before it); ``ended`` says
    whether the line ended with ``\\n`` (a file cut off mid-line has a last line that did not). Bad
    UTF-8 is a :class:`~memkit.errors.FormatError` naming the line (and ``file``, when given) and the
    first bad byte. An empty source yields nothing; blank lines are yielded (the caller decides).
    """
    # subtle: iterating a binary stream splits on b"\n" only (never on U+2028, whose UTF-8 bytes
    # hold no b"\n"), which is exactly JSONL's rule
    for n, raw in enumerate(io.BytesIO(source) if isinstance(source, bytes) else source, 1):
        ended = raw.endswith(b"\n")
        body = raw[:-1] if ended else raw
        if body.endswith(b"\r"):  # CRLF: the \r belongs to the line end, not to the record
            body = body[:-1]
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as e:
            bad = body[e.start : e.start + 1]
            raise fail(n, "line", f"is not valid UTF-8 (byte {e.start}: {bad!r})", file=file) from None
        yield n, text, ended
