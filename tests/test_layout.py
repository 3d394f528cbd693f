"""The package's shape, checked: the layer contract, no cycles, no reaching into private names, modules
readable in one sitting, documentation share, subpackage ``__init__`` files that only re-export, and
every old module path still importing the same module object."""

from __future__ import annotations

import ast
import importlib
import io
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

import memkit as mk
from memkit._moved import MOVED

PACKAGE = Path(mk.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
MAX_LINES = 350  # "each file readable in one sitting" (DESIGN.md)
MIN_DOC_SHARE = 0.30  # docstrings + comments over non-blank lines (STYLE.md: 30-50% for teaching code)
# modules allowed to import memkit modules inside a function: the CLI loads a subcommand's modules
# (and the optional MCP extra) only when that subcommand runs, so `memkit --help` stays fast
LAZY_IMPORTERS = {"memkit.cli"}


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(path: Path) -> str:
    name = _name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _imports(path: Path) -> list[tuple[ast.ImportFrom, str]]:
    """Every ``from X import ...`` of a memkit module in ``path``, with X resolved to an absolute name."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(path).split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "memkit" or target.startswith("memkit."):
                out.append((node, target))
    return out


def test_import_contract_holds() -> None:
    """pyproject.toml's [tool.importlinter] contracts (layers, acyclic siblings, who imports duckdb,
    Altair and ipywidgets), run by the real tool, as `make lint` does."""
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed (it comes with the dev extra: make setup)")
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=PACKAGE.parent, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_no_private_names_cross_modules() -> None:
    """No module imports another module's ``_private`` name (make it public, or move it)."""
    bad = [
        f"{_name(p)}:{node.lineno} from {target} import {a.name}"
        for p in MODULES
        for node, target in _imports(p)
        for a in node.names
        if a.name.startswith("_") and not a.name.startswith("__") and target != "memkit"
    ]
    assert bad == []


def test_no_function_level_imports_of_memkit() -> None:
    """Imports of memkit modules sit at the top of a module, so the import graph import-linter checks
    is the real one (no import inside a function to dodge a cycle)."""
    bad = []
    for p in MODULES:
        if _name(p) in LAZY_IMPORTERS:
            continue
        tree = ast.parse(p.read_text())
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(fn):
                    if isinstance(node, ast.ImportFrom) and (
                        node.level or (node.module or "").startswith("memkit")
                    ):
                        bad.append(f"{_name(p)}:{node.lineno}")
    assert bad == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _name(p))
def test_modules_are_readable_in_one_sitting(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


def _doc_lines(src: str) -> tuple[int, int]:
    """(lines of docstrings and comments, non-blank lines) of a module's source."""
    doc: set[int] = set()
    for node in ast.walk(ast.parse(src)):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for stmt in body:  # docstrings, and attribute docstrings after an assignment
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    if isinstance(stmt.value.value, str):
                        doc.update(range(stmt.lineno, stmt.end_lineno + 1))
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            doc.add(tok.start[0])
    lines = [i for i, line in enumerate(src.splitlines(), 1) if line.strip()]
    return sum(i in doc for i in lines), len(lines)


def test_documentation_share() -> None:
    """Teaching code explains itself: docstrings and comments are at least 30% of the package."""
    counts = [_doc_lines(p.read_text()) for p in MODULES]
    share = sum(d for d, _ in counts) / sum(n for _, n in counts)
    assert share >= MIN_DOC_SHARE, f"documentation is {share:.1%} of non-blank lines"


SUBPACKAGES = sorted(p for p in PACKAGE.glob("*/__init__.py"))


@pytest.mark.parametrize("init", SUBPACKAGES, ids=lambda p: p.parent.name)
def test_subpackage_init_only_reexports(init: Path) -> None:
    """A subpackage's ``__init__`` holds a docstring, imports from its own modules, ``__all__`` and
    old names kept as aliases: no logic, so the modules are where things are defined."""
    tree = ast.parse(init.read_text())
    for stmt in tree.body:
        ok = (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            or isinstance(stmt, ast.ImportFrom)
            and (stmt.module == "__future__" or stmt.level == 1)
            or isinstance(stmt, ast.Assign | ast.AnnAssign)
            and isinstance(stmt.value, ast.Name | ast.List)
        )
        assert ok, f"{init.parent.name}/__init__.py:{stmt.lineno} does more than re-export"
    module = importlib.import_module(_name(init))
    assert all(hasattr(module, n) for n in module.__all__)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_paths_import_the_moved_module(old: str) -> None:
    """``import memkit.adapters`` (and every other old flat path) gives the module at its new path:
    the same object, so state and monkeypatches are shared."""
    moved = importlib.import_module(old)
    assert moved is importlib.import_module(MOVED[old])
    assert moved.__spec__.name == MOVED[old]  # its own spec, not the alias's
    assert getattr(mk, old.rpartition(".")[2]) is moved


def test_chart_builders_are_named_apart_from_panels_and_data_functions() -> None:
    """A chart builder's name never equals a panel's or a data function's (old names stay as aliases)."""
    from memkit import charts, conflicts, views, widgets

    aliases = {"conflict_graph", "merge_explorer"}
    builders = set(charts.__all__) - aliases
    others = set(widgets.__all__) | set(views.__all__) | set(conflicts.__all__)
    assert builders & others == set()
    assert charts.merge_explorer is charts.merge_chart
    assert charts.conflict_graph is charts.conflict_graph_chart


def test_readme_lists_every_module() -> None:
    """The README's "Files of the package" names every module (``name.py`` under its subpackage)."""
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    files = readme[readme.index("Files of the package") :]
    files = files[: files.index("\n## ")] if "\n## " in files else files
    missing = []
    for p in MODULES:
        if p.name == "__init__.py":
            continue
        group = p.parent.name
        line = next((ln for ln in files.splitlines() if ln.startswith(f"- `{group}/`")), files)
        # a subpackage's modules are named on its bullet (and the lines that continue it)
        scope = files if group == "memkit" else files[files.index(line) :].split("\n- ", 1)[0]
        if f"`{p.name}`" not in scope:
            missing.append(f"{group}/{p.name}")
    assert missing == []


def test_old_names_of_moved_modules_still_import() -> None:
    """Names the old flat modules exported keep working from the old path (the chart builders'
    old names too, on the module they moved into)."""
    from memkit.lifecycle_charts import conflict_graph, merge_explorer

    assert merge_explorer is mk.charts.merge_chart and conflict_graph is mk.charts.conflict_graph_chart
