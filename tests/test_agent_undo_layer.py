"""Undo after end_session brings the replaced value back in long_term also when both values were said
in one session (review h134 item 5): before, it came back as the short-term original and forget
dropped it, leaving the user with no value at all."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import memkit as mk
from memkit.agent import EchoLLM, MemoryAgent


@pytest.mark.parametrize(
    ("old", "new"), [("I live in Boston", "I moved to Denver"), ("I prefer tea", "I prefer coffee")]
)
def test_undo_after_end_session_restores_in_long_term(
    store: mk.MemoryStore, now: datetime, old: str, new: str
) -> None:
    agent = MemoryAgent(store, EchoLLM(), "u", "assistant", now=now)
    agent.chat(old)
    agent.chat(new, now=now + timedelta(minutes=1))
    agent.end_session(now=now + timedelta(minutes=2))
    r = agent.chat("undo that", now=now + timedelta(minutes=3))
    assert r.text.endswith(f"(back to: {old})")
    key = mk.commands.admit(old).key
    back = store.read(key, namespace="u", now=now + timedelta(minutes=4))
    assert back.content == old and back.layer == "long_term"
    store.forget(now=now + timedelta(days=3))
    later = store.read(key, namespace="u", now=now + timedelta(days=3))
    assert later is not None and later.content == old
