"""The user named in the third person: what an LLM memory extractor writes ("User lives in Boston",
"The user's name is Ann", "The user is a nurse", 用户住在杭州, 用户叫李明) states the user's own fact
as "I live in Boston" does, so the slots (:mod:`memkit.commands.slots`) read it in the first person.

:data:`FIRST_PERSON` rewrites the subject "user" / "the user" / "[user]" / 用户, at the start of a clause
(the text's start, after a list's bullet, or after , . ; : ! ?), to "I" / "my" / 我, with the verb
agreeing ("lives" -> "live", "is" -> "am", "studies" -> "study", "goes by" -> "go by"); every slot
rule then applies unchanged
(the past, hypotheticals, reported speech, questions, two slots). Nothing else is the user:

- another person: "The user's mother lives in Paris" reads "my mother lives in Paris" (no slot of the
  user's), 用户的妈妈住在杭州 reads 我的妈妈住在杭州 (none either);
- not one user: "Users live in …", 用户们住在…, "Each user …", "Another user …", 其他用户 (the subject
  does not open the clause, or is plural);
- another speaker's turn in the text (:data:`SPEAKER`: "User: hi. Assistant: My name is Claude"): its
  "I" is that speaker, so the slots key no such text;
- a sentence without a subject ("Lives in Boston.", "Works at Acme"): not rewritten. In a chat the
  missing subject is the previous turn's topic ("And your sister?" "Lives in Boston."), so keying it
  would let an answer about someone else replace the user's fact.

:func:`first_person` (Python ``re``) and :func:`first_person_expr` (polars) apply the same rewrites in
the same order (a test keeps them in agreement).

>>> first_person("User lives in Boston"), first_person("用户叫李明"), first_person("Users live in Rome")
('I live in Boston', '我叫李明', 'Users live in Rome')
"""

from __future__ import annotations

import re

import polars as pl

from .patterns import FLAGS
from .slot_leads import NOW_EN

__all__ = ["FIRST_PERSON", "SPEAKER", "THIRD_PERSON", "first_person", "first_person_expr"]

# another speaker's turn inside one text: a pasted transcript or a prompt ("User: hi. Assistant: My name
# is Claude", 助手:我住在云端). Its "I" is that speaker, not the user: such a text names no slot.
SPEAKER = (
    r"(?:^|[\s.,;!?。])(?:assistant|ai|bot|chatbot|system|agent|model|gpt|chatgpt|claude|gemini|copilot|助手|机器人"
    r"|系统|客服|智能助手)(?: ?\([^)]{0,20}\))? ?:"
)

# where a clause starts (group 1, kept): the text's start (after a list's bullet: "- User lives in …"),
# or a clause's punctuation and a space
_AT = r"(^(?:[-*•] )?|[,.;:!?。] ?)"
_THE_USER = rf"{_AT}(?:the )?(?:user|\[user\])"
# adverbs between the subject and its verb, kept (group 2): "User currently lives in Denver" — the
# holds-now words the slots accept there (slot_leads.NOW_EN), and "also"
_ADV = "((?:(?:{}|also) )*)".format("|".join(NOW_EN))
# (pattern, replacement) in order; the replacement in polars' syntax (${1}), Python's is derived
FIRST_PERSON: tuple[tuple[str, str], ...] = (
    (rf"{_THE_USER}'s ", "${1}my "),
    (rf"{_THE_USER} is ", "${1}I am "),
    (rf"{_THE_USER} has ", "${1}I have "),
    (rf"{_THE_USER} {_ADV}lives ", "${1}I ${2}live "),
    (rf"{_THE_USER} {_ADV}works ", "${1}I ${2}work "),
    (rf"{_THE_USER} {_ADV}studies ", "${1}I ${2}study "),
    (rf"{_THE_USER} {_ADV}goes by ", "${1}I ${2}go by "),
    # any other verb has one form for every person: moved, got, grew up, was born, turned
    (rf"{_THE_USER} ", "${1}I "),
    # 用户 opening a clause, not 用户们 (users)
    (rf"{_AT}用户([^们])", "${1}我${2}"),
)
_PY = [(re.compile(p, FLAGS), re.sub(r"\$\{([0-9])\}", r"\\g<\1>", r)) for p, r in FIRST_PERSON]
# one pass tells the texts that hold no third-person subject from the rest
THIRD_PERSON = rf"{_AT}(?:the )?\[?user\b|{_AT}用户"
_ANY_RE = re.compile(THIRD_PERSON, FLAGS)


def first_person(text: str) -> str:
    """``text`` (normalized) with the user in the third person rewritten to the first (module
    docstring); a text without one is returned as it is.

    >>> first_person("The user's name is Ann"), first_person("The user currently works at Acme")
    ('my name is Ann', 'I currently work at Acme')
    """
    if _ANY_RE.search(text) is None:
        return text
    for pattern, repl in _PY:
        text = pattern.sub(repl, text)
    return text


def first_person_expr(text: pl.Expr) -> pl.Expr:
    """:func:`first_person` as a polars expression (the same rewrites, in the same order)."""
    out = text
    for pattern, repl in FIRST_PERSON:
        out = out.str.replace_all("(?i)" + pattern.replace(r"\b", r"(?-u:\b)"), repl)
    return out
