"""memkit.params: frozen, validated parameter dataclasses."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from conftest import NOW

import memkit as mk
from memkit.params import MAX_WEIGHT, DecayParams, KeywordParams, Weights, check_number, slider_ranges

BAD_NUMBERS = [float("nan"), float("inf"), -float("inf"), -0.1, True, False, "0.5", None]


def test_defaults_are_the_tested_best_and_the_articles_a_preset() -> None:
    w = Weights()  # chosen on LoCoMo 1-5, checked on 6-10 (benchmarks/locomo_defaults.py); a test pins them
    assert (w.similarity, w.importance, w.recency, w.keyword, w.neighbour, w.tie, w.neighbour2) == (
        0.3,
        0.0,
        0.0,
        0.7,
        0.8,
        0.1,
        0.0,  # second neighbours: off by default (the README's LoCoMo section says why)
    )
    a = Weights.articles()
    assert (a.similarity, a.importance, a.recency, a.keyword, a.neighbour, a.tie) == (
        0.6,
        0.3,
        0.1,
        0.0,
        0.0,
        0.0,
    )
    d = DecayParams()
    assert (d.time_scale_hours, d.min_strength, d.reinforce_step) == (168.0, 0.0, 0.005)  # no floor: LoCoMo
    k = KeywordParams()
    assert (k.k1, k.b) == (0.3, 0.4)  # chosen on LoCoMo 1-5 like the weights


@pytest.mark.parametrize("field", ["similarity", "importance", "recency", "keyword"])
@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_weights_reject_bad_values(field: str, bad) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        Weights(**{field: bad})
    assert ei.value.field == f"Weights.{field}"
    assert isinstance(ei.value, ValueError)


WEIGHTS = ["similarity", "importance", "recency", "keyword", "neighbour", "neighbour2"]


@pytest.mark.parametrize("field", WEIGHTS)
@pytest.mark.parametrize("big", [1000.001, 1e308, np.float64(1e200), 10**400])
def test_weights_have_an_upper_bound(field: str, big) -> None:
    with pytest.raises(mk.ValidationError, match="<= 1000|past float's range") as ei:  # 10**400: no float
        Weights(**{field: big})
    assert ei.value.field == f"Weights.{field}"


def test_the_largest_weights_still_rank(store: mk.MemoryStore) -> None:
    """At the bound, a search's sums stay finite (at 1e308 they overflowed and ranking crashed)."""
    for t in ("tea tea oolong", "black coffee", "a tea party", "my cat Tom"):
        store.add(t, namespace="n", now=NOW)
    top = MAX_WEIGHT
    w = Weights(top, top, top, top, neighbour=top, tie=0.1, neighbour2=top)
    hits = store.search("tea", namespace="n", k=4, weights=w, now=NOW, reinforce=False)
    assert hits.height == 4 and np.isfinite(hits["score"].to_numpy()).all()
    assert KeywordParams(k1=top).k1 == top


def test_weights_all_zero_rejected() -> None:
    with pytest.raises(mk.ValidationError, match="at least one weight"):
        Weights(0.0, 0.0, 0.0, 0.0)


def test_weights_only_keyword_is_fine() -> None:
    assert Weights(0, 0, 0, 1).total() == 1.0


def test_weights_coerced_to_float() -> None:
    w = Weights(similarity=1, importance=np.float32(0.5), recency=0, keyword=0)
    assert type(w.similarity) is float and type(w.importance) is float
    assert w.importance == 0.5


def test_weights_normalized() -> None:
    n = Weights(1, 1, 0, 0).normalized()
    assert (n.similarity, n.importance, n.recency, n.keyword) == (0.5, 0.5, 0.0, 0.0)
    assert math.isclose(Weights(0.6, 0.3, 0.3, 0.2).normalized().total(), 1.0)


def test_replace_revalidates() -> None:
    w = Weights()
    assert dataclasses.replace(w, recency=0.2).recency == 0.2
    with pytest.raises(mk.ValidationError):
        dataclasses.replace(w, similarity=float("nan"))
    with pytest.raises(mk.ValidationError):
        dataclasses.replace(w, similarity=0, importance=0, recency=0, keyword=0)
    with pytest.raises(mk.ValidationError):
        dataclasses.replace(DecayParams(), min_strength=-1.0)
    with pytest.raises(mk.ValidationError):
        dataclasses.replace(KeywordParams(), b=2.0)


def test_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Weights().similarity = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        DecayParams().min_strength = 0.5  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"time_scale_hours": 0.0}, "DecayParams.time_scale_hours"),
        ({"time_scale_hours": -5.0}, "DecayParams.time_scale_hours"),
        ({"time_scale_hours": float("nan")}, "DecayParams.time_scale_hours"),
        ({"min_strength": 1.5}, "DecayParams.min_strength"),
        ({"min_strength": -0.01}, "DecayParams.min_strength"),
        ({"min_strength": True}, "DecayParams.min_strength"),
        ({"reinforce_step": 2.0}, "DecayParams.reinforce_step"),
        ({"reinforce_step": float("inf")}, "DecayParams.reinforce_step"),
    ],
)
def test_decay_params_validation(kwargs: dict, field: str) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        DecayParams(**kwargs)
    assert ei.value.field == field


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"k1": -0.1}, "KeywordParams.k1"),
        ({"k1": float("nan")}, "KeywordParams.k1"),
        ({"k1": 1e308}, "KeywordParams.k1"),  # (k1 + 1) * tf overflowed: every keyword score NaN -> 0
        ({"k1": 1000.5}, "KeywordParams.k1"),
        ({"b": 1.01}, "KeywordParams.b"),
        ({"b": -0.5}, "KeywordParams.b"),
        ({"b": False}, "KeywordParams.b"),
    ],
)
def test_keyword_params_validation(kwargs: dict, field: str) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        KeywordParams(**kwargs)
    assert ei.value.field == field


def test_valid_edges_accepted() -> None:
    assert DecayParams(min_strength=0.0, reinforce_step=0.0).min_strength == 0.0
    assert DecayParams(min_strength=1.0).min_strength == 1.0
    assert KeywordParams(k1=0.0, b=1.0).b == 1.0


def test_check_number() -> None:
    assert check_number("x", 3) == 3.0
    assert check_number("x", 0.0, lo=0.0) == 0.0
    with pytest.raises(mk.ValidationError, match="x: must be > 0"):
        check_number("x", 0.0, lo=0.0, lo_open=True)
    with pytest.raises(mk.ValidationError) as ei:
        check_number("x", 2.0, hi=1.0)
    assert ei.value.field == "x"


def test_slider_ranges() -> None:
    r = slider_ranges(Weights)
    assert set(r) == {"similarity", "importance", "recency", "keyword", "neighbour", "tie", "neighbour2"}
    assert r["similarity"] == (0.0, 1.0, 0.05)
    for lo, hi, step in list(r.values()) + list(slider_ranges(DecayParams).values()):
        assert lo < hi and 0 < step <= hi - lo
