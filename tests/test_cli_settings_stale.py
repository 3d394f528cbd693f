"""A settings file naming another embedder than the one that wrote the store: said at the open, and
the advice leads somewhere that works.

Found by an audit: a prototype tuned with ``hash:64`` saved ``proto.toml``; the production file was
written with the default ``hash``. ``memkit import ... --settings proto.toml`` opened it stale without
a word and failed with a bare MemkitError whose advice, ``memkit reembed``, migrated the file to
``hash`` — what it already was — so the import failed again, identically, forever; ``memkit analyze
--settings proto.toml`` printed "0 findings" on a store it could not search."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NOW

import memkit as mk
from memkit.cli import main
from memkit.store.recorded import recorded_embedder

T = "--now=2026-01-01T00:00:00+00:00"
H64 = mk.HashEmbedder(dim=64)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(prod.duckdb written by hash, proto.toml naming hash:64, proto.jsonl exported by hash:64)."""
    prod, toml, jsonl = tmp_path / "prod.duckdb", tmp_path / "proto.toml", tmp_path / "proto.jsonl"
    with mk.MemoryStore(str(prod)) as s:
        s.add("User lives in Hangzhou", namespace="u", now=NOW)
    with mk.MemoryStore(embedder=H64) as proto:
        proto.add("User likes oolong tea", namespace="u", now=NOW)
        mk.save_settings(toml, proto.settings)
        proto.export(jsonl, now=NOW)
    return prod, toml, jsonl


def _cli(argv: list[str]) -> tuple[int, str, str]:
    """``python -m memkit ARGV`` in a process of its own, as a user runs it (warnings as it shows
    them, not as pytest records them) -> (status, stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(Path(mk.__file__).parents[1])}
    run = subprocess.run([sys.executable, "-m", "memkit", *argv], capture_output=True, text=True, env=env,
                         timeout=120)  # fmt: skip
    return run.returncode, run.stdout, run.stderr


def test_the_open_says_so_and_names_both_ways_out(setup) -> None:
    prod, toml, jsonl = setup
    code, out, err = _cli(["import", str(jsonl), "--db", str(prod), "--settings", str(toml), T])
    assert code == 2 and out == ""
    warning, error = err.splitlines()
    assert warning.startswith(
        f"memkit: warning: embedder: the settings name 'hash:64' (settings file '{toml}')"
    )
    assert f"{prod} was written by hash-v3-384-tw0.5 (dim 384): it is open stale" in warning
    assert "--embedder hash)" in warning and f"`memkit reembed --db {prod} --settings {toml}`" in warning
    assert error.startswith(f"memkit: ValidationError: embedder: {prod} holds embeddings of hash-v3-384")
    assert error.endswith("(or `memkit reembed --embedder hash:64`) migrates it")  # not back to hash
    code, out, err = _cli(["analyze", "--db", str(prod), "--settings", str(toml), T])
    assert code == 0 and "it is open stale" in err  # readable, and no longer silently


def test_each_way_out_works(setup, tmp_path: Path, capsys) -> None:
    prod, toml, jsonl = setup
    twin = tmp_path / "twin.duckdb"
    twin.write_bytes(prod.read_bytes())
    # 1. open it as it is: the file's own embedder, the settings' other parameters
    with pytest.warns(UserWarning, match="embedder= wins"):
        code = main(
            ["import", str(jsonl), "--db", str(prod), "--settings", str(toml), "--embedder", "hash", T]
        )
    assert code == 0 and "added 1" in capsys.readouterr().out
    # 2. migrate it to the settings' embedder: `memkit reembed --settings` (the warning's advice)
    assert main(["reembed", "--db", str(twin), "--settings", str(toml)]) == 0  # (no warning: an error here)
    assert capsys.readouterr().out == f"re-embedded 1 memories of {twin} with {H64.name}\n"
    assert recorded_embedder(twin) == (H64.name, 64)
    assert main(["import", str(jsonl), "--db", str(twin), "--settings", str(toml), T]) == 0
    assert "added 1" in capsys.readouterr().out
    # 3. `memkit reembed` alone still migrates to hash, whatever the file records
    assert main(["reembed", "--db", str(twin)]) == 0
    assert recorded_embedder(twin) == (mk.HashEmbedder().name, 384)


def test_in_python_the_open_warns_and_the_refusal_names_embedder(setup) -> None:
    prod, toml, _ = setup
    with pytest.warns(
        UserWarning, match=r"^embedder: the settings name 'hash:64' \(settings file .* open stale"
    ):
        store = mk.MemoryStore(str(prod), settings=toml)
    with (
        store,
        pytest.raises(mk.ValidationError, match=r"^embedder: .*`memkit reembed --embedder hash:64`") as e,
    ):
        store.add("User likes green tea", namespace="u", now=NOW)
    assert e.value.field == "embedder"
    with mk.MemoryStore(str(prod), settings=mk.Settings()) as plain:  # settings without an embedder: quiet
        assert "stale" not in repr(plain)
