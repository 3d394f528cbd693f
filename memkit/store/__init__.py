"""The store: the only package that imports duckdb. :class:`MemoryStore` is assembled from mixins,
one file each (see :mod:`memkit.store.memory` for the parts and what each adds):

- ``core`` — the connection, transactions and the state every part declares; ``retry`` — which
  failed transactions run again, and how often they did (``store.retries``);
- ``migrations`` — the schema as numbered migrations; ``files`` — open, migrate, compact, close;
  ``compaction`` — when a file is compacted (after erasures, and a file left due);
- ``audit`` — the one writer of events; ``vectors`` — embeddings, inserts, the index kept in step;
  ``reembed`` — every vector recomputed with another embedder;
- ``index_columns`` and ``index`` — the numpy search index: its columns and masks, and ranking;
- ``gate`` — the read gate; ``guard`` — the guard stage of every write;
- ``versions`` — the version plan of keyed writes; ``resolve`` — a key settled; ``pipeline`` — the
  one write pipeline;
- ``write``, ``review``, ``read``, ``search``, ``merge``, ``maintain``, ``portable`` — the public
  methods, each a thin entrance to the pipeline or the gate; ``settable`` — the parameters an open
  store may be given (``store.guard = ...``), each checked.
"""

from __future__ import annotations

from .memory import MemoryStore

__all__ = ["MemoryStore"]
