"""Command line: ``memkit demo`` (or ``python -m memkit demo``) and ``memkit info``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(prog="memkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="load the sample set into a DuckDB file and walk through memkit")
    demo.add_argument("--db", default="demo.duckdb", help="database file (recreated; default demo.duckdb)")
    info = sub.add_parser("info", help="summarize a memkit database file")
    info.add_argument("db", help="database file")
    args = parser.parse_args(argv)

    from .errors import MemkitError

    try:
        if args.command == "demo":
            from .demo import run_demo

            run_demo(args.db)
        elif args.command == "info":
            from .store import MemoryStore

            with MemoryStore(args.db) as store:
                print(store)
                print(store.frame().group_by("namespace", "status").len().sort("namespace", "status"))
    except MemkitError as e:
        print(f"memkit: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
