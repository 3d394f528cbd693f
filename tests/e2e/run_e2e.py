"""Real-browser check of the notebooks: what a user sees in JupyterLab, not what a headless kernel sees.

``make e2e`` runs this script. For every ``*.ipynb`` in the notebooks directory it

1. opens the notebook in JupyterLab (a sandboxed server, see ``lab_server.py``) in headless Chromium,
2. runs all cells with Lab's own "Run All Cells" command and waits for the kernel to go idle,
3. fails on a cell error or stderr output, on a front-end error text ("Click to show javascript error",
   "Error displaying widget", ... see ``page_js.ERROR_MARKERS``), on a chart that never drew, a widget
   shown as its text fallback, a page JavaScript error, or any request that leaves 127.0.0.1
   (the notebooks must work offline, so such requests are aborted and reported),
4. moves the first slider (an ipywidgets slider, else an in-chart Vega slider) and fails unless the
   notebook's output changed (the slider's own readout does not count: the change must come back from
   Python, or from the chart for a Vega slider),
5. saves full-length screenshots (``NN_name-1-run.png``, ``NN_name-2-slider.png``) and one per chart or
   widget output (``NN_name/cell-KK.png``) under ``build/screenshots/``, and a JSON report,
6. copies one picture per passing lesson (its first panel, else its busiest chart cell) to
   ``notebooks/screenshots/NN_name.png`` for the README.

Shared data (LoCoMo for lesson 09, the injection sets for lesson 07) is resolved to an absolute path
before the notebooks are copied (``$MEMKIT_LOCOMO`` / ``$MEMKIT_INJECTION``, else ``../shared/data/...``
beside the repository) and handed to the kernels in that variable (``DATA``). When it is found, the
lesson fails unless it draws its chart (``REQUIRED_CHARTS``); when it is not, the run says so first
and the lesson prints its ``MEMKIT-SKIP`` line.

Usage::

    python tests/e2e/run_e2e.py [--notebooks DIR] [--out build/screenshots] [--only GLOB]

``MEMKIT_E2E_NOTEBOOKS`` also sets the directory. Needs the ``e2e`` extra (``playwright``) and Debian's
``chromium`` (never ``playwright install``: it downloads a browser). Exit status 0 when every notebook
passed, 1 otherwise, 2 when it cannot start (no playwright, chromium or notebooks).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# Siblings, not a package: a script's own directory is on sys.path (and pytest's rootdir import adds it).
# Nothing here imports playwright at module level, so `pytest --doctest-modules` imports these files
# without the e2e extra; playwright is imported inside main().
import page_js as js
from lab_server import LabServer

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

#: Notebooks that must draw at least this many charts: lesson 09 without LoCoMo prints a skip line and
#: draws nothing, which would otherwise pass as "no errors".
# the lessons that read shared data, the variable that points their kernels at it, and the charts they
# must draw when it is there (a lesson without its data prints MEMKIT-SKIP and is not a pass either)
DATA = {
    "09_evaluating_on_locomo.ipynb": ("MEMKIT_LOCOMO", "locomo", 1),
    "07_guarding_memory.ipynb": ("MEMKIT_INJECTION", "injection", 1),
}
REQUIRED_CHARTS: dict[str, int] = {}  # filled by main() for the lessons whose data was found

#: Console messages that are not the notebook's fault. Each pattern says why it is harmless.
HARMLESS_CONSOLE: tuple[tuple[str, str], ...] = ()


class RunTimeout(BaseException):
    """The whole run exceeded ``--total-timeout`` (a BaseException: per-notebook handlers must not eat it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise RunTimeout


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds through the finally blocks: Jupyter is stopped


@dataclass
class Result:
    """What happened to one notebook."""

    notebook: str
    ok: bool = True
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    screenshots: list[str] = field(default_factory=list)

    def fail(self, msg: str) -> None:
        self.ok = False
        self.failures.append(msg)


class PageWatch:
    """Collects a page's JavaScript errors and the off-machine requests it tried (and we aborted)."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        self.external: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.route("**/*", self._route)

    def _console(self, msg: Any) -> None:
        if msg.type != "error":
            return
        text = msg.text
        if any(re.search(pat, text) for pat, _why in HARMLESS_CONSOLE):
            return
        self.errors.append(f"console.error: {text[:400]}")

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:")):
            route.continue_()
        else:  # offline is the contract: a chart or widget that needs a CDN is a bug
            self.external.append(url)
            route.abort()


def wait_for(page: Any, expr: str, pred: Any, timeout: float, what: str, arg: Any = None) -> Any:
    """Poll ``page.evaluate(expr, arg)`` until ``pred(value)``; raise TimeoutError naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expr, arg)
        if pred(value):
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what} (last: {value!r})")
        page.wait_for_timeout(200)


def settle(page: Any, timeout: float = 15.0, quiet: float = 1.2) -> None:
    """Wait until the kernel is idle and the outputs stopped changing for ``quiet`` seconds."""
    wait_for(page, js.KERNEL_STATUS, lambda s: s == "idle", timeout, "an idle kernel")
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        sig = page.evaluate(js.OUTPUT_SIGNATURE)
        if sig != last:
            last, since = sig, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        page.wait_for_timeout(200)


def screenshot(page: Any, path: Path) -> str:
    """A screenshot of the whole notebook: the viewport is stretched to the notebook's height first."""
    height = min(page.evaluate(js.NOTEBOOK_HEIGHT) + 160, 16000)
    page.set_viewport_size({"width": 1280, "height": max(900, height)})
    page.wait_for_timeout(400)
    page.evaluate(js.SCROLL_TOP)
    page.wait_for_timeout(200)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    return str(path.relative_to(REPO) if path.is_relative_to(REPO) else path)


def check_cells(page: Any, res: Result, when: str) -> list[dict[str, Any]]:
    """Record every cell error, stderr output, error text, blank chart and unrendered widget."""
    cells = page.evaluate(js.CELL_REPORT, list(js.ERROR_MARKERS))
    for c in cells:
        where = f"{when}: cell {c['index']} ({c['source'].splitlines()[0] if c['source'] else ''!r})"
        if c["count"] is None and c["source"].strip():
            res.fail(f"{where}: not executed (an earlier cell failed or the run timed out)")
        for e in c["errors"]:
            res.fail(f"{where}: error output {e[:300]}")
        for t in c["stderr"]:
            res.fail(f"{where}: stderr output {t.strip()[:300]!r}")
        for m in c["markers"]:
            res.fail(f"{where}: page shows {m!r}")
        if c["blank"]:
            res.fail(f"{where}: {c['blank']} chart(s) did not draw (empty .vega-embed)")
        if c["empty"]:
            res.fail(f"{where}: {c['empty']} widget output(s) are empty (the front-end drew nothing)")
        if c["drawn"] < c["views"]:
            res.fail(f"{where}: {c['views'] - c['drawn']} widget(s) shown as text, not rendered")
    for m in page.evaluate(js.PAGE_MARKERS, list(js.ERROR_MARKERS)):
        if not any(m in f for f in res.failures):
            res.fail(f"{when}: page shows {m!r} outside the cells")
    return cells


def resolve_data(variable: str, folder: str) -> str | None:
    """``$<variable>``, else ``../shared/data/<folder>`` beside the repository, as an absolute path.

    The notebooks run from a temporary copy (``lab_server.make_sandbox``), where a lesson's relative
    path to the shared data breaks; the kernel inherits this variable instead. None when absent.
    """
    raw = os.environ.get(variable) or str(REPO.parent / "shared" / "data" / folder)
    path = Path(raw).expanduser().resolve()
    return str(path) if path.exists() else None


def readme_shot(cells: list[dict[str, Any]], folder: Path, dest: Path) -> None:
    """Copy one picture per lesson for the README: the first cell that builds a panel
    (``mk.widgets.`` in its first 80 characters), else the cell with the most charts
    (``folder`` holds this run's per-cell shots)."""
    shots = [
        c for c in cells if (c["views"] or c["charts"]) and (folder / f"cell-{c['index']:02d}.png").is_file()
    ]
    panels = [c for c in shots if "mk.widgets." in c["source"]]
    best = panels[0] if panels else max(shots, key=lambda c: c["charts"], default=None)
    if best is not None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / f"cell-{best['index']:02d}.png", dest)


def move_slider(page: Any, res: Result) -> bool:
    """Drag the first ipywidgets slider (else nudge a Vega slider, else pick in a dropdown); True when
    the outputs changed."""
    before_sig = page.evaluate(js.OUTPUT_SIGNATURE)
    before_red = set(page.evaluate(js.RED_TEXTS))
    before_read = page.evaluate(js.SLIDER_READOUTS)
    handles = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .widget-slider .noUi-handle")
    if handles.count():
        handle = handles.first
        handle.scroll_into_view_if_needed()
        box = handle.bounding_box()
        track = handle.locator("xpath=ancestor::*[contains(@class,'noUi-target')][1]").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        # drag a third of the track towards the side with more room
        dx = track["width"] / 3 if x < track["x"] + track["width"] / 2 else -track["width"] / 3
        page.mouse.move(x, y)
        page.mouse.down()
        pressed = time.monotonic()
        page.mouse.move(x + dx / 2, y, steps=5)
        page.mouse.move(x + dx, y, steps=5)
        page.mouse.up()
        released = time.monotonic()
        kind = "ipywidgets slider (drag)"
    elif page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .vega-bind input[type=range]").count():
        page.evaluate(js.NUDGE_VEGA_RANGE, 0)
        kind = "Vega binding slider"
    elif (picked := pick_dropdown(page)) is not None:
        kind = f"ipywidgets dropdown (no slider here; picked {picked!r})"
    else:
        res.notes.append("no slider or dropdown in this notebook")
        return False
    after_read = page.evaluate(js.SLIDER_READOUTS)
    if after_read == before_read:
        res.fail(f"{kind}: the slider did not move (readouts {before_read})")
        return False
    if kind == "ipywidgets slider (drag)":  # how long until the page shows what Python answered
        if page.evaluate(js.OUTPUT_SIGNATURE) != before_sig:  # a continuous slider answered mid-drag
            res.notes.append(f"re-rendered during the {1e3 * (released - pressed):.0f} ms drag")
        else:
            while time.monotonic() - released < 10 and page.evaluate(js.OUTPUT_SIGNATURE) == before_sig:
                page.wait_for_timeout(10)
            res.notes.append(
                f"re-rendered {1e3 * (time.monotonic() - released):.0f} ms after the slider was released"
            )
    page.wait_for_timeout(300)  # let the comm message reach the kernel before waiting for idle
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        settle(page, timeout=20)
        if page.evaluate(js.OUTPUT_SIGNATURE) != before_sig:
            red = [t for t in page.evaluate(js.RED_TEXTS) if t not in before_red]
            if red:  # the output changed, but into an error message
                res.fail(f"{kind} moved {before_read} -> {after_read}; the output now shows an error: {red}")
                return True
            res.notes.append(f"{kind} moved {before_read} -> {after_read}; outputs changed")
            return True
        page.wait_for_timeout(300)
    res.fail(f"{kind} moved {before_read} -> {after_read} but no output changed (did it reach Python?)")
    return False


def pick_dropdown(page: Any) -> str | None:
    """Select another option of the first ipywidgets dropdown that has one; the option's text or None."""
    selects = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .widget-dropdown select")
    for i in range(selects.count()):
        sel = selects.nth(i)
        current = sel.input_value()
        options = [o for o in sel.locator("option").all() if o.get_attribute("value") != current]
        if options:
            sel.scroll_into_view_if_needed()
            sel.select_option(value=options[0].get_attribute("value"))
            return options[0].inner_text().replace("\xa0", " ")
    return None


def output_shots(page: Any, cells: list[dict[str, Any]], folder: Path, suffix: str = "") -> None:
    """One screenshot per code cell that shows a chart or a widget (candidates for the README)."""
    for c in cells:
        if not (c["charts"] or c["views"]):
            continue
        box = page.evaluate(js.OUTPUT_BOX, c["index"])
        if box and box["width"] >= 2 and box["height"] >= 2:
            folder.mkdir(parents=True, exist_ok=True)
            try:  # a convenience for README images: never fails the notebook
                shot = folder / f"cell-{c['index']:02d}{suffix}.png"
                page.screenshot(path=str(shot), clip=box, full_page=True)
            except Exception as exc:
                print(f"     (no screenshot of cell {c['index']}: {str(exc).splitlines()[0]} {box})")


def check_notebook(
    browser: Any,
    lab: LabServer,
    nb: Path,
    out: Path,
    timeout: float,
    scale: float = 1.0,
    readme: Path | None = None,
) -> Result:
    """Open, run, inspect, slide and photograph one notebook; never raises for a notebook's fault."""
    rel = nb.relative_to(lab.notebook_dir.parent).as_posix()
    res = Result(notebook=nb.name)
    stem = nb.stem
    start = time.monotonic()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=scale)
    page = context.new_page()
    page.set_default_timeout(timeout * 1000)
    watch = PageWatch(page)
    try:
        page.goto(f"{lab.url}/lab?reset", wait_until="domcontentloaded")
        page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
        page.evaluate(js.OPEN, rel)
        wait_for(page, js.KERNEL_STATUS, lambda s: s == "idle", 60, "the kernel to start")
        res.notes.append(f"kernel ready after {time.monotonic() - start:.1f} s")
        page.evaluate(js.RUN_ALL)
        left = timeout - (time.monotonic() - start)
        state = wait_for(page, js.RUN_STATE, lambda s: s and s["done"], left, "Run All Cells to finish")
        if state["error"]:
            res.fail(f"Run All Cells raised in the page: {state['error']}")
        settle(page)
        res.notes.append(f"ran and settled after {time.monotonic() - start:.1f} s")
        cells = check_cells(page, res, "after Run All")
        drawn = sum(c["charts"] for c in cells)
        if drawn < REQUIRED_CHARTS.get(nb.name, 0):
            need, variable = REQUIRED_CHARTS[nb.name], DATA[nb.name][0]
            res.fail(f"drew {drawn} chart(s), needs {need} (is its data at ${variable}?)")
        res.screenshots.append(screenshot(page, out / f"{stem}-1-run.png"))
        output_shots(page, cells, out / stem)
        if res.ok and readme:
            readme_shot(cells, out / stem, readme / f"{stem}.png")
        page.set_viewport_size({"width": 1280, "height": 900})
        if res.ok and move_slider(page, res):
            cells = check_cells(page, res, "after the slider move")
            res.screenshots.append(screenshot(page, out / f"{stem}-2-slider.png"))
            output_shots(page, cells, out / stem, "-slider")
    except Exception as exc:  # a timeout or a page crash is this notebook's failure, not the run's
        res.fail(f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
        try:
            res.screenshots.append(screenshot(page, out / f"{stem}-0-failed.png"))
        except Exception:
            pass
    for e in watch.errors:
        res.fail(f"JavaScript: {e}")
    for url in sorted(set(watch.external)):
        res.fail(f"tried to reach {url[:200]} (aborted: notebooks must work offline)")
    context.close()
    lab.shutdown_kernels()
    res.seconds = round(time.monotonic() - start, 1)
    return res


def main(argv: list[str] | None = None) -> int:
    """Run the browser check; print a summary; return the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_dir = Path(os.environ.get("MEMKIT_E2E_NOTEBOOKS", REPO / "notebooks"))
    ap.add_argument("--notebooks", type=Path, default=default_dir)
    ap.add_argument("--out", type=Path, default=REPO / "build" / "screenshots")
    ap.add_argument("--only", default="*.ipynb", help="glob on notebook file names")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per notebook")
    ap.add_argument("--total-timeout", type=float, default=1200.0, help="seconds for the whole run")
    ap.add_argument("--scale", type=float, default=1.0, help="device pixel ratio (2 for README images)")
    ap.add_argument("--jupyter", type=Path, default=Path(sys.executable).parent / "jupyter")
    ap.add_argument("--readme-shots", type=Path, default=REPO / "notebooks" / "screenshots",
                    help="one picture per passing lesson, for the README ('' to skip)")  # fmt: skip
    args = ap.parse_args(argv)
    for lesson, (variable, folder, charts) in DATA.items():
        found = resolve_data(variable, folder)
        if found:  # before the notebooks are copied: the kernels inherit it
            os.environ[variable] = found
            REQUIRED_CHARTS[lesson] = charts
        print(f"{folder} for {lesson}: {found or f'not found (set {variable}); its charts are not required'}")
    try:
        from playwright.sync_api import sync_playwright  # the e2e extra; only this script needs it
    except ImportError:
        print("playwright is missing: pip install -e '.[e2e]' (never `playwright install`)", file=sys.stderr)
        return 2
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 2
    notebooks = args.notebooks.resolve()
    found = sorted(p for p in notebooks.glob("*.ipynb") if fnmatch.fnmatch(p.name, args.only))
    if not found:
        print(f"no notebooks matching {args.only} in {notebooks}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for nb in found:  # this run's images only: old ones of the same notebook would mislead
        for old in [*args.out.glob(f"{nb.stem}-*.png"), *(args.out / nb.stem).glob("cell-*.png")]:
            old.unlink()
    t0 = time.monotonic()
    results: list[Result] = []
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGTERM, _terminate)
    signal.alarm(max(1, int(args.total_timeout)))
    lab = LabServer(notebooks, args.jupyter)
    try:
        try:
            lab.start()
        except RuntimeError as exc:
            print(f"could not start JupyterLab: {exc}", file=sys.stderr)
            return 2
        print(f"JupyterLab at {lab.url} serving a copy of {notebooks} ({time.monotonic() - t0:.1f} s)")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for nb in sorted(lab.notebook_dir / p.name for p in found):
                    readme = args.readme_shots if str(args.readme_shots) else None
                    res = check_notebook(browser, lab, nb, args.out, args.timeout, args.scale, readme)
                    results.append(res)
                    print(f"{'PASS' if res.ok else 'FAIL'} {res.notebook} ({res.seconds} s)")
                    for line in res.failures:
                        print(f"     - {line}")
                    for line in res.notes:
                        print(f"     . {line}")
            finally:
                browser.close()
    except RunTimeout:
        done = {r.notebook for r in results}
        for p in found:
            if p.name not in done:
                results.append(
                    Result(p.name, ok=False, failures=[f"whole run over {args.total_timeout:.0f} s"])
                )
        print(f"FAIL: whole run exceeded --total-timeout {args.total_timeout:.0f} s; unchecked: "
              f"{', '.join(p.name for p in found if p.name not in done)}")  # fmt: skip
    finally:
        signal.alarm(0)
        lab.stop()
        lab.cleanup()
    total = time.monotonic() - t0
    report = {"seconds": round(total, 1), "results": [asdict(r) for r in results]}
    (args.out / "report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    failed = [r.notebook for r in results if not r.ok]
    print(f"{len(results) - len(failed)}/{len(results)} notebooks passed in {total:.1f} s; "
          f"screenshots in {args.out}")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
