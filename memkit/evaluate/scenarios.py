"""Two synthetic scenarios with known answers: forgetting correctness and knowledge updates.

Real conversations (LoCoMo) say how well retrieval finds evidence, but not whether forgetting drops
the right memories or whether search returns a fact's *current* value after it changed. Both need
ground truth, so these scenarios build it: deterministic (``seed=``), bilingual, run on a private
in-memory :class:`~memkit.MemoryStore` with an injected clock, and return polars frames.

- :func:`forgetting_scenario`: useful memories mixed with expired ones (``valid_until`` passed),
  low-value ones (low importance, short half-life, old) and protected low-value ones (must be kept).
  Does ``store.forget(policy)`` drop exactly the expired and low-value ones? Precision and recall of
  the drops, per kind of memory.
- :func:`knowledge_update_scenario`: facts that change over time (a city, an employer, a favourite
  drink) written as plain memories, or as keyed versions under the ``supersede`` policy. Does a
  question about the fact return the current value first, or a stale one?

Reading the results. In the forgetting frame, ``useful`` and ``protected_low`` should show
``dropped = 0`` (their precision is null: nothing of them should go), and ``expired`` and
``low_value`` give the recall of the two reasons a policy has, ``drop_expired`` and
``min_strength``. In the update frame, ``keyed`` should read ``current@1 = 1`` under every
weighting: a superseded version is not searched at all. ``plain`` is the hard case: the old and new
values are near-identical sentences of one importance, so similarity cannot tell them apart and
the order between them rests on recency and on the near-tie rule (``Weights.tie``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl

from ..errors import ValidationError
from ..params import ForgetParams, Weights
from ..store import MemoryStore

__all__ = ["forgetting_scenario", "knowledge_update_scenario"]

_NOW = datetime(2026, 1, 1, tzinfo=UTC)  # the default clock: results do not depend on the day they run
# the texts of useful (and expired) memories, and of low-value ones: chat filler
_USEFUL = ["User prefers oolong tea", "用户住在杭州滨江区", "The deploy key is rotated monthly",
           "用户对花生过敏", "Project memkit uses DuckDB", "User's daughter is called Mia"]  # fmt: skip
_NOISE = ["ok", "嗯嗯", "thanks!", "好的", "lol", "sure, one sec"]


def forgetting_scenario(
    policy: ForgetParams = ForgetParams(), *, n_useful: int = 40, n_expired: int = 10, n_low: int = 20,
    n_protected_low: int = 5, seed: int = 0, now: datetime = _NOW,
) -> pl.DataFrame:  # fmt: skip
    """Run ``policy`` over a store of labelled memories -> one row per kind plus ``"all"``.

    Kinds (and whether a correct policy drops them): ``useful`` (importance 0.6–0.95, long half-life,
    keep), ``expired`` (``valid_until`` in the past, drop), ``low_value`` (importance 0.1–0.25,
    2–24 h half-life, days old, drop), ``protected_low`` (low value but protected, keep).
    Columns: ``kind, n, should_drop, dropped, correct_drops, precision, recall`` where precision =
    correct drops / drops and recall = correct drops / memories that should go (null when 0/0).

    >>> all_ = forgetting_scenario().filter(pl.col("kind") == "all")  # a day-old note at 0.098 stays
    >>> all_.select("precision", "recall", "dropped", "should_drop").row(0)
    (1.0, 0.9666666666666667, 29, 30)
    >>> articles = forgetting_scenario(ForgetParams(min_strength=0.1)).filter(pl.col("kind") == "all")
    >>> articles.select("precision", "recall").row(0)
    (1.0, 1.0)
    >>> no_floor = forgetting_scenario(ForgetParams(min_strength=0.0))  # weak memories stay
    >>> no_floor.filter(pl.col("kind") == "low_value").select("dropped", "recall").row(0)
    (0, 0.0)
    """
    rng = np.random.default_rng(seed)  # every draw from one seeded generator: same seed, same data
    kinds = ["useful"] * n_useful + ["expired"] * n_expired + ["low_value"] * n_low
    kinds += ["protected_low"] * n_protected_low
    # Strength at now is importance · 0.5^(age / half-life), ages 1-20 days. A useful memory stays
    # above 0.6 · 0.5^(20/60) ≈ 0.48; a low-value one is almost always far below the 0.05 floor,
    # though the worst case (0.25, a day old, 24 h half-life: 0.125) is above it, and above the
    # articles' 0.1. An expired one has a useful memory's numbers and a valid_until between its
    # creation and an hour ago: only drop_expired catches it.
    rows = []
    for i, kind in enumerate(kinds):
        low = kind in ("low_value", "protected_low")
        age_h = float(rng.uniform(24, 24 * 20))
        rows.append(
            {
                "content": f"{(_NOISE if low else _USEFUL)[i % 6]} #{i}",
                "key": f"m{i}",
                "importance": float(rng.uniform(0.1, 0.25) if low else rng.uniform(0.6, 0.95)),
                "half_life_hours": float(rng.uniform(2, 24) if low else 24 * rng.uniform(60, 180)),
                "created_at": now - timedelta(hours=age_h),
                "valid_until": now - timedelta(hours=float(rng.uniform(1, age_h)))
                if kind == "expired"
                else None,
                "protected": kind == "protected_low",
            }
        )
    # unique keys (m0, m1, …): no versions, and a key names its memory after forget
    with MemoryStore() as store:
        store.add_many(pl.DataFrame(rows), namespace="scenario", now=now)
        store.forget("scenario", now=now, policy=policy)
        kept = set(store.frame("scenario")["key"].to_list())  # forget erases: what is left was kept
    truth = pl.DataFrame({"key": [r["key"] for r in rows], "kind": kinds}).with_columns(
        should_drop=pl.col("kind").is_in(["expired", "low_value"]),  # the ground truth
        dropped=~pl.col("key").is_in(list(kept)),  # what the policy did
    )
    # per kind: how many, how many should go, how many went, how many went rightly
    agg = [
        pl.len().alias("n"), pl.col("should_drop").sum(), pl.col("dropped").sum(),
        (pl.col("should_drop") & pl.col("dropped")).sum().alias("correct_drops"),
    ]  # fmt: skip
    per = truth.group_by("kind", maintain_order=True).agg(agg)
    out = pl.concat([per, truth.select(pl.lit("all").alias("kind"), *agg)])

    def ratio(num: str, den: str) -> pl.Expr:
        """``a / b``, or None when ``b`` is 0 (a precision of nothing is undefined, not 0)."""
        return pl.when(pl.col(den) > 0).then(pl.col(num) / pl.col(den)).otherwise(None)

    return out.with_columns(
        precision=ratio("correct_drops", "dropped"), recall=ratio("correct_drops", "should_drop")
    )


# (slot, question, template, values): each subject's fact moves through the values over time
_FACTS = [
    ("city", "Which city do I live in now?", "I live in {} now", ["Berlin", "Lisbon", "Hangzhou", "Osaka"]),
    (
        "employer",
        "Where do I work?",
        "I work at {} as an engineer",
        ["Acme", "Globex", "Initech", "Umbrella"],
    ),
    ("drink", "我最喜欢喝什么？", "我最喜欢喝{}", ["美式咖啡", "乌龙茶", "豆浆", "柠檬水"]),
    ("address", "我住在哪里？", "我住在{}", ["杭州滨江区", "上海徐汇区", "北京海淀区", "深圳南山区"]),
]
# unrelated memories each subject also holds, written 30, 60, … 150 days ago
_DISTRACTORS = ["I went hiking last weekend", "我昨天看了一部电影", "My sister visited in May",
                "会议改到下午三点", "I bought a new laptop"]  # fmt: skip


def knowledge_update_scenario(
    *, n_subjects: int = 12, seed: int = 0, now: datetime = _NOW,
    weights: dict[str, Weights] | None = None,
) -> pl.DataFrame:  # fmt: skip
    """Facts that change, searched afterwards -> one row per (mode, weighting).

    Each subject (a namespace) has every fact of a small bilingual set, updated 2–4 times at
    random days in the past year, plus distractors. ``mode="plain"`` writes every update as a new
    memory; ``mode="keyed"`` writes it under the fact's key with ``conflict_policy="supersede"``.
    For each question, ``current@1`` = the top hit is the current value, ``stale@1`` = the top hit
    is an older value of the same fact, ``current_in_top3``. Searches use ``min_strength=0`` whatever
    a store's floor (under the articles' 0.1, a fact last written a year ago, importance 0.7, would
    have decayed below it: that is decay, not this question).
    ``weights`` maps labels to Weights
    (default: the store's default, the articles' formula, similarity only, and keyword + similarity,
    the last three in plain score order: ``tie=0``).

    Columns: ``mode, weights, n`` (questions: ``n_subjects`` × 4 facts) and the three rates in [0, 1].

    >>> from memkit.params import Weights
    >>> r = knowledge_update_scenario(n_subjects=2, weights={"articles": Weights.articles()})
    >>> r.select("mode", "current@1", "stale@1").rows()
    [('plain', 0.5, 0.5), ('keyed', 1.0, 0.0)]
    """
    if weights is not None and (
        not isinstance(weights, dict) or not all(isinstance(w, Weights) for w in weights.values())
    ):  # a bare Weights is one weighting without its label: {"mine": Weights(...)}
        raise ValidationError("weights", f"must map labels to memkit.Weights, got {type(weights).__name__}")
    weights = weights or {
        "default": Weights(),
        "articles": Weights.articles(),
        "similarity only": Weights(
            similarity=1.0, importance=0.0, recency=0.0, keyword=0.0, neighbour=0.0, tie=0.0
        ),
        "similarity+keyword": Weights(
            similarity=0.5, importance=0.0, recency=0.0, keyword=0.5, neighbour=0.0, tie=0.0
        ),
    }
    rng = np.random.default_rng(seed)  # every draw from one seeded generator: same seed, same data
    plan = []  # (subject, slot index, version values with their days ago)
    for s in range(n_subjects):
        for f in range(len(_FACTS)):
            n_versions = int(rng.integers(2, 5))
            # distinct values (a permutation): the current value never equals a stale one
            values = rng.permutation(len(_FACTS[f][3]))[:n_versions]
            days = np.sort(rng.uniform(1, 365, n_versions))[::-1]  # oldest first
            plan.append((s, f, values, days))
    rows = []
    for mode in ("plain", "keyed"):
        # one store per mode, fed the same writes; in plain mode there is no key, so no policy applies
        with MemoryStore(conflict_policy="supersede") as store:
            writes = []
            for s, f, values, days in plan:
                for v, d in zip(values, days, strict=True):
                    writes.append((now - timedelta(days=float(d)), s, f, int(v)))
            for s in range(n_subjects):
                for j in range(len(_DISTRACTORS)):
                    writes.append((now - timedelta(days=30.0 * (j + 1)), s, -1, j))
            for t, s, f, v in sorted(writes, key=lambda w: w[0]):  # the store sees them in time order
                text = _DISTRACTORS[v] if f < 0 else _FACTS[f][2].format(_FACTS[f][3][v])
                key = f"fact.{_FACTS[f][0]}" if (mode == "keyed" and f >= 0) else None
                store.add(text, namespace=f"s{s}", key=key, importance=0.7, layer="long_term", now=t)
            for label, w in weights.items():
                outcome = []
                for s, f, values, _ in plan:
                    slot, question, template, names = _FACTS[f]
                    hits = store.search(
                        question,
                        namespace=f"s{s}",
                        k=3,
                        weights=w,
                        now=now,
                        min_strength=0.0,
                        reinforce=False,  # a question must not change what the next one sees
                    )
                    texts = hits["content"].to_list()
                    current = template.format(names[int(values[-1])])
                    stale = {template.format(names[int(v)]) for v in values[:-1]}
                    outcome.append((bool(texts) and texts[0] == current, bool(texts) and texts[0] in stale,
                                    current in texts))  # fmt: skip
                arr = np.array(outcome, dtype=bool)  # (questions, 3)
                # the mean of each column: the share of questions where that outcome holds
                rates = dict(
                    zip(("current@1", "stale@1", "current_in_top3"), arr.mean(axis=0).tolist(), strict=True)
                )
                rows.append({"mode": mode, "weights": label, "n": len(arr), **rates})
    return pl.DataFrame(rows)
