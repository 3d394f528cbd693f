"""Command line: ``memkit`` (or ``python -m memkit``).

==========  ======================================================================================
command     what it does
==========  ======================================================================================
demo        load the sample set into a DuckDB file and walk through memkit
info        summarize a memkit database file
export      write a namespace (or everything) to a portable JSONL file (:mod:`memkit.portable`)
import      load a portable JSONL file (``--from`` mem0 / cogx / chat for other frameworks' data)
analyze     lint a namespace and print the findings table (:mod:`memkit.analyze`)
reembed     migrate a file written by another (or an older) embedder to ``--embedder``'s (default hash)
mcp         serve one namespace as MCP memory tools over stdio (extra ``memkit[mcp]``)
data        ``data locomo``: fetch LoCoMo (pinned URL, sha256 checked, cached; :func:`fetch_locomo`)
copy, pg    a whole store into a new one; a local PostgreSQL server (:mod:`memkit.operate`, as data)
==========  ======================================================================================

The CLI never creates a database by accident: every command but ``demo`` needs an existing file
(``import --create`` and ``mcp --create`` make a new one on purpose). Errors (a missing or bad file,
a bad argument, a locked database, a missing extra) print ``memkit: <Error>: <message>`` on stderr
and exit with status 2; nothing is written (a store ``--create`` made for a refused command is taken
back), and a warning is ``memkit: warning: <message>``. No line shows a URL's password
(:mod:`.cli_common`). An adapter import (``--from``) is one transaction; a record the namespace holds
already is counted ``present``, not written again (``--duplicates add`` writes it). ``export``, ``import``,
``analyze``, ``reembed`` and ``mcp`` take ``--settings FILE`` (what was tuned, embedder too), and every
command that opens a store ``--embedder SPEC`` (else the settings', the file's: :mod:`.cli_embedder`).
``export -`` writes to standard output; ``export --force`` replaces a read-only file too.

A session, from the demo to another framework's data and back to an agent::

    $ memkit demo --db demo.duckdb                          # 270 sample memories, then a tour
    $ memkit analyze --db demo.duckdb --namespace user_87   # the findings table (MK001 ...)
    $ memkit export alice.jsonl --db demo.duckdb --namespace alice --events
    $ memkit import alice.jsonl --db copy.duckdb --create --namespace-map alice=alice2
    $ memkit mcp --db copy.duckdb --namespace alice2        # memory tools for an MCP client
    $ memkit data locomo                                    # LoCoMo for lesson 09, cached

The module reads as the command line itself: :func:`_parser` builds one sub-parser per command (one
``_add_<command>`` each, in ``memkit --help``'s order), :func:`_run` dispatches to one ``_<command>``
each. Every command is a thin shell over a public API call — ``run_demo``, ``store.export``,
``store.import_``, ``adapters.import_file``, ``store.analyze``, ``store.reembed``, ``build_server`` —
so anything the CLI does, a notebook can do in one line; the CLI adds argument parsing and printing.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from .cli_common import (
    Parser,
    check_clock,
    check_options,
    check_store_names,
    import_summary,
    namespace_map,
    new_store,
    now_option,
    requester_option,
    say,
    settings_option,
    shown,
    warning_format,
)
from .cli_embedder import add_embedder_options, open_store
from .demo import run_demo
from .errors import MemkitError, NotFound, ValidationError
from .operate import COMMANDS as OPERATOR_COMMANDS
from .operate import add_commands as add_operator_commands
from .outfile import STDOUT, force_named
from .portable import adapters
from .store import MemoryStore
from .store.postgres import is_url

__all__ = ["main"]

# how `analyze` prints its findings: every row and column, long messages, no shape line
_TABLE = dict(
    tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=160, tbl_hide_dataframe_shape=True
)


def _parser() -> argparse.ArgumentParser:
    """The ``memkit`` argument parser: one sub-parser per command, a command required.

    The commands are added in ``memkit --help``'s order, then ``--embedder`` to those opening a store.
    """
    parser = Parser(prog="memkit", description="memkit: the memory layer of LLM agents")
    sub = parser.add_subparsers(dest="command", required=True)
    adders = (_add_demo, _add_info, _add_export, _add_import, _add_analyze, _add_reembed, _add_mcp,
              add_operator_commands, add_embedder_options)  # fmt: skip
    for add in adders:
        add(sub)
    return parser


def _add_demo(sub: argparse._SubParsersAction) -> None:
    """``memkit demo [--db FILE]``: the file is deleted and rebuilt, so a run is repeatable."""
    demo = sub.add_parser("demo", help="load the sample set into a DuckDB file and walk through memkit")
    demo.add_argument("--db", default="demo.duckdb", help="a new file, or a demo's (recreated)")


def _add_info(sub: argparse._SubParsersAction) -> None:
    """``memkit info FILE``."""
    info = sub.add_parser("info", help="summarize a memkit database file")
    info.add_argument("db", help="database file")


def _add_export(sub: argparse._SubParsersAction) -> None:
    """``memkit export OUT --db FILE [--namespace NS] [--embeddings] [--events] [--to cogx]``."""
    exp = sub.add_parser("export", help="write memories to a portable JSONL file")
    exp.add_argument("out", help="output file (.jsonl; - for standard output), or a directory with --to cogx")
    exp.add_argument("--db", required=True, help="database file")
    exp.add_argument("--namespace", help="one namespace (default: all)")
    exp.add_argument("--embeddings", action="store_true", help="include the embeddings")
    exp.add_argument("--events", action="store_true", help="include each memory's audit events")
    exp.add_argument("--to", choices=("memkit", "cogx"), default="memkit", help="output format")
    exp.add_argument("--force", action="store_true", help="replace a read-only output file too (as cp -f)")
    requester_option(exp)
    now_option(exp)
    settings_option(exp)


def _add_import(sub: argparse._SubParsersAction) -> None:
    """``memkit import FILE --db FILE [--create] [--on-conflict ...] [--namespace-map OLD=NEW]
    [--from mem0|cogx|chat]``. ``--on-conflict``: what a memory id already in the store does
    (:meth:`MemoryStore.import_`). An option the format does not take is refused, not ignored."""
    imp = sub.add_parser("import", help="load a portable JSONL file (all or nothing)")
    imp.add_argument("file", help="input file (a COGX archive directory with --from cogx)")
    imp.add_argument("--db", required=True, help="database file (must exist unless --create)")
    imp.add_argument("--create", action="store_true", help="create the database file if it does not exist")
    imp.add_argument("--on-conflict", choices=("skip", "overwrite", "new_ids", "error"),
                     help="what an id already in the store does (default skip)")  # fmt: skip
    imp.add_argument("--namespace-map", action="append", default=[], metavar="OLD=NEW",
                     help="rename a namespace on the way in (repeatable)")  # fmt: skip
    imp.add_argument("--from", dest="source", choices=("memkit", "mem0", "cogx", "chat"), default="memkit",
                     help="memkit JSONL, mem0 get_all() JSON, a COGX archive, chat messages")  # fmt: skip
    imp.add_argument("--namespace", help="target namespace for --from chat (and mem0 records without a user)")
    imp.add_argument("--duplicates", choices=("skip", "add"), help="--from chat/mem0/cogx: what a record the "
                     "namespace holds already does (default skip: counted present)")  # fmt: skip
    imp.add_argument("--requester", help="who imports (audit log; default: the operator)")
    imp.add_argument(
        "--reembed", action="store_true", help="recompute embeddings even from the same embedder"
    )
    now_option(imp)
    settings_option(imp)


def _add_analyze(sub: argparse._SubParsersAction) -> None:
    """``memkit analyze --db FILE [--namespace NS] [--stale-days N]``.

    ``--stale-days`` is when an owner counts as stale (MK004: it has written nothing for that
    many days); the other checks have no knob (see :mod:`memkit.analyze` for the codes).
    """
    ana = sub.add_parser("analyze", help="lint memories and print the findings")
    ana.add_argument("--db", required=True, help="database file")
    ana.add_argument("--namespace", help="one namespace (default: all)")
    ana.add_argument("--stale-days", type=float, default=90.0, help="MK004 threshold in days (default 90)")
    requester_option(ana)
    now_option(ana)
    settings_option(ana)


def _add_reembed(sub: argparse._SubParsersAction) -> None:
    """``memkit reembed --db FILE [--embedder SPEC | --settings FILE]``: the migration to ``--embedder``'s
    vectors, else to the embedder the settings file names (what it was tuned with), else hash."""
    ree = sub.add_parser("reembed", help="re-embed a file written by another embedder (in one transaction)")
    ree.add_argument("--db", required=True, help="database file")
    settings_option(ree)


def _add_mcp(sub: argparse._SubParsersAction) -> None:
    """``memkit mcp --db FILE --namespace NS [--create] [--requester WHO] [--now TIME]``.

    One namespace per server: the client can read and write that user's memories and no other's,
    whatever it asks for. ``--now`` pins the server's clock (a test, or a replay of a session).
    """
    srv = sub.add_parser("mcp", help="serve one namespace as MCP memory tools over stdio (extra: mcp)")
    srv.add_argument("--db", required=True, help="database file (must exist unless --create)")
    srv.add_argument("--create", action="store_true", help="create the database file if it does not exist")
    srv.add_argument("--namespace", required=True, help="the one namespace the tools read and write")
    srv.add_argument(
        "--requester", help="who the client acts as (access rules, audit; default: the operator)"
    )
    now_option(srv)
    settings_option(srv)


def _run(args: argparse.Namespace) -> None:
    """Carry out the parsed command; a MemkitError propagates to :func:`main`.

    ``demo``, ``info``, ``reembed`` and ``mcp`` open their database themselves; ``export``,
    ``import`` and ``analyze`` share one opened store, closed (and the file released) on the way
    out, whether the command succeeded or raised.
    """
    check_store_names(args)
    check_clock(args)
    check_options(args)
    if args.command in _NO_STORE:
        _NO_STORE[args.command](args)
        return
    # subtle: only `import --create` may create the file; every other command opens it with
    # create=False, which raises NotFound for a missing file before anything is written
    create = args.command == "import" and args.create
    undo = new_store(args.db) if create else None
    try:
        with open_store(args.db, args, create=create, settings=args.settings) as store:
            _WITH_STORE[args.command](store, args)
    except MemkitError:  # the import refused (nothing written): a reader leaving early is not that
        if undo:  # an import that failed leaves no new, empty store behind (a later run would use it)
            undo()
        raise


def _demo(args: argparse.Namespace) -> None:
    """Run the demo on a fresh ``--db`` file (the one command that makes a database unasked)."""
    if is_url(args.db):  # (a path would fold its "//": a file named after the URL, password and all)
        raise ValidationError("--db", "is a postgresql:// URL: the demo writes a DuckDB file (memkit copy)")
    run_demo(args.db)


def _info(args: argparse.Namespace) -> None:
    """Print the store's summary line (file, embedder, number of memories) and its memories
    counted by namespace and status: a quick look before exporting or serving a file."""
    with open_store(args.db, args, create=False) as store:
        say(args, str(store))
        say(args, str(store.frame().group_by("namespace", "status").len().sort("namespace", "status")))


def _reembed(args: argparse.Namespace) -> None:
    """Re-embed every memory with ``--embedder``'s (else the ``--settings`` file's, else the hash
    embedder), in one transaction."""
    with warnings.catch_warnings():  # a file stale for the settings' embedder is what reembed is for
        warnings.filterwarnings("ignore", "embedder: the settings name .* it is open stale", UserWarning)
        store = open_store(args.db, args, create=False, settings=args.settings, default="hash")
    with store:
        say(args, f"re-embedded {store.reembed()} memories of {store.path} with {store.embedder.name}")


def _mcp(args: argparse.Namespace) -> None:
    """Serve ``--namespace`` as MCP tools over stdio until the client disconnects."""
    # imported here, the one lazy import: the MCP SDK is an optional extra; without it this raises
    # MissingDependency (exit 2) before the database file is opened, and every other command works
    from .integrations.mcp import build_server

    clock = None if args.now is None else (lambda: args.now)
    undo = new_store(args.db) if args.create else None
    with open_store(args.db, args, create=args.create, settings=args.settings) as store:
        try:  # refused at start (a bad namespace, requester or clock): no new, empty store is left
            server = build_server(store, namespace=args.namespace, requester=args.requester, now=clock)
        except MemkitError:
            store.close()
            if undo:
                undo()
            raise
        server.run()


def _export(store: MemoryStore, args: argparse.Namespace) -> None:
    """Write ``--namespace`` (or everything) as memkit JSONL (``--embeddings``, ``--events`` on request),
    or as a COGX archive with ``--to cogx``, which carries neither (refused, not ignored). With
    ``--requester``, only what that requester may read is written; ``--force``: over a read-only file
    too (a refusal says ``--force``, not the API's ``force=True``)."""
    mine = dict(now=args.now, requester=args.requester, force=args.force)
    if args.to == "cogx":
        with force_named("--force"):
            manifest = store.export_cogx(args.out, args.namespace, **mine)
        say(args, f"wrote {manifest['counts'].get('memory', 0)} memories to the COGX archive {args.out}")
        return
    with force_named("--force"):
        header = store.export(args.out, args.namespace, include_embeddings=args.embeddings,
                              include_events=args.events, **mine)  # fmt: skip
    c, to = header["counts"], "standard output" if args.out == STDOUT else args.out
    say(args, f"wrote {c['memories']} memories ({c['events']} events) to {to}", err=args.out == STDOUT)


def _import(store: MemoryStore, args: argparse.Namespace) -> None:
    """Load a memkit JSONL file, or another framework's data through its adapter (``--from``), and
    print what happened to the records (``added 12, skipped 3``; ``present 5``: held already, not
    written again unless ``--duplicates add``). Its options were checked (:func:`check_options`)."""
    if not Path(args.file).exists():  # said as a missing --db is (a new store made for it goes)
        raise NotFound(f"{args.file} does not exist")
    if args.source == "memkit":
        report = store.import_(
            args.file,
            on_conflict=args.on_conflict or "skip",
            requester=args.requester,
            namespace_map=namespace_map(args.namespace_map),
            reembed=args.reembed,
            now=args.now,
        )
    else:  # another framework's export, mapped to memkit rows by its adapter (one transaction)
        report = adapters.import_file(store, args.file, args.source, namespace=args.namespace,
                                      requester=args.requester, now=args.now,
                                      duplicates=args.duplicates or "skip")  # fmt: skip
    say(args, f"imported {args.file}: {import_summary(store, report)}")


def _analyze(store: MemoryStore, args: argparse.Namespace) -> None:
    """Print the findings table of :meth:`MemoryStore.analyze` and a count by severity."""
    findings = store.analyze(args.namespace, now=args.now, stale_days=args.stale_days,
                             requester=args.requester)  # fmt: skip
    with pl.Config(**_TABLE):
        say(args, str(findings.select("code", "severity", "namespace", "memory_id", "key", "message")))
    by = findings.group_by("severity").len().sort("severity")
    say(args, f"{findings.height} findings" + "".join(f"; {s}: {n}" for s, n in by.iter_rows()))


# the commands that open the database themselves (or none), and those that share one opened store
_NO_STORE: dict[str, Callable[[argparse.Namespace], None]] = {
    "demo": _demo, "info": _info, "reembed": _reembed, "mcp": _mcp, **OPERATOR_COMMANDS,
}  # fmt: skip
_WITH_STORE: dict[str, Callable[[MemoryStore, argparse.Namespace], None]] = {
    "export": _export, "import": _import, "analyze": _analyze,
}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 ok, 2 on a memkit error).

    ``argv`` defaults to ``sys.argv[1:]``. A bad argument is argparse's: usage on stderr and
    ``SystemExit(2)``. A MemkitError prints ``memkit: <Error>: <message>`` on stderr instead of a
    traceback: the message names the field and the value, which is what the user has to fix.
    """
    args = _parser().parse_args(argv)
    formatting, warnings.formatwarning = warnings.formatwarning, warning_format(args)  # memkit: warning:
    try:
        _run(args)
    except MemkitError as e:
        print(shown(f"memkit: {type(e).__name__}: {e}", args), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `memkit info db | head -1`: the reader left early, which is no error;
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second one at exit's flush
    finally:
        warnings.formatwarning = formatting
    return 0


if __name__ == "__main__":
    sys.exit(main())
