"""Property tests (hypothesis): score bounds, the access filter, namespace isolation, decay monotonicity."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import polars as pl
import pytest
from conftest import NOW
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit import decay, scoring
from memkit.access import can_read
from memkit.ties import tie_step

SETTINGS = settings(
    max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
FAST = settings(max_examples=100, deadline=None, database=None)

weight = st.floats(0.0, 1.0, allow_nan=False)
weights = (
    st.tuples(weight, weight, weight, weight, weight, st.sampled_from([0.0, 0.05, 0.1]))
    .filter(lambda w: sum(w[:4]) > 0)
    .map(lambda w: mk.Weights(*w))
)  # the four weights, neighbour expansion and the near-tie step
queries = st.sampled_from(["tea", "where do I live", "用户住在哪里", "coffee 咖啡", "cat Tom", "zzz"])
CONTENTS = [
    "I like oolong tea",
    "用户住在杭州滨江区",
    "black coffee, no sugar",
    "my cat Tom",
    "喜欢喝美式咖啡",
    "tea party on friday",
    "the weather is nice",
]
NAMES = [None, "alice", "bob", "carol"]


@pytest.fixture(scope="module")
def scored_store():
    """Memories of varied importance, age, last access and layer (read-only: searches don't reinforce)."""
    n = len(CONTENTS)
    df = pl.DataFrame(
        {
            "content": CONTENTS,
            "importance": [0.05, 0.3, 0.5, 0.7, 0.9, 1.0, 0.0],
            "half_life_hours": [2.0, 24.0, 720.0, 2160.0, 5.0, 100.0, 50.0],
            "created_at": [NOW - timedelta(hours=3 * i) for i in range(n)],
            "last_access_at": [NOW - timedelta(hours=i) for i in range(n)],
        }
    )
    s = mk.MemoryStore(embedder=mk.HashEmbedder(dim=64))
    s.add_many(df, namespace="u", now=NOW)
    yield s
    s.close()


@SETTINGS
@given(w=weights, q=queries, hours=st.floats(0.0, 500.0), floor=st.floats(0.0, 0.5))
def test_scores_within_bounds_implied_by_weights(scored_store, w, q, hours, floor) -> None:
    now = NOW + timedelta(hours=hours)
    hits = scored_store.search(
        q, namespace="u", k=20, weights=w, now=now, min_strength=floor, reinforce=False
    )
    eps = 1e-6
    score = hits["score"].to_numpy()
    top = w.total() * (1 + w.neighbour)  # a neighbour adds at most `neighbour` times a score
    assert (score >= -w.similarity - eps).all() and (score <= top + eps).all()
    assert ((hits["similarity"] >= -1 - eps) & (hits["similarity"] <= 1 + eps)).all()
    assert ((hits["importance"] >= 0) & (hits["importance"] <= 1)).all()
    assert ((hits["recency"] > 0) & (hits["recency"] <= 1)).all()
    assert (hits["strength"] >= floor).all() and (hits["strength"] <= hits["importance"] + eps).all()
    if score.size:  # best first, in steps of tie·best: a later hit is never a step above an earlier one
        width = max(w.tie * abs(score.max()), 1e-12)
        step = tie_step(score.max(), score, width) if w.tie else -score  # (the rule's own snap: TIE_SNAP)
        assert (np.diff(step) >= -1e-9).all()
    comps = [hits[c].to_numpy() for c in ("similarity", "importance", "recency")]
    kw = hits["keyword"].to_numpy() if w.keyword else 0.0
    if w.keyword:
        assert ((kw >= 0) & (kw <= 1)).all()
    else:
        assert "keyword" not in hits.columns
    near = hits["neighbour"].to_numpy() if w.neighbour else 0.0
    if w.neighbour:
        assert ((near >= 0) & (near <= w.neighbour * w.total() + eps)).all()
    else:
        assert "neighbour" not in hits.columns
    np.testing.assert_allclose(score, scoring.hybrid(*comps, w, kw) + near, rtol=1e-9, atol=1e-12)


memory_rows = st.lists(
    st.tuples(
        st.sampled_from(CONTENTS),
        st.sampled_from(["public", "protected", "private"]),
        st.sampled_from(NAMES),
        st.sampled_from(NAMES),
    ),
    min_size=1,
    max_size=8,
)


@SETTINGS
@given(rows=memory_rows, requester=st.sampled_from(NAMES[1:] + ["mallory"]), q=queries)
def test_access_filter_never_widens(rows, requester, q) -> None:
    df = pl.DataFrame(
        {"content": [r[0] for r in rows], "access": [r[1] for r in rows], "owner": [r[2] for r in rows],
         "created_by": [r[3] for r in rows]},
        schema={"content": pl.String, "access": pl.String, "owner": pl.String, "created_by": pl.String},
    )  # fmt: skip
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=32)) as s:
        s.add_many(df, namespace="u", now=NOW)
        meta = {r["id"]: r for r in s.frame("u").iter_rows(named=True)}
        everything = set(s.search(q, namespace="u", k=50, now=NOW, reinforce=False, min_strength=0.0)["id"])
        mine = s.search(
            q, namespace="u", requester=requester, k=50, now=NOW, reinforce=False, min_strength=0.0
        )
    assert everything == set(meta)  # the operator sees every memory
    assert set(mine["id"]) <= everything
    expected = {i for i, r in meta.items() if can_read(r["access"], r["owner"], r["created_by"], requester)}
    assert set(mine["id"]) == expected


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Cf", "Zs", "Zl", "Zp")),
                min_size=1, max_size=12)  # fmt: skip


@SETTINGS
@given(
    spaces=st.lists(names, min_size=2, max_size=4, unique=True),
    picks=st.lists(st.integers(0, 3), min_size=1, max_size=10),
    q=queries,
)
def test_namespace_never_leaks(spaces, picks, q) -> None:
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=32)) as s:
        owner_of = {}
        for i, p in enumerate(picks):
            ns = spaces[p % len(spaces)]
            m = s.add(CONTENTS[i % len(CONTENTS)], namespace=ns, key="same.key", now=NOW)
            owner_of[m.id] = ns
        for ns in spaces:
            got = s.search(q, namespace=ns, k=50, now=NOW, reinforce=False, min_strength=0.0)
            assert all(owner_of[i] == ns for i in got["id"])
            r = s.read("same.key", namespace=ns, now=NOW)
            assert r is None or owner_of[r.id] == ns
            assert set(s.frame(ns)["id"]) == {i for i, n in owner_of.items() if n == ns}


finite = dict(allow_nan=False, allow_infinity=False)


@FAST
@given(
    imp=st.floats(0.0, 1.0),
    a=st.floats(-100.0, 1e5, **finite),
    b=st.floats(-100.0, 1e5, **finite),
    hl=st.floats(0.01, 1e5, **finite),
)
def test_strength_monotone_in_age_and_bounded_by_importance(imp, a, b, hl) -> None:
    young, old = min(a, b), max(a, b)
    s_young, s_old = float(decay.strength(imp, young, hl)), float(decay.strength(imp, old, hl))
    assert 0.0 <= s_old <= s_young <= imp
    arr = decay.strength(imp, np.sort(np.array([a, b, young + 1, old * 2])), hl)
    assert (np.diff(arr) <= 0).all() and (arr <= imp).all()


@FAST
@given(
    ages=st.lists(st.floats(-10.0, 1e4, **finite), min_size=1, max_size=20),
    hl=st.floats(0.1, 1e4, **finite),
    imp=st.floats(0.0, 1.0),
)
def test_polars_strength_matches_numpy(ages, hl, imp) -> None:
    df = pl.DataFrame(
        {"importance": [imp] * len(ages), "age_hours": ages, "half_life_hours": [hl] * len(ages)}
    )
    got = df.select(decay.strength_expr())["strength"].to_numpy()
    np.testing.assert_allclose(got, decay.strength(imp, np.array(ages), hl), rtol=1e-12, atol=1e-300)


@FAST
@given(h=st.lists(st.floats(0.0, 1e4, **finite), min_size=2, max_size=20), scale=st.floats(1.0, 1e3))
def test_recency_monotone_and_in_unit_interval(h, scale) -> None:
    r = decay.recency(np.sort(np.array(h)), scale)
    assert ((r >= 0) & (r <= 1)).all()
    assert (np.diff(r) <= 0).all()
