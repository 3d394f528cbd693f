"""memkit.embed: the offline HashEmbedder (deterministic across processes, normalized, sensible)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import memkit as mk
from memkit.embed import Embedder, HashEmbedder, content_hash, l2_normalize

TEXTS = ["用户住在杭州滨江区", "I live in Hangzhou near West Lake", "喜欢喝美式咖啡", "Ｆｕｌｌ　ｗｉｄｔｈ"]


def _cos(e: HashEmbedder, a: str, b: str) -> float:
    v = e.embed([a, b])
    return float(v[0] @ v[1])


def test_shape_dtype_and_unit_norm() -> None:
    v = HashEmbedder().embed(TEXTS)
    assert v.shape == (4, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-6)
    assert HashEmbedder(dim=16).embed(["x y"]).shape == (1, 16)


def test_text_without_tokens_embeds_to_zero() -> None:
    v = HashEmbedder(dim=32).embed(["!!!", "tea"])
    assert not v[0].any()
    assert float(np.linalg.norm(v[1])) == pytest.approx(1.0, rel=1e-6)


def test_deterministic_in_process_and_per_text() -> None:
    e = HashEmbedder()
    both = e.embed(TEXTS)
    assert np.array_equal(both, e.embed(TEXTS))
    assert np.array_equal(both[1], e.embed([TEXTS[1]])[0])  # batch composition does not matter


_CHILD = f"import sys, memkit as mk; sys.stdout.buffer.write(mk.HashEmbedder().embed({TEXTS!r}).tobytes())"


def test_deterministic_across_processes_with_different_hash_seeds() -> None:
    here = HashEmbedder().embed(TEXTS).tobytes()
    outs = []
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr.decode()
        outs.append(r.stdout)
    assert outs[0] == outs[1] == here


def test_english_similarity_sanity() -> None:
    e = HashEmbedder()
    q = "where do I live"
    assert _cos(e, q, "I live in Hangzhou") > _cos(e, q, "the cat eats fish") + 0.1
    assert _cos(e, "lives", "live") > 0.3  # trigrams and the S stemmer


def test_chinese_similarity_sanity() -> None:
    e = HashEmbedder()
    q = "我住在哪里"
    assert _cos(e, q, "用户住在杭州滨江区") > _cos(e, q, "用户喜欢喝美式咖啡") + 0.1


def test_identical_texts_have_cosine_one() -> None:
    assert _cos(HashEmbedder(), "美式咖啡 coffee", "美式咖啡 coffee") == pytest.approx(1.0, rel=1e-6)


def test_name_depends_on_configuration() -> None:
    assert HashEmbedder(dim=64).name != HashEmbedder(dim=128).name
    assert HashEmbedder(trigram_weight=0.5).name != HashEmbedder(trigram_weight=0.0).name
    assert isinstance(HashEmbedder(), Embedder)


@pytest.mark.parametrize("dim", [4, 0, -8, True, 8.0, "384", 70000])
def test_bad_dim_rejected(dim) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        HashEmbedder(dim=dim)
    assert ei.value.field == "dim"


def test_bad_trigram_weight_rejected() -> None:
    with pytest.raises(mk.ValidationError) as ei:
        HashEmbedder(trigram_weight=-1.0)
    assert ei.value.field == "trigram_weight"


def test_content_hash_stable_hex() -> None:
    h = content_hash("用户住在杭州")
    assert h == content_hash("用户住在杭州") and len(h) == 32 and int(h, 16) >= 0
    assert h != content_hash("用户住在上海")


def test_l2_normalize_keeps_zero_rows() -> None:
    x = np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32)
    np.testing.assert_allclose(l2_normalize(x), [[0.6, 0.8], [0.0, 0.0]])


@pytest.mark.parametrize("tw", ["abc", None])
def test_non_numeric_trigram_weight_is_a_validation_error(tw) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        HashEmbedder(trigram_weight=tw)
    assert ei.value.field == "trigram_weight"


def test_inflections_embed_alike_and_name_carries_tokenizer_version() -> None:
    e = HashEmbedder(dim=256)
    went, goes, stay = e.embed(
        ["She went to the captured lakes", "she goes to the capture lake", "She stays"]
    )
    assert float(went @ goes) > 0.999  # irregular lemma + final-e rule: the same features
    assert float(went @ stay) < 0.5
    assert e.name.startswith("hash-v3-")  # vectors of the v2 tokenizer are never mixed with these
