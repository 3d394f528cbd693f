"""Measuring retrieval: metrics, data sets, scenarios and fast weight sweeps.

- :mod:`~memkit.evaluate.metrics` — recall@k, hit@k, MRR, nDCG and per-category summaries;
- :mod:`~memkit.evaluate.retrieval` — :func:`prepare` (score components computed once),
  :func:`rank`, :func:`evaluate` (one weighting) and :func:`sweep` (a whole grid in seconds);
- :mod:`~memkit.evaluate.locomo` — :func:`load_locomo`: the LoCoMo long-conversation benchmark as
  memories and queries frames;
- :mod:`~memkit.evaluate.data` — :func:`fetch_locomo`: the LoCoMo file, downloaded from a pinned URL,
  checked by its sha256 and cached (``memkit data locomo`` on the command line);
- :mod:`~memkit.evaluate.scenarios` — small labelled stories: forgetting correctness and knowledge
  updates.

- :mod:`~memkit.evaluate.reranker` — :class:`Reranker`: one query's candidates scored once, re-ranked
  for any weights in microseconds (what the weights panel drives; also ``memkit.views.Reranker``).
"""

from __future__ import annotations

from .data import LOCOMO, LocomoUnavailable, cache_dir, fetch_locomo
from .locomo import CATEGORIES, load_locomo
from .metrics import hit_at_k, metric_columns, mrr, ndcg_at_k, recall_at_k, score_rankings, summarize
from .reranker import Reranker
from .retrieval import SWEEP_KEYS as SWEEP_KEYS  # the old mk.evaluate name, kept
from .retrieval import Prepared, evaluate, prepare, rank, sweep
from .scenarios import forgetting_scenario, knowledge_update_scenario

__all__ = [
    "CATEGORIES",
    "LOCOMO",
    "LocomoUnavailable",
    "Prepared",
    "Reranker",
    "cache_dir",
    "evaluate",
    "fetch_locomo",
    "forgetting_scenario",
    "hit_at_k",
    "knowledge_update_scenario",
    "load_locomo",
    "metric_columns",
    "mrr",
    "ndcg_at_k",
    "prepare",
    "rank",
    "recall_at_k",
    "score_rankings",
    "summarize",
    "sweep",
]
