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


LOCOMO = ROOT.parent / "shared" / "data" / "locomo"


def _locomo_changed():
    spec = importlib.util.spec_from_file_location(
        "locomo_changed_bench", ROOT / "benchmarks" / "locomo_changed.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_changed_answer_labels_name_real_turns_and_questions() -> None:
    if not (LOCOMO / "locomo10.json").exists():
        pytest.skip(f"LoCoMo not found at {LOCOMO} (see ../shared/data/README.md)")
    bench = _locomo_changed()
    _, items = bench.load(LOCOMO)  # raises on a label that names a missing turn or question
    assert len(items) == 24 and sum(it["qa"] is not None for it in items) == 10
    assert all(it["question"] and it["current_ids"] and it["stale_ids"] for it in items)


def test_changed_answer_labels_are_checked(tmp_path: Path) -> None:
    if not (LOCOMO / "locomo10.json").exists():
        pytest.skip(f"LoCoMo not found at {LOCOMO} (see ../shared/data/README.md)")
    bench = _locomo_changed()
    bad = tmp_path / "bad.json"
    bad.write_text('[{"conversation": "conv-26", "qa": null, "question": "q?", "current": ["D99:1"],'
                   ' "stale": ["D1:1"], "why": "-"}]')  # fmt: skip
    with pytest.raises(ValueError, match="D99:1"):
        bench.load(LOCOMO, bad)
    bad.write_text('[{"conversation": "conv-26", "qa": 0, "question": null, "current": ["D1:2"],'
                   ' "stale": ["D1:2"], "why": "-"}]')  # fmt: skip
    with pytest.raises(ValueError, match="bad turn labels"):  # current and stale overlap
        bench.load(LOCOMO, bad)


def test_changed_answer_benchmark_runs(capsys) -> None:
    bench = _locomo_changed()
    if not (LOCOMO / "locomo10.json").exists():
        assert bench.main(["--no-models", "--data", str(LOCOMO)]) == 0
        assert "skip: LoCoMo not found" in capsys.readouterr().out
        pytest.skip(f"LoCoMo not found at {LOCOMO}: only the skip message was checked")
    assert bench.main(["--no-models", "--data", str(LOCOMO)]) == 0
    out = capsys.readouterr().out
    assert "24 questions whose answer changed (10 LoCoMo's own, 14 written)" in out
    assert "current@1" in out and "default Weights()" in out and "second neighbours (SECOND)" in out


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_bench", ROOT / "benchmarks" / f"{name}.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_forget_speed_benchmark_runs(capsys) -> None:
    assert _bench("forget").main(["--sizes", "2000", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "ties by words then age" in out and "x baseline" in out


def test_locomo_forget_benchmark_skips_without_the_data_or_gives_the_readme_table(tmp_path, capsys) -> None:
    bench = _bench("locomo_forget")
    assert bench.main(["--data", str(tmp_path)]) == 0
    assert "skip: LoCoMo not found" in capsys.readouterr().out
    if not (LOCOMO / "locomo10.json").exists():
        pytest.skip(f"LoCoMo not found at {LOCOMO}: only the skip message was checked")
    assert bench.main(["--data", str(LOCOMO), "--no-recall"]) == 0  # the R@5 column takes ~1.5 min
    out = capsys.readouterr().out
    # the README's table, "Forgetting": evidence dropped %, then questions losing all their evidence
    assert "'evidence dropped %': 19.7, 'other turns dropped %': 19.6, 'questions losing all': 248" in out
    assert "'evidence dropped %': 14.4, 'other turns dropped %': 21.3, 'questions losing all': 172" in out
    assert "'evidence dropped %': 5.3, 'other turns dropped %': 22.9, 'questions losing all': 47" in out
