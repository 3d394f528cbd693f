"""What works over a store follows its parameters (helper 100, audit r2_adapter_snapshot): the agent and
the LangGraph adapter copied ``store.weights`` when built, the time machine ``store.decay.min_strength``
and ``store.forget_policy``, so a documented ``store.weights = ...`` (or ``store.decay = ...``) left them
ranking and judging with the old values. Now, unless given their own, they read the store's at each
use (:class:`memkit.store.settable.FromStore`); the MCP server's tools always did."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

import memkit as mk
from memkit.agent.llms import EchoLLM

T = datetime(2026, 1, 1, tzinfo=UTC)
# importance alone: the important memory wins a query that names the other one
BY_IMPORTANCE = mk.Weights(similarity=0.0, importance=1.0, keyword=0.0, neighbour=0.5)


def _store() -> mk.MemoryStore:
    s = mk.MemoryStore()
    s.add("the user drinks green tea", namespace="u", key="drink", importance=0.2, now=T)
    s.add("the shop opens at nine", namespace="u", key="shop", importance=0.9, now=T + timedelta(hours=1))
    return s


def _scores(hits) -> dict[str, float]:
    return {i: round(sc, 9) for i, sc in zip(hits["id"], hits["score"], strict=True)}


def test_the_agent_recalls_with_the_stores_weights_as_they_are_now() -> None:
    s = _store()
    agent = mk.MemoryAgent(s, EchoLLM(), "u", "assistant", now=T + timedelta(hours=2))
    s.weights = BY_IMPORTANCE  # after the agent was built
    assert agent.weights == BY_IMPORTANCE
    want = s.search(
        "green tea",
        namespace="u",
        requester="assistant",
        k=5,
        now=T + timedelta(hours=2),
        weights=BY_IMPORTANCE,
        reinforce=False,
    )  # fmt: skip (before the turn reinforces them)
    reply = agent.chat("green tea")
    used = reply.context.used
    assert _scores(used) == _scores(want.filter(want["id"].is_in(used["id"].implode())))


def test_the_agents_own_weights_stay_and_none_follows_the_store_again() -> None:
    s = _store()
    own = mk.Weights.articles()
    agent = mk.MemoryAgent(s, EchoLLM(), "u", "assistant", weights=own, now=T)
    s.weights = BY_IMPORTANCE
    assert agent.weights == own
    with pytest.raises(mk.ValidationError) as ei:
        agent.weights = {"similarity": 1.0}  # type: ignore[assignment]
    assert ei.value.field == "weights" and agent.weights == own  # a refusal changes nothing
    agent.weights = None
    assert agent.weights == BY_IMPORTANCE
    with pytest.raises(mk.ValidationError, match="weights"):
        mk.MemoryAgent(s, EchoLLM(), "u", "assistant", weights="fast")  # type: ignore[arg-type]


def test_the_langgraph_adapter_ranks_with_the_stores_weights_as_they_are_now() -> None:
    pytest.importorskip("langgraph")
    from memkit.integrations.langgraph import MemkitStore

    s = mk.MemoryStore()
    lg = MemkitStore(s, now=T)
    lg.put(("u",), "a", {"memory": "the user drinks green tea"})
    lg.put(("u",), "b", {"memory": "tea shop opening hours"})
    before = [i.key for i in lg.search(("u",), query="green tea", refresh_ttl=False)]
    s.weights = BY_IMPORTANCE
    # the store's weights, still without neighbour expansion (items are facts, not turns)
    assert lg.weights == dataclasses.replace(BY_IMPORTANCE, neighbour=0.0)
    items = lg.search(("u",), query="green tea", refresh_ttl=False)
    fresh = MemkitStore(s, now=T).search(("u",), query="green tea", refresh_ttl=False)
    assert [(i.key, i.score) for i in items] == [(i.key, i.score) for i in fresh]
    assert before == ["a", "b"] and {i.score for i in items} == {0.5}  # importance alone: a tie
    own = mk.Weights()
    lg.weights = own
    s.weights = mk.Weights.articles()
    assert lg.weights == own  # given: kept, as given (neighbour expansion included)
    lg.weights = None
    assert lg.weights == dataclasses.replace(mk.Weights.articles(), neighbour=0.0)
    with pytest.raises(mk.ValidationError) as ei:
        MemkitStore(s, weights="fast")  # type: ignore[arg-type]
    assert ei.value.field == "weights"


def test_the_mcp_server_searches_with_the_stores_weights_as_they_are_now() -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from memkit.integrations.mcp import build_server

    s = _store()
    server = build_server(s, namespace="u", now=lambda: T + timedelta(hours=2))
    s.weights = BY_IMPORTANCE

    async def go() -> dict:
        async with Client(server) as client:
            return (await client.call_tool("search_memories", {"query": "green tea"})).structured_content

    hits = anyio.run(go)["hits"]
    want = s.search("green tea", namespace="u", k=5, now=T + timedelta(hours=2), reinforce=False)
    assert [h["id"] for h in hits] == want["id"].to_list() and hits[0]["key"] == "shop"


def test_the_time_machine_follows_the_stores_floor_and_policy() -> None:
    pytest.importorskip("ipywidgets")
    s = _store()
    tm = mk.widgets.time_machine(s, "u", query="green tea")
    assert (tm.floor, tm.policy) == (0.0, mk.ForgetParams())
    s.decay = dataclasses.replace(s.decay, min_strength=0.3)
    s.forget_policy = mk.ForgetParams(min_strength=0.7)
    tm.refresh()  # the next slider move
    assert (tm.floor, tm.policy) == (0.3, mk.ForgetParams(min_strength=0.7))
    assert "retrieval floor 0.3" in tm.message.value and "forgetting floor 0.7" in tm.message.value
    given = mk.ForgetParams(min_strength=0.2)
    kept = mk.widgets.time_machine(s, "u", policy=given)
    s.forget_policy = mk.ForgetParams()
    assert kept.policy == given  # given: kept
    with pytest.raises(mk.ValidationError) as ei:
        mk.widgets.time_machine(s, "u", policy={"min_strength": 0.2})  # type: ignore[arg-type]
    assert ei.value.field == "policy"
