"""Memories in and out of memkit: the versioned JSONL format, other tools' formats, sample data.

- :mod:`~memkit.portable.fields` — one validator per Memory field (strict: a bad file names its line),
  with :mod:`~memkit.portable.strictjson` (JSON without NaN, duplicates or overflow) and
  :mod:`~memkit.portable.columns` (a field's polars and Arrow types);
- :mod:`~memkit.portable.jsonl` — memkit's own format: :func:`write` / :func:`read` (header + one
  memory per line, exact round-trip; the store's ``export`` / ``import_`` use it), with
  :mod:`~memkit.portable.lessons` (the guard's lessons as lines of their own, format version 2) and
  :mod:`~memkit.portable.lines` (the one JSONL line reader: lines end at ``\\n`` only);
- :mod:`~memkit.portable.plan` — what an import does with each line (new, skipped, overwrite);
- :mod:`~memkit.portable.rows` — a batch of writes (a polars frame) -> validated, typed rows;
- :mod:`~memkit.portable.records` — what the adapters share (records -> a frame, their times,
  ``add_frame``);
- :mod:`~memkit.portable.adapters` — chat messages, mem0 exports and any file -> a frame for
  ``MemoryStore.add_many``;
- :mod:`~memkit.portable.cogx` — cognee's COGX graph format, both ways;
- :mod:`~memkit.portable.sample` — the bilingual sample memories the demo and lessons load;
- :mod:`~memkit.portable.semantic` — the semantic sample set (paraphrases, near-misses; real
  sentence-embedding vectors) that makes the lessons' sliders move.

Only :mod:`memkit.store` touches the database; this package is files, frames and plain values.
"""

from __future__ import annotations

from .columns import arrow_batch as arrow_batch  # these four: old names of memkit.portable, kept
from .jsonl import EMBEDDING_ENCODING as EMBEDDING_ENCODING
from .jsonl import FORMAT, ON_CONFLICT, VERSION, Column, Parsed, read, write
from .plan import check_namespace_map as check_namespace_map
from .plan import plan_import as plan_import
from .semantic import SEMANTIC_NOW, SemanticEmbedder, load_semantic, load_semantic_queries, semantic_into

__all__ = [
    "FORMAT", "ON_CONFLICT", "VERSION", "Column", "Parsed", "read", "write",
    "SEMANTIC_NOW", "SemanticEmbedder", "load_semantic", "load_semantic_queries", "semantic_into",
]  # fmt: skip
