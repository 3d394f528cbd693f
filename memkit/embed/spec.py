"""Embedder SPECs: the short strings that name an embedder — ``--embedder`` on the command line, the
``embedder`` entry of a settings file — and the ways back to one from an embedder or from the name a
store file records.

=====================  ====================================================================================
SPEC                   embedder
=====================  ====================================================================================
``hash``               :class:`~memkit.embed.HashEmbedder` (``hash:DIM``: another dimension)
``st[:MODEL]``         :class:`~memkit.embed.SentenceTransformerEmbedder`: a model directory or name
                       (alone: the all-MiniLM-L6-v2 that ``memkit[minilm]`` ships)
``m2v:PATH``           :class:`~memkit.embed.Model2VecEmbedder`: a model2vec directory (``memkit[model2vec]``)
``W*SPEC,W*SPEC...``   :class:`~memkit.embed.FusedEmbedder` of those parts and weights, as a blend's
                       name lists them (``0.7*st,0.3*hash``; a path in a blend may not hold a comma)
=====================  ====================================================================================

- :func:`embedder_from_spec`: SPEC -> the embedder (a model is loaded now);
- :func:`check_spec`: SPEC -> its canonical form, checking the form only (no model is loaded: what a
  settings file holds is checked when it is read, the model loaded when a store opens with it);
- :func:`spec_of`: an embedder -> the SPEC that rebuilds it, or None when no SPEC can (your own
  embedder, a hash embedder of another trigram weight, a blend whose part's path holds a comma);
- :func:`embedder_from_name`: the name a store file records -> its embedder, when memkit can build it
  from the name alone without downloading anything: the hash embedder of this version (any dimension
  and trigram weight), the MiniLM of ``memkit[minilm]`` when that extra is installed, a blend of such
  parts (its weights as the name records them, to 6 significant digits). A name holding no path
  (``m2v-minilm-256``: which directory?) or an older hash version (whose vectors this memkit no longer
  makes) gives None.

>>> check_spec("embedder", " 7*st, 3*hash:384 ")
'0.7*st,0.3*hash'
>>> spec_of(HashEmbedder(dim=64)), spec_of(FusedEmbedder([(HashEmbedder(dim=16), 3), (HashEmbedder(), 1)]))
('hash:64', '0.75*hash:16,0.25*hash')
>>> embedder_from_name("hash-v3-64-tw0.5", 64)
HashEmbedder(dim=64, trigram_weight=0.5)
>>> embedder_from_name("m2v-minilm-256", 256) is None
True
>>> check_spec("embedder", "bert")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
memkit.errors.ValidationError: embedder: 'bert' is not hash[:DIM], st[:MODEL], m2v:PATH or a blend ...
"""

from __future__ import annotations

import math
import re

from ..errors import MemkitError, MissingDependency, ValidationError
from .fusion import FusedEmbedder
from .hashing import Embedder, HashEmbedder
from .models import MINILM, Model2VecEmbedder, SentenceTransformerEmbedder

__all__ = ["FORMS", "check_spec", "embedder_from_name", "embedder_from_spec", "spec_of"]

FORMS = "hash[:DIM], st[:MODEL], m2v:PATH or a blend W*SPEC,W*SPEC"
"""The forms of a SPEC, as error messages list them."""

_DEFAULT = HashEmbedder()  # `hash` alone: its dimension and trigram weight
_HASH_NAME = re.compile(r"hash-v\d+-(\d+)-tw(.+)")  # hash-v3-384-tw0.5 (HashEmbedder.name)
_MINILM_NAME = re.compile(r"st-all-MiniLM-L6-v2-\d+")  # the shipped MiniLM (SentenceTransformerEmbedder)

Part = tuple[float | None, str, str]
"""One embedder of a SPEC: (its weight in a blend, or None alone; kind ``hash``/``st``/``m2v``; argument)."""


def _parse(spec: object, field: str) -> list[Part]:
    """A SPEC -> its parts (one, of weight None, unless a blend), or ValidationError naming ``field``.
    The form only: no model is loaded (a hash dimension is checked, which costs nothing)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValidationError(field, f"must be one of {FORMS}, got {spec!r}")
    spec = spec.strip()
    if "*" not in spec.split(":", 1)[0]:
        return [(None, *_one(spec, field))]
    parts = []
    for text in spec.split(","):  # a blend: 0.7*st:MODEL,0.3*hash
        weight, star, one = text.strip().partition("*")
        try:
            w = float(weight)
        except ValueError:
            w = math.nan
        if not star or not math.isfinite(w) or w <= 0 or "*" in one.split(":", 1)[0]:
            raise ValidationError(field, f"{text.strip()!r} is not a blend's part W*SPEC with a weight W > 0")
        parts.append((w, *_one(one.strip(), field)))
    if len(parts) < 2:
        raise ValidationError(field, f"{spec!r}: a blend has at least two parts, W*SPEC,W*SPEC")
    return parts


def _one(spec: str, field: str) -> tuple[str, str]:
    """One embedder's SPEC (not a blend) -> (kind, argument): ``"hash:64" -> ("hash", "64")``."""
    kind, sep, arg = spec.partition(":")
    if kind == "hash":
        if sep and not arg.isdigit():
            raise ValidationError(field, f"{spec!r}: hash:DIM needs a whole number of dimensions")
        dim = int(arg) if sep else _DEFAULT.dim
        try:
            HashEmbedder(dim=dim)  # its range of dimensions, checked now (nothing to load)
        except ValidationError as e:
            raise ValidationError(field, f"{spec!r}: {e}") from None
        return "hash", str(dim)
    if kind == "st" and (arg or not sep):
        return "st", "" if arg == MINILM else arg
    if kind == "m2v" and arg:
        return "m2v", arg
    raise ValidationError(field, f"{spec!r} is not {FORMS}")


def _text(kind: str, arg: str) -> str:
    """(kind, argument) -> its canonical SPEC: ``("hash", "384") -> "hash"``, ``("st", "") -> "st"``."""
    if kind == "hash":
        return "hash" if int(arg) == _DEFAULT.dim else f"hash:{arg}"
    return f"{kind}:{arg}" if arg else kind


def check_spec(field: str, spec: object) -> str:
    """``spec`` checked (its form; no model loaded) -> its canonical form: parts without spaces,
    ``hash`` for ``hash:384``, ``st`` for the shipped MiniLM, a blend's weights summing to 1.
    A bad one is a ValidationError naming ``field``."""
    parts = _parse(spec, field)
    if parts[0][0] is None:
        return _text(*parts[0][1:])
    total = sum(w for w, _, _ in parts if w is not None)
    shares = [w / total for w, _, _ in parts if w is not None]
    if not math.isfinite(total) or not all(share > 0 for share in shares):  # (1e308 + 1e308; 1e-320 of 1)
        raise ValidationError(
            field, f"{spec!r}: a blend's weights must sum to a finite number, each a share > 0"
        )
    return ",".join(f"{_weight(share)}*{_text(k, a)}" for share, (_, k, a) in zip(shares, parts, strict=True))


def _weight(w: float) -> str:
    """A blend's weight as text: short when that is exact (``0.7``), else every digit (``1/3``)."""
    return f"{w:g}" if float(f"{w:g}") == w else repr(w)


def _build(kind: str, arg: str) -> Embedder:
    """(kind, argument) -> the embedder (a model is loaded)."""
    if kind == "hash":
        return HashEmbedder(dim=int(arg))
    if kind == "st":
        return SentenceTransformerEmbedder(arg or MINILM)
    return Model2VecEmbedder(arg)


def embedder_from_spec(spec: object, field: str = "embedder") -> Embedder:
    """``spec`` -> the embedder it names (module docstring); the model is loaded now.

    A bad SPEC, or a model that does not load, is a :class:`~memkit.errors.ValidationError` naming
    ``field``; a missing extra a :class:`~memkit.errors.MissingDependency` naming ``field``, the
    SPEC and the pip command.
    """
    parts = _parse(spec, field)
    spec = str(spec).strip()
    try:
        if parts[0][0] is None:
            return _build(*parts[0][1:])
        return FusedEmbedder([(_build(k, a), w) for w, k, a in parts if w is not None])
    except MissingDependency as e:
        raise MissingDependency(f"{field} {spec}: {e}") from None
    except ValidationError as e:
        raise ValidationError(field, f"{spec!r}: {e}") from None
    except MemkitError:
        raise
    except Exception as e:  # the model's library could not load it: a missing file, a bad directory
        why = f"{spec!r} could not be loaded ({type(e).__name__}: {e})"
        raise ValidationError(field, why[:400]) from None


def spec_of(embedder: object) -> str | None:
    """The canonical SPEC that rebuilds ``embedder`` (a model from the path it was loaded from, as
    given), or None when none can: your own embedder (or a subclass of memkit's), a hash embedder
    of another trigram weight, a blend holding a blend or a path with a comma."""
    if type(embedder) is FusedEmbedder:
        parts = [spec_of(e) for e, _ in embedder.parts]
        if any(p is None or "," in p or "*" in p.split(":", 1)[0] for p in parts):
            return None
        blend = ",".join(f"{w!r}*{p}" for p, (_, w) in zip(parts, embedder.parts, strict=True))
        return check_spec("embedder", blend)
    if type(embedder) is HashEmbedder and embedder.trigram_weight == _DEFAULT.trigram_weight:
        return _text("hash", str(embedder.dim))
    if type(embedder) is SentenceTransformerEmbedder:
        return _text("st", "" if embedder.model_name_or_path == MINILM else embedder.model_name_or_path)
    if type(embedder) is Model2VecEmbedder:
        return _text("m2v", embedder.path)
    return None


def embedder_from_name(name: str, dim: int | None = None) -> Embedder | None:
    """The embedder whose ``name`` (and ``dim``, when given) a store file records, when memkit can build
    it without downloading anything (module docstring), else None. What it builds has exactly that
    name and dimension, or it is not returned.

    >>> embedder_from_name("fused(0.75*hash-v3-16-tw0.5,0.25*hash-v3-8-tw0)").dim
    24
    >>> embedder_from_name("hash-v2-384-tw0.5") is None  # an older version: `reembed` migrates it
    True
    """
    try:
        built = _from_name(name)
    except Exception:  # an extra missing, a model that does not load, a number out of range: not here
        return None
    if built is None or built.name != name or (dim is not None and built.dim != dim):
        return None
    return built


def _from_name(name: str) -> Embedder | None:
    """:func:`embedder_from_name` before its check: ``hash-v3-64-tw0.5 -> HashEmbedder(dim=64)``."""
    if m := _HASH_NAME.fullmatch(name):
        return HashEmbedder(dim=int(m[1]), trigram_weight=float(m[2]))
    if _MINILM_NAME.fullmatch(name):  # from the wheel of memkit[minilm]: no download
        return SentenceTransformerEmbedder(MINILM)
    if not (name.startswith("fused(") and name.endswith(")")):
        return None  # m2v-..., st-<another model>: the name holds no path to load it from
    parts = []
    for part in _top_level(name[len("fused(") : -1]):
        weight, _, inner = part.partition("*")
        embedder = embedder_from_name(inner)
        if embedder is None:
            return None
        parts.append((embedder, float(weight)))
    return FusedEmbedder(parts)


def _top_level(text: str) -> list[str]:
    """``"0.5*a,0.5*fused(0.5*b,0.5*c)"`` -> its comma-separated items outside parentheses."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    return [*items, text[start:]]
