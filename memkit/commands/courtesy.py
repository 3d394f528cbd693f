"""Courtesy around a memory command, and a closing particle: no part of the command.

:data:`COURTESY_TAIL` is the thanks or "please" closing a message, with the punctuation or space before
it (撤销，谢谢 · "undo that, thanks" · "scratch that please" · 删掉上一条，麻烦了 · 撤销谢谢). The commands
are matched on :func:`core` of the normalized text, the text without it, so a courteous command is
the command it closes, for every op (the politeness opening a command, 请 / 麻烦 / please / pls /
kindly, is part of the command patterns themselves: :mod:`memkit.commands.patterns`). :func:`core`
(Python ``re``) and :func:`core_expr` (polars, for :func:`memkit.commands.admit_many`) cut the same
text. The word is cut for matching even when it is what was said ("remember that she never says
please"): the payload then reaches the end of the core, and :func:`memkit.commands.parse` takes it
from the whole message, where :data:`~memkit.commands.patterns.POLITE_SAID` keeps the word.

:func:`particle_off` drops a sentence-final particle (吧 哈 哦 啊 呀 啦) from a payload: 记住我住在杭州吧
stores 我住在杭州 as 忘掉我的地址吧 forgets 我的地址 -- never the end of a word (酒吧, 网吧) nor a doubled
one (哈哈, 啦啦: a name or laughter, kept).

>>> core("undo that, thanks"), core("撤销谢谢"), core("删掉上一条,麻烦了"), core("thanks")
('undo that', '撤销', '删掉上一条', 'thanks')
>>> particle_off("我住在杭州吧"), particle_off("我常去的酒吧"), particle_off("我的狗叫哈哈")
('我住在杭州', '我常去的酒吧', '我的狗叫哈哈')
"""

from __future__ import annotations

import re

import polars as pl

from . import patterns as _in

__all__ = ["COURTESY_TAIL", "PARTICLES", "core", "core_expr", "particle_off"]

_THANKS_EN = r"please|pls|plz|thanks(?: a lot| so much)?|thank you(?: very much| so much)?|thx"
_THANKS_ZH = r"谢谢(?:你|您|啦|了)?|多谢(?:你|您|啦|了)?|谢啦|谢了|(?:麻烦|辛苦)(?:你|您)?了"
# the thanks closing the text, after one to three spaces or punctuation marks (a bounded run: a search
# stays linear on a long run of commas); or 谢谢 / 多谢 straight after a Chinese character, which
# group 1 keeps (谢了 / 谢啦 there end words: 凋谢了, 道谢了). Never the whole text: "thanks" is filler.
COURTESY_TAIL = (
    rf"[\s,;、.!~。]{{1,3}}(?:{_THANKS_EN}|{_THANKS_ZH})$"
    r"|([^\x00-\x7f])(?:谢谢|多谢)(?:你|您|啦|了)?$"
)
_TAIL_RE = re.compile(COURTESY_TAIL, _in.FLAGS)


def core(norm: str) -> str:
    """``norm`` (normalized text, :func:`~memkit.commands.patterns.norm`) without the courtesy closing
    it (:data:`COURTESY_TAIL`) and the punctuation then ending it: a prefix of ``norm``."""
    return _TAIL_RE.sub(r"\g<1>", norm, count=1).rstrip(_in.TRAIL)


def core_expr(norm: pl.Expr) -> pl.Expr:
    """:func:`core` as a polars expression over normalized text (the same pattern, the same trim)."""
    return norm.str.replace("(?i)" + COURTESY_TAIL, "${1}").str.strip_chars_end(_in.TRAIL)


# closing particles; a payload never loses one doubled (哈哈) or ending one of these words
PARTICLES = "吧哈哦啊呀啦"
_WORDS = ("酒吧", "网吧", "贴吧", "氧吧", "水吧")


def particle_off(payload: str) -> str:
    """``payload`` without the particle ending it (:data:`PARTICLES`), unless it is the end of a word
    or doubled, or nothing else would be left."""
    if len(payload) < 2 or payload[-1] not in PARTICLES or payload[-2] == payload[-1]:
        return payload
    if payload.endswith(_WORDS):
        return payload
    return payload[:-1].rstrip(_in.TRAIL) or payload
