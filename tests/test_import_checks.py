"""What an import (and an export) checks beyond each field: a namespace map naming a namespace the
file lacks, embeddings that would make a memory match nothing, options a format cannot honour
(h118 F8, F10, F14). Every refusal names what to fix and writes nothing. Both backends."""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from conftest import NOW, assert_unchanged, snapshot

import memkit as mk
from memkit.cli import main

LATER = NOW + timedelta(hours=1)


def _export(store: mk.MemoryStore, path: Path, **kw: object) -> list[dict]:
    store.add("User prefers tea", namespace="u1", now=NOW)
    store.add("User lives in Berlin", namespace="u1", now=NOW)
    store.export(path, **kw, now=NOW)
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _b64(vec: np.ndarray) -> str:
    return base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")


# ----------------------------------------------------------------------------- F10: namespace_map
def test_a_namespace_map_naming_a_namespace_the_file_lacks_is_refused(
    store: mk.MemoryStore, tmp_path: Path
) -> None:
    """A typo (``ul`` for ``u1``) imported everything into the file's own namespaces, silently."""
    _export(store, tmp_path / "a.jsonl")
    with mk.MemoryStore() as dst:
        dst.add("already here", namespace="u9", now=NOW)
        before = snapshot(dst)
        with pytest.raises(
            mk.ValidationError, match=r"namespace_map: 'ul': the file holds no such namespace"
        ):
            dst.import_(tmp_path / "a.jsonl", namespace_map={"u1": "alice", "ul": "bob"}, now=LATER)
        assert_unchanged(dst, before)
        report = dst.import_(tmp_path / "a.jsonl", namespace_map={"u1": "alice"}, now=LATER)
        assert set(report["namespace"]) == {"alice"}


def test_a_namespace_map_for_the_namespace_an_empty_export_is_of_imports_nothing(
    store: mk.MemoryStore, tmp_path: Path
) -> None:
    """An export of a namespace whose memories are all gone holds no row of it, but it is that
    namespace's export: mapping it is no typo (the crash test's writer does this)."""
    store.add("User prefers tea", namespace="u2", now=NOW)
    store.export(tmp_path / "empty.jsonl", namespace="u1", now=NOW)
    with mk.MemoryStore() as dst:
        report = dst.import_(tmp_path / "empty.jsonl", namespace_map={"u1": "alice"}, now=LATER)
        assert report.height == 0 and dst.count() == 0
        with pytest.raises(mk.ValidationError, match=r"namespace_map: 'ul'"):
            dst.import_(tmp_path / "empty.jsonl", namespace_map={"ul": "alice"}, now=LATER)


# ------------------------------------------------------------------------------ F14: embeddings
@pytest.mark.parametrize(
    ("vector", "match"),
    [
        (np.zeros(384), r"line 2: embedding: is all zeros .*, but the text.s own vector is not"),
        (np.full(384, 1e30), "line 2: embedding: is too large to normalize"),
        (np.full(384, 1e-30), "line 2: embedding: is all zeros"),  # squares underflow: no direction left
    ],
)
def test_an_embedding_that_points_nowhere_is_refused(
    store: mk.MemoryStore, tmp_path: Path, vector: np.ndarray, match: str
) -> None:
    """It was imported as a zero vector: the memory matched no query by meaning (h118 F14)."""
    lines = _export(store, tmp_path / "a.jsonl", include_embeddings=True)
    lines[1]["embedding"] = _b64(vector)
    bad = _write(tmp_path / "bad.jsonl", lines)
    with mk.MemoryStore() as dst:
        before = snapshot(dst)
        with pytest.raises(mk.FormatError, match=match):
            dst.import_(bad, now=LATER)
        assert_unchanged(dst, before)
        lines[1]["embedding"] = list(vector)  # the same as a list of numbers
        with pytest.raises(mk.FormatError, match=match):
            dst.import_(_write(tmp_path / "list.jsonl", lines), now=LATER)
        assert_unchanged(dst, before)


def test_a_text_without_words_keeps_its_zero_vector(store: mk.MemoryStore, tmp_path: Path) -> None:
    """The hash embedder gives "!!!" (no words) a zero vector: such a line is memkit's own, and its
    export imports exactly, embeddings included."""
    store.add("!!!", namespace="u1", now=NOW)
    lines = _export(store, tmp_path / "a.jsonl", include_embeddings=True)
    assert not np.frombuffer(base64.b64decode(lines[1]["embedding"]), "<f4").any()
    with mk.MemoryStore() as dst:
        assert dst.import_(tmp_path / "a.jsonl", now=LATER)["action"].to_list() == ["added"] * 3
        assert dst.frame(include_embedding=True).equals(store.frame(include_embedding=True))


def test_another_embedders_zero_vector_is_not_used_anyway(store: mk.MemoryStore, tmp_path: Path) -> None:
    """A file of another embedder is re-embedded: its vectors, zero or not, decide nothing."""
    lines = _export(store, tmp_path / "a.jsonl", include_embeddings=True)
    lines[0]["embedder"] = {"name": "other-384", "dim": 384}
    lines[1]["embedding"] = _b64(np.zeros(384))
    with mk.MemoryStore() as dst:
        dst.import_(_write(tmp_path / "b.jsonl", lines), now=LATER)
        assert (
            np.linalg.norm(np.asarray(dst.frame(include_embedding=True)["embedding"].to_list()), axis=1).min()
            > 0.99
        )


# ---------------------------------------------------------------------------- F8: export --to cogx
@pytest.mark.duckdb_only("the command line works on files")
@pytest.mark.parametrize("option", ["--embeddings", "--events"])
def test_export_to_cogx_refuses_what_cogx_cannot_carry(tmp_path: Path, capsys, option: str) -> None:
    db = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(db) as s:
        s.add("User prefers tea", namespace="u1", now=NOW)
    out = tmp_path / "cx"
    assert (
        main(["export", "--db", db, "--to", "cogx", option, str(out), "--now=2026-01-01T00:00:00+00:00"]) == 2
    )
    assert capsys.readouterr().err.startswith(
        f"memkit: ValidationError: {option}: does not apply to --to cogx"
    )
    assert not out.exists()
    with mk.MemoryStore(db) as s:
        assert s.audit(op="export").height == 0
