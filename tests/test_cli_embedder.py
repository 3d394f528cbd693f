"""memkit.cli_embedder: ``--embedder`` on every command that opens a store (helper 100, audit
r5_model_embedder_cli). The CLI always opened with the hash embedder, so a file a model wrote opened
stale: ``analyze``, ``import`` and ``mcp`` could not use it, and the error's advice (``memkit reembed``)
would have replaced the model's vectors with hash vectors.

The models are tiny and built here, offline: a model2vec ``StaticModel`` (a dev dependency) with a
hand-made vocabulary, and a fake ``sentence_transformers`` module for ``st:``.
"""

from __future__ import annotations

import sys
import types
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

import memkit as mk
from memkit.cli import main
from memkit.cli_embedder import OPENS_STORE, embedder_from_spec

T = datetime(2026, 1, 1, tzinfo=UTC)
VOCAB = {"[UNK]": [0, 0, 0], "tea": [2, 0, 0], "green": [1, 0, 1], "lives": [0, 2, 0], "hangzhou": [0, 1, 1]}


@pytest.fixture
def m2v(tmp_path: Path) -> str:
    """A 3-dimensional model2vec model saved to a directory -> its path."""
    pytest.importorskip("model2vec")
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "m2v-tiny"
    StaticModel(vectors=np.array(list(VOCAB.values()), dtype=np.float32), tokenizer=tok).save_pretrained(path)
    return str(path)


@pytest.fixture
def model_db(tmp_path: Path, m2v: str) -> str:
    """A store file written with the model."""
    db = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(db, embedder=mk.embed.Model2VecEmbedder(m2v)) as s:
        s.add("the user lives in Hangzhou", namespace="u", key="city", now=T)
        s.add("the user drinks green tea", namespace="u", key="drink", now=T)
    return db


def test_without_embedder_a_model_file_is_stale_and_the_error_names_the_option(
    model_db: str, tmp_path: Path, capsys
) -> None:
    other = tmp_path / "other.jsonl"
    with mk.MemoryStore() as s:
        s.add("the user likes tea", namespace="u", now=T)
        s.export(other, "u", now=T)
    assert main(["import", str(other), "--db", model_db, "--now", T.isoformat()]) == 2
    err = capsys.readouterr().err
    assert "m2v-m2v-tiny-3" in err and "--embedder m2v:PATH" in err and "would replace" in err


def test_every_command_that_opens_a_store_takes_the_models_embedder(
    model_db: str, m2v: str, tmp_path: Path, capsys
) -> None:
    opt = ["--embedder", f"m2v:{m2v}"]
    assert main(["info", model_db, *opt]) == 0
    assert "stale" not in capsys.readouterr().out
    assert main(["analyze", "--db", model_db, "--now", T.isoformat(), *opt]) == 0
    out = tmp_path / "u.jsonl"
    assert main(["export", str(out), "--db", model_db, "--namespace", "u", "--now", T.isoformat(), *opt]) == 0
    other = tmp_path / "other.jsonl"
    with mk.MemoryStore() as s:
        s.add("the user likes tea", namespace="u", now=T)
        s.export(other, "u", now=T)
    assert main(["import", str(other), "--db", model_db, "--now", T.isoformat(), *opt]) == 0
    assert main(["reidentify", "alice@example.com", "--db", model_db, *opt]) == 0
    assert main(["copy", model_db, str(tmp_path / "copy.duckdb"), *opt]) == 0
    capsys.readouterr()
    with mk.MemoryStore(model_db, embedder=mk.embed.Model2VecEmbedder(m2v)) as s:
        hits = s.search("green tea", namespace="u", k=3, now=T, reinforce=False)  # not stale: searchable
        assert hits["content"][0] == "the user drinks green tea" and s.count() == 3
    assert set(OPENS_STORE) == {"info", "export", "import", "analyze", "reembed", "mcp", "copy", "reidentify"}


def test_mcp_serves_a_model_file_with_the_models_embedder(model_db: str, m2v: str, monkeypatch) -> None:
    pytest.importorskip("mcp")
    import memkit.integrations.mcp as mcp_module

    served: dict[str, object] = {}
    real = mcp_module.build_server

    def build(store: mk.MemoryStore, **kw: object) -> object:
        real(store, **kw)  # type: ignore[arg-type]
        served["embedder"] = store.embedder.name
        served["hits"] = store.search("where does the user live", namespace="u", now=T)["content"].to_list()
        return types.SimpleNamespace(run=lambda: None)  # not over stdio: the test has no client

    monkeypatch.setattr(mcp_module, "build_server", build)
    assert main(["mcp", "--db", model_db, "--namespace", "u", "--embedder", f"m2v:{m2v}"]) == 0
    assert served["embedder"] == "m2v-m2v-tiny-3" and served["hits"][0] == "the user lives in Hangzhou"


def test_reembed_migrates_to_the_named_embedder(tmp_path: Path, m2v: str, capsys) -> None:
    db = str(tmp_path / "h.duckdb")
    with mk.MemoryStore(db) as s:
        s.add("the user lives in Hangzhou", namespace="u", now=T)
    assert main(["reembed", "--db", db, "--embedder", f"m2v:{m2v}"]) == 0
    assert "with m2v-m2v-tiny-3" in capsys.readouterr().out
    with mk.MemoryStore(db, embedder=mk.embed.Model2VecEmbedder(m2v)) as s:
        assert s.search("Hangzhou", namespace="u", now=T, reinforce=False).height == 1


@pytest.mark.parametrize(
    "spec",
    ["bert", "m2v:", "m2v:/no/such/model", "hash:x", "hash:4", "0.5*hash", "0*hash,1*hash", "x*hash,1*hash"],
)
def test_a_bad_embedder_is_an_error_naming_the_option_and_creates_nothing(
    spec: str, tmp_path: Path, capsys
) -> None:
    db = tmp_path / "new.duckdb"
    assert main(["mcp", "--db", str(db), "--create", "--namespace", "u", "--embedder", spec]) == 2
    assert "ValidationError: --embedder" in capsys.readouterr().err and not db.exists()
    with pytest.raises(mk.ValidationError) as ei:
        embedder_from_spec(spec)
    assert ei.value.field == "--embedder"


@pytest.mark.parametrize(
    ("spec", "module", "extra"),
    [("m2v:/some/model", "model2vec", "model2vec"), ("st", "sentence_transformers", "minilm")],
)
def test_a_missing_extra_names_the_option_and_the_install(
    spec: str, module: str, extra: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    db = tmp_path / "new.duckdb"
    assert main(["import", str(tmp_path / "x.jsonl"), "--db", str(db), "--create", "--embedder", spec]) == 2
    err = capsys.readouterr().err
    assert f"MissingDependency: --embedder {spec}" in err and f"memkit[{extra}]" in err and not db.exists()


def test_st_and_blends(fake_st: None, tmp_path: Path) -> None:
    assert embedder_from_spec("st").name == "st-all-MiniLM-L6-v2-4"  # alone: the shipped MiniLM
    assert embedder_from_spec(f"st:{tmp_path}/tiny").name == "st-tiny-4"
    fused = embedder_from_spec(f"0.7*st:{tmp_path}/tiny, 0.3*hash:16")
    assert fused.name == "fused(0.7*st-tiny-4,0.3*hash-v3-16-tw0.5)" and fused.dim == 20
    assert embedder_from_spec("hash").name == mk.HashEmbedder().name


def test_a_hash_files_stale_error_keeps_the_reembed_advice(tmp_path: Path) -> None:
    db = str(tmp_path / "h64.duckdb")
    with mk.MemoryStore(db, embedder=mk.HashEmbedder(dim=64)) as s:
        s.add("the user lives in Hangzhou", namespace="u", now=T)
    with mk.MemoryStore(db) as s, pytest.raises(mk.MemkitError) as ei:
        s.search("Hangzhou", namespace="u", now=T)
    assert "until store.reembed()" in str(ei.value) and "--embedder" not in str(ei.value)
