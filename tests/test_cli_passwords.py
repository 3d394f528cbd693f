"""No line the CLI prints shows a PostgreSQL password: every command, on success and on error.

Found by an audit: ``memkit reembed --db postgresql://user:PASSWORD@...`` printed the URL whole in its
summary line, while every other command showed ``user:***@``. Now every line passes through one
masking (:func:`memkit.cli_common.shown`, over :func:`memkit.store.postgres.redact_text`); these tests
run each command with URLs holding a password in its three forms (in the user part, percent-encoded,
as a ``password=`` parameter) and look for it in everything printed. The error paths need no server
(nothing listens on port 1); the success paths use the session's local server, whose trust
authentication ignores the password."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import NOW, pg_store_url

import memkit as mk
from memkit.cli import main

T = "--now=2026-01-01T00:00:00+00:00"
SECRETS = ("S3cr3tPw-x", "S3cr%2Ft%23Pw", "S3cr/t#Pw", "S3cr3tQry")
UNREACHABLE = (
    "postgresql://bob:S3cr3tPw-x@127.0.0.1:1/db",
    "postgresql://bob:S3cr%2Ft%23Pw@127.0.0.1:1/db",
    "postgresql://bob@127.0.0.1:1/db?password=S3cr3tQry&sslmode=disable",
)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``main(argv)`` -> (exit status, everything printed); argparse's own errors exit."""
    try:
        code = main(argv)
    except SystemExit as e:  # argparse: usage and an error line, status 2
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out + out.err


def _hidden(printed: str) -> bool:
    return not any(s in printed for s in SECRETS)


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("User lives in Hangzhou", namespace="u", now=NOW)
    return path


@pytest.mark.parametrize("url", UNREACHABLE, ids=["user", "encoded", "parameter"])
@pytest.mark.parametrize(
    "argv",
    [
        ["info", "{url}"],
        ["export", "{tmp}/o.jsonl", "--db", "{url}"],
        ["import", "{tmp}/x.jsonl", "--db", "{url}"],
        ["import", "{tmp}/x.jsonl", "--db", "{url}", "--create"],
        ["analyze", "--db", "{url}"],
        ["reembed", "--db", "{url}"],
        ["mcp", "--db", "{url}", "--namespace", "u"],
        ["copy", "{url}", "{tmp}/b.duckdb"],
        ["copy", "{db}", "{url}"],
        ["reidentify", "--db", "{url}", "alice@example.com"],
        ["demo", "--db", "{url}"],
        ["info", "{url}", "{url}"],  # argparse: "unrecognized arguments: <the URL>"
        ["analyze", "--db", "{url}", "--stale-days", "{url}"],  # argparse: "invalid float value"
    ],
    ids=lambda a: " ".join(x for x in a if not x.startswith("{")),
)
def test_no_error_shows_the_password(argv: list[str], url: str, db: str, tmp_path: Path, capsys) -> None:
    code, printed = _run([a.format(url=url, tmp=tmp_path, db=db) for a in argv], capsys)
    assert code == 2 and printed and _hidden(printed), printed
    assert "Traceback" not in printed


def test_a_libpq_keyword_string_is_refused_without_echoing_it(capsys) -> None:
    """It was taken as a file name: `NotFound: host=db password=S3cr3tPw-x does not exist`."""
    code, printed = _run(["info", "host=db user=bob password=S3cr3tPw-x"], capsys)
    assert code == 2 and _hidden(printed)
    assert printed.startswith("memkit: ValidationError: db: looks like a libpq keyword string (host=")
    assert printed.endswith("give a postgresql:// URL\n") and printed.count("\n") == 1


def test_no_result_shows_the_password(pg_url: str, db: str, tmp_path: Path, capsys) -> None:
    """Every command that reaches a server, to the end: a copy there and back, then each command on it."""
    url = pg_store_url(pg_url).replace("postgres:@", "postgres:S3cr3tPw-x@", 1)
    assert url != pg_store_url(pg_url) and "S3cr3tPw-x" in url
    src = tmp_path / "src.jsonl"
    with mk.MemoryStore(db) as s:
        s.export(src, now=NOW)
    runs = [
        ["copy", db, url],
        ["info", url],
        ["export", str(tmp_path / "o.jsonl"), "--db", url, "--embeddings", T],
        ["import", str(src), "--db", url, "--on-conflict", "new_ids", T],
        ["analyze", "--db", url, T],
        ["reembed", "--db", url],  # printed "re-embedded 2 memories of postgresql://postgres:S3cr3tPw-x@..."
        ["reidentify", "--db", url, "alice@example.com", T],
        ["copy", url, str(tmp_path / "back.duckdb")],
        ["mcp", "--db", url, "--namespace", " bad"],  # refused at start, on a reachable server
    ]
    for argv in runs:
        code, printed = _run(argv, capsys)
        assert code == (2 if argv[0] == "mcp" else 0), printed
        assert printed and _hidden(printed), printed
        if argv[0] in ("info", "reembed", "reidentify", "copy"):
            assert "postgres:***@" in printed  # the store is named, as reprs name it
