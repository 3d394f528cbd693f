"""Fusion across embedders: one vector whose cosine is a weighted mean of its parts' cosines.

Each part's vector is L2-normalized and scaled by ``sqrt(weight)``, and the parts are concatenated.
For two texts with unit part vectors ``a_i`` and ``b_i``, the fused cosine is therefore

    cos(fused(a), fused(b)) = Σ w_i · cos(a_i, b_i) / Σ w_i

exactly (the fused vector's length is ``sqrt(Σ w_i)`` for both), so a model embedder and the
lexical :class:`~memkit.embed.hashing.HashEmbedder` can be blended inside one index, one cosine per
memory, with no change to the store or its search. A part that finds nothing in a text (the hash
embedder on punctuation) contributes a zero vector, and that text's fused length is smaller: the
store normalizes, so the other parts then carry it alone.

>>> import numpy as np
>>> from memkit.embed import HashEmbedder
>>> e = FusedEmbedder([(HashEmbedder(dim=16), 0.75), (HashEmbedder(dim=8), 0.25)])
>>> e.dim, e.name
(24, 'fused(0.75*hash-v3-16-tw0.5,0.25*hash-v3-8-tw0.5)')
>>> v = e.embed(["I live in Hangzhou", "I live in Hangzhou now"])
>>> parts = [p.embed(["I live in Hangzhou", "I live in Hangzhou now"]) for p, _ in e.parts]
>>> mixed = 0.75 * float(parts[0][0] @ parts[0][1]) + 0.25 * float(parts[1][0] @ parts[1][1])
>>> bool(abs(float(v[0] @ v[1]) - mixed) < 1e-6)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..errors import ValidationError
from .hashing import Embedder, l2_normalize, own_embed

__all__ = ["FusedEmbedder"]


class FusedEmbedder:
    """Several embedders as one: ``FusedEmbedder([(model, 0.7), (HashEmbedder(), 0.3)])``.

    ``parts`` are ``(embedder, weight)`` pairs, weights > 0 (they are normalized to sum 1). The
    ``name`` records every part's name and weight, so a store written with one blend refuses another
    (as it refuses any other embedder) until ``reembed``.
    """

    fresh_output = property(lambda self: own_embed(self, FusedEmbedder))
    """:meth:`embed` returns a new array on every call (False in a subclass that overrides it)."""

    def __init__(self, parts: Sequence[tuple[Embedder, float]]) -> None:
        """Check the parts and weights; the fused dimension is the sum of the parts'."""
        if not isinstance(parts, Sequence) or isinstance(parts, str) or len(parts) < 2:
            raise ValidationError("parts", "must be a list of at least two (embedder, weight) pairs")
        checked: list[tuple[Embedder, float]] = []
        for i, part in enumerate(parts):
            if not (isinstance(part, tuple) and len(part) == 2 and isinstance(part[0], Embedder)):
                raise ValidationError(f"parts[{i}]", "must be an (embedder, weight) pair")
            w = part[1]
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0:
                raise ValidationError(f"parts[{i}]", f"weight must be a finite number > 0, got {w!r}")
            checked.append((part[0], float(w)))
        total = sum(w for _, w in checked)
        self.parts = [(e, w / total) for e, w in checked]
        self.dim = sum(int(e.dim) for e, _ in self.parts)
        self.name = "fused(" + ",".join(f"{w:g}*{e.name}" for e, w in self.parts) + ")"
        self._scale = [np.float32(math.sqrt(w)) for _, w in self.parts]
        self.cache = any(getattr(e, "cache", True) for e, _ in self.parts)  # a model part is worth caching

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``n`` texts -> ``(n, dim)`` float32: each part's unit vectors times ``sqrt(weight)``,
        side by side, then the whole row normalized."""
        blocks = []
        for (e, _), scale in zip(self.parts, self._scale, strict=True):
            x = np.asarray(e.embed(texts), dtype=np.float32)
            if x.shape != (len(texts), e.dim):
                raise ValidationError(
                    "embed", f"{e.name} returned shape {x.shape}, expected ({len(texts)}, {e.dim})"
                )
            blocks.append(l2_normalize(x) * scale)
        return l2_normalize(np.hstack(blocks))

    def __repr__(self) -> str:
        """The parts and their (normalized) weights."""
        return f"FusedEmbedder({[(e, round(w, 6)) for e, w in self.parts]!r})"
