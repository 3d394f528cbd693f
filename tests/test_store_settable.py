"""memkit/store/settable.py: a store's parameters assigned after the open are checked as the
constructor checks them; a refused assignment names the attribute and changes nothing. Before, a dict
given for ``store.guard`` was accepted and the next write failed with an AttributeError."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
WRONG = {
    "guard": {"extra_secret_patterns": ("ACME-[0-9]{6}",)},
    "decay": {"min_strength": 0.1},
    "keyword": None,
    "weights": mk.DecayParams(),
    "forget_policy": "weak",
    "merge_threshold": 0.4,
    "conflict_policy": "overwrite",
}


@pytest.mark.parametrize("name", list(WRONG))
def test_a_wrong_parameter_is_refused_naming_it_and_changes_nothing(name: str) -> None:
    with mk.MemoryStore() as s:
        before = s.settings
        with pytest.raises(mk.ValidationError, match=f"^{name}: ") as e:
            setattr(s, name, WRONG[name])
        assert e.value.field == name
        assert s.settings == before
        assert s.add("hello there", namespace="u", now=NOW).status == "active"  # the store still writes


def test_a_right_parameter_is_taken() -> None:
    acme = mk.GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",))
    with mk.MemoryStore() as s:
        s.guard, s.merge_threshold, s.conflict_policy = acme, 0.9, "supersede"
        s.weights = dataclasses.replace(s.weights, keyword=0.5)
        assert (s.guard, s.merge_threshold, s.conflict_policy, s.weights.keyword) == (
            acme,
            0.9,
            "supersede",
            0.5,
        )
        with pytest.raises(mk.WriteRefused):  # the new guard is the one that screens
            s.add("the code is ACME-123456", namespace="u", now=NOW)
