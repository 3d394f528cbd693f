"""Near-duplicate consolidation: blocked cosine pairs, union-find clusters and the merge rule."""

from __future__ import annotations

import math
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkit.consolidate import PLAN_SCHEMA, MergeParams, cluster_labels, merge_content, plan_merges
from memkit.errors import ValidationError

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _word(i: int) -> str:
    """A lowercase word per number, no digit in it: 0 -> "a", 25 -> "z", 26 -> "ba"."""
    return chr(97 + i % 26) if i < 26 else _word(i // 26) + chr(97 + i % 26)


def frame(n: int, **columns: Any) -> pl.DataFrame:
    """``n`` memories with defaults; ``columns`` override (lists of length n)."""
    data: dict[str, Any] = {
        "id": [f"m{i}" for i in range(n)],
        "namespace": ["u"] * n,
        "layer": ["long_term"] * n,
        "key": [None] * n,
        "content": [f"memory {_word(i)}" for i in range(n)],  # no fact token (memkit.facts) differs
        "importance": [0.5] * n,
        "created_at": [T0 + timedelta(hours=i) for i in range(n)],
        "last_access_at": [T0 + timedelta(hours=i) for i in range(n)],
        "access_count": [0] * n,
        "status": ["active"] * n,
        "protected": [False] * n,
    }
    data.update(columns)
    schema = {c: t for c, t in PLAN_SCHEMA.items() if c in data} | {"id": pl.String, "status": pl.String}
    return pl.DataFrame(data, schema_overrides=schema)


def angles(*degrees: float) -> np.ndarray:
    """Unit vectors in the plane at the given angles: ``(n, 2)`` float32."""
    r = np.radians(degrees)
    return np.stack([np.cos(r), np.sin(r)], axis=1).astype(np.float32)


def at_cosine(*cosines: float) -> np.ndarray:
    """Row 0 is (1, 0); row i has cosine ``cosines[i-1]`` with it."""
    rows = [[1.0, 0.0]] + [[c, math.sqrt(1 - c * c)] for c in cosines]
    return np.array(rows, dtype=np.float32)


def member_sets(plan: pl.DataFrame) -> set[frozenset[str]]:
    return {frozenset(m) for m in plan["members"].to_list()}


def apply_plan(f: pl.DataFrame, emb: np.ndarray, plan: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray]:
    """Simulate the store: members go, one merged row per cluster comes with the survivor's embedding."""
    gone = {i for m in plan["members"].to_list() for i in m}
    keep = ~f["id"].is_in(list(gone)).to_numpy()
    merged = plan.select(
        pl.col("survivor").alias("id"), "namespace", "layer", "key", "content", "importance", "created_at",
        "last_access_at", "access_count", pl.lit("active").alias("status"), "protected",
    )  # fmt: skip
    row_of = {i: r for r, i in enumerate(f["id"].to_list())}
    new_emb = emb[[row_of[s] for s in plan["survivor"].to_list()]].reshape(-1, emb.shape[1])
    return pl.concat([f.filter(keep), merged.cast(f.select(merged.columns).schema)]), np.vstack(
        [emb[keep], new_emb]
    )


# ------------------------------------------------------------------------------------------ pairs
def test_threshold_boundary() -> None:
    at = plan_merges(frame(2), at_cosine(0.85))  # exactly at the threshold: merges
    assert member_sets(at) == {frozenset({"m0", "m1"})}
    assert at["min_similarity"][0] == pytest.approx(0.85, abs=1e-6)
    assert plan_merges(frame(2), at_cosine(0.849)).is_empty()  # just below: does not
    assert plan_merges(frame(2), at_cosine(0.849), MergeParams(threshold=0.849)).height == 1
    assert plan_merges(frame(2), at_cosine(0.9), MergeParams(threshold=0.9001)).is_empty()


@pytest.mark.parametrize(
    "column, values",
    [
        ("namespace", ["a", "b"]),
        ("layer", ["long_term", "short_term"]),
        ("key", ["k1", "k2"]),
        ("key", [None, "k"]),
    ],
)
def test_groups_never_merge_across(column: str, values: list[Any]) -> None:
    emb = angles(0, 0)  # identical vectors
    assert plan_merges(frame(2, **{column: values}), emb).is_empty()


def test_same_key_merges() -> None:
    plan = plan_merges(frame(3, key=["k", "k", None]), angles(0, 0, 0))
    assert member_sets(plan) == {frozenset({"m0", "m1"})}
    assert plan["key"].to_list() == ["k"]


def test_transitive_chain_is_one_cluster() -> None:
    step = math.degrees(math.acos(0.9))  # A~B and B~C at 0.9, A~C at cos(2·step) = 0.62
    plan = plan_merges(frame(4), angles(0, step, 2 * step, 90))
    assert member_sets(plan) == {frozenset({"m0", "m1", "m2"})}
    assert plan["min_similarity"][0] < 0.85  # the chain's ends are not neighbours
    assert plan["reason"][0].startswith("3 memories chained by cosine >= 0.85")


def test_small_blocks_give_the_same_plan() -> None:
    rng = np.random.default_rng(7)
    base = np.eye(16, dtype=np.float32)[[0, 1, 2, 0, 3, 1, 0]]  # 0, 3, 6 and 1, 5 are near-duplicates
    emb = base + 0.05 * rng.standard_normal(base.shape, dtype=np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    big = plan_merges(frame(7), emb)
    assert member_sets(big) == {frozenset({"m0", "m3", "m6"}), frozenset({"m1", "m5"})}
    for block in (1, 2, 3, 7):
        assert plan_merges(frame(7), emb, MergeParams(block_size=block)).equals(big)


def test_only_active_rows_take_part() -> None:
    f = frame(4, status=["active", "superseded", "conflict", "active"])
    assert member_sets(plan_merges(f, angles(0, 0, 0, 0))) == {frozenset({"m0", "m3"})}
    assert plan_merges(f.head(3), angles(0, 0, 0)).is_empty()


def test_max_cluster_leaves_big_clusters_out() -> None:
    assert plan_merges(frame(4), angles(0, 0, 0, 0), MergeParams(max_cluster=3)).is_empty()
    assert plan_merges(frame(4), angles(0, 0, 0, 0), MergeParams(max_cluster=4)).height == 1


def test_cluster_labels_name_the_first_row() -> None:
    assert cluster_labels(frame(4), angles(0, 90, 1, 91)).tolist() == [0, 1, 0, 1]


# ------------------------------------------------------------------------------------------- merge
def test_merged_fields() -> None:
    f = frame(
        3,
        importance=[0.2, 0.9, 0.5],
        created_at=[T0 + timedelta(days=2), T0, T0 + timedelta(days=1)],
        last_access_at=[T0, T0 + timedelta(days=5), T0 + timedelta(days=3)],
        access_count=[1, 2, 3],
        protected=[False, False, True],
    )
    row = plan_merges(f, angles(0, 1, 2)).row(0, named=True)
    assert row["importance"] == 0.9 and row["access_count"] == 6 and row["protected"] is True
    assert row["created_at"] == T0 and row["last_access_at"] == T0 + timedelta(days=5)
    assert row["members"] == ["m1", "m2", "m0"]  # created_at order
    assert row["cluster"] == 0 and row["namespace"] == "u" and row["layer"] == "long_term"


def test_survivor_ties() -> None:
    same = ["tea at noon"] * 3
    f = frame(3, content=same, importance=[0.5, 0.7, 0.7])
    assert plan_merges(f, angles(0, 0, 0))["survivor"][0] == "m2"  # importance, then newest
    f = frame(3, content=same, created_at=[T0] * 3)
    assert plan_merges(f, angles(0, 0, 0))["survivor"][0] == "m0"  # then the first written
    f = frame(3, content=["tea", "tea at noon daily", "tea at noon"], importance=[1.0, 0.1, 0.5])
    assert plan_merges(f, angles(0, 0, 0))["survivor"][0] == "m1"  # most distinct tokens first


def test_content_keeps_facts_drops_duplicates_chinese() -> None:
    texts = ["我喜欢用Python写脚本", "我喜欢用Python写脚本。", "Python3.10以上最好。", "我喜欢用Python写脚本"]
    cosine_only = MergeParams(distinct_facts=False)  # (3.10 is a fact token the others lack)
    plan = plan_merges(frame(4, content=texts), angles(0, 1, 2, 3), cosine_only)
    content = plan["content"][0]
    assert content == "我喜欢用Python写脚本；Python3.10以上最好"
    assert content.count("脚本") == 1


def test_content_keeps_facts_drops_duplicates_english() -> None:
    texts = [
        "User lives in Hangzhou.",
        "user lives in Hangzhou",
        "User works at a bank. User lives in Hangzhou!",  # the survivor: most distinct tokens
        "User lives in Hangzhou. Drinks tea.",
    ]
    cosine_only = MergeParams(distinct_facts=False)  # ("Drinks", capitalized, reads as a name)
    plan = plan_merges(frame(4, content=texts), angles(0, 1, 2, 3), cosine_only)
    assert plan["survivor"][0] == "m2"
    # each sentence keeps its own "!" or "?" (the survivor's "!" used to move to the end: "… Drinks tea!")
    assert plan["content"][0] == "User works at a bank. User lives in Hangzhou!; Drinks tea"


def test_merge_content_rule() -> None:
    assert merge_content("用户住在杭州。", ["用户住在杭州", "用户住杭州"]) == "用户住在杭州。"  # nothing new
    assert merge_content("用户住在杭州。", ["在滨江区工作。"]) == "用户住在杭州；在滨江区工作。"
    assert (
        merge_content("Likes tea.", ["Likes tea.\nHates coffee!", "hates COFFEE"])
        == "Likes tea; Hates coffee!"  # its own "!" (no "." after it)
    )


def test_idempotent() -> None:
    step = math.degrees(math.acos(0.9))
    emb = angles(0, step, 2 * step, 90, 90.5, 180, 270)
    f = frame(7, content=["a b", "a b c", "a", "d e", "d", "f", "g"])
    plan = plan_merges(f, emb)
    assert member_sets(plan) == {frozenset({"m0", "m1", "m2"}), frozenset({"m3", "m4"})}
    f2, emb2 = apply_plan(f, emb, plan)
    assert f2.height == 4 and plan_merges(f2, emb2).is_empty()


# ------------------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "kw",
    [{"threshold": 0.4}, {"threshold": 1.1}, {"threshold": float("nan")}, {"threshold": "0.9"},
     {"block_size": 0}, {"block_size": 2.5}, {"max_cluster": 1}, {"max_cluster": True}],
)  # fmt: skip
def test_params_validated(kw: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="MergeParams." + next(iter(kw))):
        MergeParams(**kw)


def test_params_defaults() -> None:
    p = MergeParams(block_size=64.0)
    assert (p.threshold, p.block_size, p.max_cluster) == (0.85, 64, 50) and isinstance(p.block_size, int)


def test_bad_inputs() -> None:
    with pytest.raises(ValidationError, match="embeddings"):
        plan_merges(frame(3), angles(0, 1))
    with pytest.raises(ValidationError, match="embeddings"):
        plan_merges(frame(2), np.array([[1.0, np.nan], [1.0, 0.0]]))
    with pytest.raises(ValidationError, match="frame: missing columns: layer"):
        plan_merges(frame(2).drop("layer"), angles(0, 1))


def test_empty_input_and_no_clusters_are_typed() -> None:
    empty = plan_merges(frame(0), np.empty((0, 8), dtype=np.float32))
    assert empty.is_empty() and dict(empty.schema) == PLAN_SCHEMA
    none = plan_merges(frame(2), angles(0, 90))
    assert none.is_empty() and dict(none.schema) == PLAN_SCHEMA


# --------------------------------------------------------------------------------------- property
def brute_force(f: pl.DataFrame, emb: np.ndarray, params: MergeParams) -> set[frozenset[str]]:
    """Connected components by the full N×N matrix and a breadth-first search (tiny N only)."""
    group = list(zip(f["namespace"], f["layer"], f["key"], strict=True))
    active = (f["status"] == "active").to_list()
    sim = emb @ emb.T
    n, seen, out = f.height, set(), set()
    for s in range(n):
        if s in seen or not active[s]:
            continue
        comp, todo = {s}, [s]
        while todo:
            i = todo.pop()
            for j in range(n):
                if j not in comp and active[j] and group[j] == group[i] and sim[i, j] >= params.threshold:
                    comp.add(j)
                    todo.append(j)
        seen |= comp
        if 2 <= len(comp) <= params.max_cluster:
            out.add(frozenset(f["id"][i] for i in comp))
    return out


row_strategy = st.tuples(
    st.integers(0, 3),  # base direction
    st.sampled_from(["a", "b"]),
    st.sampled_from(["long_term", "short_term"]),
    st.sampled_from([None, "k"]),
    st.sampled_from(["active", "active", "superseded"]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(row_strategy, max_size=24), st.integers(0, 2**32 - 1), st.integers(1, 9), st.integers(2, 6))
def test_clusters_are_disjoint_components_within_groups(rows: list, seed: int, block: int, cap: int) -> None:
    n = len(rows)
    base, ns, layer, key, status = (list(c) for c in zip(*rows, strict=True)) if rows else ([],) * 5
    f = frame(n, namespace=ns, layer=layer, key=key, status=status)
    # orthogonal bases + small noise: within a base cosine > 0.9, across < 0.3, never near the threshold
    emb = np.eye(8, dtype=np.float32)[base] + 0.03 * np.random.default_rng(seed).standard_normal((n, 8))
    emb = (emb / np.linalg.norm(emb, axis=1, keepdims=True)).astype(np.float32).reshape(n, 8)
    params = MergeParams(block_size=block, max_cluster=cap)
    plan = plan_merges(f, emb, params)
    members = [m for ms in plan["members"].to_list() for m in ms]
    assert len(members) == len(set(members))  # disjoint
    by_id = {r["id"]: r for r in f.iter_rows(named=True)}
    for row in plan.iter_rows(named=True):
        for m in row["members"]:
            r = by_id[m]
            assert r["status"] == "active"
            assert (r["namespace"], r["layer"], r["key"]) == (row["namespace"], row["layer"], row["key"])
    assert member_sets(plan) == brute_force(f, emb, params)
    f2, emb2 = apply_plan(f, emb, plan)
    assert plan_merges(f2, emb2, params).is_empty()  # idempotent


# ------------------------------------------------------------------- weak members (forgetting floor)
def test_a_weak_pair_chained_only_through_a_strong_memory_stays_apart() -> None:
    """A and C are below the forgetting floor, B is not: cos(A,B) = cos(B,C) = 0.906, cos(A,C) = 0.643.
    Keeping the weak ones away from B used to leave A and C a cluster of their own, merged though they
    are no near-duplicates; a cluster is now connected at the threshold among its own members."""
    emb = angles(0, 25, 50)
    weak_ends = frame(3).with_columns(_weak=pl.Series([True, False, True]))
    assert plan_merges(weak_ends, emb).is_empty()
    assert cluster_labels(weak_ends, emb).tolist() == [0, 1, 2]
    # two strong memories bridged only by a weak one do not merge either
    weak_bridge = frame(3).with_columns(_weak=pl.Series([False, True, False]))
    assert plan_merges(weak_bridge, emb).is_empty()
    # near-duplicates on each side still merge among themselves, and never across
    emb = angles(0, 10, 20, 30)  # neighbours 0.985, two apart 0.940, three apart 0.866
    f = frame(4).with_columns(_weak=pl.Series([True, False, True, False]))
    assert member_sets(plan_merges(f, emb)) == {frozenset({"m0", "m2"}), frozenset({"m1", "m3"})}
    assert plan_merges(f.drop("_weak"), emb).height == 1  # without the floor: one chain of four


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 90), st.booleans()), max_size=14))
def test_every_cluster_is_connected_at_the_threshold_among_its_own_members(rows: list) -> None:
    """Clusters are the components of the near-duplicate graph without its weak-strong pairs: each is
    connected through its own members, holds only weak or only stronger memories, and no pair of one
    kind at the threshold is split. Angles in whole degrees never land on 0.85 (31.8°)."""
    n = len(rows)
    degrees, weak = ([d for d, _ in rows], [w for _, w in rows]) if rows else ([], [])
    f = frame(n).with_columns(_weak=pl.Series(weak, dtype=pl.Boolean))
    emb = angles(*degrees).reshape(n, 2)
    params = MergeParams(max_cluster=100)
    linked = (emb @ emb.T >= params.threshold) & np.equal.outer(weak, weak)  # (n, n)
    label = {m: c for c, ms in enumerate(plan_merges(f, emb, params)["members"].to_list()) for m in ms}
    for c in set(label.values()):
        idx = [i for i in range(n) if label.get(f"m{i}") == c]
        reached, todo = {idx[0]}, [idx[0]]
        while todo:  # breadth-first within the cluster's own members only
            i = todo.pop()
            new = [j for j in idx if linked[i, j] and j not in reached]
            reached |= set(new)
            todo += new
        assert reached == set(idx) and len({weak[i] for i in idx}) == 1
    for i, j in zip(*np.nonzero(np.triu(linked, 1)), strict=True):
        assert label.get(f"m{i}") is not None and label.get(f"m{i}") == label.get(f"m{j}")


# -------------------------------------------------------------------------------------- benchmark
def test_benchmark_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "consolidate.py"), "--sizes", "2000"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "plan_merges" in proc.stdout and "extrapolated" in proc.stdout
