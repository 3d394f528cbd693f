"""Embedders: text -> L2-normalized float32 vectors.

An embedder is anything with a ``name`` (str), a ``dim`` (int) and ``embed(texts) -> (n, dim)
array``; the store validates what it returns (shape, finiteness) and normalizes it. The default,
:class:`HashEmbedder`, needs no model and no download: it is the "hashing trick" over the tokens of
:mod:`memkit.text` (Latin words, CJK character uni/bigrams) plus character trigrams of Latin words,
so ``"lives"`` still lands near ``"live"``. It is deterministic across processes and machines
because it hashes with blake2b, never with Python's salted ``hash()``. Its ``name`` carries a
version (``hash-v3-...``): vectors of an older tokenization are never mixed with new ones (a
refinement that changes only texts holding rare characters re-embeds those rows when a store
opens instead: :meth:`memkit.store.files.FilesMixin._retokenize`).

Model embedders (optional extras, imported lazily) live in :mod:`memkit.embed_models` and are
re-exported here: :class:`SentenceTransformerEmbedder`, :class:`Model2VecEmbedder`.

>>> e = HashEmbedder(dim=64)
>>> v = e.embed(["我住在杭州", "I live in Hangzhou"])
>>> v.shape, v.dtype
((2, 64), dtype('float32'))
>>> bool(abs(float((v[0] ** 2).sum()) - 1.0) < 1e-6)
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import ValidationError
from ..facts import fact_tokens
from ..params import check_number
from ..schema import check_name
from ..text import light_stem, tokenize

__all__ = [
    "Embedder", "HashEmbedder", "check_embedder", "check_embeddings", "clear_word_caches", "content_hash",
    "l2_normalize",
]  # fmt: skip


@runtime_checkable
class Embedder(Protocol):
    """What the store needs from an embedding model. An optional ``cache`` attribute (default True)
    says whether the store keeps its vectors by text (the ``embed_cache`` table); an optional
    ``fresh_output`` (default False) that ``embed`` returns a new array on every call, which the
    store may then normalize in place instead of copying (a bulk load keeps one matrix, not two)."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``len(texts)`` texts -> an ``(n, dim)`` float array."""
        ...


def content_hash(text: str) -> str:
    """Stable key of a text for the embedding cache: hex blake2b-128 of its UTF-8 bytes."""
    return content_hashes((text,))[0]


def content_hashes(texts: Iterable[str]) -> list[str]:
    """:func:`content_hash` of each text (a bulk write's million texts: one call less per row).

    >>> content_hashes(["tea"]) == [content_hash("tea")]
    True
    """
    b2 = hashlib.blake2b
    return [b2(t.encode("utf-8"), digest_size=16).hexdigest() for t in texts]


def content_digests(texts: Iterable[str]) -> bytes:
    """The 16-byte digests of :func:`content_hashes`, one after another: each one's ``.hex()`` is the
    text's content hash. A bulk write makes its hashes from these as one Arrow array, with no Python
    string per row (:func:`memkit.portable.columns.hex_array`).

    >>> content_digests(["tea", "tee"])[16:].hex() == content_hash("tee")
    True
    """
    b2 = hashlib.blake2b
    return b"".join([b2(t.encode("utf-8"), digest_size=16).digest() for t in texts])


_ROWS = 8192  # rows per block of l2_normalize's norms

UNIT_TOLERANCE = 1e-5
"""A vector whose length is within this of 1 is of unit length: :func:`check_embeddings` keeps it exact."""


def own_embed(embedder: Any, cls: type) -> bool:
    """``embedder`` embeds with ``cls.embed`` itself (a subclass may not): its ``fresh_output``."""
    return type(embedder).embed is cls.embed


def l2_normalize(x: np.ndarray, *, inplace: bool = False) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero (their cosine with anything is 0).
    ``inplace=True`` divides ``x`` itself (a float array the caller owns) instead of a copy."""
    if x.ndim == 2 and len(x) > _ROWS:  # by blocks of rows: norm's squares would take a copy of x
        norms = np.concatenate([np.linalg.norm(x[i : i + _ROWS], axis=-1, keepdims=True)
                                for i in range(0, len(x), _ROWS)])  # fmt: skip
    else:
        norms = np.linalg.norm(x, axis=-1, keepdims=True)  # (n, 1)
    norms[norms == 0] = 1.0  # a zero row divided by 1 stays zero (one pass, no masked divide)
    if inplace:
        x /= norms
        return x
    return x / norms


def check_embeddings(
    x: Any, n: int, dim: int, field: str = "embedding", *, fresh: bool = False, borrow: bool = False
) -> np.ndarray:
    """An embedder's (or a caller's) vectors -> validated, L2-normalized ``(n, dim)`` float32, or
    ValidationError naming ``field``: a wrong shape or a NaN would poison every later search.
    ``fresh=True``: nothing else holds ``x`` (an embedder's new output), so a float32 array is
    normalized in place instead of copied. ``borrow=True``: a C-contiguous float32 array of someone
    else's whose rows are all of unit length already (within :data:`UNIT_TOLERANCE`, or zero) is
    returned as it is, not copied: the caller must copy it before keeping it (a bulk write copies it
    while DuckDB inserts the rows).

    >>> check_embeddings([[3, 4]], 1, 2).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    kind = x.dtype.kind if isinstance(x, np.ndarray) else "f"  # an array says what it holds
    if kind not in "biuf":  # complex (the imaginary part would be dropped), text, objects...
        raise ValidationError(field, f"must be an (n, dim) array of real numbers, got dtype {x.dtype}")
    try:
        arr = np.asarray(x, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValidationError(field, "must be an (n, dim) array of numbers") from None
    if arr.shape != (n, dim):
        raise ValidationError(field, f"expected shape ({n}, {dim}), got {arr.shape}")
    # the array is ours to change when it is the caller's to change (fresh) or a conversion made here
    # (only a conversion of a list or of another ndarray is surely new: an __array__ object, a CPU
    # tensor, a memoryview may hand over memory they keep)
    own = arr is not x and (
        isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and not np.may_share_memory(arr, x))
    )
    if not ((own or (fresh and arr is x)) and arr.flags.writeable):
        # someone else's array (an embedder may reuse it) is copied, and the copy may become the index's
        # matrix: copied and normalized block by block, each block while it is in the cache
        # (borrowing, nothing is copied until a block needs dividing: then the blocks before it)
        out = None if borrow and arr.flags.c_contiguous else np.empty(arr.shape, np.float32)
        for i in range(0, n, _BLOCK):
            given = arr[i : i + _BLOCK]
            norms = _norms(given, arr, field)  # (measured as given: the same sums as in one piece)
            unit = bool((norms == 1.0).all())
            if out is None:
                if unit:
                    continue
                out = np.empty(arr.shape, np.float32)
                out[:i] = arr[:i]
            block = out[i : i + _BLOCK]
            block[...] = given
            if not unit:
                block /= norms
        return arr if out is None else out
    norms = _norms(arr, arr, field)
    if not (norms == 1.0).all():
        arr /= norms
    return arr


_BLOCK = 4096  # rows of a block that check_embeddings copies and normalizes at once (6 MB at dim 384)


def _norms(block: np.ndarray, whole: np.ndarray, field: str) -> np.ndarray:
    """The lengths of ``block``'s rows ``(m, 1)`` float32, 1.0 where a row is of unit length (within
    :data:`UNIT_TOLERANCE`: kept exact, as dividing it would only move its last bits) or zero; or
    ValidationError naming ``field`` when one is not finite (what is wrong is told from ``whole``)."""
    # a NaN, an infinity or a value past ~1e19 makes its row's squared length non-finite; only then is
    # every element looked at, so a million rows need no (n, dim) mask
    with np.errstate(over="ignore", invalid="ignore"):
        squares = np.einsum("...i,...i->...", block, block)
    if not np.isfinite(squares).all():
        if not np.isfinite(whole).all():
            raise ValidationError(field, "contains NaN or infinite values")
        raise ValidationError(
            field, "has a row too large to normalize (its squared length overflows float32)"
        )
    norms = np.sqrt(squares)[:, None]  # (m, 1), float32
    norms[(np.abs(norms - 1.0) < UNIT_TOLERANCE) | (norms == 0)] = 1.0
    return norms


@lru_cache(maxsize=1 << 16)
def _trigrams(token: str, weight: float) -> tuple[tuple[str, float], ...]:
    """The weighted character trigrams of one Latin token (``<`` and ``>`` mark its ends); none for
    short or non-ASCII tokens. Cached: a corpus repeats its words."""
    if not token.isascii() or len(token) <= 2:
        return ()
    padded = f"<{token}>"
    return tuple(("t:" + padded[i : i + 3], weight) for i in range(len(padded) - 2))


@lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """Feature -> (bucket in [0, dim), sign ±1) from 8 bytes of blake2b."""
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return h % dim, 1.0 if (h >> 63) & 1 else -1.0  # subtle: the sign bit is independent of the bucket


def clear_word_caches() -> None:
    """Empty the process-wide caches that hold words of the texts embedded: the trigrams of each
    word, each feature's bucket (``w:peanuts``), the stemmer's words (:func:`memkit.text.light_stem`,
    shared with the keyword index), and the fact tokens of each text consolidation and ``analyze``
    compared (:func:`memkit.facts.fact_tokens`, keyed by the whole text). An erasure calls it, so the
    process keeps no word of what it erased (nor of anything else: the caches fill again with the next
    texts, a few µs per new word).

    >>> _ = HashEmbedder(dim=8).embed(["peanuts"]); clear_word_caches(); _bucket.cache_info().currsize
    0
    """
    _trigrams.cache_clear()
    _bucket.cache_clear()
    light_stem.cache_clear()
    fact_tokens.cache_clear()


_CHUNK = 1 << 16
"""Features :meth:`HashEmbedder.embed` collects before adding them to the matrix."""


def check_embedder(embedder: object) -> Embedder:
    """An embedder the store can use: ``name`` (a name), ``dim`` (1..65536) and ``embed``."""
    if not isinstance(embedder, Embedder):
        raise ValidationError("embedder", "must have name, dim and embed(texts)")
    check_name("embedder.name", embedder.name)
    dim = embedder.dim
    if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= 65536:
        raise ValidationError("embedder.dim", f"must be an int in [1, 65536], got {dim!r}")
    return embedder


class HashEmbedder:
    """Deterministic offline embedder: signed feature hashing of words, CJK n-grams and trigrams.

    Parameters
    ----------
    dim : int
        Vector size (default 384, like all-MiniLM-L6-v2, so benchmarks compare like with like).
    trigram_weight : float
        Weight of the character trigrams of each Latin word, relative to 1.0 for a whole token.

    Similar wording gives similar vectors; meaning without shared characters does not (``"home"`` and
    ``"住址"`` are unrelated to it). That is the honest floor a model embedder must beat.
    """

    cache = False
    """The store does not cache these vectors: computing one (~50 µs) costs less than looking it up
    and storing it. Embedders without this attribute (models) are cached by text."""
    fresh_output = property(lambda self: own_embed(self, HashEmbedder))
    """:meth:`embed` returns a new array on every call: the store normalizes it in place (no copy).
    False in a subclass that overrides ``embed`` (it may return an array it keeps) unless it says so."""

    def __init__(self, dim: int = 384, trigram_weight: float = 0.5) -> None:
        """``dim`` buckets; ``trigram_weight``: weight of Latin words' character trigrams vs whole tokens."""
        if isinstance(dim, bool) or not isinstance(dim, int) or not 8 <= dim <= 65536:
            raise ValidationError("dim", f"must be an int in [8, 65536], got {dim!r}")
        self.dim = dim
        self.trigram_weight = check_number("trigram_weight", trigram_weight, lo=0.0, hi=10.0)
        self.name = f"hash-v3-{dim}-tw{self.trigram_weight:g}"  # v3: irregular lemmas, final e; v2: stemmer

    def features(self, text: str) -> list[tuple[str, float]]:
        """``(feature, weight)`` pairs of one text: ``"Hi!" -> [("w:hi", 1.0), ("t:<hi", 0.5), ...]``."""
        tokens = tokenize(text, keep_stopwords=False) or tokenize(text)
        out = [("w:" + t, 1.0) for t in tokens]
        if self.trigram_weight:
            for t in tokens:
                out += _trigrams(t, self.trigram_weight)
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``n`` texts -> ``(n, dim)`` float32, each row L2-normalized (zero if no tokens)."""
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ValidationError("texts", "must be a list of str")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []

        def add() -> None:
            """Add the collected features to ``out``: in chunks, as a million texts' feature lists
            at once took twice the matrix's memory."""
            np.add.at(out, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)), vals)
            del rows[:], cols[:], vals[:]

        for i, text in enumerate(texts):  # per text, not per memory in a search: runs at write time
            for feat, w in self.features(text):
                b, s = _bucket(feat, self.dim)
                rows.append(i)
                cols.append(b)
                vals.append(s * w)
            if len(rows) >= _CHUNK:
                add()
        add()
        return l2_normalize(out, inplace=True)

    def __repr__(self) -> str:
        """The constructor call that rebuilds this embedder."""
        return f"HashEmbedder(dim={self.dim}, trigram_weight={self.trigram_weight})"
