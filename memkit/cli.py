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
and exit with status 2; nothing is written. An adapter import (``--from``) is one transaction.
``export``, ``import``, ``analyze`` and ``mcp`` take ``--settings FILE`` (what was tuned, embedder too), and
every command that opens a store ``--embedder SPEC`` (else the settings', the file's: :mod:`.cli_embedder`).

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
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import polars as pl

from .cli_embedder import add_embedder_options, open_store
from .demo import run_demo
from .errors import MemkitError, ValidationError
from .operate import COMMANDS as OPERATOR_COMMANDS
from .operate import add_commands as add_operator_commands
from .portable import adapters
from .store import MemoryStore

__all__ = ["main"]

# how `analyze` prints its findings: every row and column, long messages, no shape line
_TABLE = dict(
    tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=160, tbl_hide_dataframe_shape=True
)


def _parser() -> argparse.ArgumentParser:
    """The ``memkit`` argument parser: one sub-parser per command, a command required.

    The commands are added in ``memkit --help``'s order, then ``--embedder`` to those opening a store.
    """
    parser = argparse.ArgumentParser(prog="memkit", description="memkit: the memory layer of LLM agents")
    sub = parser.add_subparsers(dest="command", required=True)
    adders = (_add_demo, _add_info, _add_export, _add_import, _add_analyze, _add_reembed, _add_mcp,
              add_operator_commands, add_embedder_options)  # fmt: skip
    for add in adders:
        add(sub)
    return parser


def _requester_option(p: argparse.ArgumentParser) -> None:
    """``--requester`` for a command that reads: whose access rules apply (default: the operator)."""
    p.add_argument("--requester", help="read as this requester (needs --namespace; default: the operator)")


def _now_option(p: argparse.ArgumentParser) -> None:
    """``--now``: a fixed clock (ISO-8601 with its UTC offset), so a test or a replay repeats exactly."""
    p.add_argument(
        "--now", type=datetime.fromisoformat, help="the clock, ISO-8601 with offset (tests, replays)"
    )


def _settings_option(p: argparse.ArgumentParser) -> None:
    """``--settings FILE``: what was tuned (weights, decay, guard, ...: ``mk.save_settings``) travels."""
    p.add_argument("--settings", help="a settings file (TOML/JSON, mk.save_settings) the store opens with")


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
    exp.add_argument("out", help="output file (.jsonl), or a directory with --to cogx")
    exp.add_argument("--db", required=True, help="database file")
    exp.add_argument("--namespace", help="one namespace (default: all)")
    exp.add_argument("--embeddings", action="store_true", help="include the embeddings")
    exp.add_argument("--events", action="store_true", help="include each memory's audit events")
    exp.add_argument("--to", choices=("memkit", "cogx"), default="memkit", help="output format")
    _requester_option(exp)
    _now_option(exp)
    _settings_option(exp)


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
    imp.add_argument("--requester", help="who imports (audit log; default: the operator)")
    imp.add_argument(
        "--reembed", action="store_true", help="recompute embeddings even from the same embedder"
    )
    _now_option(imp)
    _settings_option(imp)


def _add_analyze(sub: argparse._SubParsersAction) -> None:
    """``memkit analyze --db FILE [--namespace NS] [--stale-days N]``.

    ``--stale-days`` is when an owner counts as stale (MK004: it has written nothing for that
    many days); the other checks have no knob (see :mod:`memkit.analyze` for the codes).
    """
    ana = sub.add_parser("analyze", help="lint memories and print the findings")
    ana.add_argument("--db", required=True, help="database file")
    ana.add_argument("--namespace", help="one namespace (default: all)")
    ana.add_argument("--stale-days", type=float, default=90.0, help="MK004 threshold in days (default 90)")
    _requester_option(ana)
    _now_option(ana)
    _settings_option(ana)


def _add_reembed(sub: argparse._SubParsersAction) -> None:
    """``memkit reembed --db FILE [--embedder SPEC]``: the migration to ``--embedder``'s vectors."""
    ree = sub.add_parser("reembed", help="re-embed a file written by another embedder (in one transaction)")
    ree.add_argument("--db", required=True, help="database file")


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
    _now_option(srv)
    _settings_option(srv)


def _namespace_map(pairs: Sequence[str]) -> dict[str, str]:
    """``["alice=bob", "u1=u2"] -> {"alice": "bob", "u1": "u2"}``; a pair without ``=`` is a
    ValidationError naming ``--namespace-map``."""
    out = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or old in out:
            raise ValidationError("--namespace-map", f"must be OLD=NEW, each OLD once, got {pair!r}")
        out[old] = new
    return out


def _run(args: argparse.Namespace) -> None:
    """Carry out the parsed command; a MemkitError propagates to :func:`main`.

    ``demo``, ``info``, ``reembed`` and ``mcp`` open their database themselves; ``export``,
    ``import`` and ``analyze`` share one opened store, closed (and the file released) on the way
    out, whether the command succeeded or raised.
    """
    for name in ("db", "source", "target"):  # `import --from` is also `source`: never this value
        if getattr(args, name, None) == ":memory:":  # DuckDB's in-memory database: nothing would be kept
            raise ValidationError(name, "is ':memory:': a command works on a database file or a URL")
    if args.command in _NO_STORE:
        _NO_STORE[args.command](args)
        return
    # subtle: only `import --create` may create the file; every other command opens it with
    # create=False, which raises NotFound for a missing file before anything is written
    create = args.command == "import" and args.create
    made = create and not Path(args.db).exists()
    try:
        with open_store(args.db, args, create=create, settings=args.settings) as store:
            _WITH_STORE[args.command](store, args)
    except MemkitError:  # the import refused (nothing written): a reader leaving early is not that
        if made:  # an import that failed leaves no new, empty file behind (a later run would use it)
            _remove(args.db)
        raise


def _remove(db: str) -> None:
    """Remove a database this command made and then refused, with its files beside it."""
    for f in (db, f"{db}.wal", f"{db}.reads", f"{db}.lock"):
        Path(f).unlink(missing_ok=True)


def _demo(args: argparse.Namespace) -> None:
    """Run the demo on a fresh ``--db`` file (the one command that makes a database unasked)."""
    run_demo(args.db)


def _info(args: argparse.Namespace) -> None:
    """Print the store's summary line (file, embedder, number of memories) and its memories
    counted by namespace and status: a quick look before exporting or serving a file."""
    with open_store(args.db, args, create=False) as store:
        print(store)
        print(store.frame().group_by("namespace", "status").len().sort("namespace", "status"))


def _reembed(args: argparse.Namespace) -> None:
    """Re-embed every memory with ``--embedder``'s (default: the hash embedder), in one transaction."""
    with open_store(args.db, args, create=False) as store:
        print(f"re-embedded {store.reembed()} memories of {args.db} with {store.embedder.name}")


def _mcp(args: argparse.Namespace) -> None:
    """Serve ``--namespace`` as MCP tools over stdio until the client disconnects."""
    # imported here, the one lazy import: the MCP SDK is an optional extra; without it this raises
    # MissingDependency (exit 2) before the database file is opened, and every other command works
    from .integrations.mcp import build_server

    clock = None if args.now is None else (lambda: args.now)
    made = args.create and not Path(args.db).exists()
    with open_store(args.db, args, create=args.create, settings=args.settings) as store:
        try:  # refused at start (a bad namespace, requester or clock): no new, empty file is left
            server = build_server(store, namespace=args.namespace, requester=args.requester, now=clock)
        except MemkitError:
            store.close()
            if made:
                _remove(args.db)
            raise
        server.run()


def _export(store: MemoryStore, args: argparse.Namespace) -> None:
    """Write ``--namespace`` (or everything) as memkit JSONL, or as a COGX archive with ``--to cogx``.

    Embeddings are left out unless ``--embeddings``: they are large, and a store with another
    embedder recomputes them anyway. ``--events`` adds each memory's audit trail, for a move that
    must keep its history. With ``--requester``, only what that requester may read is written.
    """
    if args.to == "cogx":
        manifest = store.export_cogx(args.out, args.namespace, now=args.now, requester=args.requester)
        print(f"wrote {manifest['counts'].get('memory', 0)} memories to the COGX archive {args.out}")
        return
    header = store.export(
        args.out, args.namespace, include_embeddings=args.embeddings, include_events=args.events,
        now=args.now, requester=args.requester,
    )  # fmt: skip
    c = header["counts"]
    print(f"wrote {c['memories']} memories ({c['events']} events) to {args.out}")


def _import(store: MemoryStore, args: argparse.Namespace) -> None:
    """Load a memkit JSONL file, or another framework's data through its adapter (``--from``), and
    print what happened to the records (``added 12, skipped 3``)."""
    given = {"--namespace": args.namespace is not None, "--namespace-map": args.namespace_map,
             "--on-conflict": args.on_conflict, "--reembed": args.reembed}  # fmt: skip
    takes = ("--namespace-map", "--on-conflict", "--reembed") if args.source == "memkit" else ("--namespace",)
    if wrong := [o for o, v in given.items() if v and o not in takes]:
        raise ValidationError(wrong[0], f"does not apply to --from {args.source}")
    if args.source == "memkit":
        report = store.import_(
            args.file,
            on_conflict=args.on_conflict or "skip",
            requester=args.requester,
            namespace_map=_namespace_map(args.namespace_map),
            reembed=args.reembed,
            now=args.now,
        )
    else:  # another framework's export, mapped to memkit rows by its adapter (one transaction)
        report = adapters.import_file(store, args.file, args.source, namespace=args.namespace,
                                      requester=args.requester, now=args.now)  # fmt: skip
    # the report has one row per record; the summary counts them by action
    counts = report.group_by("action").len().sort("action")
    summary = ", ".join(f"{a} {n}" for a, n in counts.iter_rows())
    print(f"imported {args.file}: {summary or 'nothing'}")


def _analyze(store: MemoryStore, args: argparse.Namespace) -> None:
    """Print the findings table of :meth:`MemoryStore.analyze` and a count by severity."""
    findings = store.analyze(args.namespace, now=args.now, stale_days=args.stale_days,
                             requester=args.requester)  # fmt: skip
    with pl.Config(**_TABLE):
        print(findings.select("code", "severity", "namespace", "memory_id", "key", "message"))
    by = findings.group_by("severity").len().sort("severity")
    print(f"{findings.height} findings" + "".join(f"; {s}: {n}" for s, n in by.iter_rows()))


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
    try:
        _run(args)
    except MemkitError as e:
        print(f"memkit: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `memkit info db | head -1`: the reader left early, which is no error;
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second one at exit's flush
    return 0


if __name__ == "__main__":
    sys.exit(main())
