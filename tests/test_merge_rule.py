"""The merged memory's strength (memkit.merge_rule): never stronger at ``now`` than its strongest
member, never weaker than its oldest; the plain max when the members share one half-life."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from memkit.consolidate import plan_merges
from memkit.decay import below_floor, strength
from memkit.merge_rule import capped_importance, merged_importance

member = st.tuples(
    st.floats(0.0, 1.0),  # importance
    st.one_of(st.sampled_from([1.0, 24.0, 2160.0, 100_000.0]), st.floats(0.01, 1e7)),  # half-life
    st.one_of(st.sampled_from([0.0, 1.0, 100.0]), st.floats(0.0, 1e5)),  # age at `now`, hours
)


@settings(max_examples=400, deadline=None)
@given(st.lists(member, min_size=1, max_size=6), st.sampled_from([0.1, 0.05, 0.3]))
def test_a_merged_memory_is_between_its_oldest_and_its_strongest_member(members: list, floor: float) -> None:
    imp, hl, age = (np.array(c) for c in zip(*members, strict=True))
    s = strength(imp, age, hl)  # (m,) each member's strength at `now`
    got = merged_importance(imp, hl, age)
    assert 0.0 <= got <= imp.max()
    merged = strength(got, age.max(), hl.max())  # dated by its oldest member, its slowest half-life
    assert merged <= s.max()  # to the last bit: never stronger than its strongest member
    assert merged >= s[age == age.max()].max() * (1 - 1e-12)  # never weaker than its oldest
    if below_floor(s, floor).all():  # what forget() would drop stays droppable ...
        assert below_floor(merged, floor)
    elif not below_floor(s, floor).any() and s.min() > floor * (1 + 1e-12):  # ... and a strong merge strong
        assert not below_floor(merged, floor)
    if (hl == hl[0]).all():
        assert got == imp.max()  # one half-life (one layer's default): the cap never binds


def test_the_cap_is_vectorized_over_clusters_and_exact() -> None:
    top = np.array([0.05, 0.5, 0.0])
    got = capped_importance(
        top, np.array([0.9, 0.5, 0.7]), np.array([1e5, 10.0, 2.0]), np.array([100.0, 10.0, 1.0])
    )
    assert got[1] == 0.5 and got[2] == 0.0  # not over: the max; members of strength 0: importance 0
    assert strength(got[0], 100.0, 1e5) <= 0.05 < strength(np.nextafter(got[0], 1.0), 100.0, 1e5)


def test_the_planner_caps_the_importance_given_ages_and_half_lives() -> None:
    """plan_merges with store.merge_candidates' columns reports the importance consolidate writes."""
    t = datetime(2026, 1, 1, tzinfo=UTC)
    f = pl.DataFrame({
        "id": ["a", "b"], "namespace": ["u"] * 2, "layer": ["long_term"] * 2, "key": [None, None],
        "content": ["User likes green tea", "User likes green tea a lot"], "importance": [0.9, 0.05],
        "created_at": [t, t], "last_access_at": [t, t], "access_count": [0, 0], "status": ["active"] * 2,
        "protected": [False, False], "half_life_hours": [1.0, 100_000.0], "_age_hours": [100.0, 1.0],
    })  # fmt: skip
    emb = np.array([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    capped = plan_merges(f, emb)["importance"].item()
    assert capped == merged_importance([0.9, 0.05], [1.0, 100_000.0], [100.0, 1.0]) < 0.051
    assert plan_merges(f.drop("_age_hours"), emb)["importance"].item() == 0.9  # no clock: the max
