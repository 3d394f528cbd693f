"""The JavaScript the browser check runs inside JupyterLab (``window.jupyterapp``, exposed by the server).

Kept apart from the Python driver so each side reads in one sitting. Every snippet is an arrow function
that Playwright's ``page.evaluate(js, arg)`` calls; they only read the page or run Lab's own commands.
"""

from __future__ import annotations

#: Texts that mean a front-end failed to render something. Only a browser sees them.
ERROR_MARKERS: tuple[str, ...] = (
    "Click to show javascript error",  # anywidget / an ipywidget's ESM failed to load (offline CDN ...)
    "Error displaying widget",  # ipywidgets: the view could not be created
    "Failed to load model class",  # ipywidgets: the widget's JS module is missing
    "Error rendering output item",  # JupyterLab rendermime failed on an output
    "Javascript Error",  # classic application/javascript output failed
    "No renderer could be found",  # an output mime type nobody renders (e.g. Vega-Lite v6 in plain Lab)
    "Error loading script",  # Altair's default html renderer could not fetch vega from its CDN
    "renderer has not been properly enabled",  # Altair's fallback text: Lab cannot draw Vega-Lite v6
    "Loading widget...",  # a widget view that never finished loading (checked after the page settled)
)

#: Open a notebook with Lab's document manager and wait for its kernel; returns the panel id.
OPEN = """
async (path) => {
  const app = window.jupyterapp;
  await app.started; await app.restored;
  app.shell.collapseLeft(); app.shell.collapseRight();
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  // never hang the driver: page.evaluate itself has no timeout
  const within = (p, s, what) => Promise.race([p, new Promise((_, no) =>
    setTimeout(() => no(new Error(`${what} not ready after ${s} s`)), s * 1000))]);
  await within(panel.context.ready, 60, 'the notebook');
  app.shell.activateById(panel.id);
  await within(panel.sessionContext.ready, 90, 'the kernel session');
  window.__e2e = {panel, run: null};
  return panel.id;
}
"""

#: The kernel's status ('idle', 'busy', 'starting', ...) or null while there is none.
KERNEL_STATUS = """
() => {
  const k = window.__e2e.panel.sessionContext.session?.kernel;
  return k ? k.status : null;
}
"""

#: Start Lab's "Run All Cells" command; its promise settles into window.__e2e.run.
RUN_ALL = """
() => {
  const app = window.jupyterapp;
  app.shell.activateById(window.__e2e.panel.id);
  window.__e2e.run = {done: false, ok: null, error: null};
  app.commands.execute('notebook:run-all-cells').then(
    ok => { window.__e2e.run = {done: true, ok: ok !== false, error: null}; },
    err => { window.__e2e.run = {done: true, ok: false, error: String(err)}; });
}
"""

RUN_STATE = "() => window.__e2e.run"

#: Per code cell: index, execution count, error/stderr outputs, and error marker texts in its DOM.
CELL_REPORT = """
(markers) => {
  const cells = window.__e2e.panel.content.widgets;
  const out = [];
  cells.forEach((cell, index) => {
    if (cell.model.type !== 'code') return;
    const outputs = cell.model.outputs.toJSON();
    const errors = outputs.filter(o => o.output_type === 'error')
      .map(o => `${o.ename}: ${o.evalue}`);
    const stderr = outputs.filter(o => o.output_type === 'stream' && o.name === 'stderr')
      .map(o => Array.isArray(o.text) ? o.text.join('') : o.text).filter(t => t.trim());
    const text = cell.node.innerText || '';
    const shown = markers.filter(m => text.includes(m));
    // a Vega chart that never drew: a .vega-embed without a non-empty svg/canvas
    const blank = [...cell.node.querySelectorAll('.vega-embed')].filter(e => {
      const g = e.querySelector('svg.marks, canvas.marks, svg, canvas');
      return !g || g.getBoundingClientRect().width < 10 || g.getBoundingClientRect().height < 10;
    }).length;
    // outputs a widget front-end should have drawn but did not (model has a view, DOM has nothing)
    // (without a widget manager Lab falls back to the text/plain repr, e.g. "FloatSlider(value=1.0)")
    const children = [...cell.outputArea.node.querySelectorAll(':scope > .jp-OutputArea-child')];
    let views = 0, drawn = 0, empty = 0;
    outputs.forEach((o, i) => {
      if (!(o.data && o.data['application/vnd.jupyter.widget-view+json'])) return;
      views += 1;
      const shown = children[i] && children[i].querySelector('.jp-OutputArea-output');
      if (shown && shown.getAttribute('data-mime-type') !== 'text/plain') {
        drawn += 1;
        // a widget whose front-end failed (e.g. anywidget ESM from a CDN) leaves an empty box
        if (shown.getBoundingClientRect().height < 4) empty += 1;
      }
    });
    const charts = cell.node.querySelectorAll('.vega-embed').length;
    out.push({index, count: cell.model.executionCount, errors, stderr, markers: shown, blank,
              views, drawn, empty, charts, source: cell.model.sharedModel.getSource().slice(0, 80)});
  });
  return out;
}
"""

#: Marker texts anywhere on the page (dialogs and notifications included).
PAGE_MARKERS = """
(markers) => { const t = document.body.innerText || ''; return markers.filter(m => t.includes(m)); }
"""

#: A fingerprint of everything the notebook shows except slider widgets themselves (their readout moves
#: in the browser without Python): output HTML plus the pixels of every canvas.
OUTPUT_SIGNATURE = """
() => {
  const nb = window.__e2e.panel.content.node;
  const parts = [];
  for (const area of nb.querySelectorAll('.jp-Cell-outputWrapper')) {
    const copy = area.cloneNode(true);
    copy.querySelectorAll('.widget-slider, .vega-bindings').forEach(n => n.remove());
    parts.push(copy.innerHTML);
    for (const c of area.querySelectorAll('canvas')) {
      try { parts.push(c.toDataURL()); } catch (e) { parts.push('tainted'); }
    }
  }
  let h = 0; const s = parts.join('|');
  for (let i = 0; i < s.length; i++) { h = (h * 31 + s.charCodeAt(i)) | 0; }
  return `${s.length}:${h}`;
}
"""

#: Every slider readout (ipywidgets .widget-readout, Vega bindings) and dropdown value, in page order.
SLIDER_READOUTS = """
() => [...window.__e2e.panel.content.node.querySelectorAll(
  '.widget-slider .widget-readout, .vega-bind input[type=range], .widget-dropdown select')]
  .map(e => e.value ?? e.innerText)
"""

#: Height in CSS pixels of the whole notebook (for a full-length screenshot) and the scroll element.
NOTEBOOK_HEIGHT = """
() => {
  const nb = window.__e2e.panel.content.node;
  const inner = nb.querySelector('.jp-WindowedPanel-inner') || nb;
  return Math.ceil(Math.max(inner.scrollHeight, nb.scrollHeight));
}
"""

#: Move a Vega binding range input (an in-chart slider) by a quarter of its span; returns the new value.
NUDGE_VEGA_RANGE = """
(i) => {
  const r = window.__e2e.panel.content.node.querySelectorAll('.vega-bind input[type=range]')[i];
  const lo = Number(r.min || 0), hi = Number(r.max || 100), v = Number(r.value);
  const next = v + (hi - lo) / 4 <= hi ? v + (hi - lo) / 4 : v - (hi - lo) / 4;
  r.value = String(next);
  r.dispatchEvent(new Event('input', {bubbles: true}));
  r.dispatchEvent(new Event('change', {bubbles: true}));
  return r.value;
}
"""

#: The box (page coordinates) around what cell ``i``'s outputs actually draw: the output area is as wide
#: as the notebook, so a screenshot of it would be mostly blank on the right.
OUTPUT_BOX = """
(i) => {
  const cell = window.__e2e.panel.content.widgets[i];
  const area = cell.node.querySelector('.jp-Cell-outputWrapper');
  if (!area) return null;
  const a = area.getBoundingClientRect();
  // start at the outputs themselves: leave out the "[5]:" prompt and the active-cell bar
  const first = area.querySelector('.jp-OutputArea-output');
  const left = Math.max(a.left, (first ? first.getBoundingClientRect().left : a.left) - 8);
  let right = left + 200;
  for (const e of area.querySelectorAll('svg, canvas, table, img, pre, label, button, input, select, ' +
      '.widget-readout, .widget-label, .widget-html-content, .noUi-target, p, li, h1, h2, h3, h4')) {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) right = Math.max(right, r.right);
  }
  return {x: left + window.scrollX, y: a.top + window.scrollY,
          width: Math.min(right + 16, a.right) - left, height: a.height};
}
"""

#: Scroll the notebook back to its top (after a run, Lab leaves it scrolled to the last cell).
SCROLL_TOP = """
() => {
  const nb = window.__e2e.panel.content.node;
  for (const e of [nb, ...nb.querySelectorAll('.jp-WindowedPanel-outer')]) e.scrollTop = 0;
}
"""

#: Red HTML text inside the outputs (not SVG chart text): how a panel reports a failed update, e.g.
#: memkit's Panel.say(..., error=True) in #b00020 ("the store ':memory:' is closed").
RED_TEXTS = """
() => {
  const found = [];
  for (const e of window.__e2e.panel.content.node.querySelectorAll('.jp-OutputArea-output *')) {
    if (e.closest('svg') || !e.childNodes.length) continue;
    const own = [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!own) continue;
    const m = getComputedStyle(e).color.match(/\\d+/g);
    if (m && +m[0] > 150 && +m[1] < 60 && +m[2] < 80) found.push(own.slice(0, 200));
  }
  return found;
}
"""
