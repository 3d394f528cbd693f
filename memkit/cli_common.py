"""What the commands of the CLI share (:mod:`memkit.cli`, :mod:`memkit.operate`): their common options,
the one way a password stays out of everything they print, and taking back a store a refused
command made.

- **Options.** ``--requester``, ``--now`` (a clock without its UTC offset is a ValidationError naming
  ``--now``, before anything is opened) and ``--settings``; an option the command's format does not
  take is refused, not ignored (:func:`check_options`).
- **Passwords.** ``--db``, ``SRC`` and ``DST`` may be ``postgresql://`` URLs holding a password. A
  store shows its URL without it (``store.path``, :func:`memkit.store.postgres.redact_url`), and every
  line the CLI prints — a command's result, an error, a warning, argparse's usage errors — passes
  through :func:`shown` as well, which hides the password of each URL the command was given (as
  written, percent-decoded, or cut short by libpq: :func:`~memkit.store.postgres.redact_text`) and of
  any other URL or ``password=`` in the text.
- **Warnings** reach the user as ``memkit: warning: <message>`` (:func:`warning_format`), not as
  Python's ``file.py:112: UserWarning: ...`` followed by a line of memkit's source.
- **New stores.** ``import --create`` and ``mcp --create`` make their store for the command: when the
  command is then refused, nothing of it stays, or a later run would take the empty store for the
  target (with the embedder it recorded). :func:`new_store`, asked before the open, returns how to
  take the store back: a DuckDB file made (through a symbolic link: the file it made, the link kept,
  and the files beside it), or the new schema of a server (:func:`memkit.store.pg_home.new_home`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from .errors import ValidationError
from .outfile import STDOUT
from .store.pg_home import drop_new_home, new_home
from .store.postgres import is_url, redact_text

__all__ = ["STORES", "Parser", "check_clock", "check_options", "check_store_names", "import_summary",
           "namespace_map", "new_store", "now_option", "requester_option", "say", "settings_option",
           "shown", "warning_format"]  # fmt: skip

STORES = ("db", "source", "target")
"""The arguments that name a store: a file or a ``postgresql://`` URL (``import --from`` is also
``source``: a format's name, which no check here mistakes for a store)."""

# what `import` takes from memkit's own format, and from another's (--from chat, mem0, cogx), and why not
_IMPORT_TAKES = {
    True: ("--namespace-map", "--on-conflict", "--reembed"),
    False: ("--namespace", "--duplicates"),
}
_WHY_NOT = {
    "--duplicates": "its records match by id: --on-conflict says what one held already does",
    "--on-conflict": "its records have no ids: --duplicates says what one held already does",
}

# libpq's keyword strings ("host=db user=bob password=..."): memkit takes URLs, and a file of that name
_KEYWORD_DSN = re.compile(r"^\s*(host|hostaddr|port|dbname|user|password|service|sslmode)\s*=\S*\s")


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors (``unrecognized arguments: ...``) hide passwords too."""

    def error(self, message: str) -> Any:  # argparse's signature: it exits (status 2)
        return super().error(shown(message))


def requester_option(p: argparse.ArgumentParser) -> None:
    """``--requester`` for a command that reads: whose access rules apply (default: the operator)."""
    p.add_argument("--requester", help="read as this requester (needs --namespace; default: the operator)")


def now_option(p: argparse.ArgumentParser) -> None:
    """``--now``: a fixed clock (ISO-8601 with its UTC offset), so a test or a replay repeats exactly."""
    p.add_argument(
        "--now", type=datetime.fromisoformat, help="the clock, ISO-8601 with offset (tests, replays)"
    )


def settings_option(p: argparse.ArgumentParser) -> None:
    """``--settings FILE``: what was tuned (weights, decay, guard, ...: ``mk.save_settings``) travels."""
    p.add_argument("--settings", help="a settings file (TOML/JSON, mk.save_settings) the store opens with")


def check_clock(args: argparse.Namespace) -> None:
    """``--now`` without a UTC offset -> ValidationError naming ``--now`` and how to write one (a store
    would say ``now: must be timezone-aware``, in Python's words)."""
    now = getattr(args, "now", None)
    if now is not None and now.utcoffset() is None:
        raise ValidationError(
            "--now",
            f"{now.isoformat()} is not timezone-aware: add its UTC offset, e.g. {now.isoformat()}+00:00",
        )


def check_store_names(args: argparse.Namespace) -> None:
    """A store argument that cannot be one: DuckDB's ``:memory:`` (nothing would be kept), or a libpq
    keyword string (``host=db password=...``, which would be taken as a file name and echoed)."""
    for name in STORES:
        value = getattr(args, name, None)
        if value == ":memory:":
            raise ValidationError(name, "is ':memory:': a command works on a database file or a URL")
        if isinstance(value, str) and _KEYWORD_DSN.match(value) and not Path(value).exists():
            raise ValidationError(
                name, "looks like a libpq keyword string (host=... dbname=...): give a postgresql:// URL"
            )


def check_options(args: argparse.Namespace) -> None:
    """An option the command cannot honour -> ValidationError naming it, before anything is opened:
    ``export --to cogx`` carries no vectors nor history, standard output replaces no file
    (``--force``); ``import`` of memkit's own format matches records by id (``--on-conflict``), of
    another format by text (``--duplicates``), and only the latter is told its ``--namespace``."""
    if args.command == "export":
        cogx = (("--embeddings", args.embeddings), ("--events", args.events)) if args.to == "cogx" else ()
        if wrong := [o for o, on in cogx if on]:
            raise ValidationError(wrong[0], "does not apply to --to cogx (it carries no vectors, no history)")
        if args.force and args.out == STDOUT and args.to == "memkit":
            raise ValidationError("--force", "does not apply to standard output (-): it replaces no file")
    if args.command == "import":
        given = {"--namespace": args.namespace is not None, "--namespace-map": args.namespace_map,
                 "--on-conflict": args.on_conflict, "--reembed": args.reembed,
                 "--duplicates": args.duplicates}  # fmt: skip
        takes = _IMPORT_TAKES[args.source == "memkit"]
        if wrong := [o for o, v in given.items() if v and o not in takes]:
            why = f" ({_WHY_NOT[wrong[0]]})" if wrong[0] in _WHY_NOT else ""
            raise ValidationError(wrong[0], f"does not apply to --from {args.source}{why}")


def shown(text: str, args: argparse.Namespace | None = None) -> str:
    """``text`` as the CLI prints it: the password of every store URL of ``args`` hidden, and of any
    other URL or ``password=`` in it (module docstring).

    >>> shown("cannot connect to postgresql://bob:s3cr3t@db/m: password s3cr3t refused")
    'cannot connect to postgresql://bob:***@db/m: password s3cr3t refused'
    """
    for name in STORES:
        value = getattr(args, name, None)
        if isinstance(value, str) and is_url(value):
            text = redact_text(text, value)
    return redact_text(text)


def say(args: argparse.Namespace, text: str, *, err: bool = False) -> None:
    """Print a line of a command's result (``err``: on stderr, when stdout carries the data)."""
    print(shown(text, args), file=sys.stderr if err else sys.stdout, flush=err)


def warning_format(args: argparse.Namespace) -> Callable[..., str]:
    """A ``warnings.formatwarning`` for the CLI: ``memkit: warning: <message>``, passwords hidden."""

    def format_warning(message: Any, category: Any, filename: str, lineno: int, line: Any = None) -> str:
        """One line: what happened and what to do, no source line of memkit's."""
        return f"memkit: warning: {shown(str(message), args)}\n"

    return format_warning


def namespace_map(pairs: Sequence[str]) -> dict[str, str]:
    """``import --namespace-map``'s pairs -> the map: ``["alice=bob", "u1=u2"] -> {"alice": "bob",
    "u1": "u2"}``; a pair without ``=`` is a ValidationError naming ``--namespace-map``."""
    out = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or old in out:
            raise ValidationError("--namespace-map", f"must be OLD=NEW, each OLD once, got {pair!r}")
        out[old] = new
    return out


def import_summary(store: Any, report: pl.DataFrame) -> str:
    """An import's report (one row per record) -> its summary line: the records counted by action,
    and how many of those written the guard holds in quarantine (``added 3, skipped 1 (1 quarantined)``)."""
    counts = report.group_by("action").len().sort("action")
    summary = ", ".join(f"{a} {n}" for a, n in counts.iter_rows())
    ids = report.filter(pl.col("action").is_in(["added", "overwritten"]))["id"].drop_nulls().to_list()
    held = 0 if not ids else store.quarantine().filter(pl.col("id").is_in(ids)).height
    return (summary or "nothing") + (f" ({held} quarantined)" if held else "")


def new_store(db: str) -> Callable[[], None] | None:
    """Before a ``create=True`` open of ``db``: how to take back the store it would make when the
    command is refused (module docstring) -> a function, or None when the store exists already."""
    if is_url(db):
        schema = new_home(db)
        return None if schema is None else lambda: _drop(db, schema)
    real = os.path.realpath(db)  # a symbolic link's target: the file the open makes (the link stays)
    if os.path.lexists(real):
        return None
    return lambda: _remove(db, real)


def _drop(url: str, schema: str) -> None:
    """Drop the schema this command made (unless another process filled it meanwhile); a failure
    (the connection lost meanwhile) is a warning: the command's own error is what the user reads."""
    try:
        drop_new_home(url, schema)
    except Exception as e:  # (psycopg's errors: the extra's, not memkit's)
        warnings.warn(
            f"the new schema {schema!r} could not be dropped again: {e}", RuntimeWarning, stacklevel=2
        )


def _remove(db: str, real: str) -> None:
    """Remove the DuckDB file this command made at ``real`` and the files beside it (DuckDB's
    ``.wal`` lies beside the name it was given, memkit's ``.lock`` and ``.reads`` beside the file)."""
    for base in dict.fromkeys((db, real)):
        for suffix in (".wal", ".reads", ".lock"):
            side = Path(base + suffix)
            if not side.is_symlink():
                side.unlink(missing_ok=True)
    Path(real).unlink(missing_ok=True)
