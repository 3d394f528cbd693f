"""Hardening of memkit.integrations.mcp: what an adversarial audit found.

- ``build_server`` refuses at start what would make every tool call fail: a naive or broken clock, a
  requester the store refuses (one that holds a secret).
- ``show_memories`` and ``list_conflicts`` show the store as of the server's clock, as
  ``search_memories`` does: nothing written after it, nothing expired (or not yet valid) by then.
- ``add_memory`` and ``update_memory`` refuse another writer's private key alike, without its id.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from conftest import NOW, assert_unchanged, snapshot

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.types import CallToolResult  # noqa: E402

import memkit as mk  # noqa: E402
from memkit.integrations.mcp import build_server  # noqa: E402

T = NOW
DAY = timedelta(days=1)


def call(server: Any, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
    async def go() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool(tool, arguments or {})

    return anyio.run(go)


def ok(server: Any, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    result = call(server, tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error(server: Any, tool: str, arguments: dict[str, Any] | None = None) -> str:
    result = call(server, tool, arguments)
    assert result.is_error
    return result.content[0].text


# ------------------------------------------------------------------------------- configuration
def _raises() -> datetime:
    raise RuntimeError("no clock here")


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        (
            {"now": lambda: datetime(2026, 1, 1)},
            "^now: must be timezone-aware",
        ),  # what `--now 2026-01-01` gave
        ({"now": lambda: "2026-01-01"}, "^now: must be a datetime"),
        ({"now": lambda when: T}, "^now: calling it raised TypeError"),
        ({"now": _raises}, "^now: calling it raised RuntimeError: no clock here"),
        (
            {"requester": "sk-abcdefghijklmnopqrstuvwx"},
            "^requester: holds something that looks like a secret",
        ),
        ({"requester": " assistant "}, "^requester: must be non-empty"),
    ],
)
def test_build_server_refuses_what_every_call_would_refuse(
    store: mk.MemoryStore, kwargs: dict[str, Any], says: str
) -> None:
    before = snapshot(store)
    with pytest.raises(mk.ValidationError, match=says) as e:
        build_server(store, namespace="u", **kwargs)
    assert "abcdefghijklmnopqrstuvwx" not in str(e.value)  # the secret is not repeated
    assert_unchanged(store, before)


def test_an_aware_clock_in_any_zone_and_a_pii_requester_are_served(store: mk.MemoryStore) -> None:
    beijing = timezone(timedelta(hours=8))
    server = build_server(
        store, namespace="u", requester="alice@example.com", now=lambda: T.astimezone(beijing)
    )
    assert ok(server, "add_memory", {"content": "User likes tea"})["status"] == "active"
    assert ok(server, "show_memories")["total"] == 1


# ------------------------------------------------------------------------------- the server's clock
def _timeline(store: mk.MemoryStore) -> dict[str, str]:
    """A fact written at T-2d and replaced at T+1d, a memory that expired at T-1d, one valid only
    from T+1d, and a conflict raised at T+10d."""
    ids = {}
    ids["old_city"] = store.add("User lives in Hangzhou", namespace="u", requester="assistant", key="city",
                                now=T - 2 * DAY).id  # fmt: skip
    ids["new_city"] = store.add("User lives in Shanghai", namespace="u", requester="assistant", key="city",
                                conflict_policy="supersede", now=T + DAY).id  # fmt: skip
    ids["expired"] = store.add("User is in Paris this week", namespace="u", requester="assistant",
                               now=T - 5 * DAY, valid_until=T - DAY).id  # fmt: skip
    ids["future"] = store.add("User starts the new job", namespace="u", requester="assistant",
                              now=T - DAY, valid_from=T + DAY).id  # fmt: skip
    ids["pending"] = store.add("User lives in Beijing", namespace="u", requester="crm", key="city",
                               now=T + 10 * DAY).id  # fmt: skip
    return ids


def test_show_memories_is_the_store_as_of_the_clock(store: mk.MemoryStore) -> None:
    ids = _timeline(store)
    at_t = ok(build_server(store, namespace="u", requester="assistant", now=lambda: T), "show_memories")
    # the old city was current at T; the new one, the conflict and the expired one are not shown
    assert [(m["id"], m["status"]) for m in at_t["memories"]] == [(ids["old_city"], "active")]
    assert at_t["total"] == 1
    later = ok(build_server(store, namespace="u", requester="assistant", now=lambda: T + 20 * DAY),
               "show_memories")  # fmt: skip
    assert {m["id"]: m["status"] for m in later["memories"]} == {
        ids["pending"]: "conflict", ids["future"]: "active", ids["new_city"]: "active",
        ids["old_city"]: "superseded",
    }  # fmt: skip
    search = ok(build_server(store, namespace="u", requester="assistant", now=lambda: T), "search_memories",
                {"query": "User lives Paris job Beijing Shanghai", "k": 10})  # fmt: skip
    hidden = {ids["new_city"], ids["expired"], ids["future"], ids["pending"]}
    assert not hidden & {h["id"] for h in search["hits"]}  # what search at T leaves out too


def test_list_conflicts_is_the_store_as_of_the_clock(store: mk.MemoryStore) -> None:
    ids = _timeline(store)
    assert ok(build_server(store, namespace="u", now=lambda: T), "list_conflicts") == {"conflicts": []}
    (conflict,) = ok(build_server(store, namespace="u", now=lambda: T + 20 * DAY), "list_conflicts")[
        "conflicts"
    ]
    assert [(v["id"], v["status"]) for v in conflict["versions"]] == [
        (ids["new_city"], "active"), (ids["pending"], "conflict"),
    ]  # fmt: skip


def test_without_a_clock_expired_memories_are_not_shown(store: mk.MemoryStore) -> None:
    wall = datetime.now(UTC)
    store.add("User is in Paris this week", namespace="u", now=wall - 5 * DAY, valid_until=wall - DAY)
    kept = store.add("User likes tea", namespace="u", now=wall - 5 * DAY)
    shown = ok(build_server(store, namespace="u"), "show_memories")
    assert [m["id"] for m in shown["memories"]] == [kept.id] and shown["total"] == 1


# ------------------------------------------------------------------------------- another's private key
def test_a_private_key_of_another_writer_is_refused_alike_without_its_id(store: mk.MemoryStore) -> None:
    private = store.add("Bob's plan", namespace="u", requester="bob", key="plan", access="private", now=T)
    server = build_server(store, namespace="u", requester="assistant", now=lambda: T)
    before = snapshot(store)
    added = error(server, "add_memory", {"content": "My plan", "key": "plan"})
    updated = error(server, "update_memory", {"content": "My plan", "key": "plan"})
    assert added.endswith("AccessDenied: 'assistant' may not write key 'plan' (another writer's value)")
    assert updated.endswith("AccessDenied: 'assistant' may not write key 'plan' (another writer's value)")
    assert private.id not in added + updated
    count, frame, audit = snapshot(store)  # nothing written; the store audited each denial
    assert (
        count == before[0]
        and frame.equals(before[1])
        and audit["op"][before[2].height :].to_list() == ["deny", "deny"]
    )
    assert "NotFound: no memory with key 'plann'" in error(
        server, "update_memory", {"content": "x", "key": "plann"}
    )
