"""memkit/store/write.py: the public checks a write makes, without the write — ``check_names`` (a
namespace and a requester, judged as every write judges them -> the requester's identity) and
``check_key_write`` (whether a keyed write would be refused, audited as that refusal) — and the
agent, the MCP server, the LangGraph store and the evaluation calling them instead of the store's
private methods."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
RULES = [  # (the store's guard, a secret it refuses)
    pytest.param(mk.GuardParams(), "AKIAIOSFODNN7EXAMPLE", id="built-in"),
    pytest.param(mk.GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",)), "ACME-123456", id="extra"),
]


def test_check_names_returns_the_requesters_identity() -> None:
    with mk.MemoryStore() as s:
        assert s.check_names(namespace="user_87", requester="assistant") == "assistant"
        assert s.check_names(requester="alice@example.com") == mk.guard.identity("alice@example.com")
        assert s.check_names(requester="alice@example.com").startswith("[EMAIL:")
        assert s.check_names(namespace="user_87") is None  # the operator
        assert s.check_names() is None
        # the identity is the one a write stores: alice's own private memory is hers to read
        m = s.add("Alice's plan", namespace="u", requester="alice@example.com", access="private", now=NOW)
        assert m.created_by == s.check_names(requester="alice@example.com")
        assert s.audit().height == 1  # the checks logged nothing (the add did)


@pytest.mark.parametrize(("guard", "secret"), RULES)
def test_check_names_refuses_what_a_write_refuses(guard: mk.GuardParams, secret: str) -> None:
    with mk.MemoryStore(guard=guard) as s:
        cases = {
            "namespace": [{"namespace": f"team-{secret}"}, {"namespace": "[SECRET:1f2e3d4c]"},
                          {"namespace": " u"}, {"namespace": ""}, {"namespace": 7}],
            "requester": [{"requester": f"bot-{secret}"}, {"requester": "bot\n"}, {"requester": 7},
                          {"namespace": "u", "requester": f"bot-{secret}"}],
        }  # fmt: skip
        for field, calls in cases.items():
            for kw in calls:
                with pytest.raises(mk.ValidationError, match=f"^{field}: "):
                    s.check_names(**kw)
                write = {"namespace": "u", **kw}
                with pytest.raises(mk.ValidationError, match=f"^{field}: "):  # as the write itself
                    s.add("hello", **write, now=NOW)
        # both bad: the namespace is named first, as the agent and the MCP server always did
        with pytest.raises(mk.ValidationError, match="^namespace: "):
            s.check_names(namespace=f"team-{secret}", requester=f"bot-{secret}")
        assert (s.count(), s.audit().height) == (0, 0)


def test_check_key_write_refuses_another_writers_private_value_audited() -> None:
    with mk.MemoryStore() as s:
        s.add("Bob's plan", namespace="u", requester="bob", key="plan", access="private", now=NOW)
        s.add("Shared office", namespace="u", requester="bob", key="office", now=NOW)
        before = s.count()
        with pytest.raises(mk.AccessDenied):
            s.check_key_write("plan", namespace="u", requester="alice", now=NOW)
        denied = s.audit(op="deny")
        assert denied.height == 1 and denied["requester"].to_list() == ["alice"]
        with pytest.raises(mk.AccessDenied):  # as add refuses it (and logs it alike)
            s.add("Alice's plan", namespace="u", requester="alice", key="plan", now=NOW)
        assert s.audit(op="deny").height == 2
        # allowed: nothing raised, nothing written or logged
        events = s.audit().height
        s.check_key_write("plan", namespace="u", requester="bob", now=NOW)  # its writer
        s.check_key_write("plan", namespace="u", now=NOW)  # the operator
        s.check_key_write("office", namespace="u", requester="alice", now=NOW)  # a public value
        s.check_key_write("no.such.key", namespace="u", requester="alice", now=NOW)
        assert (s.count(), s.audit().height) == (before, events)
        with pytest.raises(mk.ValidationError, match="^requester"):
            s.check_key_write("plan", namespace="u", requester=" alice", now=NOW)


@pytest.mark.parametrize(("guard", "secret"), RULES)
def test_integrations_refuse_at_start_through_check_names(guard: mk.GuardParams, secret: str) -> None:
    with mk.MemoryStore(guard=guard) as s:
        with pytest.raises(mk.ValidationError, match="^namespace: "):
            mk.MemoryAgent(s, lambda p: "ok", namespace=f"team-{secret}", requester=f"bot-{secret}")
        with pytest.raises(mk.ValidationError, match="^requester: "):
            mk.MemoryAgent(s, lambda p: "ok", namespace="u", requester=None)  # type: ignore[arg-type]
        with pytest.raises(mk.ValidationError, match="^requester: "):
            mk.MemoryAgent(s, lambda p: "ok", namespace="u", requester=f"bot-{secret}")
        queries = pl.DataFrame({"query_id": ["q"], "question": ["plan"], "relevant": [["p"]],
                                "conversation": ["u"]})  # fmt: skip
        with pytest.raises(mk.ValidationError, match="^requester: "):
            mk.evaluate.evaluate(s, queries, requester=f"bot-{secret}", now=NOW)


def test_evaluate_ranks_as_the_requesters_identity() -> None:
    """An e-mail requester is its pseudonym, as in a search: its own private memory is found."""
    with mk.MemoryStore() as s:
        who = "alice@example.com"
        s.add("alice's plan is tulips", namespace="u", key="p", requester=who, access="private", now=NOW)
        queries = pl.DataFrame({"query_id": ["q"], "question": ["secret plan"], "relevant": [["p"]],
                                "conversation": ["u"]})  # fmt: skip
        got = mk.evaluate.evaluate(s, queries, k=1, now=NOW, per_query=True, requester=who)
        assert got["recall@1"].to_list() == [1.0]
        blind = mk.evaluate.evaluate(s, queries, k=1, now=NOW, per_query=True, requester="bob@example.com")
        assert blind["recall@1"].to_list() == [0.0]


def test_what_acts_through_the_store_calls_no_private_method_of_it() -> None:
    """The agent, the integrations and the evaluation use the store's public surface; the LangGraph
    store's batch still holds ``store._lock``: several calls, reads and writes, with the store alone has
    no public form (``transaction()`` is not it: its searches miss the batch's own puts until the commit,
    and a read-only store refuses it)."""
    root = Path(mk.__file__).parent
    private = re.compile(r"\b(?:store|source|self\.store)\._(?!_)(\w+)")
    found = {
        (str(p.relative_to(root)), m.group(1))
        for sub in ("agent", "integrations", "evaluate")
        for p in sorted((root / sub).glob("*.py"))
        for m in private.finditer(p.read_text(encoding="utf-8"))
    }
    assert found <= {("integrations/langgraph.py", "lock")}, found
