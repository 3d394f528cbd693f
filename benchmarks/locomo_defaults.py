"""Which defaults should ``store.search`` ship with? Tuned on LoCoMo conversations 1-5, reported on 6-10.

Protocol of benchmarks/locomo.py (every turn one memory ``[date] speaker: text`` created at its
session's date; a question ranks its conversation's turns; evidence recall@5/@10 over categories
1-4), with one rule against overfitting: every choice is made on the TUNE half (the first five
conversations in file order) and only then scored on the HELD-OUT half (the last five) and on all
ten. Offline and deterministic (HashEmbedder), no download.

Stages, each choosing on the tune half only:

1. linear weights: the similarity share of similarity + keyword, then importance, recency and its
   time scale, then the retrieval floor ``min_strength`` with the half-life (:func:`ev.sweep`);
2. BM25 ``k1`` and ``b`` (the keyword matrix recomputed per pair, checked equal to
   :func:`ev.prepare`'s), each pair with its own similarity share;
3. fusion: the linear weighted sum against reciprocal-rank fusion (RRF) of the two rankings;
4. recall techniques, alone and combined: (a) question normalization, (b) neighbour expansion,
   (c) pseudo-relevance feedback (RM3-style query expansion);
5. the table (tune / held-out / all), each technique's share of the gain, paired bootstrap
   intervals, and a real ``MemoryStore`` run of today's and the recommended store defaults.

    .venv/bin/python benchmarks/locomo_defaults.py [--data ../shared/data/locomo] [--no-store]
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benchmark's store loop
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install

from locomo import conversation_store  # noqa: E402

import memkit as mk  # noqa: E402
from memkit import evaluate as ev  # noqa: E402
from memkit.embed import HashEmbedder  # noqa: E402
from memkit.scoring import hybrid  # noqa: E402
from memkit.text import tokenize  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo"
KS = (5, 10)
# LoCoMo gives every turn importance 0.5 (a constant); neighbours and ties are measured on their own
W0 = {"importance": 0.0, "recency": 0.0, "neighbour": 0.0, "tie": 0.0}
TODAY = mk.Weights.articles()  # the store's default before this study: 0.6 / 0.3 / 0.1, keyword 0
OLD_BM25 = mk.KeywordParams(k1=0.9, b=0.4)  # the BM25 constants before this study (Anserini's)
EQUAL = mk.Weights(similarity=0.5, keyword=0.5, **W0)  # benchmarks/locomo.py's "memkit default"
SIM_ONLY = mk.Weights(similarity=1.0, keyword=0.0, **W0)  # ranks a custom score held in `sim`
# The scale of the weights does not change a ranking: one similarity share is one point.
SHARES = [round(0.05 * i, 2) for i in range(21)]
SIM_KW = [{"similarity": s, "keyword": round(1 - s, 2), **W0} for s in SHARES]
RECENCY = {"recency": [0.02, 0.05, 0.1, 0.2], "time_scale_hours": [24.0, 168.0, 720.0, 2160.0]}
IMPORTANCE = [0.1, 0.3]  # a constant on LoCoMo: shown to change nothing
FLOOR = {
    "min_strength": [0.0, 0.05, 0.1, 0.2],
    "half_life_hours": [24.0 * 30, 24.0 * 90, 24.0 * 182, 24.0 * 365, 24.0 * 3650],
}
BM25 = {"k1": [0.3, 0.6, 0.9, 1.2, 1.5], "b": [0.0, 0.1, 0.2, 0.4, 0.6, 0.75]}
RRF_K = [1, 2, 5, 10, 20, 60]
RRF_ALPHA = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]  # the cosine ranking's share
LAMBDA = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0]  # neighbour expansion
PRF = {"docs": [3], "terms": [5, 10, 20], "beta": [0.1, 0.2, 0.3, 0.5]}
# Occam's margin (tune R@5 points; smaller differences are noise on 760 questions): a non-zero
# importance or recency, a changed BM25 constant, a second neighbour weight, a technique and a joint
# re-tune are adopted only when they gain at least this much on the tune half.
ADD_MARGIN = 0.5

# (a) Question phrasing that memkit.text.STOPWORDS keeps (it already drops what/when/where/who/how/
# which/why/did/does/would/could and 什么/哪里/怎么/为什么/多少/是否): how many/much/long/often, what
# kind/type/sort of, hedges and modals, verbs that ask about the memory itself. Written from
# grammar, not from LoCoMo's questions; "may" stays (a month). LoCoMo is English: the Chinese list is
# not measured here, it is listed for the implementation.
QUESTION_EN = """kind kinds type types sort sorts many much long often whose might must shall likely
probably mention mentions mentioned describe describes described tell told remember remembers
recall recalls""".split()
QUESTION_ZH = "什么时候 多长时间 多久 何时 如何 为何 哪个 哪些 请问 告诉我 记得 提到 谁 哪 几".split()
_QUESTION_RE = re.compile(r"\b(?:" + "|".join(QUESTION_EN) + r")\b", re.IGNORECASE)


def normalize_question(text: str) -> str:
    """Drop question phrasing (query side only), leaving spaces: ``"What kind of car did Jo mention?"
    -> "What   of car did Jo  ?"`` (what, of, did are stopwords already); ``"你记得他住在哪个城市" ->
    "你 他住在 城市"``."""
    for w in QUESTION_ZH:  # longest first: 什么时候 goes before 哪 or 几 could split it
        text = text.replace(w, " ")
    return _QUESTION_RE.sub(" ", text)


class _Cached:
    """HashEmbedder with a per-text cache, so preparing the normalized questions re-embeds no turn."""

    def __init__(self) -> None:
        self.inner = HashEmbedder()
        self.name, self.dim, self.cache = self.inner.name, self.inner.dim, {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if new:
            self.cache.update(zip(new, self.inner.embed(new), strict=True))
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


# ---------------------------------------------------------------------------- lexical components
@dataclass
class Lexicon:
    """One conversation's BM25 as a dense ``(n, V)`` term-frequency matrix, so any ``k1, b`` and any
    weighted query (RM3) is a matrix product.

    ``w[d, t] = idf_t · tf·(k1+1) / (tf + k1·(1 − b + b·len_d/avg))``, tokens of
    :func:`memkit.text.tokenize` (stopwords dropped), scaled by the query's ideal score ``Σ q_t·idf_t``
    and clipped to [0, 1]: memkit's keyword score (checked against :func:`ev.prepare`).
    """

    vocab: dict[str, int]
    tf: np.ndarray  # (n, V) float32
    idf: np.ndarray  # (V,)
    length: np.ndarray  # (n, 1) tokens per memory

    @classmethod
    def build(cls, texts: Sequence[str]) -> Lexicon:
        toks = [tokenize(t, keep_stopwords=False) for t in texts]
        vocab: dict[str, int] = {}
        for ts in toks:
            for t in ts:
                vocab.setdefault(t, len(vocab))
        tf = np.zeros((len(texts), len(vocab)), np.float32)
        for d, ts in enumerate(toks):
            np.add.at(tf[d], [vocab[t] for t in ts], 1.0)
        df = (tf > 0).sum(axis=0)
        idf = np.log1p((len(texts) - df + 0.5) / (df + 0.5))
        return cls(vocab, tf, idf, tf.sum(axis=1, keepdims=True))

    def weights(self, p: mk.KeywordParams, cols: np.ndarray | slice = slice(None)) -> np.ndarray:
        """BM25 term weights ``(n, c)`` of the columns ``cols``."""
        tf = self.tf[:, cols]
        norm = p.k1 * (1 - p.b + p.b * self.length / max(float(self.length.mean()), 1e-9))  # (n, 1)
        return np.where(tf > 0, self.idf[cols] * tf * (p.k1 + 1) / (tf + norm), 0.0).astype(np.float32)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        """Query term indicators ``(q, V)``: each distinct token of a question that some memory has."""
        out = np.zeros((len(texts), len(self.vocab)), np.float32)
        for i, t in enumerate(texts):
            out[i, [self.vocab[x] for x in set(tokenize(t, keep_stopwords=False)) if x in self.vocab]] = 1.0
        return out

    def score(self, qv: np.ndarray, p: mk.KeywordParams) -> np.ndarray:
        """Scaled BM25 of weighted queries ``(q, V) -> (q, n)`` in [0, 1]."""
        cols = np.flatnonzero(qv.any(axis=0))  # only the terms some query uses
        raw = qv[:, cols] @ self.weights(p, cols).T  # (q, c) @ (c, n) -> (q, n)
        ideal = qv[:, cols] @ self.idf[cols]  # (q,)
        return np.clip(raw / np.where(ideal > 0, ideal, 1.0)[:, None], 0.0, 1.0)

    def rm3(
        self, qv: np.ndarray, first: np.ndarray, p: mk.KeywordParams, docs: int, terms: int, beta: float
    ) -> np.ndarray:
        """Expanded queries ``qv + beta·e``: ``e`` holds the ``terms`` heaviest new terms of each
        query's ``docs`` best first-pass memories (summed BM25 weights, scaled so the top one is 1)."""
        top = np.argsort(-first, axis=1, kind="stable")[:, :docs]  # (q, docs)
        cols = np.flatnonzero(self.tf[np.unique(top)].any(axis=0))  # terms of any feedback memory
        e = np.zeros_like(qv)
        e[:, cols] = self.weights(p, cols)[top].sum(axis=1)  # (q, docs, c) -> (q, c)
        e *= qv == 0  # new terms only
        cut = -np.sort(-e, axis=1)[:, terms - 1 : terms]  # (q, 1) the terms-th heaviest weight
        e = np.where((e >= cut) & (e > 0), e, 0.0)
        return qv + beta * e / np.maximum(e.max(axis=1, keepdims=True), 1e-9)


# ------------------------------------------------------------------------------ fusion, neighbours
def ranks(x: np.ndarray) -> np.ndarray:
    """1-based rank along the last axis, ties sharing the best rank: ``[[.2, .9, .2]] -> [[2, 1, 2]]``."""
    order = np.argsort(-x, axis=-1, kind="stable")  # (q, n)
    xs = np.take_along_axis(x, order, axis=-1)
    new = np.ones(xs.shape, dtype=bool)
    new[:, 1:] = xs[:, 1:] != xs[:, :-1]
    start = np.maximum.accumulate(np.where(new, np.arange(x.shape[-1]), 0), axis=-1)  # tie run start
    out = np.empty_like(order)
    np.put_along_axis(out, order, start + 1, axis=-1)
    return out


def rrf(sim: np.ndarray, kw: np.ndarray, k: float, alpha: float) -> np.ndarray:
    """Reciprocal-rank fusion ``alpha/(k + rank_cos) + (1 − alpha)/(k + rank_bm25)``; a memory with
    BM25 0 shares no term, is not in the BM25 list and gets the cosine part only."""
    return alpha / (k + ranks(sim)) + (1 - alpha) * np.where(kw > 0, 1.0 / (k + ranks(kw)), 0.0)


def neighbours(mem: pl.DataFrame, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """``(prev, next)``: the row of each memory's adjacent turn, ``-1`` for none (one conversation).

    Rows are in written order (created_at, then insertion). ``"session"``: the neighbour must have
    the same created_at — every LoCoMo turn of a session carries the session's date, so this is
    "same session" without session ids (a store: the same ``session:`` tag, or a time window);
    ``"any"``: the adjacent row whatever its time (crosses session boundaries).
    """
    n = mem.height
    prev, nxt = np.arange(n) - 1, np.arange(n) + 1
    nxt[-1] = -1
    if mode == "session":
        t = mem["created_at"].dt.epoch("us").to_numpy()
        split = t[1:] != t[:-1]  # (n-1,) rows i and i+1 were written in different sessions
        prev[1:][split], nxt[:-1][split] = -1, -1
    return prev, nxt


def expand(
    score: np.ndarray, prev: np.ndarray, nxt: np.ndarray, lam_prev: float, lam_next: float, symmetric: bool
) -> np.ndarray:
    """Neighbour expansion ``(q, n) -> (q, n)`` from the neighbours' base scores (clipped at 0; a
    missing neighbour counts 0). ``symmetric``: ``s + lam_prev·max(s[prev], s[next])``; else
    ``s + lam_prev·s[prev] + lam_next·s[next]``."""
    s = np.hstack([np.maximum(score, 0), np.zeros((len(score), 1), score.dtype)])  # column -1 is 0
    if symmetric:
        return score + lam_prev * np.maximum(s[:, prev], s[:, nxt])
    return score + lam_prev * s[:, prev] + lam_next * s[:, nxt]


# ------------------------------------------------------------------------------------- pipelines
@dataclass(frozen=True)
class Config:
    """One retrieval pipeline: fusion of cosine and BM25, then the optional techniques."""

    weights: mk.Weights = EQUAL  # linear fusion (importance and recency are 0 on this path)
    keyword: mk.KeywordParams = OLD_BM25
    rrf: tuple[float, float] | None = None  # (k, alpha): RRF instead of the linear sum
    normalize: bool = False  # (a)
    prf: tuple[int, int, float] | None = None  # (c) (docs, terms, beta)
    nb: tuple[str, float, float, bool] | None = None  # (b) (mode, lam_prev, lam_next, symmetric)


@dataclass
class Bench:
    """The data, the halves and the prepared components (plain and normalized questions)."""

    memories: pl.DataFrame
    queries: pl.DataFrame
    tune: list[str]
    preps: dict[bool, ev.Prepared]  # normalize -> Prepared
    lex: dict[str, Lexicon]
    nb: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  # mode -> conversation -> (prev, next)
    qv: dict[tuple[bool, str], np.ndarray] = field(default_factory=dict)
    kw_cache: dict[tuple, np.ndarray] = field(default_factory=dict)
    base_cache: dict[tuple, list[np.ndarray]] = field(default_factory=dict)

    def query_vectors(self, normalize: bool, g: ev._Group, prep: ev.Prepared) -> np.ndarray:
        key = (normalize, g.name)
        if key not in self.qv:
            self.qv[key] = self.lex[g.name].query(prep.queries["question"].to_numpy()[g.query_rows])
        return self.qv[key]

    def kw(self, normalize: bool, kp: mk.KeywordParams, g: ev._Group, prep: ev.Prepared) -> np.ndarray:
        """A group's ``(q, n)`` BM25 matrix for these constants (cached)."""
        key = (normalize, kp, g.name)
        if key not in self.kw_cache:
            self.kw_cache[key] = self.lex[g.name].score(self.query_vectors(normalize, g, prep), kp)
        return self.kw_cache[key]

    def scores(self, cfg: Config, part: str = "all") -> tuple[ev.Prepared, list[np.ndarray]]:
        """The pipeline's ``(q, n)`` score matrix per conversation of ``part`` (tune / all)."""
        prep = self.preps[cfg.normalize]
        prep = prep.subset(self.tune) if part == "tune" else prep
        key = (dataclasses.replace(cfg, nb=None), part)
        if key not in self.base_cache:  # the fused (and expanded) score before neighbours
            if len(self.base_cache) > 32:
                self.base_cache.clear()
            out = []
            for g in prep.groups:
                kw = self.kw(cfg.normalize, cfg.keyword, g, prep)
                s = _fuse(g.sim, kw, cfg)
                if cfg.prf:
                    lex, qv = self.lex[g.name], self.query_vectors(cfg.normalize, g, prep)
                    s = _fuse(g.sim, lex.score(lex.rm3(qv, s, cfg.keyword, *cfg.prf), cfg.keyword), cfg)
                out.append(s)
            self.base_cache[key] = out
        out = self.base_cache[key]
        if cfg.nb:
            mode, lp, ln, sym = cfg.nb
            out = [
                expand(s, *self.nb[mode][g.name], lp, ln, sym) for g, s in zip(prep.groups, out, strict=True)
            ]
        return prep, out

    def run(self, cfg: Config, part: str = "all") -> pl.DataFrame:
        """Per-question recall of a pipeline."""
        prep, scores = self.scores(cfg, part)
        return _per_query(prep, scores=scores)


def _fuse(sim: np.ndarray, kw: np.ndarray, cfg: Config) -> np.ndarray:
    if cfg.rrf is not None:
        return rrf(sim, kw, *cfg.rrf)
    return hybrid(sim, 0.0, 0.0, cfg.weights, kw, dtype=np.float32)


def _per_query(
    prep: ev.Prepared, weights: mk.Weights = SIM_ONLY, scores: list | None = None, **opts: float
) -> pl.DataFrame:
    """Per-question recall of one setting; ``scores`` (a ``(q, n)`` matrix per group) replace the
    formula and are ranked by :func:`ev.rank` (the same top-k, tie order and metrics)."""
    if scores is not None:
        groups = [
            dataclasses.replace(g, sim=s.astype(np.float32)) for g, s in zip(prep.groups, scores, strict=True)
        ]
        prep, weights = ev.Prepared(prep.queries, groups, prep.embedder), SIM_ONLY
    return ev.evaluate(prep, weights=weights, k=KS, per_query=True, **opts)


def _r(pq: pl.DataFrame) -> tuple[float, float]:
    """(R@5, R@10) in % over the questions of ``pq``."""
    return round(100 * float(pq["recall@5"].mean()), 1), round(100 * float(pq["recall@10"].mean()), 1)


def _choose(b: Bench, cfgs: list[Config]) -> tuple[Config, pl.DataFrame]:
    """Every config on the tune half -> the best (R@5, then R@10, then list order) and the table."""
    rows = [dict(zip(("tune R@5", "tune R@10"), _r(b.run(c, "tune")), strict=True)) for c in cfgs]
    t = pl.DataFrame(rows).with_row_index("i")
    best = t.sort(["tune R@5", "tune R@10", "i"], descending=[True, True, False])["i"][0]
    return cfgs[best], t


def _best_point(frame: pl.DataFrame, keys: Sequence[str]) -> dict:
    """The sweep point with the best "all" recall@5 (then recall@10, then grid order)."""
    s = frame.filter(pl.col("category") == "all").with_row_index("i")
    return (
        s.sort(["recall@5", "recall@10", "i"], descending=[True, True, False]).select(keys).row(0, named=True)
    )


def _sweep_table(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    s = frame.filter(pl.col("category") == "all")
    return s.select(
        *keys,
        (pl.col("recall@5") * 100).round(1).alias("tune R@5"),
        (pl.col("recall@10") * 100).round(1).alias("tune R@10"),
    )


def _paired(a: pl.DataFrame, b: pl.DataFrame, n: int = 2000) -> str:
    """R@5 difference b − a over the same questions, with a 95% paired bootstrap interval (seed 0)."""
    d = b["recall@5"].to_numpy() - a["recall@5"].to_numpy()
    idx = np.random.default_rng(0).integers(0, len(d), size=(n, len(d)))
    lo, hi = np.percentile(d[idx].mean(axis=1), [2.5, 97.5])
    return f"{100 * d.mean():+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"


def _show(title: str, frame: pl.DataFrame) -> None:
    print(f"\n{title}")
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=230,
        fmt_str_lengths=100,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        print(frame)


# ---------------------------------------------------------------------------------------- stages


def stage_linear(b: Bench) -> mk.Weights:
    """1. The similarity share, then importance / recency / time scale, then floor x half-life."""
    ptune = b.preps[False].subset(b.tune)
    s = ev.sweep(ptune, grid=SIM_KW, k=KS)
    _show(
        "1a. similarity share (keyword = 1 − share), BM25 k1 0.9 b 0.4, tune half",
        _sweep_table(s, ["similarity", "keyword"]).transpose(
            include_header=True, column_names=[str(x) for x in SHARES]
        ),
    )
    b1 = _best_point(s, ["similarity", "keyword", "recall@5"])
    grid = [{**b1, **W0, "importance": i} for i in IMPORTANCE] + [
        {**b1, "importance": 0.0, "recency": r, "time_scale_hours": ts}
        for r in RECENCY["recency"]
        for ts in RECENCY["time_scale_hours"]
    ]
    for p in grid:
        p.pop("recall@5")
    s = ev.sweep(ptune, grid=grid, k=KS)
    t = _sweep_table(s, ["importance", "recency", "time_scale_hours"])
    _show(
        f"1b. importance and recency at similarity {b1['similarity']} / keyword {b1['keyword']} "
        f"(tune R@5 {100 * b1['recall@5']:.1f} with both 0), tune half",
        t,
    )
    best = t.sort("tune R@5", descending=True).row(0, named=True)
    print(
        f"   best: {best}; adopted only if it gains >= {ADD_MARGIN} R@5 points: "
        f"{'yes' if best['tune R@5'] - 100 * b1['recall@5'] >= ADD_MARGIN else 'no'}"
    )
    s = ev.sweep(
        ptune,
        grid={
            "similarity": [b1["similarity"]],
            "keyword": [b1["keyword"]],
            "importance": [0.0],
            "recency": [0.0],
            **FLOOR,
        },
        k=KS,
    )
    t = _sweep_table(s, ["min_strength", "half_life_hours"])
    _show(
        "1c. retrieval floor x half-life of every memory (importance 0.5), tune half: R@5",
        t.pivot("half_life_hours", index="min_strength", values="tune R@5"),
    )
    ages = np.concatenate([np.concatenate([g.age_h[r] for r in g.rel]) for g in b.preps[False].groups]) / 24
    cut = {hl: hl / 24 * np.log2(0.5 / 0.1) for hl in FLOOR["half_life_hours"]}
    print(
        f"   evidence age (days to the conversation's last session, all ten): median {np.median(ages):.0f}, "
        f"p90 {np.percentile(ages, 90):.0f}, max {ages.max():.0f}. With floor 0.1 a memory of importance 0.5 "
        f"is hidden after half-life·log2(5): "
        + ", ".join(f"{c:.0f} d ({100 * np.mean(ages > c):.1f}% of evidence)" for c in cut.values())
    )
    return mk.Weights(similarity=b1["similarity"], keyword=b1["keyword"], **W0)


def stage_bm25(b: Bench) -> Config:
    """2. k1 x b, each with its own similarity share; the keyword matrix recomputed per pair."""
    ptune = b.preps[False].subset(b.tune)
    qvs = [b.query_vectors(False, g, ptune) for g in ptune.groups]
    rows = []
    for k1 in BM25["k1"]:
        for bb in BM25["b"]:
            kp = mk.KeywordParams(k1=k1, b=bb)
            groups = [
                dataclasses.replace(g, kw=b.lex[g.name].score(q, kp).astype(np.float32))
                for g, q in zip(ptune.groups, qvs, strict=True)
            ]
            s = ev.sweep(ev.Prepared(ptune.queries, groups, ptune.embedder), grid=SIM_KW, k=KS)
            best = _best_point(s, ["similarity", "keyword", "recall@5", "recall@10"])
            rows.append({"k1": k1, "b": bb, **best})
    t = pl.DataFrame(rows).with_columns((pl.col("^recall.*$") * 100).round(1))
    _show(
        "2. BM25 k1 x b (rows k1, columns b), each with its best similarity share: tune R@5",
        t.pivot("b", index="k1", values="recall@5"),
    )
    _show("   ... and that best similarity share", t.pivot("b", index="k1", values="similarity"))
    t = t.with_row_index("i").sort(["recall@5", "recall@10", "i"], descending=[True, True, False])
    top = t.row(0, named=True)
    today = t.filter((pl.col("k1") == 0.9) & (pl.col("b") == 0.4)).row(0, named=True)
    pick = top if top["recall@5"] - today["recall@5"] >= ADD_MARGIN else today
    print(
        f"   best k1 {top['k1']} b {top['b']} (R@5 {top['recall@5']}) "
        f"vs today's 0.9 / 0.4 ({today['recall@5']}):"
        f" kept k1 {pick['k1']} b {pick['b']}, similarity {pick['similarity']} keyword {pick['keyword']}"
    )
    w = mk.Weights(similarity=pick["similarity"], keyword=pick["keyword"], **W0)
    return Config(weights=w, keyword=mk.KeywordParams(k1=pick["k1"], b=pick["b"]))


def stage_fusion(b: Bench, base: Config) -> Config:
    """3. RRF (k x alpha) against the linear sum, on the chosen BM25 constants."""
    cfgs = [dataclasses.replace(base, rrf=(k, a)) for k in RRF_K for a in RRF_ALPHA]
    best, t = _choose(b, cfgs)
    t = t.with_columns(k=pl.Series([c.rrf[0] for c in cfgs]), alpha=pl.Series([c.rrf[1] for c in cfgs]))
    _show(
        "3. reciprocal-rank fusion (rows k, columns alpha = cosine share): tune R@5",
        t.pivot("alpha", index="k", values="tune R@5"),
    )
    lin = _r(b.run(base, "tune"))
    rr = _r(b.run(best, "tune"))
    print(
        f"   linear {base.weights.similarity:g}/{base.weights.keyword:g}: tune R@5 {lin[0]} / R@10 {lin[1]}; "
        f"best RRF k={best.rrf[0]:g} alpha={best.rrf[1]:g}: {rr[0]} / {rr[1]} -> "
        f"{'RRF' if rr > lin else 'linear'}"
    )
    return best if rr > lin else base


def stage_techniques(b: Bench, base: Config) -> dict[str, Config]:
    """4. (a) normalization, (b) neighbours, (c) RM3, each tuned alone on the base."""
    pa = b.preps[True]
    changed = float((pa.queries["question"] != b.preps[False].queries["question"]).mean())
    a = dataclasses.replace(base, normalize=True)
    ra, r0 = _r(b.run(a, "tune")), _r(b.run(base, "tune"))
    print(
        f"\n4a. question normalization (changes {100 * changed:.0f}% of the questions): "
        f"tune R@5 {r0[0]} -> {ra[0]},"
        f" R@10 {r0[1]} -> {ra[1]}"
    )
    sym = [dataclasses.replace(base, nb=("session", lam, lam, True)) for lam in LAMBDA]
    best_sym, t = _choose(b, sym)
    _show(
        "4b. neighbour expansion s + λ·max(s[prev], s[next]) (same session, ±1 turn), tune half",
        t.with_columns(λ=pl.Series(LAMBDA))
        .drop("i")
        .transpose(include_header=True, column_names=[str(x) for x in LAMBDA]),
    )
    asym = [dataclasses.replace(base, nb=("session", lp, ln, False)) for lp in LAMBDA for ln in LAMBDA]
    best_asym, t = _choose(b, asym)
    t = t.with_columns(lp=pl.Series([c.nb[1] for c in asym]), ln=pl.Series([c.nb[2] for c in asym]))
    _show(
        "4b. two-parameter form s + λp·s[prev] + λn·s[next] (rows λp, columns λn): tune R@5",
        t.pivot("ln", index="lp", values="tune R@5"),
    )
    rs, ra2 = _r(b.run(best_sym, "tune")), _r(b.run(best_asym, "tune"))
    nb = best_asym if ra2[0] - rs[0] >= ADD_MARGIN else best_sym
    print(
        f"   symmetric λ={best_sym.nb[1]:g}: {rs}; "
        f"two-parameter λp={best_asym.nb[1]:g} λn={best_asym.nb[2]:g}: {ra2}"
        f" -> {'two-parameter' if nb is best_asym else 'symmetric'} form"
    )
    anyc = dataclasses.replace(nb, nb=("any", *nb.nb[1:]))
    print(
        "   the same across session boundaries (adjacent rows, no session check): "
        f"tune {_r(b.run(anyc, 'tune'))}"
    )
    cfgs = [
        dataclasses.replace(base, prf=(d, n, be))
        for d in PRF["docs"]
        for n in PRF["terms"]
        for be in PRF["beta"]
    ]
    prf, t = _choose(b, cfgs)
    t = t.with_columns(terms=pl.Series([c.prf[1] for c in cfgs]), beta=pl.Series([c.prf[2] for c in cfgs]))
    _show(
        f"4c. RM3 query expansion from the top {PRF['docs'][0]} hits (rows terms, columns beta): tune R@5 "
        f"(base {r0[0]})",
        t.pivot("beta", index="terms", values="tune R@5"),
    )
    return {"a": a, "b": nb, "c": prf, "any": anyc}


def _combine(base: Config, tech: dict[str, Config], which: str) -> Config:
    c = base
    for x in which:
        c = dataclasses.replace(
            c, **{"a": {"normalize": True}, "b": {"nb": tech["b"].nb}, "c": {"prf": tech["c"].prf}}[x]
        )
    return c


def stage_final(b: Bench, base: Config, tech: dict[str, Config]) -> Config:
    """Every combination of the techniques at their own settings; adopt the fewest techniques within
    ADD_MARGIN of the best combination, then re-tune share x λ together if that gains ADD_MARGIN."""
    rows = []
    for x in ["", "a", "b", "c", "ab", "ac", "bc", "abc"]:
        r5, r10 = _r(b.run(_combine(base, tech, x), "tune"))
        rows.append({"techniques": x or "none", "n": len(x), "tune R@5": r5, "tune R@10": r10})
    t = pl.DataFrame(rows)
    _show("4d. combinations, each technique at its own setting, tune half", t.drop("n"))
    near = t.filter(pl.col("tune R@5") >= t["tune R@5"].max() - ADD_MARGIN)
    adopted = near.sort(["n", "tune R@5", "tune R@10"], descending=[False, True, True])["techniques"][0]
    adopted = "" if adopted == "none" else adopted
    final = _combine(base, tech, adopted)
    print(f"   adopted: {adopted or 'none'} (the fewest techniques within {ADD_MARGIN} R@5 of the best)")
    if final.nb and final.rrf is None:
        mode, _, ln, sym = final.nb
        cfgs = [
            dataclasses.replace(
                final,
                weights=mk.Weights(similarity=s, keyword=round(1 - s, 2), **W0),
                nb=(mode, lam, ln if not sym else lam, sym),
            )
            for s in SHARES
            for lam in LAMBDA
        ]
        best, t = _choose(b, cfgs)
        t = t.with_columns(
            share=pl.Series([c.weights.similarity for c in cfgs]), lam=pl.Series([c.nb[1] for c in cfgs])
        )
        _show(
            "4e. similarity share (rows) x λ (columns) re-tuned with the adopted techniques: tune R@5",
            t.pivot("lam", index="share", values="tune R@5"),
        )
        rb, rf = _r(b.run(best, "tune"))[0], _r(b.run(final, "tune"))[0]
        print(
            f"   joint best share {best.weights.similarity:g} λ {best.nb[1]:g}: {rb} vs {rf} unchanged -> "
            f"{'re-tuned' if rb - rf >= ADD_MARGIN else 'kept'}"
        )
        final = best if rb - rf >= ADD_MARGIN else final
    return final


def stage_store(b: Bench, final: Config) -> list[dict]:
    """5. A real MemoryStore (admission defaults: importance 0.5, long_term, half-life 90 d), k=5
    (search's default), ``now`` = the conversation's last session: R@5 per half."""
    rec, kp0 = final.weights, OLD_BM25  # the linear part: (a)/(b)/(c) are not in the store
    runs = [  # label, weights, floor, BM25 constants, reinforce
        ("store today: Weights(), floor 0.1, reinforce (the issue's 24.3)", TODAY, 0.1, kp0, True),
        ("store today: Weights(), floor 0.1, no reinforcement", TODAY, 0.1, kp0, False),
        ("store today: Weights(), floor 0, reinforce", TODAY, 0.0, kp0, True),
        ("store recommended linear part, floor 0, reinforce", rec, 0.0, final.keyword, True),
        ("store recommended linear part + importance 0.3, floor 0, reinforce",
         dataclasses.replace(rec, importance=0.3), 0.0, final.keyword, True),
    ]  # fmt: skip
    out = []
    for label, w, floor, kp, reinforce in runs:
        t = time.perf_counter()
        # now = each conversation's last session, not the wall clock: 2023 data would all be below any floor
        store, last = conversation_store(b.memories, decay=mk.DecayParams(min_strength=floor), keyword=kp)
        rows = []
        for q in b.queries.filter(pl.col("relevant").list.len() > 0).iter_rows(named=True):
            c = q["conversation"]
            hits = store.search(q["question"], namespace=c, k=5, weights=w, now=last[c], reinforce=reinforce)
            rows += [(q["query_id"], i + 1, key) for i, key in enumerate(hits["key"].to_list())]
        store.close()
        schema = {"query_id": pl.String, "rank": pl.Int64, "id": pl.String}
        pq = ev.score_rankings(pl.DataFrame(rows, schema=schema, orient="row"), b.queries, ks=(5,))
        r5 = {f"{h} R@5": round(100 * float(x["recall@5"].mean()), 1) for h, x in _parts(pq, b.tune).items()}
        out.append({"configuration": label, **r5, "seconds": round(time.perf_counter() - t, 1)})
    return out


def describe(c: Config) -> str:
    fusion = (
        f"RRF k={c.rrf[0]:g} α={c.rrf[1]:g}"
        if c.rrf
        else f"sim {c.weights.similarity:g} + kw {c.weights.keyword:g}"
    )
    parts = [fusion, f"BM25 {c.keyword.k1:g}/{c.keyword.b:g}"]
    if c.normalize:
        parts.append("+(a) normalize")
    if c.nb:
        mode, lp, ln, sym = c.nb
        parts.append(f"+(b) λ={lp:g}" if sym else f"+(b) λp={lp:g} λn={ln:g}")
        parts[-1] += "" if mode == "session" else " no session check"
    if c.prf:
        parts.append(f"+(c) RM3 {c.prf[0]} docs {c.prf[1]} terms β={c.prf[2]:g}")
    return ", ".join(parts)


def load(path: Path) -> Bench:
    """LoCoMo (categories 1-4), the halves in file order, both preparations, lexicons, neighbours."""
    memories, queries = ev.load_locomo(path)
    queries = queries.filter(pl.col("category") <= 4)
    convs = memories["conversation"].unique(maintain_order=True).to_list()
    tune, held = convs[:5], convs[5:]
    has = pl.col("relevant").list.len() > 0
    nq = {
        h: queries.filter(pl.col("conversation").is_in(c) & has).height
        for h, c in (("tune", tune), ("held", held))
    }
    print(f"LoCoMo: {memories.height} turns, {sum(nq.values())} questions with evidence (categories 1-4)")
    print(f"TUNE half (every choice is made here): {', '.join(tune)} ({nq['tune']} questions)")
    print(f"HELD-OUT half (reported only):         {', '.join(held)} ({nq['held']} questions)")
    t = time.perf_counter()
    emb = _Cached()
    qa = queries.with_columns(pl.col("question").map_elements(normalize_question, return_dtype=pl.String))
    preps = {
        False: ev.prepare(memories, queries, embedder=emb, keyword=OLD_BM25),
        True: ev.prepare(memories, qa, embedder=emb, keyword=OLD_BM25),
    }
    assert preps[True].queries["query_id"].equals(preps[False].queries["query_id"])
    mem_of = {c: m for (c,), m in memories.group_by("conversation", maintain_order=True)}
    for g in preps[False].groups:
        assert (g.ids == mem_of[g.name]["id"].to_numpy()).all()  # a group's rows are in written order
    nb = {mode: {c: neighbours(m, mode) for c, m in mem_of.items()} for mode in ("session", "any")}
    lex = {c: Lexicon.build(m["content"].to_list()) for c, m in mem_of.items()}
    b = Bench(memories, queries, tune, preps, lex, nb)
    p0 = preps[False]
    diff = max(
        float(np.abs(b.kw(False, OLD_BM25, g, p0) - g.kw).max()) for g in p0.groups
    )  # the dense BM25 here must be memkit's keyword score
    assert diff < 1e-5, diff
    print(
        f"prepare (HashEmbedder + BM25; plain and normalized questions) and lexicons: "
        f"{time.perf_counter() - t:.1f} s; dense BM25 = ev.prepare's keyword score (max |diff| {diff:.0e})"
    )
    return b


def results(
    b: Bench, w1: mk.Weights, base: Config, fused: Config, tech: dict[str, Config], final: Config
) -> dict[str, pl.DataFrame]:
    """The table's rows, each scored on the tune half, the held-out half and all ten."""
    p0, bm25 = b.preps[False], mk.Weights(similarity=0.0, keyword=1.0, **W0)
    named = {
        "today: store Weights() 0.6/0.3/0.1, no floor": _per_query(p0, TODAY),
        "today: store Weights(), floor 0.1, half-life 90 d (no reinforcement)": _per_query(
            p0, TODAY, min_strength=0.1
        ),
        "today: benchmark default sim 0.5 + kw 0.5, BM25 0.9/0.4": b.run(Config()),
        "BM25 alone, 0.9/0.4": b.run(Config(weights=bm25)),
        f"best linear, BM25 0.9/0.4: {describe(Config(weights=w1))}": b.run(Config(weights=w1)),
        f"best linear: {describe(base)}": b.run(base),
        f"BM25 alone, {base.keyword.k1:g}/{base.keyword.b:g}": b.run(dataclasses.replace(base, weights=bm25)),
    }
    rrf_best, _ = _choose(b, [dataclasses.replace(base, rrf=(k, a)) for k in RRF_K for a in RRF_ALPHA])
    named[f"best RRF: {describe(rrf_best)}"] = b.run(rrf_best)
    named["RRF k=60 α=0.5 (textbook)"] = b.run(dataclasses.replace(base, rrf=(60, 0.5)))
    for x in ("a", "b", "c", "ab", "ac", "bc", "abc"):
        c = _combine(fused, tech, x)
        named[f"best + {x}: {describe(c)}"] = b.run(c)
    linear_part = dataclasses.replace(final, nb=None, prf=None, normalize=False)
    named[f"recommended, linear part only: {describe(linear_part)}"] = b.run(linear_part)
    named[f"RECOMMENDED: {describe(final)}"] = b.run(final)
    if final.nb:
        anyc = dataclasses.replace(final, nb=("any", *final.nb[1:]))
        named[f"recommended, neighbours across sessions: {describe(anyc)}"] = b.run(anyc)
    rows = []
    for label, pq in named.items():
        r = {"configuration": label}
        for h, x in _parts(pq, b.tune).items():
            r[f"{h} R@5"], r[f"{h} R@10"] = _r(x)
        r["held − tune R@5"] = round(r["held R@5"] - r["tune R@5"], 1)
        rows.append(r)
    _show("RESULTS (recall in %, categories 1-4; every choice made on the tune half)", pl.DataFrame(rows))
    return named


def _parts(pq: pl.DataFrame, tune: list[str]) -> dict[str, pl.DataFrame]:
    inside = pl.col("conversation").is_in(tune)
    return {"tune": pq.filter(inside), "held": pq.filter(~inside), "all": pq}


def gains(
    b: Bench,
    named: dict[str, pl.DataFrame],
    w1: mk.Weights,
    base: Config,
    fused: Config,
    tech: dict[str, Config],
    final: Config,
) -> None:
    """Each step's share of the gain from today's 0.5/0.5, and paired bootstrap intervals."""
    eq, fin = b.run(Config()), b.run(final)
    steps = [
        ("similarity share", b.run(Config(weights=w1))),
        ("BM25 k1/b (+ share)", b.run(base)),
        ("fusion choice", b.run(fused)),
    ]
    cur = fused
    for x, on in (("a", final.normalize), ("b", final.nb), ("c", final.prf)):
        if on:
            cur = _combine(cur, tech, x)
            steps.append((f"+ ({x})", b.run(cur)))
    steps.append(("joint re-tune", fin))
    rows = []
    for h in ("held", "all"):
        total, prev = _r(_parts(fin, b.tune)[h])[0] - _r(_parts(eq, b.tune)[h])[0], eq
        for name, pq in steps:
            gain = _r(_parts(pq, b.tune)[h])[0] - _r(_parts(prev, b.tune)[h])[0]
            rows.append(
                {
                    "half": h,
                    "step": name,
                    "R@5 gain": round(gain, 1),
                    "share of the gain %": round(100 * gain / total) if total else None,
                }
            )
            prev = pq
    _show("Gain from today's 0.5/0.5 to the recommendation, step by step (R@5 points)", pl.DataFrame(rows))
    ci = [
        ("recommended vs today's 0.5/0.5", eq, fin),
        ("recommended vs store Weights()", named["today: store Weights() 0.6/0.3/0.1, no floor"], fin),
        ("linear re-tune (share, k1/b) vs 0.5/0.5", eq, b.run(base)),
    ]
    ci += [(f"({x}) alone vs its base", b.run(fused), b.run(_combine(fused, tech, x))) for x in "abc"]
    _show(
        "Paired bootstrap: R@5 difference [95% interval], 2000 resamples of questions",
        pl.DataFrame(
            [
                {
                    "comparison": n,
                    "held-out": _paired(_parts(a, b.tune)["held"], _parts(c, b.tune)["held"]),
                    "all ten": _paired(a, c),
                }
                for n, a, c in ci
            ]
        ),
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with locomo10.json")
    p.add_argument("--no-store", action="store_true", help="skip the MemoryStore runs (stage 5)")
    args = p.parse_args(argv)
    path = args.data / "locomo10.json"
    if not path.exists():
        print(f"skip: LoCoMo not found at {path} (see ../shared/data/README.md)")
        return 0
    t0 = time.perf_counter()
    b = load(path)
    t = time.perf_counter()
    w1 = stage_linear(b)
    base = stage_bm25(b)
    fused = stage_fusion(b, base)
    tech = stage_techniques(b, fused)
    final = stage_final(b, fused, tech)
    choose_s = time.perf_counter() - t
    named = results(b, w1, base, fused, tech, final)
    gains(b, named, w1, base, fused, tech, final)
    grid = [
        {**p_, "recency": r, "time_scale_hours": ts}
        for p_ in SIM_KW
        for r in RECENCY["recency"]
        for ts in RECENCY["time_scale_hours"]
    ] + SIM_KW
    t = time.perf_counter()
    ev.sweep(b.preps[False], grid=grid, k=KS)
    sw = time.perf_counter() - t
    print(
        f"\ntimings: full weight sweep over all of LoCoMo (ev.sweep, {len(grid)} points, "
        f"{b.preps[False].queries.height} questions): {sw:.1f} s ({1000 * sw / len(grid):.0f} ms a point); "
        f"stages 1-4 (every choice): {choose_s:.1f} s"
    )
    if not args.no_store:
        _show(
            "5. real MemoryStore, k=5, now = each conversation's last session: R@5",
            pl.DataFrame(stage_store(b, final)),
        )
    w = final.weights
    print(
        f"\nRECOMMENDED: Weights(similarity={w.similarity:g}, keyword={w.keyword:g}, "
        "importance=0, recency=0), "
        f"KeywordParams(k1={final.keyword.k1:g}, b={final.keyword.b:g}), DecayParams(min_strength=0), "
        f"{'RRF' if final.rrf else 'linear'} fusion, "
        + (
            f"neighbour expansion λ={final.nb[1]:g} ({'max of ±1' if final.nb[3] else 'prev/next'})"
            if final.nb
            else "no neighbours"
        )
        + (", question normalization" if final.normalize else "")
        + (", RM3" if final.prf else "")
    )
    print(f"wall time {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
