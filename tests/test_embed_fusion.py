"""FusedEmbedder: several embedders blended into one vector whose cosine is the weighted mean."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

import memkit as mk
from memkit.embed import FusedEmbedder, HashEmbedder

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TEXTS = ["I live in Hangzhou", "我住在杭州", "She moved to Shanghai last spring", "tea at 3pm", "!!!"]


def _cos(x: np.ndarray) -> np.ndarray:
    return x @ x.T


def test_the_fused_cosine_is_the_weighted_mean_of_the_parts() -> None:
    a, b = HashEmbedder(dim=64), HashEmbedder(dim=48, trigram_weight=0.25)
    fused = FusedEmbedder([(a, 3.0), (b, 1.0)])  # weights are normalized: 0.75 / 0.25
    assert (fused.dim, [w for _, w in fused.parts]) == (112, [0.75, 0.25])
    texts = TEXTS[:4]
    assert all(np.linalg.norm(e.embed(texts), axis=1).min() > 0.99 for e in (a, b))  # no zero rows
    want = 0.75 * _cos(a.embed(texts)) + 0.25 * _cos(b.embed(texts))
    got = fused.embed(texts)
    assert got.dtype == np.float32 and got.shape == (4, 112)
    np.testing.assert_allclose(_cos(got), want, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_a_text_no_part_understands_is_a_zero_vector() -> None:
    fused = FusedEmbedder([(HashEmbedder(dim=16), 0.5), (HashEmbedder(dim=8), 0.5)])
    assert not fused.embed(["!!!"]).any()


def test_the_name_records_the_blend() -> None:
    one = FusedEmbedder([(HashEmbedder(dim=16), 0.7), (HashEmbedder(dim=8), 0.3)])
    other = FusedEmbedder([(HashEmbedder(dim=16), 0.6), (HashEmbedder(dim=8), 0.4)])
    assert one.name != other.name and "0.7*hash-v3-16" in one.name
    assert "FusedEmbedder" in repr(one)


@pytest.mark.parametrize(
    ("parts", "field"),
    [
        ([], "parts"),
        ("hash", "parts"),
        ([(HashEmbedder(dim=8), 1.0)], "parts"),  # one part is not a blend
        ([(HashEmbedder(dim=8), 1.0), ("model", 1.0)], r"parts\[1\]"),
        ([(HashEmbedder(dim=8), 1.0), (HashEmbedder(dim=8), 0)], r"parts\[1\]"),
        ([(HashEmbedder(dim=8), float("nan")), (HashEmbedder(dim=8), 1)], r"parts\[0\]"),
        ([(HashEmbedder(dim=8), True), (HashEmbedder(dim=8), 1)], r"parts\[0\]"),
    ],
)
def test_bad_parts_name_the_field(parts, field) -> None:
    with pytest.raises(mk.ValidationError, match=field):
        FusedEmbedder(parts)


def test_a_part_that_returns_the_wrong_shape_is_refused() -> None:
    class Broken:
        name, dim = "broken", 8

        def embed(self, texts):
            return np.ones((len(texts), 4), dtype=np.float32)

    with pytest.raises(mk.ValidationError, match="broken"):
        FusedEmbedder([(HashEmbedder(dim=8), 1.0), (Broken(), 1.0)]).embed(["x"])


def test_a_store_searches_with_a_blend_and_refuses_another_blend(tmp_path: Path) -> None:
    path = str(tmp_path / "m.duckdb")
    blend = FusedEmbedder([(HashEmbedder(dim=64), 0.7), (HashEmbedder(dim=32, trigram_weight=0.0), 0.3)])
    with mk.MemoryStore(path, embedder=blend) as s:
        for t in TEXTS[:4]:
            s.add(t, namespace="u", now=NOW)
        hits = s.search("where does she live? Hangzhou", namespace="u", now=NOW, k=1)
        assert hits["content"].to_list() == ["I live in Hangzhou"]
    other = FusedEmbedder([(HashEmbedder(dim=64), 0.5), (HashEmbedder(dim=32, trigram_weight=0.0), 0.5)])
    with mk.MemoryStore(path, embedder=other) as s, pytest.raises(mk.MemkitError, match="reembed"):
        s.search("Hangzhou", namespace="u", now=NOW)
