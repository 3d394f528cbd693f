"""The read gate's mask is remembered (IndexColumns.mask): for the same gate over the same index it is
reused at every instant where no row's window opens or shuts, and never once a row could have changed.
Each test compares the mask with the gate's rules computed afresh from the raw columns."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from memkit.store.gate import Gate
from memkit.store.index_columns import IndexColumns

DIM = 4
HOUR = 3_600_000_000  # µs
T0 = 1_700_000_000_000_000  # µs since the epoch
LOW, HIGH = np.iinfo(np.int64).min, np.iinfo(np.int64).max
GATE = Gate("u", None, ("active",), valid_at=datetime(2026, 1, 1, tzinfo=UTC))  # (mask() reads now_us)


def _cols(rng: np.random.Generator, start: int, m: int) -> dict[str, object]:
    """``m`` memories written over 100 hours, a third with validity bounds, importances around the floor."""
    created = T0 + rng.integers(0, 100 * HOUR, m)
    valid_from = np.where(rng.random(m) < 0.3, created + rng.integers(0, 50 * HOUR, m), LOW)
    valid_until = np.where(rng.random(m) < 0.3, created + rng.integers(1, 150 * HOUR, m), HIGH)
    return {
        "id": [f"m{i}" for i in range(start, start + m)], "content": ["x"] * m, "key": [None] * m,
        "tags": [()] * m, "namespace": rng.choice(["u", "v"], m, p=[0.8, 0.2]).tolist(), "owner": [None] * m,
        "created_by": [None] * m, "status": rng.choice(["active", "quarantined"], m, p=[0.9, 0.1]).tolist(),
        "access": ["public"] * m, "layer": ["long_term"] * m, "kind": ["fact"] * m,
        "importance": rng.uniform(0.05, 0.4, m), "half_life_h": rng.uniform(5.0, 80.0, m),
        "access_count": np.zeros(m, np.int64), "created_us": created, "last_access_us": created,
        "valid_from_us": valid_from, "valid_until_us": valid_until,
    }  # fmt: skip


def _index(seed: int = 0, m: int = 400) -> IndexColumns:
    rng = np.random.default_rng(seed)
    ix = IndexColumns(DIM, floor=0.1)
    x = rng.standard_normal((m, DIM), dtype=np.float32)
    ix.append(_cols(rng, 0, m), x / np.linalg.norm(x, axis=1, keepdims=True))
    return ix


def _rules(ix: IndexColumns, now: int, floor: bool = True) -> np.ndarray:
    """The gate's rules from the raw columns: namespace u, active, valid and written at `now`, and
    (floor) not yet faded below the floor."""
    n = ix.n
    m = (ix.ns[:n] == ix.names.lookup("u")) & (ix.status[:n] == 0)
    m &= (ix.valid_from_us[:n] <= now) & (now < ix.valid_until_us[:n]) & (ix.created_us[:n] <= now)
    return m & (now <= ix.expire_us[:n]) if floor else m


def _instants(ix: IndexColumns) -> np.ndarray:
    """Every instant a row's visibility changes, and one µs either side."""
    n = ix.n
    edges = np.concatenate([ix.created_us[:n], ix.valid_from_us[:n], ix.valid_until_us[:n], ix.expire_us[:n]])
    edges = edges[(edges > T0 - HOUR) & (edges < T0 + 400 * HOUR)]
    return np.unique(np.concatenate([edges - 1, edges, edges + 1]))


def test_a_remembered_mask_is_the_gate_at_every_instant_around_every_edge() -> None:
    ix = _index()
    rng = np.random.default_rng(1)
    instants = _instants(ix)
    # in order (each call a neighbour of the last: the memo's window is used) and in random order
    for now in [*instants.tolist(), *rng.permutation(instants).tolist()]:
        for floor in (True, False):
            np.testing.assert_array_equal(ix.mask(GATE, now, floor=floor), _rules(ix, now, floor), str(now))
    # and the memo was used: asked again later, it holds until the next edge
    gap = int(np.argmax(np.diff(instants)))  # the widest stretch without an edge
    ix.mask(GATE, int(instants[gap]) + 1)
    ix.mask(GATE, int(instants[gap]) + 2)
    _, start, until, _ = ix._masks[("u", None, ("active",), True)]
    assert start <= instants[gap] + 2 and until >= instants[gap + 1] + 1  # (the next edge: + 1)


def test_the_caller_owns_the_mask_it_gets() -> None:
    ix = _index()
    now = T0 + 60 * HOUR
    for _ in range(3):  # made, then remembered: each time the caller's own array
        mask = ix.mask(GATE, now)
        np.testing.assert_array_equal(mask, _rules(ix, now))
        mask[:] = ~mask  # a ranking changes its mask (another floor, hidden ids)


def test_reinforcing_a_row_the_mask_left_out_brings_it_back() -> None:
    ix = _index()
    now = T0 + 200 * HOUR
    before = ix.mask(GATE, now)
    ix.mask(GATE, now + 1)  # a memo with a window
    faded = np.flatnonzero(_rules(ix, now, floor=False) & ~before)  # visible but for the floor
    faded = faded[np.argsort(-ix.half_life_h[faded])][:3]  # the slowest to fade
    assert len(faded) == 3 and not before[faded].any()
    ix.touch(faded, now, 0.9)  # importance + 0.9: above the floor again
    for t in (now + 1, now + 2):  # within the window the memo had
        np.testing.assert_array_equal(ix.mask(GATE, t), _rules(ix, t))
        assert ix.mask(GATE, t)[faded].all()


def test_reinforcing_a_hit_keeps_the_memo_and_the_mask_right() -> None:
    ix = _index()
    now = T0 + 120 * HOUR
    ix.mask(GATE, now)
    ix.mask(GATE, now + 1)
    hits = np.flatnonzero(ix.mask(GATE, now))[:5]
    ix.mask(GATE, now + 1, floor=False)
    ix.mask(GATE, now + 2, floor=False)
    ix.touch(hits, now, 0.01)  # as a search reinforces what it returned
    # a hit only fades later, and without the floor nothing touch() changes is read: nothing to redo
    assert {("u", None, ("active",), True), ("u", None, ("active",), False)} <= set(ix._masks)
    np.testing.assert_array_equal(ix.mask(GATE, now + 2), _rules(ix, now + 2))


def test_every_write_to_the_index_is_seen() -> None:
    ix = _index()
    rng = np.random.default_rng(2)
    now = T0 + 120 * HOUR
    ix.mask(GATE, now)
    ix.mask(GATE, now + 1)
    x = rng.standard_normal((50, DIM), dtype=np.float32)
    ix.append(_cols(rng, 400, 50), x / np.linalg.norm(x, axis=1, keepdims=True))
    np.testing.assert_array_equal(ix.mask(GATE, now), _rules(ix, now))
    shown = [ix.ids[r] for r in np.flatnonzero(ix.mask(GATE, now))[:4]]
    ix.set_status(shown[:2], "superseded")
    np.testing.assert_array_equal(ix.mask(GATE, now), _rules(ix, now))
    ix.erase(shown[2:3])
    np.testing.assert_array_equal(ix.mask(GATE, now), _rules(ix, now))
    row = ix.rows(shown[3:])
    cols = {c: getattr(ix, c)[row] for c in ("importance", "half_life_h", "access_count", *ix.TIMES)}
    cols |= {"status": ["active"], "access": ["public"], "layer": ["long_term"], "kind": ["fact"]}
    cols["valid_until_us"] = np.array([now])  # no longer valid at `now`
    ix.update(row, cols)
    np.testing.assert_array_equal(ix.mask(GATE, now), _rules(ix, now))
    assert not ix.mask(GATE, now)[row].any()
