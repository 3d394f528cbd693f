"""Execute every notebook in notebooks/ from a clean kernel; a cell that raises fails the test.

A notebook that cannot do its work here (notebook 09 without the LoCoMo data) says so with one line
of output, the skip protocol::

    MEMKIT-SKIP: <reason>

printed to stdout by a code cell. After running a notebook the test looks for that line and reports
the notebook as *skipped* with the reason, so cells that all did nothing never count as a pass.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import memkit as mk

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SKIP_MARKER = "MEMKIT-SKIP:"
LOCOMO_NB = ROOT / "notebooks" / "09_evaluating_on_locomo.ipynb"
GUARD_NB = ROOT / "notebooks" / "07_guarding_memory.ipynb"
CJK = re.compile("[\u4e00-\u9fff]")
_RUNS: dict[tuple[Path, str | None], Any] = {}  # (notebook, $MEMKIT_LOCOMO) -> the executed notebook


def run_notebook(path: Path) -> Any:
    """Execute ``path`` in a fresh kernel (which inherits ``os.environ``) -> the notebook with outputs.

    A run under the same ``$MEMKIT_LOCOMO`` is reused, so notebook 09 executes once per setting."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    key = (path, os.environ.get("MEMKIT_LOCOMO"))
    if key not in _RUNS:
        nb = nbformat.read(path, as_version=4)
        assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit without outputs"
        client = nbclient.NotebookClient(
            nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        )
        client.execute()
        _RUNS[key] = nb
    return _RUNS[key]


def skip_reasons(nb: Any) -> list[str]:
    """The reasons of every ``MEMKIT-SKIP: <reason>`` line the notebook's code cells printed."""
    reasons = []
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                text = out["text"] if isinstance(out["text"], str) else "".join(out["text"])
                reasons += [ln.split(SKIP_MARKER, 1)[1].strip() for ln in text.splitlines()
                            if ln.startswith(SKIP_MARKER)]  # fmt: skip
    return reasons


def locomo_data() -> Path:
    """Where notebook 09 looks for ``locomo10.json`` (its setup cell's rule, from the notebooks dir)."""
    return Path(os.environ.get("MEMKIT_LOCOMO", ROOT.parent / "shared" / "data" / "locomo"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    reasons = skip_reasons(run_notebook(path))
    if reasons:
        pytest.skip(f"{path.name}: {'; '.join(reasons)}")


def test_skip_marker_is_read_from_stdout_lines_only() -> None:
    nbformat = pytest.importorskip("nbformat")
    v4 = nbformat.v4

    def printed(name: str, text: str) -> Any:
        return v4.new_code_cell(outputs=[v4.new_output("stream", name=name, text=text)])

    nb = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("MEMKIT-SKIP: prose is not output"),
            printed("stdout", "a\nMEMKIT-SKIP: no data\n"),
            printed("stderr", "MEMKIT-SKIP: an error stream\n"),
            printed("stdout", "say MEMKIT-SKIP: mid-line"),
        ]
    )
    assert skip_reasons(nb) == ["no data"]
    assert skip_reasons(v4.new_notebook(cells=[v4.new_code_cell("print(1)")])) == []


def test_locomo_notebook_without_data_reports_a_skip(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMKIT_LOCOMO", str(tmp_path))  # an empty directory: no locomo10.json
    reasons = skip_reasons(run_notebook(LOCOMO_NB))
    assert len(reasons) == 1 and reasons[0].startswith("LoCoMo not found at " + str(tmp_path)), reasons


def test_locomo_notebook_with_data_runs_its_cells() -> None:
    if not (locomo_data() / "locomo10.json").is_file():
        pytest.skip(f"LoCoMo data not found at {locomo_data()} (set MEMKIT_LOCOMO)")
    nb = run_notebook(LOCOMO_NB)  # the normal run (the same one test_notebook_runs made, if it ran)
    assert skip_reasons(nb) == []
    texts = ["".join(o.get("text", "")) for c in nb.cells for o in c.get("outputs", [])]
    assert any("turns," in t and "questions" in t for t in texts), "the data cells did not run"


def literal(path: Path, name: str) -> Any:
    """The literal assigned to ``name`` in one of a notebook's code cells (``name = {...}``)."""
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            for node in ast.walk(ast.parse("".join(cell["source"]))):
                if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
                    return ast.literal_eval(node.value)
    raise AssertionError(f"{path.name} assigns no literal to {name!r}")


def test_lesson_07_shows_the_learned_detector_catch_and_miss_what_its_prose_says() -> None:
    """The lesson's examples, screened by the shipped model: an attack the model alone holds (MG310 and
    no rule code), attacks it lets through (the Chinese one and an English one), benign texts stored."""
    examples = literal(GUARD_NB, "examples")  # {text: "attack" | "benign"}
    learned = mk.GuardParams(learned=True)
    verdict = {text: mk.guard.screen(text, learned) for text in examples}
    codes = {text: set(v.findings["code"].to_list()) for text, v in verdict.items()}
    attacks = [t for t, really in examples.items() if really == "attack"]
    alone = [t for t in attacks if codes[t] == {"MG310"} and verdict[t].action == "quarantine"]
    missed = [t for t in attacks if verdict[t].action == "store" and "MG310" not in codes[t]]
    assert alone, {t: (round(verdict[t].probability, 3), sorted(codes[t])) for t in attacks}
    assert any(CJK.search(t) for t in missed) and any(not CJK.search(t) for t in missed), missed
    assert all(verdict[t].action == "store" for t, really in examples.items() if really == "benign")


def test_lesson_07_prints_what_the_model_alone_holds() -> None:
    nb = run_notebook(GUARD_NB)
    lines = [ln for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if o.get("name") == "stdout" for ln in "".join(o["text"]).splitlines()]  # fmt: skip
    held = [ln for ln in lines if ln.startswith("held by the model alone:")]
    assert held and held[0] != "held by the model alone: []", held


def test_lesson_03_lists_every_wrong_merge_it_counts_at_080() -> None:
    """The 0.80 table shows all the wrong clusters the threshold loop counted (the prose names each one),
    not the first five of them."""
    nb = run_notebook(ROOT / "notebooks" / "03_consolidation_and_merge_threshold.ipynb")
    cells = {c.get("id"): c for c in nb.cells if c.cell_type == "code"}
    loop = "".join("".join(o.get("text", "")) for o in cells["cell-10"]["outputs"])
    counted = re.search(r"threshold 0\.80: +\d+ clusters \( *(\d+) wrong\)", loop)
    shown = [o["data"]["text/plain"] for o in cells["cell-14"]["outputs"] if "data" in o]
    assert counted and shown, (loop, shown)
    rows = re.search(r"shape: \((\d+), 2\)", "".join(shown[0]))
    assert rows and rows.group(1) == counted.group(1), (counted.group(0), rows)
