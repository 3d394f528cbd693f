"""The search benchmark still runs end to end (a tiny corpus; no timing is asserted)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_search_benchmark_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "search.py"), "--sizes", "2000", "--repeats", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "median ms" in proc.stdout and "x matvec" in proc.stdout and "method" in proc.stdout
    assert "memkit search (reinforce=False)" in proc.stdout


def test_postgres_benchmark_runs() -> None:
    pytest.importorskip("psycopg", reason="the extra memkit[postgres] is not installed")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "postgres.py"), "--size", "1500", "--queries", "5",
         "--no-locomo"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "HNSW ef_search 100" in proc.stdout and "keys with exactly 1 active': 5" in proc.stdout


def test_ingest_benchmark_runs(capsys) -> None:
    spec = importlib.util.spec_from_file_location("ingest_bench", ROOT / "benchmarks" / "ingest.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--sizes", "300"]) == 0
    out = capsys.readouterr().out
    assert (
        "floor: DuckDB inserts" in out
        and "add_many, embeddings given" in out
        and "HashEmbedder embeds" in out
    )
