"""The CLI says what the API could already do (helper 142): ``import --duplicates add`` writes again the
records an adapter import finds present, and ``export --force`` replaces a read-only file; each is refused
where it means nothing, and a read-only target's refusal names the way the caller has (``--force`` on
the command line, ``force=True`` in Python)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import polars as pl
import pytest
from conftest import NOW

import memkit as mk
from memkit.cli import main

T = "--now=2026-01-01T00:00:00+00:00"
CHAT = [{"role": "user", "content": f"I prefer oolong tea brand {i}"} for i in range(3)]


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("User lives in Hangzhou", namespace="u", now=NOW)
    return path


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CHAT), encoding="utf-8")
    return path


def _texts(db: str) -> list[str]:
    with mk.MemoryStore(db) as s:
        return sorted(s.frame("c")["content"])


def test_an_import_run_twice_counts_present_unless_duplicates_add(db: str, chat: Path, capsys) -> None:
    args = ["import", str(chat), "--db", db, "--from", "chat", "--namespace", "c", T]
    assert main(args) == 0 and "added 3" in capsys.readouterr().out
    assert main(args) == 0 and "present 3" in capsys.readouterr().out  # nothing written again
    assert main([*args, "--duplicates", "skip"]) == 0 and "present 3" in capsys.readouterr().out
    assert _texts(db) == sorted(m["content"] for m in CHAT)
    assert main([*args, "--duplicates", "add"]) == 0  # asked for: every record again, as a new memory
    out = capsys.readouterr().out
    assert "added 3" in out and "present" not in out
    assert _texts(db) == sorted(2 * [m["content"] for m in CHAT])


@pytest.mark.parametrize("create", [False, True])
def test_duplicates_does_not_apply_to_memkits_own_format(
    db: str, tmp_path: Path, capsys, create: bool
) -> None:
    """memkit's own records have ids: ``--on-conflict`` says what one held already does."""
    out = tmp_path / "u.jsonl"
    with mk.MemoryStore(db) as s:
        s.export(out, namespace="u", now=NOW)
        before = s.frame()
    target = str(tmp_path / "new.duckdb") if create else db
    argv = ["import", str(out), "--db", target, "--duplicates", "add", T, *(["--create"] if create else [])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("memkit: ValidationError: --duplicates: does not apply to --from memkit")
    assert "--on-conflict" in err
    if create:
        assert not Path(target).exists()  # refused before anything was opened
    with mk.MemoryStore(db) as s:
        assert s.frame().equals(before)


def test_on_conflict_with_another_format_points_to_duplicates(db: str, chat: Path, capsys) -> None:
    argv = ["import", str(chat), "--db", db, "--from", "chat", "--namespace", "c", "--on-conflict", "skip", T]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("memkit: ValidationError: --on-conflict: does not apply to --from chat")
    assert "--duplicates" in err and _texts(db) == []


def test_a_bad_duplicates_value_is_a_usage_error(db: str, chat: Path, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["import", str(chat), "--db", db, "--from", "chat", "--namespace", "c", "--duplicates", "merge"])
    assert e.value.code == 2 and "--duplicates" in capsys.readouterr().err


@pytest.mark.parametrize("to", ["memkit", "cogx"])
def test_force_replaces_a_read_only_export_target(db: str, tmp_path: Path, capsys, to: str) -> None:
    """Refused as ``cp`` without ``-f`` refuses it (the bits decide, so this holds for root too), the
    refusal naming ``--force``; with it, replaced, keeping its bits."""
    if to == "cogx":
        (tmp_path / "cx").mkdir()
        out, argv = tmp_path / "cx" / "memories.jsonl", ["export", str(tmp_path / "cx"), "--to", "cogx"]
    else:
        out, argv = tmp_path / "out.jsonl", ["export", str(tmp_path / "out.jsonl")]
    out.write_text("keep me\n")
    out.chmod(0o444)
    argv += ["--db", db, T]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "read-only" in err and "--force" in err and "force=True" not in err
    assert out.read_text() == "keep me\n"
    with mk.MemoryStore(db) as s:
        assert s.audit(op="export").height == 0
    assert main([*argv, "--force"]) == 0
    assert "User lives in Hangzhou" in out.read_text() and stat.S_IMODE(out.stat().st_mode) == 0o444


def test_the_api_says_force_true(db: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("keep me\n")
    out.chmod(0o444)
    with mk.MemoryStore(db) as s:
        with pytest.raises(mk.ValidationError, match="read-only") as e:
            s.export(out, now=NOW)
        assert "force=True" in str(e.value) and "--force" not in str(e.value)
        with pytest.raises(mk.ValidationError) as e:
            s.export(out, now=NOW, force="yes")
        assert e.value.field == "force" and out.read_text() == "keep me\n"
        s.export(out, now=NOW, force=True)
        assert json.loads(out.read_text().splitlines()[1])["content"] == "User lives in Hangzhou"
        s.export_cogx(tmp_path / "cx", now=NOW)
        (tmp_path / "cx" / "manifest.json").chmod(0o444)
        with pytest.raises(mk.ValidationError, match="force=True"):
            s.export_cogx(tmp_path / "cx", now=NOW)
        assert s.export_cogx(tmp_path / "cx", now=NOW, force=True)["counts"]["memory"] == 1
    settings = tmp_path / "memkit.toml"
    settings.write_text("")
    settings.chmod(0o444)
    with pytest.raises(mk.ValidationError, match="force=True"):
        mk.save_settings(settings, mk.Settings())
    mk.save_settings(settings, mk.Settings(), force=True)
    assert mk.load_settings(settings) == mk.Settings()


def test_force_does_not_apply_to_standard_output(db: str, capsys) -> None:
    assert main(["export", "-", "--db", db, "--force", T]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("memkit: ValidationError: --force: does not apply to standard output")
    assert captured.out == ""


def test_an_export_still_writes_a_writable_file(db: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    assert main(["export", str(out), "--db", db, T]) == 0
    assert pl.DataFrame([json.loads(x) for x in out.read_text().splitlines()[1:]])["namespace"].to_list() == [
        "u"
    ]
