"""A scripted bilingual conversation through :class:`~memkit.agent.MemoryAgent`, for the demo,
the notebooks and the tests: two sessions a week apart, with a fake LLM, on simulated time.

Session 1 states two preferences and asks the agent to remember two facts (in Chinese and English);
filler is not stored; ``end_session`` promotes what matters to long-term memory. Session 2, a new
agent a week later, recalls the coffee preference, hears that it changed (the new value supersedes
the old one, which never enters a prompt again), and exercises every command in both languages:
show, remember, delete the last memory, forget.

What it teaches, turn by turn (the demo prints each turn with what it did to memory):

- admission: "好的，谢谢！" (OK, thanks!) is not stored; a stated preference is stored under a key
  (``preference.drink``), so a later preference on the same topic replaces it instead of piling up;
- sessions: a new :class:`~memkit.agent.MemoryAgent` a week later starts with an empty turn buffer,
  so whatever it knows about the user comes from the store;
- recall: the same question before and after "我现在改喝拿铁了" (I drink lattes now) gets two
  answers, and the old value never enters the second prompt;
- commands: show, remember, undo and forget are carried out on the store without calling the LLM.

The LLM is :func:`scripted_llm`, a rule table, so every run prints the same answers offline.

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
"""The namespace the conversation writes to, unless :func:`run_conversation` is given another."""
# (session, hours since the session began, user message); in English, session 1: "I like americano,
# no sugar", "...", "remember I'm allergic to peanuts", "...", "OK, thanks!"; session 2: "what do I
# usually drink?", "I drink lattes now", the question again, "...", "...", "undo that", "forget
# that I'm allergic to peanuts", "what do you remember about me?"
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
"""When each session begins, on the sample set's simulated clock (the demo never reads the wall clock)."""


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
    """One line on what the turn did to memory: the command it ran, or the admission decision
    (why, and where the message went: not stored, short-term, or long-term at session end with its
    key) followed by the memories recalled for the answer."""
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

    ``facts`` keys: ``recalled`` and ``recalled_after_change`` (the two answers to "what do I usually
    drink?"), ``old_in_context_after_change`` (whether the old drink was in the second prompt:
    it must not be), ``commands`` (``(op, message)`` of each command), ``drink`` (what
    ``store.read("preference.drink")`` returns at the end), ``active`` (the active memories' texts),
    plus the raw ``answers`` and ``contexts``. Without ``out`` the transcript is discarded.
    """
    out = out or io.StringIO()
    facts: dict[str, Any] = {"commands": []}
    llm = scripted_llm()
    agents: dict[int, MemoryAgent] = {}
    for session, hours, message in SCRIPT:
        if session not in agents:
            if agents:  # the previous session ends before the next begins
                _end_session(agents, max(agents), out)
            agents[session] = MemoryAgent(store, llm, namespace, requester, now=SESSION_START[session])
            out.write(f"   -- session {session} ({SESSION_START[session]:%Y-%m-%d}), a new agent\n")
        when: datetime = SESSION_START[session] + timedelta(hours=hours)
        reply = agents[session].chat(message, now=when)
        _record(facts, message, reply)
        # the answer's continuation lines are indented under "agent: "
        out.write(f"   user : {message}\n   agent: {reply.text.replace(chr(10), chr(10) + '          ')}\n")
        out.write(f"          ({_what(reply)})\n")
    last = agents[max(agents)]
    last.end_session(now=SESSION_START[max(agents)] + timedelta(hours=1))
    facts["recalled"], facts["recalled_after_change"] = facts["answers"]
    facts["old_in_context_after_change"] = "美式" in facts["contexts"][1]  # 美式: the americano
    facts["drink"] = store.read(
        "preference.drink", namespace=namespace, now=when + timedelta(hours=2)
    ).content
    facts["active"] = store.frame(namespace).filter(pl.col("status") == "active")["content"].to_list()
    return last, facts


def _end_session(agents: dict[int, MemoryAgent], session: int, out: TextIO) -> None:
    """End ``session`` an hour after it began and print what it promoted to long-term memory."""
    ended = agents[session].end_session(now=SESSION_START[session] + timedelta(hours=1))
    promoted = ended.promoted.filter(pl.col("promoted_to").is_not_null())["content"].to_list()
    out.write(f"   -- end of session {session}: promoted to long-term: {' | '.join(promoted)}\n")


def _record(facts: dict[str, Any], message: str, reply: Reply) -> None:
    """Note in ``facts`` what the tests check: each command run, and for the coffee question its
    answer and the memory section of its prompt (once before the change of drink, once after)."""
    if reply.command is not None:
        facts["commands"].append((reply.command.op, message))
    if message == "我平时喜欢喝什么？":
        facts.setdefault("answers", []).append(reply.text)
        facts.setdefault("contexts", []).append(reply.context.text)
