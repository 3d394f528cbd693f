"""The refusal of a *stale* store: its file holds vectors of another embedder than the one it was
opened with, so it is readable (``export``, ``frame``, ``get``) but a search or a write would mix
incompatible vectors (:meth:`~memkit.store.core.StoreCore._check_writable` raises it).

The advice depends on who wrote the vectors. Written by the hash embedder (an older version of it, or
another dimension), they are cheap to recompute: ``reembed`` migrates the file. Written by a model
(``st-...``, ``m2v-...``, a ``fused(...)`` blend), the fix is to open the file with that model —
``MemoryStore(path, embedder=...)``, or ``--embedder`` on the command line — since ``reembed`` with
the hash embedder would replace the model's vectors with hash vectors.

>>> from memkit.embed import HashEmbedder
>>> str(stale_error("m.duckdb", ("m2v-minilm-256", 256), HashEmbedder()))  # doctest: +ELLIPSIS
"m.duckdb holds embeddings of m2v-minilm-256 (dim 256), not of hash-v3-384-tw0.5 ... --embedder m2v:PATH..."
"""

from __future__ import annotations

from ..embed import Embedder
from ..errors import MemkitError

__all__ = ["stale_error"]

_HASH = "hash-"  # the start of every HashEmbedder's name (hash-v3-384-tw0.5)


def stale_error(path: str, recorded: tuple[str, int], embedder: Embedder) -> MemkitError:
    """The error of a store at ``path`` whose vectors are ``recorded`` (embedder name, dimension)
    while it was opened with ``embedder``, with the advice that fits who wrote them."""
    name, dim = recorded
    head = (
        f"{path} holds embeddings of {name} (dim {dim}), not of {embedder.name} (dim {embedder.dim}):"
        " it is readable (export, frame, get) but not writable or searchable"
    )
    if name.startswith(_HASH):
        return MemkitError(f"{head} until store.reembed() (or `memkit reembed`) migrates it")
    return MemkitError(
        f"{head} with this embedder. Open it with the embedder that wrote it: MemoryStore(path,"
        " embedder=...), or on the command line --embedder st:MODEL, --embedder m2v:PATH or a blend"
        f" (--embedder 0.7*st:MODEL,0.3*hash); store.reembed() (`memkit reembed`) would replace its"
        f" {name} vectors with {embedder.name}'s"
    )
