"""Deterministic stand-ins for an LLM, so demos, lessons and tests run offline.

Re-exported by :mod:`memkit.agent` (``mk.agent.ScriptedLLM``, ``mk.agent.EchoLLM``). A
:class:`~memkit.agent.MemoryAgent` takes any callable ``str -> str``; these are two such callables.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

from ..errors import MemkitError, ValidationError

__all__ = ["EchoLLM", "ScriptedLLM"]


class ScriptedLLM:
    """A deterministic fake LLM. ``answers`` are replayed in order; ``rules`` (``(regex, answer)``
    pairs, first match on the prompt wins) answer first when given, ``default`` when nothing is
    left. Every prompt received is kept in ``prompts``.

    >>> llm = ScriptedLLM(["first", "second"], rules=[(r"咖啡", "coffee!")])
    >>> llm("hi"), llm("我喜欢咖啡"), llm("hello"), len(llm.prompts)
    ('first', 'coffee!', 'second', 3)
    """

    def __init__(
        self,
        answers: Sequence[str] = (),
        *,
        rules: Sequence[tuple[str, str]] = (),
        default: str | None = None,
    ) -> None:
        """``answers`` are replayed in order; ``rules`` (regex, answer) are tried first on each prompt;
        ``default`` answers when no rule matches and the script is used up (None: raise)."""
        if isinstance(answers, str) or not all(isinstance(a, str) for a in answers):
            raise ValidationError("answers", "must be a sequence of str")
        try:
            self.rules = [(re.compile(p), a) for p, a in rules]
        except (TypeError, ValueError, re.error) as e:
            raise ValidationError("rules", f"must be (regex, answer) pairs: {e}") from None
        if not all(isinstance(a, str) for _, a in self.rules):
            raise ValidationError("rules", "answers must be str")
        if default is not None and not isinstance(default, str):
            raise ValidationError("default", f"must be a str or None, got {type(default).__name__}")
        self._answers = deque(answers)
        self.default = default
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        """Answer ``prompt``: the first matching rule, else the next scripted answer, else the default."""
        self.prompts.append(prompt)
        for pattern, answer in self.rules:
            if pattern.search(prompt):
                return answer
        if self._answers:
            return self._answers.popleft()
        if self.default is not None:
            return self.default
        raise MemkitError(f"ScriptedLLM has no answer left for prompt #{len(self.prompts)}")


class EchoLLM:
    """A fake LLM that answers with the memory section of its prompt (``(no memories)`` if empty):
    what the model would have been told. Handy to see recall at work."""

    def __call__(self, prompt: str) -> str:
        """The text between ``## Memories`` and the next section of the prompt."""
        m = re.search(r"## Memories\n(.*?)(?:\n## |\Z)", prompt, re.S)
        text = m.group(1).strip() if m else ""
        return text or "(no memories)"
