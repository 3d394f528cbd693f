"""An agent loop with memory, and the pieces it is made of.

- :mod:`~memkit.agent.loop` — :class:`MemoryAgent`: ``chat(message)`` recalls, builds a prompt,
  asks the LLM, runs memory commands and admits what is worth keeping;
- :mod:`~memkit.agent.context` — the context builder: recalled memories -> the prompt's memory section;
- :mod:`~memkit.agent.actions` — what a memory command (remember, forget, undo, show) does to the store;
- :mod:`~memkit.agent.llms` — deterministic stand-ins for a model (:class:`ScriptedLLM`, :class:`EchoLLM`);
- :mod:`~memkit.agent.conversation` — the scripted demo conversation used by the demo and lessons;
- :mod:`~memkit.agent.tour` — the demo's sections that run that conversation, move it between
  stores and show the guard (the demo's own helpers: imported by path, not re-exported here).

Any ``str -> str`` callable is an LLM here, so a real model plugs in without an adapter.
"""

from __future__ import annotations

from .context import Context, build_context
from .llms import EchoLLM, ScriptedLLM
from .loop import PROMPT_HEADER as PROMPT_HEADER  # the old mk.agent name, kept
from .loop import MemoryAgent, Reply, SessionEnd

__all__ = ["Context", "EchoLLM", "MemoryAgent", "Reply", "ScriptedLLM", "SessionEnd", "build_context"]
