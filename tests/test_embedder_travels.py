"""From prototype to production, the embedder travels too (helper 107).

Before: the CLI opened every file with the hash embedder unless ``--embedder`` named one, so a file
written with ``hash:64``, a hash blend or the shipped MiniLM opened *stale* on every call; a settings
file held everything tuned but the embedder (a blend's weights!); and ``mk.load_settings(path)``
named the field of an error but not the file. Now:

- a command without ``--embedder`` opens a file with the embedder it records when memkit can build it
  from the name (read read-only first: nothing created or changed), ``--embedder`` always winning;
- ``Settings.embedder`` (a SPEC) is saved and loaded, opens ``MemoryStore(settings=)`` and the CLI's
  ``--settings`` with that embedder unless one is given (which wins, with a UserWarning naming
  ``embedder``), and ``store.settings`` reports the store's own;
- ``load_settings`` errors name the file.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memkit as mk
from memkit.cli import main
from memkit.cli_embedder import file_embedder
from memkit.store.recorded import recorded_embedder

T = datetime(2026, 1, 1, tzinfo=UTC)
NOW = ["--now", T.isoformat()]
H64 = mk.HashEmbedder(dim=64)
BLEND = mk.embed.FusedEmbedder([(mk.HashEmbedder(dim=16), 0.75), (mk.HashEmbedder(dim=8), 0.25)])


def _store_file(tmp_path: Path, embedder: mk.embed.Embedder, name: str = "m.duckdb") -> str:
    """A store file written with ``embedder``, one memory in namespace ``u``."""
    db = str(tmp_path / name)
    with mk.MemoryStore(db, embedder=embedder) as s:
        s.add("the user lives in Hangzhou", namespace="u", now=T)
    return db


def _jsonl(tmp_path: Path) -> Path:
    """A memkit JSONL file of one memory (without embeddings: the store embeds it)."""
    out = tmp_path / "in.jsonl"
    with mk.MemoryStore() as s:
        s.add("the user drinks green tea", namespace="u", now=T)
        s.export(out, "u", now=T)
    return out


def _files(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file of ``folder``: its modification time and bytes (what "nothing changed" compares)."""
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(folder.iterdir())}


# ------------------------------------------------------------------------------- the file's own
@pytest.mark.parametrize("embedder", [H64, BLEND], ids=["hash64", "blend"])
def test_a_command_without_embedder_opens_the_file_with_the_one_it_records(
    embedder: mk.embed.Embedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: `import` refused (stale: hash-v3-384 is not the file's), `info` said stale=..."""
    db = _store_file(tmp_path, embedder)
    assert main(["info", db]) == 0
    out = capsys.readouterr().out
    assert f"embedder={embedder.name}," in out and "stale" not in out
    assert main(["import", str(_jsonl(tmp_path)), "--db", db, *NOW]) == 0
    assert main(["analyze", "--db", db, *NOW]) == 0
    with mk.MemoryStore(db, embedder=embedder) as s:
        assert s.count() == 2 and s.search("tea", namespace="u", now=T, reinforce=False).height


def test_the_shipped_minilm_is_opened_when_its_extra_is_installed(
    fake_st: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _store_file(tmp_path, mk.embed.SentenceTransformerEmbedder())
    assert main(["import", str(_jsonl(tmp_path)), "--db", db, *NOW]) == 0
    assert main(["info", db]) == 0
    assert "embedder=st-all-MiniLM-L6-v2-4," in capsys.readouterr().out
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # the extra gone: stale, with advice
    assert main(["import", str(_jsonl(tmp_path)), "--db", db, *NOW]) == 2
    assert "st-all-MiniLM-L6-v2-4" in capsys.readouterr().err


def test_explicit_embedder_wins_and_reembed_still_migrates_to_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _store_file(tmp_path, H64)
    assert main(["info", db, "--embedder", "hash"]) == 0
    assert f"stale={H64.name}" in capsys.readouterr().out  # named: that one, though the file's differs
    assert main(["reembed", "--db", db]) == 0  # the embedder to migrate to: hash, as before
    assert f"with {mk.HashEmbedder().name}" in capsys.readouterr().out
    assert recorded_embedder(db) == (mk.HashEmbedder().name, 384)


def test_a_new_file_keeps_the_hash_default(tmp_path: Path) -> None:
    db = tmp_path / "new.duckdb"
    assert file_embedder(db) is None and not db.exists()  # nothing recorded, nothing made
    assert main(["import", str(_jsonl(tmp_path)), "--db", str(db), "--create", *NOW]) == 0
    assert recorded_embedder(db) == (mk.HashEmbedder().name, 384)


def test_reading_the_record_creates_and_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    db = _store_file(folder, H64)
    (folder / "other.duckdb").write_bytes(b"not a database")
    before = _files(folder)
    assert recorded_embedder(db) == (H64.name, 64)
    assert recorded_embedder(folder / "other.duckdb") is None  # the open says why
    assert recorded_embedder(folder / "missing.duckdb") is None
    assert recorded_embedder(":memory:") is None
    assert _files(folder) == before  # no .wal, .lock or .reads; the bytes as they were


def test_a_locked_file_is_the_opens_error(tmp_path: Path) -> None:
    db = _store_file(tmp_path, H64)
    with mk.MemoryStore(db, embedder=H64):  # held by this process: the record is not read
        assert recorded_embedder(db) is None
        assert main(["info", db]) == 2


def test_a_server_store_records_its_embedder_too(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert recorded_embedder(url) is None  # an empty schema: nothing recorded
    with mk.MemoryStore(url, settings=mk.Settings(embedder="hash:64")) as s:  # the settings' embedder
        s.add("the user lives in Hangzhou", namespace="u", now=T)
        assert s.settings.embedder == "hash:64"
    assert recorded_embedder(url) == (H64.name, 64)
    assert main(["info", url]) == 0
    assert f"embedder={H64.name}," in capsys.readouterr().out


# ---------------------------------------------------------------------------------- settings
@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_the_embedder_is_saved_and_loaded(tmp_path: Path, suffix: str) -> None:
    tuned = mk.Settings(weights=mk.Weights(similarity=0.4, keyword=0.6), embedder="7*hash:16, 3*hash:8")
    assert tuned.embedder == "0.7*hash:16,0.3*hash:8"  # its canonical form
    path = tmp_path / f"memkit{suffix}"
    mk.save_settings(path, tuned)
    assert "0.7*hash:16,0.3*hash:8" in path.read_text() and mk.load_settings(path) == tuned
    mk.save_settings(path, mk.Settings())  # not recorded: not written, loads as None (files of before)
    assert "embedder" not in path.read_text() and mk.load_settings(path).embedder is None


def test_a_store_opens_with_the_settings_embedder_and_reports_its_own(tmp_path: Path) -> None:
    path = tmp_path / "memkit.toml"
    mk.save_settings(path, mk.Settings(embedder="hash:64"))
    with mk.MemoryStore(settings=path) as s:
        assert s.embedder.name == H64.name and s.settings.embedder == "hash:64"
    with mk.MemoryStore(embedder=BLEND) as s:
        assert s.settings.embedder == "0.75*hash:16,0.25*hash:8"
        with mk.MemoryStore(settings=s.settings) as again:
            assert again.embedder.name == BLEND.name


def test_an_explicit_embedder_wins_with_a_warning_naming_embedder(tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match="^embedder: the settings name 'hash:64'"):
        s = mk.MemoryStore(embedder=mk.HashEmbedder(dim=32), settings=mk.Settings(embedder="hash:64"))
    with s:
        assert s.embedder.dim == 32
    with mk.MemoryStore(embedder=H64, settings=mk.Settings(embedder="hash:64")) as same:  # no warning
        assert same.embedder.dim == 64


def test_assigned_settings_keep_the_stores_embedder_with_a_warning() -> None:
    with mk.MemoryStore() as s:
        tuned = mk.Settings(weights=mk.Weights(similarity=0.3, keyword=0.7), embedder="hash:64")
        with pytest.warns(UserWarning, match="^embedder: .*fixed at the open"):
            s.settings = tuned
        assert s.embedder.dim == 384 and s.weights == tuned.weights  # the rest is applied
        s.settings = dataclasses.replace(tuned, embedder="hash")  # its own: no warning


@pytest.mark.parametrize("value", ["bert", "hash:4", "0.5*hash", 3])
def test_a_bad_spec_in_a_settings_file_names_the_file_and_embedder(tmp_path: Path, value: object) -> None:
    with pytest.raises(mk.ValidationError) as e:
        mk.Settings(embedder=value)  # type: ignore[arg-type]
    assert e.value.field == "embedder"
    path, db = tmp_path / "memkit.json", tmp_path / "m.duckdb"
    path.write_text(f'{{"embedder": {value!r}}}'.replace("'", '"'), encoding="utf-8")
    with pytest.raises(mk.ValidationError, match=rf"^embedder: .*\(settings file '{path}'\)$") as e:
        mk.load_settings(path)
    assert e.value.field == "embedder"
    with pytest.raises(mk.ValidationError, match=rf"^settings: embedder: .*\(settings file '{path}'\)$"):
        mk.MemoryStore(str(db), settings=path)
    assert main(["import", str(_jsonl(tmp_path)), "--db", str(db), "--create", "--settings", str(path)]) == 2
    assert not db.exists()


@pytest.mark.parametrize(
    ("spec", "error"), [("m2v:/no/such/model", "ValidationError"), ("st", "MissingDependency")]
)
def test_a_model_that_does_not_load_names_the_file_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, error: str
) -> None:
    pytest.importorskip("model2vec")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    path, db = tmp_path / "memkit.toml", tmp_path / "m.duckdb"
    mk.save_settings(path, mk.Settings(embedder=spec))  # its form is fine: the model loads at the open
    with pytest.raises(mk.MemkitError, match=rf"^settings: embedder.*\(settings file '{path}'\)$") as e:
        mk.MemoryStore(str(db), settings=path)
    assert type(e.value).__name__ == error and not db.exists()


def test_cli_settings_embedder_comes_before_the_files_and_after_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "memkit.toml"
    mk.save_settings(settings, mk.Settings(embedder="hash:64"))
    new = tmp_path / "new.duckdb"  # a new file is made with the tuned embedder (before: hash-v3-384)
    assert (
        main(["import", str(_jsonl(tmp_path)), "--db", str(new), "--create", "--settings", str(settings)])
        == 0
    )
    assert recorded_embedder(new) == (H64.name, 64)
    old = _store_file(tmp_path, mk.HashEmbedder(dim=32), "old.duckdb")  # the settings win over its record:
    with pytest.warns(UserWarning, match="^embedder: the settings name 'hash:64'.* it is open stale"):
        assert main(["analyze", "--db", old, "--settings", str(settings), *NOW]) == 0  # readable, stale
    with pytest.warns(UserWarning, match="^embedder: the settings name 'hash:64'"):
        code = main(
            [
                "import",
                str(_jsonl(tmp_path)),
                "--db",
                old,
                "--settings",
                str(settings),
                "--embedder",
                "hash:32",
            ]
        )
    assert code == 0  # the option wins
    capsys.readouterr()
    with pytest.warns(UserWarning, match="it is open stale"):
        assert main(["import", str(_jsonl(tmp_path)), "--db", old, "--settings", str(settings), *NOW]) == 2
    assert "holds embeddings of hash-v3-32-tw0.5" in capsys.readouterr().err


# ------------------------------------------------------------------------ load_settings's errors
@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("[weights]\nsimilarty = 0.5\n", "weights.similarty"),
        ("[decay]\nmin_strength = 2\n", "decay.min_strength"),
        ("memkit_settings = 99\n", "memkit_settings"),
        ("conflict_policy = 'overwrite'\n", "conflict_policy"),
    ],
)
def test_load_settings_errors_name_the_file(tmp_path: Path, text: str, field: str) -> None:
    """Before: ``weights.similarty: unknown field; known: ...``, which file unsaid."""
    path = tmp_path / "tuned.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(mk.ValidationError, match=rf"^{field}: .* \(settings file '{path}'\)$") as e:
        mk.load_settings(os.fspath(path))
    assert e.value.field == field


def test_a_bad_explicit_embedder_beside_settings_is_refused_naming_embedder(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    with pytest.raises(mk.ValidationError) as e:
        mk.MemoryStore(str(db), embedder=3, settings=mk.Settings(embedder="hash:64"))  # type: ignore[arg-type]
    assert e.value.field == "embedder" and not db.exists()
