"""The operator's commands of the CLI: ``memkit copy`` and ``memkit pg`` (prototype to production),
``memkit reidentify`` (an older store's people) and ``memkit data`` (the evaluation data sets).

==========  ======================================================================================
command     what it does
==========  ======================================================================================
copy        ``memkit copy SRC DST``: every table of one store into a new one, DuckDB file or
            PostgreSQL URL either way (:meth:`memkit.store.MemoryStore.copy_to`)
pg          ``memkit pg [--dir .pg]``: start a local PostgreSQL 18 + pgvector server (the extra
            ``memkit[postgres]``), print its URL, serve until interrupted (``make pg``)
reidentify  ``memkit reidentify --db FILE NAME... [--now TIME]``: carry the people named (their
            addresses, numbers) over from the pseudonyms of a store written before December 2026
            (:meth:`memkit.store.MemoryStore.reidentify`; ``--now``: its audit event's time)
data        ``memkit data locomo``: fetch LoCoMo (pinned URL, sha256 checked, cached;
            :func:`memkit.evaluate.fetch_locomo`)
==========  ======================================================================================

A prototype's way to production, in three commands::

    $ memkit pg --dir .pg &                                # prints postgresql://postgres:@/postgres?host=...
    $ memkit copy demo.duckdb "postgresql://postgres:@/postgres?host=$PWD/.pg"
    $ python -c "import memkit as mk; print(mk.MemoryStore('postgresql://...', settings='memkit.toml'))"

:mod:`memkit.cli` adds these sub-commands with :func:`add_commands` and dispatches to :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from collections.abc import Callable
from contextlib import suppress

from .cli_common import now_option, say
from .cli_embedder import open_store
from .errors import ValidationError
from .evaluate import LOCOMO, fetch_locomo
from .store.pg_server import local_server
from .store.postgres import is_url, redact_url

__all__ = ["COMMANDS", "add_commands"]


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``data``, ``copy`` and ``pg`` to the ``memkit`` parser."""
    p = sub.add_parser("data", help="fetch a public evaluation set (LoCoMo), check and cache it")
    p.add_argument("name", choices=["locomo"], help="the data set")  # one today; the word leaves room
    p.add_argument("--path", help="a file or folder to use (default: $MEMKIT_LOCOMO, else ~/.cache/memkit)")
    p.add_argument("--no-download", action="store_true", help="only look for the file and check it")
    cp = sub.add_parser("copy", help="copy a whole store into a new one (DuckDB file or PostgreSQL URL)")
    cp.add_argument("source", help="the store to copy: a database file or a postgresql:// URL")
    cp.add_argument("target", help="a new store: a file path or a postgresql:// URL of an empty database")
    pg = sub.add_parser(
        "pg", help="run a local PostgreSQL + pgvector server, print its URL (extra: postgres)"
    )
    pg.add_argument("--dir", default=".pg", help="its data directory (created on first use; default .pg)")
    pg.add_argument("--once", action="store_true", help="print the URL and stop the server again (a check)")
    ri = sub.add_parser("reidentify", help="carry people over from an older store's pseudonyms")
    ri.add_argument("names", nargs="+", help="the people's addresses or numbers, as names hold them")
    ri.add_argument("--db", required=True, help="database file or postgresql:// URL")
    now_option(ri)  # the time of its audit event, as every command that writes one


def _data(args: argparse.Namespace) -> None:
    """Find or download the data set, check its sha256, print its absolute path last (for scripts:
    ``export MEMKIT_LOCOMO=$(memkit data locomo | tail -1)``)."""
    path = fetch_locomo(args.path, download=not args.no_download, say=print)
    print(f"LoCoMo ({LOCOMO.licence}; cite {LOCOMO.citation}):\n{path}")


def _copy(args: argparse.Namespace) -> None:
    """Copy SRC into DST (created) and print what was copied."""
    if _same_store(args.source, args.target):  # (opening it twice would say "already open")
        raise ValidationError("target", "is the source store itself: a copy goes into a new store")
    with open_store(args.source, args, create=False) as source:
        counts = source.copy_to(args.target)
        where = source.path  # as reprs show it: a URL without its password
    copied = ", ".join(f"{n} {t}" for t, n in counts.items())
    say(args, f"copied {where} -> {redact_url(args.target)}: {copied}")


def _same_store(a: str, b: str) -> bool:
    """Whether two store arguments name one store: one URL, or one file (a link to it, a hard link)."""
    if is_url(a) or is_url(b):
        return a == b
    return os.path.realpath(a) == os.path.realpath(b) or (
        os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    )


def _reidentify(args: argparse.Namespace) -> None:
    """Re-identify the people named and print each pseudonym replaced (never an address)."""
    with open_store(args.db, args, create=False) as store:
        out = store.reidentify(args.names, now=args.now)
    for old, new, rows in out.filter(out["rows"] > 0).iter_rows():
        say(args, f"{old} -> {new}: {rows} values")
    say(args, f"{int((out['rows'] > 0).sum())} pseudonyms replaced ({len(args.names)} names) in {store.path}")


def _pg(args: argparse.Namespace) -> None:
    """Start the server, print its URL, and keep it until Ctrl-C (or at once with ``--once``)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):  # a supervisor's stop (kill, timeout, a container's
        signal.signal(sig, _interrupted)  # end) or a closed terminal ends it as Ctrl-C does, from the
    with suppress(KeyboardInterrupt):  # start on; the server stops with the process
        print(local_server(args.dir, field="--dir"), flush=True)  # (a local server's URL has no password)
        while not args.once:
            time.sleep(3600)


def _interrupted(signum: int, frame: object) -> None:
    """A signal handler that raises KeyboardInterrupt: the process unwinds and stops its server
    (a bare SIGTERM would end Python at once and leave PostgreSQL running)."""
    raise KeyboardInterrupt


COMMANDS: dict[str, Callable[[argparse.Namespace], None]] = {
    "data": _data, "copy": _copy, "pg": _pg, "reidentify": _reidentify,
}  # fmt: skip
"""The runner of each command this module adds."""
