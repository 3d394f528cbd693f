"""memkit.decay: the strength and recency curves, in numpy and polars form (DESIGN.md worked examples)."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import polars as pl
import pytest

from memkit import decay

DAY = 24.0


def test_worked_example_long_term_one_day() -> None:
    assert round(float(decay.strength(0.80, 24.0, 90 * DAY)), 4) == 0.7939


def test_worked_example_short_term_two_half_lives() -> None:
    assert round(float(decay.strength(0.60, 4.0, 2.0)), 4) == 0.15
    assert float(decay.strength(0.60, 4.0, 2.0)) == pytest.approx(0.15, abs=1e-12)


def test_strength_is_importance_at_age_zero_and_half_after_one_half_life() -> None:
    assert float(decay.strength(0.7, 0.0, 5.0)) == pytest.approx(0.7)
    assert float(decay.strength(0.7, 5.0, 5.0)) == pytest.approx(0.35)


def test_strength_arrays_elementwise() -> None:
    got = decay.strength(np.array([0.80, 0.60]), np.array([24.0, 4.0]), np.array([90 * DAY, 2.0]))
    assert isinstance(got, np.ndarray) and got.shape == (2,)
    np.testing.assert_allclose(got, [0.8 * 0.5 ** (24 / 2160), 0.15], rtol=1e-12)
    assert np.round(got, 4).tolist() == [0.7939, 0.15]


def test_strength_broadcasts_column_against_row() -> None:
    imp = np.array([[1.0], [0.5]])  # (2, 1)
    age = np.array([0.0, 2.0, 4.0])  # (3,)
    got = decay.strength(imp, age, 2.0)
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, [[1.0, 0.5, 0.25], [0.5, 0.25, 0.125]])


def test_strength_scalar_with_array_half_lives() -> None:
    got = decay.strength(0.8, 24.0, np.array([2.0, 24.0, 90 * DAY]))
    np.testing.assert_allclose(got, [0.8 * 2.0**-12, 0.4, 0.8 * 0.5 ** (24 / 2160)])


def test_negative_age_counts_as_zero() -> None:
    assert float(decay.strength(0.6, -10.0, 2.0)) == pytest.approx(0.6)


def test_recency_one_time_scale_is_one_over_e() -> None:
    assert float(decay.recency(168.0)) == pytest.approx(1 / math.e, rel=1e-12)
    assert float(decay.recency(0.0)) == 1.0


def test_recency_custom_scale_and_arrays() -> None:
    got = decay.recency(np.array([0.0, 10.0, 20.0]), 10.0)
    np.testing.assert_allclose(got, [1.0, math.exp(-1), math.exp(-2)])
    assert float(decay.recency(-5.0)) == 1.0  # accessed "in the future" -> as fresh as possible


def test_hours_until_floor() -> None:
    assert float(decay.hours_until(0.1, 0.6, 2.0)) == pytest.approx(2.0 * math.log2(6.0))
    assert round(float(decay.hours_until(0.1, 0.6, 2.0)), 2) == 5.17
    assert float(decay.hours_until(0.1, 0.05, 2.0)) == 0.0  # starts below the floor


def test_strength_expr_worked_examples() -> None:
    df = pl.DataFrame({"importance": [0.8, 0.6], "age_hours": [24.0, 4.0], "half_life_hours": [2160.0, 2.0]})
    got = df.select(decay.strength_expr())
    assert got.columns == ["strength"]
    assert got["strength"].round(4).to_list() == [0.7939, 0.15]


def test_strength_expr_matches_numpy_on_custom_columns() -> None:
    df = pl.DataFrame({"imp": [0.9, 0.2, 0.5], "age": [-1.0, 3.0, 100.0], "hl": [1.0, 3.0, 50.0]})
    got = df.select(decay.strength_expr("imp", "age", pl.col("hl")))["strength"].to_numpy()
    np.testing.assert_allclose(
        got, decay.strength(df["imp"].to_numpy(), df["age"].to_numpy(), df["hl"].to_numpy())
    )


def test_age_hours_expr_and_strength_from_timestamps(now) -> None:
    df = pl.DataFrame(
        {
            "created_at": [now - timedelta(days=1), now - timedelta(hours=4), now - timedelta(minutes=30)],
            "importance": [0.8, 0.6, 1.0],
            "half_life_hours": [90 * DAY, 2.0, 1.0],
        }
    )
    out = df.with_columns(decay.age_hours_expr("created_at", now).alias("age_hours")).with_columns(
        decay.strength_expr()
    )
    assert out["age_hours"].to_list() == pytest.approx([24.0, 4.0, 0.5])
    assert out["strength"].round(4).to_list() == [0.7939, 0.15, round(0.5**0.5, 4)]


def test_recency_expr_matches_numpy() -> None:
    df = pl.DataFrame({"h": [0.0, 168.0, 336.0, -3.0]})
    got = df.select(decay.recency_expr("h"))["recency"].to_numpy()
    np.testing.assert_allclose(got, decay.recency(df["h"].to_numpy()))
    assert got[1] == pytest.approx(1 / math.e)


@pytest.mark.parametrize(
    "bad", [0.0, -1.0, float("nan"), float("inf"), np.array([2.0, 0.0]), np.array([-3.0])]
)
def test_pure_helpers_reject_non_positive_half_lives(bad) -> None:
    from memkit import ValidationError

    for call, field in (
        (lambda: decay.strength(0.5, 1.0, bad), "half_life_hours"),
        (lambda: decay.hours_until(0.1, 0.5, bad), "half_life_hours"),
        (lambda: decay.recency(1.0, bad), "time_scale_hours"),
        (lambda: decay.hours_until(bad, 0.5, 2.0), "floor"),
    ):
        with pytest.raises(ValidationError) as ei:
            call()
        assert ei.value.field == field
    with pytest.raises(ValueError, match="half_life_hours"):  # the polars form calls the same function
        pl.DataFrame(
            {"importance": [0.5, 0.5], "age_hours": [1.0, 1.0], "half_life_hours": [2.0, -1.0]}
        ).select(decay.strength_expr())


def test_below_floor_is_strict_and_unrounded_in_every_form() -> None:
    """The one test of "below the floor": a strength 3e-7 under it is below (it rounds to the floor to 6
    decimals), one exactly at it is not; numpy, polars and a float agree."""
    s = [0.1 - 3e-7, 0.1, 0.1 + 3e-7]
    assert decay.below_floor(np.array(s), 0.1).tolist() == [True, False, False]
    assert pl.DataFrame({"s": s}).select(decay.below_floor(pl.col("s"), 0.1))["s"].to_list() == [
        True,
        False,
        False,
    ]
    assert [decay.below_floor(x, 0.1) for x in s] == [True, False, False]
