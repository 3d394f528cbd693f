"""Command line: ``memkit`` (or ``python -m memkit``).

==========  ======================================================================================
command     what it does
==========  ======================================================================================
demo        load the sample set into a DuckDB file and walk through memkit
info        summarize a memkit database file
export      write a namespace (or everything) to a portable JSONL file (:mod:`memkit.portable`)
import      load a portable JSONL file (``--from`` mem0 / cogx / chat for other frameworks' data)
analyze     lint a namespace and print the findings table (:mod:`memkit.analyze`)
reembed     migrate a file written by another (or an older) embedder to the default one
mcp         serve one namespace to an LLM client as MCP memory tools over stdio
            (:mod:`memkit.integrations.mcp`; needs ``pip install 'memkit[mcp]'``)
==========  ======================================================================================

The CLI never creates a database by accident: every command but ``demo`` needs an existing file
(``import --create`` and ``mcp --create`` make a new one on purpose). Errors (a missing or bad file,
a bad argument, a locked database, a missing extra) print ``memkit: <Error>: <message>`` on stderr
and exit with status 2; nothing is written. An adapter import (``--from``) is one transaction: one
bad record commits nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime

__all__ = ["main"]

_TABLE = dict(
    tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=160, tbl_hide_dataframe_shape=True
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memkit", description="memkit: the memory layer of LLM agents")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="load the sample set into a DuckDB file and walk through memkit")
    demo.add_argument("--db", default="demo.duckdb", help="database file (recreated; default demo.duckdb)")
    info = sub.add_parser("info", help="summarize a memkit database file")
    info.add_argument("db", help="database file")

    exp = sub.add_parser("export", help="write memories to a portable JSONL file")
    exp.add_argument("out", help="output file (.jsonl), or a directory with --to cogx")
    exp.add_argument("--db", required=True, help="database file")
    exp.add_argument("--namespace", help="one namespace (default: all)")
    exp.add_argument("--embeddings", action="store_true", help="include the embeddings")
    exp.add_argument("--events", action="store_true", help="include each memory's audit events")
    exp.add_argument("--to", choices=("memkit", "cogx"), default="memkit", help="output format")

    imp = sub.add_parser("import", help="load a portable JSONL file (all or nothing)")
    imp.add_argument("file", help="input file (a COGX archive directory with --from cogx)")
    imp.add_argument("--db", required=True, help="database file (must exist unless --create)")
    imp.add_argument("--create", action="store_true", help="create the database file if it does not exist")
    imp.add_argument(
        "--on-conflict",
        default="skip",
        choices=("skip", "overwrite", "new_ids", "error"),
        help="what an id already in the store does (default skip)",
    )
    imp.add_argument(
        "--namespace-map",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="rename a namespace on the way in (repeatable)",
    )
    imp.add_argument(
        "--from",
        dest="source",
        choices=("memkit", "mem0", "cogx", "chat"),
        default="memkit",
        help="input format: memkit JSONL, a mem0 get_all() JSON, a COGX archive, chat messages",
    )
    imp.add_argument("--namespace", help="target namespace for --from chat (and mem0 records without a user)")
    imp.add_argument("--requester", help="who imports (audit log; default: the operator)")
    imp.add_argument(
        "--reembed", action="store_true", help="recompute embeddings even from the same embedder"
    )

    ana = sub.add_parser("analyze", help="lint memories and print the findings")
    ana.add_argument("--db", required=True, help="database file")
    ana.add_argument("--namespace", help="one namespace (default: all)")
    ana.add_argument("--stale-days", type=float, default=90.0, help="MK004 threshold in days (default 90)")
    ree = sub.add_parser("reembed", help="re-embed a file written by another embedder (in one transaction)")
    ree.add_argument("--db", required=True, help="database file")
    srv = sub.add_parser("mcp", help="serve one namespace as MCP memory tools over stdio (extra: mcp)")
    srv.add_argument("--db", required=True, help="database file (must exist unless --create)")
    srv.add_argument("--create", action="store_true", help="create the database file if it does not exist")
    srv.add_argument("--namespace", required=True, help="the one namespace the tools read and write")
    srv.add_argument(
        "--requester", help="who the client acts as (access rules, audit; default: the operator)"
    )
    srv.add_argument(
        "--now", type=datetime.fromisoformat, help="a fixed clock, ISO-8601 with offset (tests, replays)"
    )
    for p in (exp, ana):
        p.add_argument(
            "--requester", help="read as this requester (needs --namespace; default: the operator)"
        )
    for p in (exp, imp, ana):
        p.add_argument(
            "--now", type=datetime.fromisoformat, help="the clock, ISO-8601 with offset (tests, replays)"
        )
    return parser


def _namespace_map(pairs: Sequence[str]) -> dict[str, str]:
    from .errors import ValidationError

    out = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep:
            raise ValidationError("--namespace-map", f"must be OLD=NEW, got {pair!r}")
        out[old] = new
    return out


def _run(args: argparse.Namespace) -> None:
    import polars as pl

    from .portable import adapters, cogx
    from .store import MemoryStore

    if args.command == "demo":
        from .demo import run_demo

        run_demo(args.db)
        return
    if args.command == "info":
        with MemoryStore(args.db, create=False) as store:
            print(store)
            print(store.frame().group_by("namespace", "status").len().sort("namespace", "status"))
        return
    if args.command == "reembed":
        with MemoryStore(args.db, create=False) as store:
            print(f"re-embedded {store.reembed()} memories of {args.db} with {store.embedder.name}")
        return
    if args.command == "mcp":
        # imported first: without the extra this raises MissingDependency (exit 2) before the file opens
        from .integrations.mcp import build_server

        clock = None if args.now is None else (lambda: args.now)
        with MemoryStore(args.db, create=args.create) as store:
            build_server(store, namespace=args.namespace, requester=args.requester, now=clock).run()
        return
    with MemoryStore(args.db, create=args.command == "import" and args.create) as store:
        if args.command == "export":
            if args.to == "cogx":
                manifest = cogx.write_cogx(store.frame(args.namespace, requester=args.requester), args.out,
                                           embedder=store.embedder.name, now=args.now)  # fmt: skip
                print(f"wrote {manifest['counts'].get('memory', 0)} memories to the COGX archive {args.out}")
                return
            header = store.export(
                args.out, args.namespace, include_embeddings=args.embeddings, include_events=args.events,
                now=args.now, requester=args.requester,
            )  # fmt: skip
            c = header["counts"]
            print(f"wrote {c['memories']} memories ({c['events']} events) to {args.out}")
        elif args.command == "import":
            if args.source == "memkit":
                report = store.import_(
                    args.file,
                    on_conflict=args.on_conflict,
                    requester=args.requester,
                    namespace_map=_namespace_map(args.namespace_map),
                    reembed=args.reembed,
                    now=args.now,
                )
            else:
                report = adapters.import_file(
                    store,
                    args.file,
                    args.source,
                    namespace=args.namespace,
                    requester=args.requester,
                    now=args.now,
                )
            counts = report.group_by("action").len().sort("action")
            summary = ", ".join(f"{a} {n}" for a, n in counts.iter_rows())
            print(f"imported {args.file}: {summary or 'nothing'}")
        elif args.command == "analyze":
            findings = store.analyze(args.namespace, now=args.now, stale_days=args.stale_days,
                                     requester=args.requester)  # fmt: skip
            with pl.Config(**_TABLE):
                print(findings.select("code", "severity", "namespace", "memory_id", "key", "message"))
            by = findings.group_by("severity").len().sort("severity")
            print(f"{findings.height} findings" + "".join(f"; {s}: {n}" for s, n in by.iter_rows()))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 ok, 2 on a memkit error)."""
    args = _parser().parse_args(argv)
    from .errors import MemkitError

    try:
        _run(args)
    except MemkitError as e:
        print(f"memkit: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
