"""memkit.outfile: every writer of a file the caller names, through a symbolic link and onto what is
not a file. Found by an audit: the check followed a link (``path.is_file()``) while the write renamed
a temporary file onto the link's own name, so a link was replaced by a regular file, and
``memkit export /dev/stdout > out.jsonl`` run as root replaced the system's ``/dev/stdout`` link (a
link to ``/proc/self/fd/1``) with a file holding the export. These tests use links of their own in
``tmp_path``, never ``/dev``."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memkit as mk
from memkit.cli import main
from memkit.guard.learned import load_model, read_model
from memkit.portable.cogx import write_cogx

NOW = datetime(2026, 1, 1, tzinfo=UTC)
T = "--now=2026-01-01T00:00:00+00:00"


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("User lives in Hangzhou", namespace="u", now=NOW)
    return path


def _writers(tmp: Path, db: str) -> dict[str, tuple[str, object]]:
    """name -> (file name it writes, a call writing the path it is given)."""

    def export(p: Path) -> None:
        with mk.MemoryStore(db) as s:
            s.export(p, now=NOW)

    def cogx(p: Path) -> None:  # the archive's manifest, one of the files it writes
        with mk.MemoryStore(db) as s:
            write_cogx(s.frame(), p.parent, now=NOW)

    return {
        "export": ("out.jsonl", export),
        "save_settings": ("memkit.toml", lambda p: mk.save_settings(p, mk.Settings())),
        "LearnedModel.save": ("model.npz", lambda p: load_model().save(str(p))),
        "write_cogx": ("manifest.json", cogx),
    }


def _check_written(name: str, path: Path) -> None:
    """The file at ``path`` holds what the writer ``name`` writes."""
    if name == "export":
        assert json.loads(path.read_text(encoding="utf-8").splitlines()[0])["format"] == "memkit"
    elif name == "save_settings":
        assert mk.load_settings(path) == mk.Settings()
    elif name == "LearnedModel.save":
        assert read_model(str(path)).bits == load_model().bits
    else:
        assert json.loads(path.read_text(encoding="utf-8"))["source_system"] == "memkit"


@pytest.mark.parametrize("writer", ["export", "save_settings", "LearnedModel.save", "write_cogx"])
def test_a_link_stays_a_link_and_its_target_is_written(tmp_path: Path, db: str, writer: str) -> None:
    name, write = _writers(tmp_path, db)[writer]
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / name
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link = tmp_path / "out" / name
    link.parent.mkdir()
    link.symlink_to(Path("..") / "real" / name)  # relative, as `ln -s` makes them
    write(link)
    assert link.is_symlink() and os.readlink(link) == str(Path("..") / "real" / name)
    _check_written(writer, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the file replaced keeps its permissions
    beside = {name, "memories.jsonl"} if writer == "write_cogx" else {name}  # (the archive's other file)
    assert {p.name for p in (tmp_path / "out").iterdir()} == beside  # no temporary file left
    assert not [p for p in (tmp_path / "real").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("writer", ["export", "save_settings", "LearnedModel.save", "write_cogx"])
def test_a_link_to_a_process_descriptor_is_refused(tmp_path: Path, db: str, writer: str) -> None:
    """What /dev/stdout is on Linux: a link to /proc/self/fd/1. A rename onto it replaced the link."""
    name, write = _writers(tmp_path, db)[writer]
    link = tmp_path / name
    link.symlink_to("/proc/self/fd/1")
    with pytest.raises(mk.ValidationError, match="is a process's open file .*not replaced") as e:
        write(link)
    assert e.value.field in ("path", "directory")
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("m.duckdb")) == [name]


def test_the_cli_refuses_a_descriptor_link_and_writes_through_a_file_link(
    tmp_path: Path, db: str, capsys
) -> None:
    link = tmp_path / "stdout_link"
    link.symlink_to("/proc/self/fd/1")
    assert main(["export", str(link), "--db", db, T]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memkit: ValidationError: path: ") and "open file" in err and err.count("\n") == 1
    assert link.is_symlink()
    current = tmp_path / "current.jsonl"
    (tmp_path / "exports").mkdir()
    current.symlink_to("exports/2026-01.jsonl")  # a link whose target does not exist yet
    assert main(["export", str(current), "--db", db, T]) == 0
    assert current.is_symlink() and (tmp_path / "exports" / "2026-01.jsonl").is_file()
    assert stat.S_IMODE((tmp_path / "exports" / "2026-01.jsonl").stat().st_mode) == 0o600  # memories


def test_links_that_lead_nowhere_useful_are_refused(tmp_path: Path, db: str) -> None:
    loop = tmp_path / "a.jsonl"
    loop.symlink_to(tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl").symlink_to(loop)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "to_pipe.jsonl").symlink_to(fifo)
    (tmp_path / "to_db.jsonl").symlink_to(db)
    with mk.MemoryStore() as s:
        s.add("hello", namespace="u", now=NOW)
        with pytest.raises(mk.ValidationError, match="loop of symbolic links"):
            s.export(loop, now=NOW)
        with pytest.raises(mk.ValidationError, match="exists and is not a regular file"):
            s.export(tmp_path / "to_pipe.jsonl", now=NOW)
        with pytest.raises(mk.ValidationError, match="is a database file"):
            s.export(tmp_path / "to_db.jsonl", now=NOW)
        assert s.audit(op="export").height == 0
    assert stat.S_ISFIFO(fifo.stat().st_mode) and mk.MemoryStore(db).close() is None


def test_export_to_standard_output(db: str, tmp_path: Path, capsysbinary, monkeypatch) -> None:
    """`memkit export - --db FILE | gzip`: the file on stdout, the summary on stderr; before, `-` was
    a file named "-" in the current folder."""
    monkeypatch.chdir(tmp_path)
    assert main(["export", "-", "--db", db, "--events", T]) == 0
    out, err = capsysbinary.readouterr()
    lines = out.decode("utf-8").splitlines()
    assert json.loads(lines[0])["counts"] == {"memories": 1, "events": 1} and len(lines) == 2
    assert err.decode() == "wrote 1 memories (1 events) to standard output\n"
    assert not (tmp_path / "-").exists()
    with mk.MemoryStore(db) as s:
        assert s.audit(op="export")["detail"].str.contains('"path": "-"', literal=True).all()


def test_a_write_into_a_missing_folder_names_the_path_given(db: str, tmp_path: Path, capsys) -> None:
    """Before: `cannot write 'nodir/x/o.jsonl': [Errno 2] ... '/.../nodir/x/.o.jsonl.do64le36.tmp'`."""
    assert main(["export", str(tmp_path / "nodir" / "x" / "o.jsonl"), "--db", db, T]) == 2
    err = capsys.readouterr().err
    want = f"cannot write '{tmp_path}/nodir/x/o.jsonl': No such file or directory\n"
    assert err == "memkit: ValidationError: path: " + want
    with pytest.raises(mk.ValidationError, match=r"^path: cannot write '.*memkit.toml': No such file"):
        mk.save_settings(tmp_path / "nodir" / "memkit.toml", mk.Settings())


def test_a_refused_import_create_through_a_link_removes_the_file_it_made(tmp_path: Path, capsys) -> None:
    """`--db link.duckdb` whose target does not exist yet: DuckDB made the target through the link;
    the refused import then unlinked the link itself and left the new, empty store behind."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "memkit", "version": 9}\n', encoding="utf-8")
    (tmp_path / "real").mkdir()
    link = tmp_path / "link.duckdb"
    link.symlink_to(Path("real") / "new.duckdb")
    assert main(["import", str(bad), "--db", str(link), "--create", T]) == 2
    assert "FormatError" in capsys.readouterr().err
    assert link.is_symlink() and list((tmp_path / "real").iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "link.duckdb", "real"]


def test_a_private_file_is_never_rewritten_through_a_readable_one(tmp_path: Path) -> None:
    """h126 F4: the temporary file holding the new bytes has the replaced file's bits (0600) from
    the first byte on (it was created 0644 and chmod-ed only after the write)."""
    from memkit.outfile import write_file

    out = tmp_path / "secret.jsonl"
    out.write_text("old\n")
    out.chmod(0o600)
    seen: list[int] = []

    def write(f) -> None:
        seen.append(stat.S_IMODE(os.fstat(f.fileno()).st_mode))
        f.write("new\n")
        seen.append(stat.S_IMODE(os.fstat(f.fileno()).st_mode))

    write_file("path", out, write)
    assert seen == [0o600, 0o600] and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text() == "new\n"
    out.chmod(0o640)  # a more open file keeps its bits too
    write_file("path", out, write)
    assert seen[-1] == 0o640 and stat.S_IMODE(out.stat().st_mode) == 0o640


def test_dot_dot_after_a_link_lands_where_the_kernel_puts_it(tmp_path: Path, monkeypatch) -> None:
    """h126 F5: ``lnk/../out.jsonl`` with ``lnk -> elsewhere/sub`` is ``elsewhere/out.jsonl`` for
    open() and the shell; a lexical ``..`` wrote (and replaced) ``./out.jsonl`` instead."""
    from memkit.outfile import write_file

    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    (elsewhere / "sub").mkdir(parents=True)
    here.mkdir()
    (here / "lnk").symlink_to(elsewhere / "sub")
    (here / "out.jsonl").write_text("keep me\n")
    monkeypatch.chdir(here)
    write_file("path", "lnk/../out.jsonl", lambda f: f.write("x\n"))
    assert (elsewhere / "out.jsonl").read_text() == "x\n"
    assert (here / "out.jsonl").read_text() == "keep me\n"


@pytest.mark.parametrize("writer", ["export", "save_settings", "LearnedModel.save", "write_cogx"])
def test_a_read_only_file_is_refused_and_kept(tmp_path: Path, db: str, writer: str) -> None:
    """h132 #1: a rename asks the folder, not the file, so a ``chmod a-w`` file was replaced silently.
    As ``cp`` without ``-f``: refused, naming the argument, the file and its bits left as they were."""
    name, write = _writers(tmp_path, db)[writer]
    out = tmp_path / name
    out.write_text("keep me\n")
    out.chmod(0o444)
    with pytest.raises(mk.ValidationError, match="read-only") as e:
        write(out)
    assert e.value.field in {"path", "dest", "out_dir", "directory"}
    assert out.read_text() == "keep me\n" and stat.S_IMODE(out.stat().st_mode) == 0o444
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    out.chmod(0o644)  # made writable again: written
    write(out)
    _check_written(writer, out)


def test_force_replaces_a_read_only_file_keeping_its_bits(tmp_path: Path) -> None:
    from memkit.outfile import write_file

    out = tmp_path / "out.txt"
    out.write_text("old\n")
    out.chmod(0o400)
    write_file("path", out, lambda f: f.write("new\n"), force=True)
    assert out.read_text() == "new\n" and stat.S_IMODE(out.stat().st_mode) == 0o400


def test_the_cli_says_a_read_only_export_target_is_read_only(tmp_path: Path, db: str, capsys) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("keep me\n")
    out.chmod(0o444)
    assert main(["export", str(out), "--db", db, T]) != 0
    assert "read-only" in capsys.readouterr().err and out.read_text() == "keep me\n"
