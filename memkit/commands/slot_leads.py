"""The value a slot's statement gives: what the analyzer's MK011 compares (:mod:`memkit.analyze`).

"I live in Boston" and "I moved to Boston" state one value of ``fact.residence`` with two leads; "I
live in Boston" and "I live in Denver" state two. :func:`slot_value_expr` cuts the value out of a
statement, the text after the last lead of its slot (:data:`LEADS`: "I used to live in Boston, now I
live in Denver" gives Denver; 我以前在阿里工作，现在在字节上班 gives 字节), and normalizes it: lowercase, no
punctuation, no article (the, a, an), no word saying it holds now (now, currently, still, just,
originally), cut before a clause of its own (", MA", "with my wife", "as a nurse"), and without the
verb or particle closing a Chinese value (住, 工作, 上班, 长大, 了, 的). It reads the text in the first
person (:func:`memkit.commands.subjects.first_person_expr`, materialized once by the caller), so "User
moved to Boston" gives Boston too.

>>> import polars as pl
>>> from memkit.commands.subjects import first_person_expr
>>> texts = ["I live in Boston.", "I moved to Boston now", "我以前住在北京，现在搬到上海了",
...          "User is a Nurse"]
>>> slots = ["fact.residence", "fact.residence", "fact.residence", "fact.job"]
>>> me = pl.select(first_person_expr(pl.Series(texts))).to_series()
>>> pl.select(v=slot_value_expr(me, pl.Series(slots)))["v"].to_list()
['boston', 'boston', '上海', 'nurse']
"""

from __future__ import annotations

import polars as pl

__all__ = ["LEADS", "slot_value_expr"]

_ME = r"\bi(?:'m| am) "
# slot -> what comes right before its value (English, then Chinese), in the first person
LEADS: dict[str, str] = {
    "residence": r"(?:moved|relocated) to |\blive (?:in|at) |(?:living|based|settled) in "
    r"|\bmy (?:home|address) is |住在|定居在?|搬到了?|搬去|搬家到|落户|我[^,。;]{0,6}在",
    "employer": r"\bwork (?:at|for) |working (?:at|for) |employed (?:at|for|by) "
    r"|(?:job|position|role) (?:at|with) |\bmy (?:employer|company) is |入职了?|就职于|跳槽到|在",
    "job": rf"\bwork as |working as |\bmy (?:job|profession|occupation) is |{_ME}(?:[a-z]+ )*?(?:a|an) "
    r"|是(?:一名|一个|一位|个|名)?|我[^,。;]{0,4}(?:做|当)|(?:职业|工作)是",
    "school": r"\bstudy at |studying at |在",
    "name": r"\bname is |\bname's |\bcalled |\bgo by |\bcall me |叫我|叫(?:做)?|名字是",
    "relationship": rf"{_ME}|\bgot |\bgotten |我",
    "partner": r"name is |is called |is named |叫|的名字是",
    "age": rf"{_ME}(?:turning )?|\bturned |\bage is |今年|我",
    "birthday": r"\bbirthday is |\bborn on |生日(?:是|在)",
    "hometown": r"\bfrom |grew up in |\bborn in |\bhometown is |来自|老家(?:是|在)|出生在|在",
}
_NOW = r"\b(?:now|currently|these days|still|just|recently|finally|originally|actually)\b|现在|目前|如今|已经"
_CLAUSE = r"(?:[,;!?，。；！？]| (?:with|since|because|but|and|as|who|where|which)\b).*$"
_CLOSE_ZH = r"(?:住|定居|工作|上班|任职|上学|读研|读博|就读|长大)?(?:了|啦|呢|哦|的)*$"


def slot_value_expr(text: pl.Expr, slot: pl.Expr) -> pl.Expr:
    """The normalized value the statement ``text`` (as :func:`~memkit.commands.patterns.norm` gives
    it, in the first person) states of ``slot`` (``fact.residence``, a column of such names) -> null
    where the text has no lead of its slot (module docstring)."""
    value = pl.lit(None, dtype=pl.String)
    for name, lead in LEADS.items():
        cut = text.str.extract(f"(?i)^.*(?:{lead})(.+)$".replace(r"\b", r"(?-u:\b)"), 1)
        value = pl.when(slot == f"fact.{name}").then(cut).otherwise(value)
    value = value.str.replace(f"(?i){_CLAUSE}", "").str.replace(_CLOSE_ZH, "").str.to_lowercase()
    job, age = slot == "fact.job", slot == "fact.age"  # a job's place is no part of it; an age is a number
    value = pl.when(job).then(value.str.replace(r" (?:at|in|for|from) .*$", "")).otherwise(value)
    value = pl.when(age).then(pl.coalesce(value.str.extract(r"([0-9]{1,3})", 1), value)).otherwise(value)
    value = value.str.replace_all(f"(?-u:{_NOW})", " ").str.replace_all(r"[\p{P}\s]+", " ").str.strip_chars()
    value = value.str.replace(r"^(?:the|a|an) ", "").str.strip_chars()
    return pl.when(value != "").then(value)
