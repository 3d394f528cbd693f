"""LangGraph labels as memkit names: a lossless percent-encoding, and how the guard reads one.

LangGraph's namespace labels and keys are free text; a memkit name refuses control and invisible
characters and whitespace at either end. :func:`encode_label` writes what a name refuses, and ``%``
itself, as ``%XX`` (UTF-8), so every label round-trips (:func:`decode_label`); a namespace tuple is
its labels joined by ``.`` (LangGraph forbids ``.`` in a label). The LangGraph adapter
(:mod:`memkit.integrations.langgraph`) re-exports these.

The guard must judge what the user wrote, not its escapes (``AKIA%E2%80%8BIOSF…`` hides a key from
a pattern that the decoded ``AKIA\u200bIOSF…`` does not): :func:`unescape` is the lenient decoding
the guard reads a name with (:func:`memkit.guard.names.holds_secret`, the names of
:func:`memkit.guard.fields.screen_fields`), whoever wrote the name.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from urllib.parse import unquote

from ..errors import ValidationError

__all__ = ["decode_label", "decode_namespace", "encode_label", "encode_namespace", "unescape"]


def unescape(name: str) -> str:
    """``name`` with its ``%XX`` escapes decoded, leniently (bytes that are no UTF-8 become U+FFFD):
    the text the guard reads besides the name itself. A name without ``%`` is itself.

    >>> unescape("AKIA%E2%80%8BIOSF"), unescape("50%")
    ('AKIA\u200bIOSF', '50%')
    """
    return unquote(name, errors="replace") if "%" in name else name


def _escaped(c: str, edge: bool) -> bool:
    """Must character ``c`` be percent-escaped in a label (``edge``: at the label's start or end)?

    ``%`` itself (so decoding is unambiguous), control (Cc), surrogate (Cs) and format (Cf:
    zero-width, bidi) characters anywhere, and whitespace at either end: what a memkit name refuses.
    """
    return c == "%" or unicodedata.category(c) in ("Cc", "Cs", "Cf") or (edge and c.isspace())


def encode_label(label: str) -> str:
    """A LangGraph label or key as a memkit name: ``%`` and what memkit names refuse become ``%XX``.

    >>> encode_label("alice"), encode_label(" 50% "), encode_label("用户")
    ('alice', '%2050%25%20', '用户')
    """
    # each escaped character as its UTF-8 bytes (surrogatepass: a lone surrogate round-trips too)
    last = len(label) - 1
    return "".join(
        "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) if _escaped(c, i in (0, last)) else c
        for i, c in enumerate(label)
    )


def decode_label(name: str) -> str:
    """The inverse of :func:`encode_label`: the label whose encoding ``name`` is, or ValidationError
    when it is none's (``"%61lice"`` is not how ``"alice"`` is written, ``"a%C3"`` is no UTF-8, a
    bare ``"50%"`` or an outer space are not escaped): such a name, written without LangGraph, is
    not addressable from LangGraph, so decoding it as a label would hand one tenant another's name.

    >>> decode_label("%2050%25%20"), decode_label("用户")
    (' 50% ', '用户')
    """
    try:
        label = unquote(name, errors="surrogatepass") if "%" in name else name
    except UnicodeDecodeError:
        raise ValidationError("label", f"{name!r} escapes bytes that are no UTF-8") from None
    if encode_label(label) != name:  # one encoding per label: anything else is not one of them
        raise ValidationError("label", f"{name!r} is not a LangGraph label as memkit writes it")
    return label


def encode_namespace(namespace: Sequence[str]) -> str:
    """``("memories", "alice")`` -> ``"memories.alice"`` (labels hold no ``.``: LangGraph forbids it)."""
    return ".".join(encode_label(label) for label in namespace)


def decode_namespace(name: str) -> tuple[str, ...]:
    """``"memories.alice"`` -> ``("memories", "alice")`` (ValidationError: a label is not one
    :func:`decode_label` reads).

    >>> decode_namespace(encode_namespace(("memories", " 50% ")))
    ('memories', ' 50% ')
    """
    return tuple(decode_label(part) for part in name.split("."))
