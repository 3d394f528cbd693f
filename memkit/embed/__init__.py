"""Embedders: text -> L2-normalized float32 vectors.

- :mod:`~memkit.embed.hashing` — the :class:`Embedder` protocol and the default
  :class:`HashEmbedder` (offline, deterministic, no download), plus :func:`l2_normalize` and
  :func:`content_hash` (the embedding cache's key);
- :mod:`~memkit.embed.models` — model embedders behind extras (:class:`SentenceTransformerEmbedder`,
  :class:`Model2VecEmbedder`); their libraries load on first use, so ``import memkit`` never pulls
  in torch;
- :mod:`~memkit.embed.fusion` — :class:`FusedEmbedder`, several embedders blended into one vector
  (a model's meaning and the hash embedder's wording in one cosine);
- :mod:`~memkit.embed.spec` — SPECs, an embedder named by a short string (``hash:64``, ``st``,
  ``m2v:PATH``, ``0.7*st,0.3*hash``: ``--embedder``, a settings file's ``embedder``), and the way back
  from an embedder, or from the name a store file records, to its SPEC or the embedder.

>>> HashEmbedder(dim=8).embed(["我住在杭州"]).shape
(1, 8)
"""

from __future__ import annotations

from .fusion import FusedEmbedder
from .hashing import (
    Embedder,
    HashEmbedder,
    check_embedder,
    check_embeddings,
    clear_word_caches,
    content_hash,
    content_hashes,
    l2_normalize,
)
from .models import MINILM, Model2VecEmbedder, SentenceTransformerEmbedder, distill_model2vec
from .spec import check_spec, embedder_from_name, embedder_from_spec, spec_of

__all__ = [
    "MINILM",
    "Embedder",
    "FusedEmbedder",
    "HashEmbedder",
    "Model2VecEmbedder",
    "SentenceTransformerEmbedder",
    "check_embedder",
    "check_embeddings",
    "check_spec",
    "clear_word_caches",
    "content_hash",
    "content_hashes",
    "distill_model2vec",
    "embedder_from_name",
    "embedder_from_spec",
    "l2_normalize",
    "spec_of",
]
