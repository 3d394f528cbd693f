"""The refusal of a *stale* store: its file holds vectors of another embedder than the one it was
opened with, so it is readable (``export``, ``frame``, ``get``) but a search or a write would mix
incompatible vectors (:meth:`~memkit.store.core.StoreCore._check_writable` raises it).

The advice depends on who wrote the vectors. Written by the hash embedder (an older version of it, or
another dimension), they are cheap to recompute: ``reembed`` migrates the file. Written by a model
(``st-...``, ``m2v-...``, a ``fused(...)`` blend), the fix is to open the file with that model —
``MemoryStore(path, embedder=...)``, or ``--embedder`` on the command line — since ``reembed`` with
the hash embedder would replace the model's vectors with hash vectors.

The error is a :class:`~memkit.errors.ValidationError` naming ``embedder``: the embedder the store was
opened with is what does not fit. Its ``reembed`` advice names the embedder the migration would go
to (``memkit reembed --embedder hash:64`` when the store was opened with ``hash:64``: the plain
``memkit reembed`` migrates to ``hash``, and so would never make the file fit). A store whose
embedder came from its settings (``settings=``, the CLI's ``--settings``) and does not fit the file
says so at the open (:func:`warn_stale_settings`): the file opens readable, but the settings'
searches and writes would all be refused.

>>> from memkit.embed import HashEmbedder
>>> str(stale_error("m.duckdb", ("m2v-minilm-256", 256), HashEmbedder()))  # doctest: +ELLIPSIS
"embedder: m.duckdb holds embeddings of m2v-minilm-256 (dim 256), not of hash-v3-384-tw0.5 ... m2v:PATH..."
>>> str(stale_error("m.duckdb", ("hash-v3-384-tw0.5", 384), HashEmbedder(dim=64)))  # doctest: +ELLIPSIS
'embedder: ... until store.reembed() (or `memkit reembed --embedder hash:64`) migrates it'
"""

from __future__ import annotations

import warnings

from ..embed import Embedder, embedder_from_name, spec_of
from ..errors import ValidationError

__all__ = ["stale_error", "warn_stale_settings"]

_HASH = "hash-"  # the start of every HashEmbedder's name (hash-v3-384-tw0.5)


def stale_error(path: str, recorded: tuple[str, int], embedder: Embedder) -> ValidationError:
    """The error of a store at ``path`` whose vectors are ``recorded`` (embedder name, dimension)
    while it was opened with ``embedder``, with the advice that fits who wrote them."""
    name, dim = recorded
    head = (
        f"{path} holds embeddings of {name} (dim {dim}), not of {embedder.name} (dim {embedder.dim}):"
        " it is readable (export, frame, get) but not writable or searchable"
    )
    if name.startswith(_HASH):
        spec = spec_of(embedder)  # the migration's target: the embedder the store was opened with
        cli = "memkit reembed" if spec == "hash" else f"memkit reembed --embedder {spec or 'SPEC'}"
        return ValidationError("embedder", f"{head} until store.reembed() (or `{cli}`) migrates it")
    return ValidationError(
        "embedder",
        f"{head} with this embedder. Open it with the embedder that wrote it: MemoryStore(path,"
        " embedder=...), or on the command line --embedder st:MODEL, --embedder m2v:PATH or a blend"
        f" (--embedder 0.7*st:MODEL,0.3*hash); store.reembed() (`memkit reembed`) would replace its"
        f" {name} vectors with {embedder.name}'s",
    )


def warn_stale_settings(path: str, recorded: tuple[str, int], spec: str, source: str | None) -> None:
    """A UserWarning naming ``embedder``: the settings (from the file ``source``, if one) name the
    embedder ``spec``, which did not write the store at ``path`` (its vectors are ``recorded``'s), so
    it opened stale; the two ways out."""
    built = embedder_from_name(*recorded)  # the file's own embedder, when memkit can build it
    own = f"embedder=, --embedder {spec_of(built)}" if built is not None and spec_of(built) else "embedder="
    cli = f"`memkit reembed --db {path} --settings {source}`" if source else "`memkit reembed --embedder`"
    warnings.warn(
        f"embedder: the settings name {spec!r}{f' (settings file {source!r})' if source else ''}, but"
        f" {path} was written by {recorded[0]} (dim {recorded[1]}): it is open stale, readable but not"
        f" searchable or writable; open it with the embedder that wrote it ({own}) to use it as it is,"
        f" or migrate it to {spec!r} with store.reembed() ({cli})",
        UserWarning,
        stacklevel=3,
    )
