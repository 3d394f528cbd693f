"""Memories written at one instant (a batch's rows, a chat's one second) are ordered as written,
never by their random ids: the same input plans the same merged text, survivor and forget queue in
every run. Each test gives ids whose order is the reverse of the frame's (write) order, so a tie
broken by id would come out reversed (memkit.consolidate, memkit.merge_rule, memkit.forget)."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl

from memkit.consolidate import plan_merges
from memkit.forget import plan_forget
from memkit.merge_rule import remerge
from memkit.params import ForgetParams

SURVIVOR = "the user likes green tea with honey and lemon"  # the most informative
OTHERS = ["works from home", "plays the violin", "reads science fiction"]  # said by no one else


def _merge_frame(now: datetime, texts: list[str]) -> pl.DataFrame:
    n = len(texts)
    return pl.DataFrame({
        "id": [f"z{n - i}" for i in range(n)],  # descending: the reverse of the write order
        "namespace": ["u"] * n, "layer": ["long_term"] * n, "key": pl.Series([None] * n, dtype=pl.String),
        "content": texts, "importance": [0.5] * n, "created_at": [now] * n, "last_access_at": [now] * n,
        "access_count": [0] * n, "status": ["active"] * n, "protected": [False] * n,
    })  # fmt: skip


def _same(n: int) -> np.ndarray:
    return np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (n, 1))  # (n, 2): all one direction


def test_one_instants_members_add_their_sentences_in_the_frames_order(now: datetime) -> None:
    frame = _merge_frame(now, [SURVIVOR, *OTHERS])
    plan = plan_merges(frame, _same(4))
    assert plan["members"].to_list() == [frame["id"].to_list()]  # as written, not by id
    assert plan["survivor"][0] == frame["id"][0]
    assert plan["content"][0] == "; ".join([SURVIVOR, *OTHERS])
    # the frame's order decides, whatever it is: reversed rows, reversed sentences
    back = frame.reverse()
    assert plan_merges(back, _same(4))["content"][0] == "; ".join([SURVIVOR, *OTHERS[::-1]])


def test_a_survivor_tie_goes_to_the_first_written(now: datetime) -> None:
    frame = _merge_frame(now, ["likes tea", "likes tea", "likes tea"])  # every rule ties
    plan = plan_merges(frame, _same(3))
    assert plan["survivor"][0] == frame["id"][0] and plan["content"][0] == "likes tea"
    assert plan_merges(frame.reverse(), _same(3))["survivor"][0] == frame["id"][2]


def test_remerge_keeps_the_order_written(now: datetime) -> None:
    frame = _merge_frame(now, [SURVIVOR, *OTHERS]).select("id", "content", "importance", "created_at")
    assert remerge(frame) == (frame["id"][0], "; ".join([SURVIVOR, *OTHERS]))


def test_forget_at_one_instant_goes_in_the_frames_order(now: datetime) -> None:
    texts = ["Likes green tea", "Likes black tea", "Likes oolong tea", "Likes white tea"]  # equal costs
    n = len(texts)
    frame = pl.DataFrame({
        "id": [f"z{n - i}" for i in range(n)], "namespace": ["u"] * n, "status": ["active"] * n,
        "importance": [0.5] * n, "half_life_hours": [2160.0] * n, "created_at": [now] * n,
        "valid_until": pl.Series([None] * n, dtype=pl.Datetime("us", "UTC")), "access_count": [0] * n,
        "protected": [False] * n, "content": texts,
    })  # fmt: skip
    plan = plan_forget(frame, ForgetParams(capacity=1), now)
    assert plan["id"].to_list() == frame["id"].to_list()[:3]  # the first written go first
    by_age = plan_forget(frame.drop("content"), ForgetParams(capacity=1), now)  # no words: age, then order
    assert by_age["id"].to_list() == plan["id"].to_list()
    weak = frame.with_columns(importance=pl.lit(0.01))  # all below the floor: listed as written too
    assert plan_forget(weak, ForgetParams(), now)["id"].to_list() == frame["id"].to_list()
