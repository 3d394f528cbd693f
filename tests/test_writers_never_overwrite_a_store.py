"""memkit.errors.check_output: no writer of a file the caller names overwrites a database. ``export``
refused it already; ``save_settings("store.json", s)`` replaced a store named ``store.json`` (open or
not: its memories were gone), and ``write_cogx`` / ``export_cogx`` and ``LearnedModel.save`` would
replace a DuckDB file under one of their names too."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import memkit as mk
from memkit.guard.learned import load_model
from memkit.portable.cogx import write_cogx

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _store(path: Path) -> None:
    with mk.MemoryStore(str(path)) as s:
        s.add("keep me", namespace="u", now=NOW)


def _kept(path: Path) -> bool:
    with mk.MemoryStore(str(path)) as s:
        return s.frame("u")["content"].to_list() == ["keep me"]


@pytest.mark.parametrize("name", ["store.json", "store.toml", "STORE.TOML"])
def test_save_settings_never_overwrites_a_database(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    _store(path)
    before = path.read_bytes()
    with pytest.raises(mk.ValidationError, match="^path: .*is a database file.*not overwritten") as e:
        mk.save_settings(path, mk.Settings())
    assert e.value.field == "path" and path.read_bytes() == before
    with mk.MemoryStore(str(path)) as s:  # an open store's own file, too
        with pytest.raises(mk.ValidationError, match="is a database file"):
            mk.save_settings(path, s.settings)
    assert _kept(path)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


def test_save_settings_does_not_replace_a_folder(tmp_path: Path) -> None:
    (tmp_path / "memkit.toml").mkdir()
    with pytest.raises(mk.ValidationError, match="^path: .*not a regular file: not replaced"):
        mk.save_settings(tmp_path / "memkit.toml", mk.Settings())


def test_a_cogx_archive_never_overwrites_a_database_in_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    (folder / "memories.jsonl").write_text("stale\n", encoding="utf-8")
    _store(folder / "manifest.json")  # a store that happens to bear one of the archive's names
    with mk.MemoryStore() as s:
        s.add("hello there", namespace="u", now=NOW)
        with pytest.raises(mk.ValidationError, match="^directory: .*manifest.json' is a database file"):
            s.export_cogx(folder, now=NOW)
        with pytest.raises(mk.ValidationError, match="^directory: .*is a database file"):
            write_cogx(s.frame(), folder, now=NOW)
    assert _kept(folder / "manifest.json")
    assert (folder / "memories.jsonl").read_text(encoding="utf-8") == "stale\n"  # nothing removed first


@pytest.mark.parametrize("name", ["model.npz", "model"])  # numpy adds .npz to a name without it
def test_a_learned_model_is_never_saved_over_a_database(tmp_path: Path, name: str) -> None:
    _store(tmp_path / "model.npz")
    with pytest.raises(mk.ValidationError, match="^path: .*is a database file"):
        load_model().save(str(tmp_path / name))
    assert _kept(tmp_path / "model.npz")
