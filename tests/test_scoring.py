"""memkit.scoring: hybrid score, top-k, cosine and the BM25 keyword index."""

from __future__ import annotations

import numpy as np
import pytest

from memkit import KeywordParams, Weights, scoring
from memkit.ties import tie_step


def test_hybrid_default_weights_worked_example() -> None:
    assert Weights.articles() == Weights(
        similarity=0.6, importance=0.3, recency=0.1, keyword=0.0, neighbour=0.0, tie=0.0
    )
    assert float(scoring.hybrid(0.9, 0.8, 1.0, Weights.articles())) == pytest.approx(
        0.6 * 0.9 + 0.3 * 0.8 + 0.1 * 1.0
    )
    assert round(float(scoring.hybrid(0.9, 0.8, 1.0, Weights.articles())), 4) == 0.88


def test_hybrid_vectorized_and_broadcast() -> None:
    sim = np.array([1.0, 0.0, -0.5])
    got = scoring.hybrid(sim, 0.5, np.array([1.0, 0.5, 0.0]), Weights.articles())
    np.testing.assert_allclose(got, [0.6 + 0.15 + 0.1, 0.15 + 0.05, -0.3 + 0.15])


def test_hybrid_keyword_only_counts_when_weighted() -> None:
    assert float(scoring.hybrid(0.0, 0.0, 0.0, Weights.articles(), keyword=1.0)) == 0.0
    w = Weights(similarity=0.5, importance=0.0, recency=0.0, keyword=0.5)
    assert float(scoring.hybrid(0.2, 0.9, 0.9, w, keyword=0.8)) == pytest.approx(0.1 + 0.4)


def test_cosine_is_matvec() -> None:
    m = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    np.testing.assert_allclose(scoring.cosine(m, np.array([0.6, 0.8])), [0.6, 0.8, 1.0])


def test_scale_unit() -> None:
    np.testing.assert_allclose(scoring.scale_unit(np.array([2.0, 1.0, 0.0])), [1.0, 0.5, 0.0])
    assert scoring.scale_unit(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    assert scoring.scale_unit(np.zeros(0)).size == 0


def test_top_k_orders_best_first_and_excludes_minus_inf() -> None:
    s = np.array([0.1, 0.9, -np.inf, 0.5, 0.7])
    assert scoring.top_k(s, 3).tolist() == [1, 4, 3]
    assert scoring.top_k(s, 10).tolist() == [1, 4, 3, 0]  # k beyond the finite rows
    assert scoring.top_k(np.array([-np.inf, -np.inf]), 2).tolist() == []
    assert scoring.top_k(np.zeros(0), 5).tolist() == []


def test_top_k_breaks_ties_by_lower_index() -> None:
    assert scoring.top_k(np.array([0.5, 0.9, 0.5, 0.9, 0.5]), 4).tolist() == [1, 3, 0, 2]


def test_bm25_grows_with_tf_and_shrinks_with_df() -> None:
    one = dict(doc_len=np.array([5.0]), n_docs=10, avg_len=5.0)
    low_tf = scoring.bm25(np.array([1.0]), df=np.array([2]), **one)
    high_tf = scoring.bm25(np.array([3.0]), df=np.array([2]), **one)
    common = scoring.bm25(np.array([1.0]), df=np.array([9]), **one)
    assert high_tf[0] > low_tf[0] > common[0] > 0  # idf stays positive even for common terms


def _index(texts: list[str]) -> scoring.KeywordIndex:
    ix = scoring.KeywordIndex()
    ix.add(texts, 0)
    return ix


DOCS = ["I drink oolong tea every morning", "I drink coffee", "tea party on friday", "the weather is nice"]


def test_keyword_ranks_exact_term_docs_first_in_unit_range() -> None:
    ix = _index(DOCS)
    s = ix.scores("oolong tea", np.ones(len(DOCS), dtype=bool))
    assert s.shape == (4,) and s.dtype == np.float64
    assert ((s >= 0) & (s <= 1)).all()
    assert int(np.argmax(s)) == 0
    assert s[0] > s[2] > 0  # both query terms beat one
    assert s[1] == 0 and s[3] == 0


def test_keyword_zero_outside_candidates() -> None:
    ix = _index(DOCS)
    cand = np.array([False, True, True, True])
    s = ix.scores("oolong tea", cand)
    assert s[0] == 0.0
    assert s[2] > 0


def test_keyword_chinese_query() -> None:
    ix = _index(["用户住在杭州滨江区", "用户喜欢喝美式咖啡", "杭州的天气不错"])
    s = ix.scores("住在杭州", np.ones(3, dtype=bool))
    assert s[0] > s[2] > 0 and s[1] == 0
    assert s.max() <= 1.0


def test_keyword_no_tokens_or_no_candidates_gives_zeros() -> None:
    ix = _index(DOCS)
    assert ix.scores("!!!", np.ones(4, dtype=bool)).tolist() == [0.0] * 4
    assert ix.scores("tea", np.zeros(4, dtype=bool)).tolist() == [0.0] * 4
    assert ix.scores("unseenword", np.ones(4, dtype=bool)).tolist() == [0.0] * 4
    only_first = np.array([True, False, False, False])  # "oolong" occurs, in no other row than this
    # matches(): None exactly when every score is 0 (a search then adds no keyword term), else scores()
    for query, cand in (("!!!", True), ("tea", False), ("unseenword", True), ("oolong", ~only_first)):
        mask = np.full(4, cand) if isinstance(cand, bool) else cand
        assert ix.matches(query, mask) is None, query
    every = np.ones(4, bool)
    np.testing.assert_array_equal(ix.matches("tea party", every), ix.scores("tea party", every))


def test_dropping_rows_forgets_words_no_other_row_holds() -> None:
    ix = _index(DOCS)
    every = np.ones(4, dtype=bool)
    before = ix.scores("tea party", every)
    ix.drop_rows(np.array([0]))  # "I drink oolong tea every morning"
    assert {"oolong", "morning"}.isdisjoint(ix.vocab) and {"tea", "drink"} <= set(ix.vocab)
    assert ix.scores("oolong", every).tolist() == [0.0] * 4
    ix.add(["oolong and matcha"], 4)  # new words take ids no remaining word has
    assert len(set(ix.vocab.values())) == len(ix.vocab)
    s = ix.scores("oolong matcha", np.ones(5, dtype=bool))
    assert s[4] > 0 and s[:4].tolist() == [0.0] * 4
    assert ix.scores("tea party", np.ones(5, dtype=bool))[2] > 0 and before[2] > 0


def test_keyword_index_appends_in_order() -> None:
    ix = _index(DOCS[:2])
    ix.add(DOCS[2:], 2)
    assert len(ix) == 4
    assert ix.scores("party", np.ones(4, dtype=bool))[2] > 0
    with pytest.raises(ValueError):
        ix.add(["late"], 2)


def test_keyword_params_change_scores() -> None:
    ix = _index(["tea tea tea tea", "tea and many other words in a long sentence here"])
    cand = np.ones(2, dtype=bool)
    flat = ix.scores("tea", cand, KeywordParams(k1=1.5, b=0.0))
    norm = ix.scores("tea", cand, KeywordParams(k1=1.5, b=1.0))
    assert not np.allclose(flat, norm)


def _top_k_reference(scores: np.ndarray, k: int, age: np.ndarray, tie: float) -> np.ndarray:
    """top_k with age as it was before its threshold pre-filter: the exact step over every row."""
    finite = np.isfinite(scores)
    k = min(k, int(finite.sum()))
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    best, kth = scores[part].max(), scores[part].min()
    width = tie * abs(best)
    if width > 0:
        with np.errstate(invalid="ignore"):
            keep = finite & (tie_step(best, scores, width) <= tie_step(best, kth, width))
    else:
        keep = finite & (scores >= kth)
    rows = np.flatnonzero(keep)
    return rows[scoring.tie_order(scores[rows], age[rows], tie)][:k]


def test_top_k_prefilter_changes_no_ranking() -> None:
    """top_k narrows the rows with one comparison before computing tie steps; on float32 and
    float64 scores, near ties, rounded scores and -inf it returns what the exact step returns."""
    rng = np.random.default_rng(7)
    for _ in range(2000):
        n = int(rng.integers(1, 300))
        scores = [rng.random(n), np.round(rng.random(n), 2), -rng.random(n), rng.random(n) * 1e-6][
            int(rng.integers(0, 4))
        ].astype([np.float32, np.float64][int(rng.integers(0, 2))])
        scores[rng.random(n) < 0.2] = -np.inf
        age, k = rng.random(n) * 10, int(rng.integers(1, 12))
        tie = float(rng.choice([0.0, 0.01, 0.1, 0.5]))
        got = scoring.top_k(scores, k, age=age, tie=tie)
        assert np.array_equal(got, _top_k_reference(scores, k, age, tie)), (scores, k, tie)


def test_neighbour_score_counts_non_finite_and_negative_scores_as_zero() -> None:
    """NaN (an undefined cosine), ±inf and negative scores lend their neighbours nothing, as -1 does;
    integer scores work too."""
    from memkit.scoring import neighbour_score

    base = np.array([0.9, np.nan, -np.inf, np.inf, -0.5, 0.4])
    prev, nxt = np.array([-1, 0, 1, 2, 3, 4]), np.array([1, 2, 3, 4, 5, -1])
    assert neighbour_score(base, prev, nxt).tolist() == [0.0, 0.9, 0.0, 0.0, 0.4, 0.0]
    assert neighbour_score(np.array([3, 1, 2]), np.array([-1, 0, 1]), np.array([1, 2, -1])).tolist() == [
        1,
        3,
        1,
    ]
