"""Memory commands: is a chat message a command about memory (remember, forget, undo, show)?

:func:`parse` recognises four intents, in Chinese and English, and returns a :class:`Command`, or
``None`` for ordinary text:

========== ============================================ ============================================
op         Chinese                                      English
========== ============================================ ============================================
remember   记住… · 帮我记一下… · 请记得…                 remember that … · please remember …
forget     忘掉… · 忘了我… · 不要记… · 别记住… · 把…忘了  forget (that/about) … · don't remember …
delete_last 删除刚才那条 · 删掉上一条 · 撤销            delete the last memory · undo that
show       你记得我什么 · 你都记得我哪些事               what do you remember / know about me
========== ============================================ ============================================

A command must *start* the sentence (after politeness such as 请 / 麻烦你 / please / can you), so
sentences that merely contain the words are not commands: 我忘了带钥匙, "I forgot my keys",
"Remember the Titans is a film". A question that asks to recall something ("do you remember the
movie we saw?", 记得我们上次去的那家店吗？) is *not* a command: it is an ordinary turn, answered by
recall (:func:`is_question` decides). ``show`` is only the question about the user as a whole
("what do you know about me"); a question about one topic ("what do you remember about my diet?")
is ordinary recall too. Thanks or "please" closing the message are not part of the payload
("forget that I like tea, thanks"), unless the word is what was said ("she never says please").
The patterns themselves are data, in :mod:`memkit.commands.patterns`.

>>> parse("记住我喜欢美式咖啡")
Command(op='remember', text='我喜欢美式咖啡', raw='记住我喜欢美式咖啡')
>>> parse("我忘了带钥匙") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ValidationError
from ..text import normalize
from . import patterns as _in

__all__ = ["COMMAND_OPS", "Command", "is_question", "parse"]

COMMAND_OPS = ("remember", "forget", "delete_last", "show")


@dataclass(frozen=True)
class Command:
    """A memory command found in a user message.

    ``op`` is one of :data:`COMMAND_OPS`; ``text`` is the payload (what to remember, what to forget;
    empty for ``delete_last`` and ``show``); ``raw`` is the message as written.
    """

    op: str
    text: str
    raw: str

    @property
    def query(self) -> str:
        """The payload read as a search query (what ``forget`` looks for)."""
        return self.text


def parse(text: str) -> Command | None:
    """The memory command in ``text``, or None for ordinary text.

    >>> parse("Please remember that my daughter is called Mia").text
    'my daughter is called Mia'
    >>> parse("删掉上一条").op, parse("What do you know about me?").op
    ('delete_last', 'show')
    >>> parse("Do you remember the movie we saw?") is None
    True
    """
    if not isinstance(text, str):
        raise ValidationError("text", f"must be a str, got {type(text).__name__}")
    norm = _in.norm(text)
    question = is_question(text)
    for op in _in.ORDER:
        if question and op in ("remember", "forget"):
            continue  # "记得…吗？" / "remember me?" asks to recall; it does not command
        if any(p.search(norm) for p in _in.COMPILED_NOT.get(op, ())):
            continue
        for pattern in _in.COMPILED[op]:
            m = pattern.search(norm)
            if m is None:
                continue
            payload = _polite_tail_off(m.groupdict().get("text") or "")
            if op == "forget":  # "我喜欢美式这件事吧" -> "我喜欢美式", unless nothing would be left
                payload = _in.PAYLOAD_TAIL.sub("", payload).strip() or payload
            return Command(op=op, text=payload, raw=text)
    return None


def _polite_tail_off(payload: str) -> str:
    """``payload`` without the thanks or "please" closing it (:data:`~memkit.commands.patterns.POLITE_TAIL`):
    after a comma always; after a space, or straight after a Chinese character, unless the word is what
    was said ("she never says please"); never when nothing else would be left."""
    m = _in.POLITE_TAIL.search(payload)
    if m is None or m.start() == 0:
        return payload
    head, sep = payload[: m.start()], m.group("sep") or ""
    if not sep.strip():  # no comma: a word boundary ("displease" keeps its end), and not what was said
        bare = not sep and (head[-1].isascii() or not m.group(0).startswith(_in.POLITE_ZH_BARE))
        if bare or _in.POLITE_SAID.search(head):
            return payload
    return head.rstrip(_in.TRAIL) or payload


_QUESTION, _REQUEST = re.compile(_in.QUESTION, re.ASCII), re.compile(_in.REQUEST, re.ASCII)


def is_question(text: str) -> bool:
    """Does ``text`` ask something (a question mark, 吗/呢, a question word first) rather than request
    something ("can you remember …" is a request)? A question is recalled, never a command.

    >>> is_question("记得我们上次去的那家店吗？"), is_question("Can you remember that I'm vegan")
    (True, False)
    """
    if not isinstance(text, str):
        raise ValidationError("text", f"must be a str, got {type(text).__name__}")
    raw = normalize(text, casefold=False).strip()
    return _QUESTION.search(raw) is not None and _REQUEST.search(raw) is None
