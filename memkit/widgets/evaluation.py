"""Tune the score weights on a whole benchmark, live: :func:`recall_tuner` (re-exported by
:mod:`memkit.widgets`).

:func:`~memkit.widgets.weights_tuner` re-ranks a handful of questions; this panel answers the same
question — "which weights should my search use?" — over a whole labelled set such as LoCoMo's 1,536
evidence questions. Everything expensive happens once, before the panel exists:
:func:`memkit.evaluate.prepare` embeds every memory and question and computes the cosine and BM25
matrices of each conversation. A slider move is then :func:`memkit.evaluate.evaluate` on that
:class:`~memkit.evaluate.Prepared`: per conversation a weighted sum of ``(questions, turns)``
matrices and a top-k, then recall@k per question category (~20-40 ms for LoCoMo on 2 cores), and one
chart redraw.

The sliders are the four weights of the score (similarity, importance, recency, keyword) and the
decay floor (``min_strength``: memories whose strength ``importance · 0.5^(age / half-life)`` is
below it are not recalled). The neighbour and near-tie weights stay at ``base``'s values. Reference
settings (memkit's default, and the articles' formula with their 0.1 floor) are evaluated once and
drawn as ticks, so a bar above its ticks beats them on that kind of question.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

import polars as pl

from .. import charts
from ..evaluate import CATEGORIES, Prepared, evaluate
from ..params import Weights, slider_ranges
from .panel import Panel, slider

__all__ = ["PRESETS", "RecallTuner", "recall_tuner"]

_WEIGHTS = ("similarity", "importance", "recency", "keyword")  # the sliders; neighbour, tie stay fixed
PRESETS: dict[str, tuple[Weights, float]] = {
    "default": (Weights(), 0.0),
    "articles (floor 0.1)": (Weights.articles(), 0.1),
}
"""Reference settings drawn as ticks: name -> (weights, decay floor)."""


class RecallTuner(Panel):
    """:func:`recall_tuner`'s panel: ``weights`` and ``floor`` (the sliders' setting), ``data``
    (recall@k and hit@k per category for it), ``references`` (the same for each preset) and
    ``millis`` (how long the last re-evaluation took, chart excluded).

    Controls: a slider per weight of :data:`_WEIGHTS` and ``floor``. ``prepared`` is kept as
    ``panel.prepared``; nothing is re-embedded after it was built.
    """

    def __init__(
        self,
        prepared: Prepared,
        k: int,
        base: Weights,
        presets: Mapping[str, tuple[Weights, float]],
        by: str,
    ) -> None:
        self.prepared, self.k, self.base, self.by = prepared, k, base, by
        self.metric = f"recall@{k}"
        # the references: evaluated once, never on a slider move
        self.references = pl.concat(
            [
                self._evaluate(w, floor).with_columns(setting=pl.lit(name))
                for name, (w, floor) in presets.items()
            ]
        )
        ranges = slider_ranges(Weights)
        controls = {n: slider(n, *ranges[n], getattr(base, n)) for n in _WEIGHTS}
        controls["floor"] = slider("decay floor", 0.0, 0.5, 0.01, 0.0)
        super().__init__(f"Weights on the whole benchmark: {self.metric} per question category", controls)
        self.refresh()

    def _evaluate(self, weights: Weights, floor: float) -> pl.DataFrame:
        """One setting -> ``by, n, recall@k, hit@k, ...`` per category (and ``"all"``), categories
        named (``1 multi-hop``) when ``by`` is LoCoMo's ``category``."""
        out = evaluate(self.prepared, weights=weights, k=self.k, by=self.by, min_strength=floor)
        if self.by == "category":  # 1 -> "1 multi-hop"; "all" stays
            names = {str(c): f"{c} {n}" for c, n in CATEGORIES.items()}
            out = out.with_columns(pl.col(self.by).cast(pl.String).replace(names))
        return out

    def refresh(self) -> None:
        """Sliders -> ``weights`` (validated: all four 0 is refused and shown) -> re-evaluate every
        question -> redraw the bars; the message compares the overall recall with each preset's."""
        values = {n: float(self.controls[n].value) for n in _WEIGHTS}
        self.weights = dataclasses.replace(self.base, **values)
        self.floor = float(self.controls["floor"].value)
        start = time.perf_counter()  # for the message only: nothing depends on it
        self.data = self._evaluate(self.weights, self.floor)
        self.millis = (time.perf_counter() - start) * 1e3
        self.show(
            "recall", charts.recall_by_category(self.data, self.references, metric=self.metric, by=self.by)
        )
        overall = lambda f: float(f.filter(pl.col(self.by) == "all")[self.metric][0])  # noqa: E731
        refs = " · ".join(
            f"{name} {overall(part):.3f}"
            for (name,), part in self.references.group_by("setting", maintain_order=True)
        )
        n = int(self.data.filter(pl.col(self.by) == "all")["n"][0])
        self.say(
            f"{self.metric} {overall(self.data):.3f} over {n} questions (references: {refs}); "
            f"re-ranked in {self.millis:.0f} ms"
        )


def recall_tuner(
    prepared: Prepared,
    *,
    k: int = 5,
    base: Weights = Weights(),
    presets: Mapping[str, tuple[Weights, float]] = PRESETS,
    by: str = "category",
) -> RecallTuner:
    """Weight and floor sliders over recall@``k`` per question category of a whole benchmark.

    ``prepared`` is :func:`memkit.evaluate.prepare`'s output (everything embedded once); ``base``
    gives the starting weights and the fixed neighbour and tie weights; ``presets`` maps a name to
    ``(weights, floor)``, drawn as reference ticks. Each move re-ranks every question.

    >>> memories, queries = mk.evaluate.load_locomo(path)                     # doctest: +SKIP
    >>> panel = recall_tuner(mk.evaluate.prepare(memories, queries))          # doctest: +SKIP
    >>> panel.sliders["keyword"].value = 0.0                                  # doctest: +SKIP
    >>> panel.data.filter(pl.col("category") == "all")["recall@5"]            # doctest: +SKIP
    """
    return RecallTuner(prepared, k, base, presets, by)
