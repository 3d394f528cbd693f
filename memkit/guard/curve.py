"""What a threshold on the injection probability buys and costs (pure, polars).

A detector's probability becomes a decision at a threshold: lower it and more attacks are caught
(recall up) but more ordinary texts are held (false positives up, precision down). Both functions
take a *scored* frame — one row per labelled text with ``probability`` and ``label`` (1 = attack),
optionally ``set`` — such as ``benchmarks/train_guard.py`` produces.

- :func:`tradeoff` — recall, false-positive rate and precision at every threshold on a grid;
- :func:`rates_at` — per set: N, and recall (attack rows) or false-positive rate (benign rows) at one
  threshold.

>>> scored = pl.DataFrame({"probability": [0.9, 0.6, 0.3, 0.1], "label": [1, 1, 0, 0]})
>>> tradeoff(scored, [0.5]).row(0, named=True)
{'threshold': 0.5, 'recall': 1.0, 'fpr': 0.0, 'precision': 1.0, 'flagged': 2}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from ..errors import ValidationError

__all__ = ["rates_at", "tradeoff"]


def _check(scored: pl.DataFrame) -> None:
    if not isinstance(scored, pl.DataFrame) or not {"probability", "label"} <= set(scored.columns):
        raise ValidationError("scored", "must be a polars DataFrame with probability and label columns")


def tradeoff(scored: pl.DataFrame, thresholds: Sequence[float] | None = None) -> pl.DataFrame:
    """``threshold, recall, fpr, precision, flagged`` at each threshold (default 0.01 .. 0.99).

    recall = flagged attacks / attacks; fpr = flagged benign / benign; precision = flagged attacks /
    flagged (1.0 when nothing is flagged). A text is flagged when ``probability >= threshold``.
    """
    _check(scored)
    grid = np.round(np.arange(0.01, 1.0, 0.01), 2) if thresholds is None else np.asarray(thresholds, float)
    p = scored["probability"].to_numpy().astype(np.float64)
    y = scored["label"].to_numpy() == 1
    flagged = p[None, :] >= grid[:, None]  # (thresholds, texts)
    tp = (flagged & y).sum(axis=1)
    fp = (flagged & ~y).sum(axis=1)
    n_pos, n_neg = max(int(y.sum()), 1), max(int((~y).sum()), 1)
    return pl.DataFrame({
        "threshold": grid, "recall": tp / n_pos, "fpr": fp / n_neg,
        "precision": np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 1.0), "flagged": tp + fp,
    })  # fmt: skip


def rates_at(scored: pl.DataFrame, threshold: float, by: str = "set") -> pl.DataFrame:
    """Per ``by`` group and label: ``N``, ``flagged`` and ``rate`` (recall on attacks, false-positive
    rate on benign texts) at ``threshold``; ``measure`` says which."""
    _check(scored)
    if not 0.0 <= threshold <= 1.0:
        raise ValidationError("threshold", f"must be in [0, 1], got {threshold}")
    keys = [by, "label"] if by in scored.columns else ["label"]
    out = scored.group_by(keys, maintain_order=True).agg(
        N=pl.len(), flagged=(pl.col("probability") >= threshold).sum()
    )
    return out.with_columns(
        rate=pl.col("flagged") / pl.col("N"),
        measure=pl.when(pl.col("label") == 1).then(pl.lit("recall")).otherwise(pl.lit("false positives")),
    ).sort(keys)
