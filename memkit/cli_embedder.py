"""``--embedder SPEC``: the embedder a command of the CLI opens its store with (:mod:`memkit.cli`,
:mod:`memkit.operate`).

A store file records the embedder that wrote its vectors; opened with another one it is *stale*:
readable, but not searchable or writable (:mod:`memkit.store.stale`). The commands open a store with
the hash embedder unless told otherwise, so a file written with a model needs the model named, as
``MemoryStore(path, embedder=...)`` would name it in Python:

=====================  ====================================================================================
SPEC                   embedder
=====================  ====================================================================================
``hash`` (default)     :class:`~memkit.embed.HashEmbedder` (``hash:DIM``: another dimension)
``st[:MODEL]``         :class:`~memkit.embed.SentenceTransformerEmbedder`: a model directory or name
                       (alone: the all-MiniLM-L6-v2 that ``memkit[minilm]`` ships)
``m2v:PATH``           :class:`~memkit.embed.Model2VecEmbedder`: a model2vec directory (``memkit[model2vec]``)
``W*SPEC,W*SPEC...``   :class:`~memkit.embed.FusedEmbedder` of those parts and weights, as a blend's
                       name lists them (``0.7*st,0.3*hash``; a path in a blend may not hold a comma)
=====================  ====================================================================================

A bad SPEC (or a model that does not load) is a :class:`~memkit.errors.ValidationError` naming
``--embedder``; a missing extra is :class:`~memkit.errors.MissingDependency` naming ``--embedder``
and the pip command. Either is raised before the database is opened, so nothing is created or written.

>>> embedder_from_spec("hash:64").name
'hash-v3-64-tw0.5'
>>> embedder_from_spec("0.75*hash:16,0.25*hash:8").name
'fused(0.75*hash-v3-16-tw0.5,0.25*hash-v3-8-tw0.5)'
>>> embedder_from_spec("bert")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
memkit.errors.ValidationError: --embedder: 'bert' is not hash[:DIM], st[:MODEL], m2v:PATH or a blend ...
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from .embed import (
    MINILM,
    Embedder,
    FusedEmbedder,
    HashEmbedder,
    Model2VecEmbedder,
    SentenceTransformerEmbedder,
)
from .errors import MemkitError, MissingDependency, ValidationError
from .store import MemoryStore

__all__ = [
    "OPENS_STORE",
    "OPTION",
    "add_embedder_option",
    "add_embedder_options",
    "embedder_from_spec",
    "open_store",
]

OPTION = "--embedder"
_FORMS = "hash[:DIM], st[:MODEL], m2v:PATH or a blend W*SPEC,W*SPEC"


def add_embedder_option(p: argparse.ArgumentParser) -> None:
    """``--embedder SPEC`` on a command that opens a store (default ``hash``)."""
    p.add_argument(
        OPTION, default="hash", metavar="SPEC",
        help="the embedder the file was written with: hash (default), st[:MODEL], m2v:PATH, 0.7*st,0.3*hash",
    )  # fmt: skip


def embedder_from_spec(spec: str) -> Embedder:
    """``--embedder``'s value -> the embedder it names (module docstring); the model is loaded now."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValidationError(OPTION, f"must be one of {_FORMS}, got {spec!r}")
    spec = spec.strip()
    try:
        if "*" in spec.split(":", 1)[0]:  # a blend: 0.7*st:MODEL,0.3*hash
            return FusedEmbedder([_part(p) for p in spec.split(",")])
        return _one(spec)
    except MissingDependency as e:
        raise MissingDependency(f"{OPTION} {spec}: {e}") from None
    except ValidationError as e:
        if e.field == OPTION:
            raise
        raise ValidationError(OPTION, f"{spec!r}: {e}") from None
    except MemkitError:
        raise
    except Exception as e:  # the model's library could not load it: a missing file, a bad directory
        raise ValidationError(
            OPTION, f"{spec!r} could not be loaded ({type(e).__name__}: {e})"[:400]
        ) from None


def _part(text: str) -> tuple[Embedder, float]:
    """``"0.7*st:MODEL"`` -> (the embedder, 0.7): one part of a blend."""
    weight, star, spec = text.strip().partition("*")
    try:
        w = float(weight)
    except ValueError:
        w = math.nan
    if not star or not math.isfinite(w) or w <= 0 or "*" in spec.split(":", 1)[0]:
        raise ValidationError(OPTION, f"{text.strip()!r} is not a blend's part W*SPEC with a weight W > 0")
    return _one(spec.strip()), w


def _one(spec: str) -> Embedder:
    """One embedder's SPEC (not a blend) -> the embedder."""
    kind, sep, arg = spec.partition(":")
    if kind == "hash":
        if not sep:
            return HashEmbedder()
        if not arg.isdigit():
            raise ValidationError(OPTION, f"{spec!r}: hash:DIM needs a whole number of dimensions")
        return HashEmbedder(dim=int(arg))
    if kind == "st" and (arg or not sep):
        return SentenceTransformerEmbedder(arg or MINILM)
    if kind == "m2v" and arg:
        return Model2VecEmbedder(arg)
    raise ValidationError(OPTION, f"{spec!r} is not {_FORMS}")


OPENS_STORE = ("info", "export", "import", "analyze", "reembed", "mcp", "copy", "reidentify")
"""The commands that open a store, and so take ``--embedder``."""


def add_embedder_options(sub: argparse._SubParsersAction) -> None:
    """``--embedder`` on every command of ``sub`` that opens a store (:data:`OPENS_STORE`)."""
    for name in OPENS_STORE:
        add_embedder_option(sub.choices[name])


def open_store(path: str, args: argparse.Namespace, **options: Any) -> MemoryStore:
    """``MemoryStore(path, embedder=<--embedder>, **options)``: the embedder is built (its model
    loaded, or the error raised) before the database is opened."""
    return MemoryStore(path, embedder=embedder_from_spec(args.embedder), **options)
