"""memkit.integrations.mcp_errors: a tool's error result, and the server's log, never repeat a secret or
PII the model passed in an argument (every tool's error paths), a refused write names the rule and the
argument, not the text; and the ``importance`` description says what the decay rules do. Runs on
DuckDB and on PostgreSQL."""

from __future__ import annotations

import logging
import math
from datetime import datetime, timedelta
from typing import Any

import pytest
from conftest import NOW, assert_unchanged, snapshot

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.types import CallToolResult  # noqa: E402

import memkit as mk  # noqa: E402
from memkit.integrations.mcp import build_server  # noqa: E402
from memkit.integrations.mcp_errors import HIDDEN_NAME  # noqa: E402

SECRETS = {  # what a model may paste into an argument, and the guard's code for it
    "sk-abcdefghijklmnopqrstuvwx": "MG201",
    "AKIAIOSFODNN7EXAMPLE": "MG201",
    "13812345678": "MG102",
    "alice@example.com": "MG101",
}
PSEUDONYMS = {"MG102": "[PHONE:", "MG101": "[EMAIL:"}  # a PII key as the store names it (not the PII)


class Clock:
    """The server's clock: a test moves it by assigning ``now`` (never the wall clock)."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def server(store: mk.MemoryStore, clock: Clock) -> Any:
    """Tools on namespace ``u`` as ``assistant``; ``web`` wrote a protected fact and a public one there."""
    store.add("User lives in Hangzhou", namespace="u", requester="web", key="user.city", access="protected",
              now=NOW)  # fmt: skip
    store.add("User likes tea", namespace="u", requester="web", key="user.tea", now=NOW)
    return build_server(store, namespace="u", requester="assistant", now=clock)


def call(server: Any, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    async def go() -> CallToolResult:
        async with Client(server, mode="legacy") as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(go)


def error(server: Any, tool: str, arguments: dict[str, Any]) -> str:
    result = call(server, tool, arguments)
    assert result.is_error
    return result.content[0].text


# every tool's error paths, with the pasted value in each string argument it takes (and in the
# place of an argument's name, or of a value of the wrong type)
CALLS = [  # (tool, its arguments holding the value, what the message says instead, deny events)
    ("get_memory", lambda v: {"id": v}, "[id withheld: {code}]", 0),  # NotFound
    ("delete_memory", lambda v: {"id": v}, "[id withheld: {code}]", 0),
    ("update_memory", lambda v: {"key": v, "content": "User drinks tea"}, "[key withheld: {code}]", 0),
    ("resolve_conflict", lambda v: {"key": v, "keep": "x"}, "[key withheld: {code}]", 0),
    ("resolve_conflict", lambda v: {"key": "user.city", "keep": v}, "[keep withheld: {code}]", 0),
    ("add_memory", lambda v: {"content": "User likes tea", "importance": v}, "importance", 0),  # the schema
    ("add_memory", lambda v: {"content": "User likes tea", "kind": v}, "kind", 0),
    ("add_memory", lambda v: {"content": "User likes tea", "tags": v}, "tags", 0),
    ("add_memory", lambda v: {"content": "User likes tea", v: 1}, HIDDEN_NAME, 0),
    ("add_memory", lambda v: {"content": "User likes tea", "namespace": v}, "namespace", 0),
    ("search_memories", lambda v: {"query": "tea", "k": v}, "k", 0),
    ("search_memories", lambda v: {"query": v + "\x00"}, "ValidationError: query: contains a NUL", 0),
    ("show_memories", lambda v: {"limit": v}, "limit", 0),
    ("forget", lambda v: {"dry_run": v}, "dry_run", 0),
    ("list_conflicts", lambda v: {"x": v}, "Extra inputs are not permitted", 0),
    ("update_memory", lambda v: {"key": "user.city", "content": f"User is {v}"}, "AccessDenied", 1),
]


@pytest.mark.parametrize("value", list(SECRETS))
@pytest.mark.parametrize(("tool", "arguments", "says", "denied"), CALLS)
def test_an_error_never_repeats_a_secret_or_pii_of_the_arguments(
    server: Any, store: mk.MemoryStore, caplog: pytest.LogCaptureFixture, value: str, tool: str,
    arguments: Any, says: str, denied: int,
) -> None:  # fmt: skip
    """The message quoted the argument (``NotFound: no memory with id 'sk-…'``, a schema error's
    ``input_value='sk-…'``), and the SDK logs every failed call's message."""
    caplog.set_level(logging.DEBUG)
    before = snapshot(store)
    message = error(server, tool, arguments(value))
    shown = says.format(code=SECRETS[value])  # what failed, and which argument ...
    pseudonym = PSEUDONYMS.get(SECRETS[value], "never")  # ... or, for a key, the store's pseudonym of it
    assert shown in message or (shown.startswith("[key") and f"key '{pseudonym}" in message)
    assert value not in message and value not in caplog.text
    assert_unchanged(store, before, denied=denied)


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"content": "my key is sk-abcdefghijklmnopqrstuvwx"}, "MG201 (API key) in content"),
        ({"content": "User likes tea", "key": "AKIAIOSFODNN7EXAMPLE"}, "MG201 (API key) in key"),
        (
            {"content": "User likes tea", "tags": ["ok", "sk-abcdefghijklmnopqrstuvwx"]},
            "MG201 (API key) in tags",
        ),
    ],
)
def test_a_refused_write_names_the_rule_and_the_argument_not_the_text(
    server: Any, store: mk.MemoryStore, caplog: pytest.LogCaptureFixture, arguments: dict, says: str
) -> None:
    caplog.set_level(logging.DEBUG)
    before = snapshot(store)
    message = error(server, "add_memory", arguments)
    assert message.endswith(f"WriteRefused: write refused by the guard: {says}")
    assert "abcdefghijklmnop" not in message + caplog.text and "IOSFODNN7" not in message + caplog.text
    assert_unchanged(store, before, denied=1)
    if "key" not in arguments:  # update_memory takes an existing key: the same refusal, said alike
        message = error(server, "update_memory", {"key": "user.tea", **arguments})
        assert message.endswith(f"WriteRefused: write refused by the guard: {says}")


def test_an_argument_without_a_secret_is_still_quoted(server: Any) -> None:
    """Only what the guard flags is withheld: the model still reads which id was not found."""
    assert error(server, "get_memory", {"id": "no-such-id"}).endswith(
        "NotFound: no memory with id 'no-such-id' in namespace 'u'"
    )
    assert "namespace\n" in error(server, "add_memory", {"content": "x", "namespace": "other"})


def test_the_importance_description_says_what_the_decay_rules_do(server: Any, clock: Clock) -> None:
    """It said "below 0.3 a memory fades within hours"; one at the forgetting floor is forgotten at once."""

    async def schema() -> dict[str, Any]:
        async with Client(server, mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools["add_memory"].input_schema["properties"]["importance"]

    said = anyio.run(schema)["description"]
    assert (
        "below 0.3 a memory is short-term: forgotten within about 5 hours (at 0.05 or less, at once)" in said
    )
    # short-term (2 h half-life), forgotten below strength 0.05: after 2 log2(importance / 0.05) hours
    floor = mk.ForgetParams().min_strength
    assert float(mk.decay.hours_until(floor, 0.3, 2.0)) == pytest.approx(2 * math.log2(6))  # 5.17 h
    ids = {}
    for importance in (0.05, 0.29, 0.3):
        m = call(server, "add_memory", {"content": f"User said hi ({importance})", "importance": importance})
        ids[importance] = m.structured_content["id"]

    def forgotten(hours: float) -> set[float]:
        clock.now = NOW + timedelta(hours=hours)
        plan = call(server, "forget", {"dry_run": True}).structured_content["forgotten"]
        return {i for i, memory_id in ids.items() if memory_id in {f["id"] for f in plan}}

    assert forgotten(1 / 60) == {0.05}  # at once
    assert forgotten(5.0) == {0.05}  # 0.29: after 2 log2(5.8) = 5.07 h
    assert forgotten(5.1) == {0.05, 0.29}
    assert forgotten(24 * 30) == {0.05, 0.29}  # 0.3 is long-term (90-day half-life)


@pytest.mark.parametrize("value", [*SECRETS, "drop_database"])
def test_an_unknown_tool_is_refused_without_repeating_its_name(
    server: Any, store: mk.MemoryStore, caplog: pytest.LogCaptureFixture, value: str
) -> None:
    """h132 #5: the SDK answered (and logged) ``Unknown tool: <name>``, the name as the client sent it."""
    caplog.set_level(logging.DEBUG)
    before = snapshot(store)
    message = error(server, value, {"content": "x"})
    assert message.startswith("Unknown tool:") and "add_memory" in message  # the names it has
    assert value not in message and value not in caplog.text
    assert_unchanged(store, before)
    assert not call(server, "show_memories", {}).is_error  # it keeps serving
