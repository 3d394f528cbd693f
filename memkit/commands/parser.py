"""Memory commands: is a chat message a command about memory (remember, forget, undo, show)?

:func:`parse` recognises four intents, in Chinese and English, and returns a :class:`Command`, or
``None`` for ordinary text:

========== ============================================ ============================================
op         Chinese                                      English
========== ============================================ ============================================
remember   记住… · 帮我记一下… · 请记得… · 别忘了我…      remember that … · please remember …
forget     忘掉… · 忘了我… · 不要记… · 别记住… · 把…忘了  forget (that/about) … · don't remember …
delete_last 删除刚才那条 · 删掉上一条 · 撤销 · 这条别记了 delete the last memory · undo that
show       你记得我什么 · 你都记得我哪些事               what do you remember / know about me
========== ============================================ ============================================

A command must *start* the sentence (after politeness such as 请 / 麻烦你 / please / can you), so
sentences that merely contain the words are not commands: 我忘了带钥匙, "I forgot my keys",
"Remember the Titans is a film". A question that asks to recall something ("do you remember the
movie we saw?", 记得我们上次去的那家店吗？) is *not* a command: it is an ordinary turn, answered by
recall (:func:`is_question` decides). ``show`` is only the question about the user as a whole
("what do you know about me"); a question about one topic ("what do you remember about my diet?")
is ordinary recall too. Thanks or "please" closing the message are no part of the command (撤销，谢谢
undoes: :mod:`memkit.commands.courtesy`) nor of its payload ("forget that I like tea, thanks"), unless
the word is what was said ("she never says please"); nor is a closing particle (记住我住在杭州吧).
The patterns themselves are data, in :mod:`memkit.commands.patterns`. They are matched on the
normalized text (:func:`~memkit.commands.patterns.norm`), but the payload is the user's own words: the
same span of the message as written (full-width letters, 中文标点, ², ① kept), without the spaces
around it and the punctuation ending the message.

>>> parse("记住我喜欢美式咖啡")
Command(op='remember', text='我喜欢美式咖啡', raw='记住我喜欢美式咖啡')
>>> parse("我忘了带钥匙") is None
True
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..errors import ValidationError
from ..text import INVISIBLE, normalize
from . import patterns as _in
from .courtesy import core, particle_off

__all__ = ["COMMAND_OPS", "Command", "is_question", "parse"]

COMMAND_OPS = ("remember", "forget", "delete_last", "show")


@dataclass(frozen=True)
class Command:
    """A memory command found in a user message.

    ``op`` is one of :data:`COMMAND_OPS`; ``text`` is the payload (what to remember, what to forget;
    empty for ``delete_last`` and ``show``), as written in ``raw``, the message.
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
    cut = core(norm)  # matched without the courtesy closing it: 撤销，谢谢 is 撤销 (a prefix of norm)
    question = is_question(text)
    ops = [op for op in _in.ORDER if not (question and op in ("remember", "forget"))]  # 记得…吗？ recalls
    ops = [op for op in ops if not any(p.search(cut) for p in _in.COMPILED_NOT.get(op, ()))]
    # the whole text when no command is left without the courtesy: then it was the payload ("forget thanks")
    for on in (cut, norm) if cut != norm else (cut,):
        for op in ops:
            if on is norm and any(p.search(norm) for p in _in.COMPILED_NOT.get(op, ())):
                continue
            m = next((m for p in _in.COMPILED[op] if (m := p.search(on)) is not None), None)
            if m is not None:
                return Command(op=op, text=_payload(op, m, text, norm, on), raw=text)
    return None


def _payload(op: str, m: re.Match[str], text: str, norm: str, on: str) -> str:
    """The payload of match ``m`` on ``on`` (a prefix of ``norm``), as written in ``text``."""
    payload = m.groupdict().get("text") or ""
    if payload and m.end("text") == len(on):  # to the end: the courtesy word may be what was said
        payload = norm[m.start("text") :]
    payload = particle_off(_polite_tail_off(payload))  # 记住我住在杭州吧 -> 我住在杭州
    if op == "forget":  # "我喜欢美式这件事吧" -> "我喜欢美式", unless nothing would be left
        payload = _in.PAYLOAD_TAIL.sub("", payload).strip() or payload
    if payload:  # cut on the normalized text, a prefix of the group: the user's words say it
        payload = _as_written(text, norm, m.start("text"), len(payload)) or payload
    return payload


_GONE, _SPACE = re.compile(f"[{INVISIBLE}]"), re.compile(r"\s")
# characters that never attach to what precedes them under NFKC (neither marks nor the second of a
# composition, nor do they map to one): ASCII, CJK punctuation, kana, ideographs, Hangul syllables,
# full-width ASCII (a test checks every code point)
_ALONE = re.compile(
    r"[\x00-\x7f\u3000-\u3029\u3040-\u3098\u309d-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
    r"\uf900-\ufaff\uff01-\uff5e]"
)
# what belongs to the character before it though norm drops it: variation selectors, emoji tags (❤️, 🏴)
_EXTEND = re.compile(r"[\ufe00-\ufe0f\U000e0020-\U000e007f\U000e0100-\U000e01ef]")


def _as_written(text: str, norm: str, start: int, size: int) -> str | None:
    """The span of ``text`` that ``norm[start:start + size]`` normalizes from (``norm`` is
    :func:`~memkit.commands.patterns.norm` of ``text``); None if the offsets cannot be mapped back.

    NFKC is applied piece by piece (a character with the marks after it, and with the next character
    when the two compose: Hangul jamo), so each normalized character knows the piece it came from,
    even when NFKC changes lengths (``ﬁ`` -> ``fi``); then the steps of ``norm`` that drop or merge
    characters (invisible ones, whitespace runs, the trimmed ends) carry those spans along.

    >>> _as_written("记住：Ｂ栋３０２室！", "记住:B栋302室", 3, 6)
    'Ｂ栋３０２室'
    """
    if unicodedata.is_normalized("NFKC", text):  # every character is its own NFKC form
        chars = [(c, i, i + 1) for i, c in enumerate(text)]
    else:
        pieces: list[list[int]] = []  # [start, end) offsets in text
        for i, c in enumerate(text):
            if pieces and not _ALONE.match(c) and (_mark(c) or _composes(text[pieces[-1][0] : i], c)):
                pieces[-1][1] = i + 1
            else:
                pieces.append([i, i + 1])
        chars = [(ch, lo, hi) for lo, hi in pieces for ch in unicodedata.normalize("NFKC", text[lo:hi])]
    out: list[tuple[str, int, int]] = []  # norm's steps: invisible characters out, whitespace runs as one
    for ch, lo, hi in chars:
        if _GONE.match(ch):
            continue
        if _SPACE.match(ch) and out and out[-1][0] == " ":
            out[-1] = (" ", out[-1][1], hi)
            continue
        out.append((" " if _SPACE.match(ch) else "'" if ch == "\u2019" else ch, lo, hi))
    s = "".join(ch for ch, _, _ in out)
    lead = len(s) - len(s.lstrip())  # the trimmed ends (norm: strip, the trailing TRAIL, strip)
    cut = s.strip().rstrip(_in.TRAIL)
    lead += len(cut) - len(cut.lstrip())
    if s[lead : lead + len(norm)] != norm or not 0 <= start < start + size <= len(norm):
        return None  # the pieces do not add up to norm (never seen)
    lo, hi = out[lead + start][1], out[lead + start + size - 1][2]
    while hi < len(text) and _EXTEND.match(text[hi]):
        hi += 1
    return text[lo:hi]


def _mark(c: str) -> bool:
    """Does ``c`` (or its NFKC form: half-width ﾞ is a combining mark) attach to what precedes it?"""
    return bool(unicodedata.combining(c) or unicodedata.combining(unicodedata.normalize("NFKC", c)[:1] or c))


def _composes(piece: str, c: str) -> bool:
    """Does NFKC join ``c`` with the ``piece`` before it (a Hangul jamo sequence, 가 + ᆨ)?"""
    return unicodedata.normalize("NFKC", piece + c) != unicodedata.normalize("NFKC", piece) + (
        unicodedata.normalize("NFKC", c)
    )


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
