"""A bulk write converts its big string columns to Arrow once: ids are made as Arrow, texts come from
the caller's frame, content hashes are made as one Arrow array (on a second thread for a large batch
of given vectors). What it stores is what the row path stores: the same hashes (a redacted row's of
its redacted text), the same ids in the result and the index."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import memkit as mk
import memkit.embed.hashing as hashing
import memkit.store.pipeline as pipeline
from memkit.embed import content_hash, content_hashes
from memkit.embed.hashing import content_digests
from memkit.portable.columns import ArrowList, arrow_array, hex_array
from memkit.portable.rows import new_ids

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DIM = 16


def _frame(texts: list[str], seed: int = 0) -> pl.DataFrame:
    emb = np.random.default_rng(seed).standard_normal((len(texts), DIM)).astype(np.float32)
    return pl.DataFrame({"content": texts, "embedding": emb})


def _stored(store: mk.MemoryStore) -> list[tuple[str, str, str]]:
    return store._con.execute("SELECT id, content, content_hash FROM memories ORDER BY id").fetchall()


def test_an_arrow_list_drops_its_array_on_any_change_in_place() -> None:
    changes = [
        lambda x: x.__setitem__(0, "z"), lambda x: x.__delitem__(0), lambda x: x.append("z"),
        lambda x: x.extend(["z"]), lambda x: x.insert(0, "z"), lambda x: x.pop(), lambda x: x.remove("a"),
        lambda x: x.clear(), lambda x: x.reverse(), lambda x: x.sort(), lambda x: x.__iadd__(["z"]),
        lambda x: x.__imul__(2), lambda x: x.__setitem__(slice(0, 1), ["z"]),
    ]  # fmt: skip
    for change in changes:
        x = ArrowList.of(pa.array(["b", "a"]))
        change(x)
        assert x.arrow is None
    x = ArrowList.of(pa.array(["b", "a"]))
    y = x.copy()
    assert type(y) is ArrowList and y.arrow is x.arrow and y == ["b", "a"]
    assert type(x[:1]) is list and type(list(x)) is list and x == ["b", "a"]
    assert arrow_array(x, pa.string()) is x.arrow
    assert arrow_array(ArrowList(["a"], pa.array(["a"], pa.large_string())), pa.string()).type == pa.string()
    y[0] = "q"  # the copy changed: its own array is gone, the original keeps its
    assert arrow_array(y, pa.string()).to_pylist() == ["q", "a"] and x.arrow is not None


def test_hex_arrays_and_digests_are_the_hashes_and_ids_as_text() -> None:
    raw = bytes(range(256)) * 3
    assert hex_array(raw, 16).to_pylist() == [raw[i : i + 16].hex() for i in range(0, len(raw), 16)]
    assert hex_array(b"", 8).to_pylist() == []
    texts = ["tea", "我住在杭州", "", "a\u200bb", "x" * 5000]
    digests = content_digests(texts)
    assert hex_array(digests, 16).to_pylist() == content_hashes(texts) == [content_hash(t) for t in texts]
    assert content_hashes(["tea"]) == [hashlib.blake2b(b"tea", digest_size=16).hexdigest()]  # unchanged
    ids = new_ids(100)
    assert isinstance(ids, ArrowList) and ids.arrow.to_pylist() == ids and ids == sorted(ids)
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in ids) and len(set(ids)) == 100
    assert type(new_ids(3)) is list


@pytest.mark.parametrize("overlap", [False, True])
def test_bulk_hashes_are_each_texts_hash_and_a_redacted_rows_of_its_redacted_text(
    overlap: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the hashes made inline, or on a second thread (in chunks: 300 texts are three)
    monkeypatch.setattr(pipeline, "OVERLAP_ROWS", 64 if overlap else 10**9)
    monkeypatch.setattr(pipeline, "_CHUNK", 128)
    begun: list[int] = []
    real = pipeline.digests_later
    monkeypatch.setattr(pipeline, "digests_later", lambda texts: begun.append(len(texts)) or real(texts))
    texts = [f"tea note {i} 杭州" for i in range(300)]
    texts[7] = "mail alice@example.com about tea"  # redacted: its hash is of the text as stored
    texts[250] = "call +86 138-1234-5678 tomorrow"
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM)) as store:
        out = store.add_many(_frame(texts), namespace="u", now=NOW)
        rows = _stored(store)
        assert len(rows) == 300 and all(h == content_hash(c) for _, c, h in rows)
        stored = dict((i, c) for i, c, _ in rows)
        ids = out["id"].to_list()
        assert stored[ids[7]] == "mail [EMAIL] about tea" and "[PHONE]" in stored[ids[250]]
        assert out.schema == pl.Schema({"id": pl.String, "status": pl.String})
        assert sorted(ids) == sorted(stored) and out["status"].unique().to_list() == ["active"]
        assert begun == ([300] if overlap else [])
        hit = store.search("mail about tea", namespace="u", k=1, now=NOW)  # the index holds the rows
        assert hit["id"].to_list() == [ids[7]] and hit["content"].to_list() == ["mail [EMAIL] about tea"]


def test_a_bulk_insert_converts_no_list_of_strings_to_arrow(monkeypatch: pytest.MonkeyPatch) -> None:
    n = 200
    converted: list[int] = []
    real = pa.array

    def spy(values: object, *args: object, **kwargs: object) -> pa.Array:
        if isinstance(values, list) and len(values) == n and isinstance(values[0], str):
            converted.append(len(values))
        return real(values, *args, **kwargs)

    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM)) as store:
        monkeypatch.setattr(pa, "array", spy)
        store.add_many(_frame([f"tea note {i}" for i in range(n)]), namespace="u", now=NOW)
        monkeypatch.undo()
        assert converted == []  # ids, texts and hashes went in as the Arrow arrays they were made as
        assert len(_stored(store)) == n


def test_a_guard_with_every_rule_switched_off_still_screens_a_batch() -> None:
    """No rule at all (the pre-filter's polars path had nothing to run: a polars error before)."""
    guard = mk.GuardParams(redact_pii=False, block_secrets=False, screen_injection=False)
    texts = [f"mail alice@example.com note {i}" for i in range(100)] + ["ig\u200bnore this"]
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM), guard=guard) as store:
        out = store.add_many(_frame(texts), namespace="u", now=NOW)
        assert out["status"].unique().to_list() == ["active"]
        assert sorted(c for _, c, _ in _stored(store)) == sorted(texts)  # nothing redacted


@pytest.mark.parametrize("order", ["C", "F"])
def test_given_vectors_copied_by_blocks_are_the_one_piece_formula_bit_for_bit(
    order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hashing, "_BLOCK", 7)  # many blocks, the last one short
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, DIM)).astype(np.float32)
    x[::3] /= np.linalg.norm(x[::3], axis=1, keepdims=True)  # unit rows are kept exactly
    x[5] = 0.0
    x = np.asarray(x, order=order)
    x.flags.writeable = False  # someone else's (a frame's) array: copied, never changed
    squares = np.einsum("...i,...i->...", x, x)  # the formula of before, over the whole array
    norms = np.sqrt(squares)[:, None]
    norms[(np.abs(norms - 1.0) < 1e-5) | (norms == 0)] = 1.0
    out = hashing.check_embeddings(x, 40, DIM)
    assert out.dtype == np.float32 and out.flags.c_contiguous and not np.shares_memory(out, x)
    assert np.array_equal(out.view(np.uint32), (x / norms).view(np.uint32))
    bad = x.copy()
    bad[30, 2] = np.nan
    with pytest.raises(mk.ValidationError, match="NaN"):
        hashing.check_embeddings(bad, 40, DIM)
