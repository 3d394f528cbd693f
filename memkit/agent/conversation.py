"""A scripted bilingual conversation through :class:`~memkit.agent.MemoryAgent`, for the demo,
the notebooks and the tests: two sessions a week apart, with a fake LLM, on simulated time.

Session 1 states two preferences and asks the agent to remember two facts (in Chinese and English);
filler is not stored; ``end_session`` promotes what matters to long-term memory. Session 2, a new
agent a week later, recalls the coffee preference, hears that it changed (the new value supersedes
the old one, which never enters a prompt again), and exercises every command in both languages:
show, remember, delete the last memory, forget.

>>> from memkit.store import MemoryStore
>>> with MemoryStore() as store:
...     agent, facts = run_conversation(store)
>>> facts["recalled"], facts["recalled_after_change"]
('你喜欢喝美式咖啡，不加糖。', '你现在喜欢喝拿铁。')
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from typing import Any, TextIO

import polars as pl

from ..portable.sample import SAMPLE_NOW
from .llms import ScriptedLLM
from .loop import MemoryAgent, Reply

__all__ = ["NAMESPACE", "SCRIPT", "run_conversation", "scripted_llm"]

NAMESPACE = "demo_chat"
# (session, hours since the session began, user message)
SCRIPT: tuple[tuple[int, float, str], ...] = (
    (1, 0.0, "我喜欢喝美式咖啡，不加糖"),
    (1, 0.1, "I prefer window seats on flights"),
    (1, 0.2, "记住我对花生过敏"),
    (1, 0.3, "Please remember that my daughter is called Mia"),
    (1, 0.4, "好的，谢谢！"),
    (2, 0.0, "我平时喜欢喝什么？"),
    (2, 0.1, "我现在改喝拿铁了"),
    (2, 0.2, "我平时喜欢喝什么？"),
    (2, 0.3, "What do you know about me?"),
    (2, 0.4, "remember that my locker number is 42"),
    (2, 0.5, "undo that"),
    (2, 0.6, "忘了我对花生过敏这件事吧"),
    (2, 0.7, "你都记得我哪些事？"),
)
SESSION_START = {1: SAMPLE_NOW, 2: SAMPLE_NOW + timedelta(days=7)}


def scripted_llm() -> ScriptedLLM:
    """The demo's fake model. It answers the coffee question from the *memory section* only (a
    memory line looks like ``- [id] text``; the recent-turn lines start with ``User:``), so the
    answer changes exactly when the recalled memory does."""
    question = r"## User\n我平时喜欢喝什么"
    return ScriptedLLM(
        rules=[
            (rf"(?s)\] 我现在改喝拿铁了.*{question}", "你现在喜欢喝拿铁。"),
            (rf"(?s)\] 我喜欢喝美式咖啡.*{question}", "你喜欢喝美式咖啡，不加糖。"),
            (question, "我还不知道你喜欢喝什么。"),
            (r"## User\n[^\n]*[\u4e00-\u9fff]", "好的，明白了。"),
        ],
        default="Got it.",
    )


def _what(reply: Reply) -> str:
    """One line on what the turn did to memory."""
    if reply.command is not None:
        return f"command {reply.command.op}"
    a = reply.admission
    layer = "short_term now, long_term at session end" if a and a.layer == "long_term" else "short_term"
    kept = "not stored" if a is None or not a.store else layer + (f", key {a.key}" if a.key else "")
    recalled = reply.sources["content"].to_list()
    return f"{a.reason if a else ''} -> {kept}" + (f"; recalled: {' | '.join(recalled)}" if recalled else "")


def run_conversation(
    store: Any, *, namespace: str = NAMESPACE, out: TextIO | None = None, requester: str = "assistant"
) -> tuple[MemoryAgent, dict[str, Any]]:
    """Play :data:`SCRIPT` into ``store`` (two agents, one per session) and print each turn to ``out``.

    Returns the second session's agent (its ``store`` and ``namespace`` hold the memories) and
    facts of the run for tests: the two answers to the coffee question, the commands seen, etc.
    """
    out = out or io.StringIO()
    facts: dict[str, Any] = {"commands": []}
    llm = scripted_llm()
    agents: dict[int, MemoryAgent] = {}
    for session, hours, message in SCRIPT:
        if session not in agents:
            if agents:  # the previous session ends before the next begins
                prev = max(agents)
                ended = agents[prev].end_session(now=SESSION_START[prev] + timedelta(hours=1))
                promoted = ended.promoted.filter(pl.col("promoted_to").is_not_null())["content"].to_list()
                out.write(f"   -- end of session {prev}: promoted to long-term: {' | '.join(promoted)}\n")
            agents[session] = MemoryAgent(store, llm, namespace, requester, now=SESSION_START[session])
            out.write(f"   -- session {session} ({SESSION_START[session]:%Y-%m-%d}), a new agent\n")
        when: datetime = SESSION_START[session] + timedelta(hours=hours)
        reply = agents[session].chat(message, now=when)
        if reply.command is not None:
            facts["commands"].append((reply.command.op, message))
        if message == "我平时喜欢喝什么？":
            facts.setdefault("answers", []).append(reply.text)
            facts.setdefault("contexts", []).append(reply.context.text)
        out.write(f"   user : {message}\n   agent: {reply.text.replace(chr(10), chr(10) + '          ')}\n")
        out.write(f"          ({_what(reply)})\n")
    last = agents[max(agents)]
    last.end_session(now=SESSION_START[max(agents)] + timedelta(hours=1))
    facts["recalled"], facts["recalled_after_change"] = facts["answers"]
    facts["old_in_context_after_change"] = "美式" in facts["contexts"][1]
    facts["drink"] = store.read(
        "preference.drink", namespace=namespace, now=when + timedelta(hours=2)
    ).content
    facts["active"] = store.frame(namespace).filter(pl.col("status") == "active")["content"].to_list()
    return last, facts
