"""memkit.conflicts: the pure decision of a keyed write."""

from __future__ import annotations

import pytest

import memkit as mk
from memkit.conflicts import POLICIES, plan_keyed_write

HZ = [("m1", "active", "杭州", 1)]


def test_policies() -> None:
    assert POLICIES == ("flag", "supersede", "strict")


@pytest.mark.parametrize("policy", POLICIES)
def test_new_key_is_added(policy: str) -> None:
    p = plan_keyed_write([], "x", policy)
    assert (p.status, p.version, p.changes, p.op, p.against) == ("active", 1, (), "add", None)


def test_flag_keeps_old_active_and_flags_new() -> None:
    p = plan_keyed_write(HZ, "上海", "flag")
    assert (p.status, p.version, p.changes, p.op, p.against) == ("conflict", 2, (), "conflict", "m1")


def test_supersede_retires_every_live_version() -> None:
    existing = [("m1", "superseded", "a", 1), ("m2", "active", "b", 2), ("m3", "conflict", "c", 3)]
    p = plan_keyed_write(existing, "d", "supersede")
    assert p.status == "active" and p.version == 4 and p.op == "supersede"
    assert set(p.changes) == {("m2", "superseded"), ("m3", "superseded")}
    assert p.against == "m2"


def test_strict_raises() -> None:
    with pytest.raises(mk.ConflictError):
        plan_keyed_write(HZ, "上海", "strict")


@pytest.mark.parametrize("policy", POLICIES)
def test_same_value_supersedes_quietly(policy: str) -> None:
    p = plan_keyed_write(HZ, "杭州", policy)
    assert (p.status, p.version, p.changes, p.op) == ("active", 2, (("m1", "superseded"),), "supersede")


def test_compares_with_newest_active_version() -> None:
    existing = [("m1", "active", "a", 1), ("m2", "active", "b", 2)]
    assert plan_keyed_write(existing, "b", "flag").changes == (("m2", "superseded"),)
    assert plan_keyed_write(existing, "a", "flag").status == "conflict"


def test_only_dead_versions_counts_as_new_but_numbers_continue() -> None:
    p = plan_keyed_write([("m1", "superseded", "a", 1), ("m2", "superseded", "b", 5)], "b", "strict")
    assert (p.status, p.version, p.op) == ("active", 6, "add")


def test_conflict_only_means_no_current() -> None:
    p = plan_keyed_write([("m1", "conflict", "a", 1)], "b", "strict")
    assert p.status == "active" and p.op == "add"
