"""The leads of the fact slots, one table for both readers: :mod:`memkit.commands.slots` keys a
statement by them, and :func:`slot_value_expr` cuts the value the statement gives after them (what
the analyzer's MK011 compares, :mod:`memkit.analyze`).

"I live in Boston" and "I moved to Boston" state one value of ``fact.residence`` with two leads; "I
live in Boston" and "I live in Denver" state two. :data:`LEAD_EN` and :data:`LEAD_ZH` list each
slot's leads, each ending right before the value; the slot patterns (:data:`~memkit.commands.slots.SLOTS`,
``SECOND``, ``NOT_VALUE``) put the user before them and :data:`LEADS` is their alternation, so a lead
added to a slot is both keyed and cut. :func:`slot_value_expr` cuts the value out of a statement, the
text after the last lead of its slot ("I used to live in Boston, now I live in Denver" gives Denver;
我以前在阿里工作，现在在字节上班 gives 字节), and normalizes it: lowercase, no punctuation, no article (the,
a, an), no word saying it holds now (:data:`NOW_EN`, :data:`NOW_ZH`, and originally), cut before a
clause of its own (", MA", "with my wife", "as a nurse"), and without the verb or particle closing a
Chinese value (:data:`CLOSE_ZH`: 住, 工作, 上班, 长大; 了, 的). It reads the text in the first person
(:func:`memkit.commands.subjects.first_person_expr`, materialized once by the caller), so "User moved
to Boston" gives Boston too.

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

__all__ = ["CLOSE_ZH", "LEADS", "LEAD_EN", "LEAD_ZH", "NOW_EN", "NOW_ZH", "slot_value_expr", "without_now"]

# the words saying a statement holds now: between the user and the verb (I now live in, 我现在住在), and
# no part of the value MK011 compares ("Boston now" is Boston)
NOW_EN = ("now", "currently", "these days", "still", "just", "recently", "finally", "actually")
NOW_ZH = ("现在", "目前", "如今", "已经")
# slot -> its English leads (regex), each ending right before the value: "live (?:in|at)" keys "I live
# in Boston" (slots.py puts the user and NOW_EN before it) and cuts Boston out of it
LEAD_EN: dict[str, dict[str, str]] = {
    "residence": {"moved": "(?:moved|relocated) to", "live": r"\blive (?:in|at)",
                  "living": "(?:living|based|settled) in", "my": r"\bmy (?:home|address) is"},
    "employer": {"work": r"\bwork (?:at|for)", "working": "(?:working|employed) (?:at|for|by)",
                 "job": "(?:job|position|role) (?:at|with)", "my": r"\bmy (?:employer|company) is"},
    "job": {"work": r"\bwork as", "working": "working as", "my": r"\bmy (?:job|profession|occupation) is"},
    "school": {"study": r"\bstudy at", "studying": "studying at"},
    "hometown": {"originally": "originally from", "grew": "grew up in", "born": r"\bborn in",
                 "my": r"\bmy hometown is", "from": r"\bfrom"},
    "birthday": {"my": r"\bbirthday is", "born": r"\bborn on"},
}  # fmt: skip
# slot -> its Chinese leads: "verbs" right before the value (住在杭州), and "closers", the verbs after
# the value of a 在 … frame (在杭州住, 在阿里工作: the lead is 在, and the closer is no part of the value)
LEAD_ZH: dict[str, dict[str, str]] = {
    "residence": {
        "verbs": "住在|定居在?|搬到|搬去|搬家到|落户",
        "closers": "住|定居",
        "at": "我[^,。;]{0,6}在",
    },
    "employer": {"verbs": "入职|就职于|跳槽到", "closers": "工作|上班|任职"},
    "school": {"closers": "上学|读研|读博|就读"},
    "hometown": {"verbs": "来自|老家(?:是|在)|出生在", "closers": "长大"},
    "birthday": {"verbs": "生日(?:是|在)"},
}


def cased(lead: str) -> str:
    """An English lead with its last word lowercase only: "I LIVE IN FEAR" is no residence."""
    head, _, last = lead.rpartition(" ")
    return f"{head} (?-i:{last})" if head else f"(?-i:{last})"


def en_leads(slot: str, lower: bool = True, **subject: str) -> str:
    """The alternation of the English leads of ``slot``, each after its subject (``subject``, by the
    lead's name in :data:`LEAD_EN`; every lead needs one, so a lead of the table is keyed as well as
    cut) and with its last word lowercase only (``lower``): a slot pattern's English part."""
    leads = LEAD_EN[slot]
    if set(subject) != set(leads):
        raise KeyError(f"{slot}: subjects {sorted(subject)} for leads {sorted(leads)}")
    return "(?:{})".format("|".join(subject[n] + (cased(x) if lower else x) for n, x in leads.items()))


def zh_leads(slot: str, part: str) -> str:
    """The alternation of the Chinese ``part`` of ``slot``'s leads (:data:`LEAD_ZH`: verbs, closers)."""
    return f"(?:{LEAD_ZH[slot][part]})"


_ME = r"\bi(?:'m| am) "
# slot -> the leads of the slots whose statement has another shape: the user is part of the lead ("I'm
# a nurse", 我今年30岁), or the value is a closed list of words (married, 单身)
_OTHER: dict[str, str] = {
    "job": rf"{_ME}(?:[a-z]+ )*?(?:a|an) |是(?:一名|一个|一位|个|名)?|我[^,。;]{{0,4}}(?:做|当)"
    r"|(?:职业|工作)是",
    "name": r"\bname is |\bname's |\bcalled |\bgo by |\bcall me |叫我|叫(?:做)?|名字是",
    "relationship": rf"{_ME}|\bgot |\bgotten |我",
    "partner": r"name is |is called |is named |叫|的名字是",
    "age": rf"{_ME}(?:turning )?|\bturned |\bage is |今年|我",
}


def _leads(slot: str) -> str:
    """The alternation of the leads of ``slot``: :data:`LEAD_EN`, :data:`LEAD_ZH` (a verb, then 了 or
    not; 在 before a closer), then the leads of another shape."""
    zh = LEAD_ZH.get(slot, {})
    leads = [f"{lead} " for lead in LEAD_EN.get(slot, {}).values()]
    leads += [f"(?:{zh['verbs']})了?"] if "verbs" in zh else []
    leads += [zh.get("at", "在")] if "closers" in zh else []
    return "|".join([*leads, *([_OTHER[slot]] if slot in _OTHER else [])])


# slot -> what comes right before its value (English, then Chinese), in the first person
LEADS: dict[str, str] = {slot: _leads(slot) for slot in dict.fromkeys([*LEAD_EN, *LEAD_ZH, *_OTHER])}
# what closes a Chinese value: the closer of a 在 … frame (在杭州住), then a particle
CLOSE_ZH = "(?:{})?(?:了|啦|呢|哦|的)*$".format(
    "|".join(z["closers"] for z in LEAD_ZH.values() if "closers" in z)
)
_NOW_WORDS_EN = r"(?-u:\b(?:{})\b)".format("|".join([*NOW_EN, "originally"]))
_NOW_WORDS_ZH = "|".join(NOW_ZH)
_CLAUSE = r"(?:[,;!?，。；！？]| (?:with|since|because|but|and|as|who|where|which)\b).*$"


def without_now(value: pl.Expr) -> pl.Expr:
    """``value`` without the words saying it holds now (:data:`NOW_EN`, :data:`NOW_ZH`, originally),
    punctuation and surrounding space: what MK011 compares ("Boston now." is "Boston")."""
    # an English word leaves a space between its neighbours; a Chinese one none (我现在住在 -> 我住在)
    value = value.str.replace_all(_NOW_WORDS_EN, " ").str.replace_all(_NOW_WORDS_ZH, "")
    value = value.str.replace_all(r"[\p{P}\s]+", " ")
    return value.str.strip_chars()


def slot_value_expr(text: pl.Expr, slot: pl.Expr) -> pl.Expr:
    """The normalized value the statement ``text`` (as :func:`~memkit.commands.patterns.norm` gives
    it, in the first person) states of ``slot`` (``fact.residence``, a column of such names) -> null
    where the text has no lead of its slot (module docstring)."""
    value = pl.lit(None, dtype=pl.String)
    for name, lead in LEADS.items():
        cut = text.str.extract(f"(?i)^.*(?:{lead})([^了].*)$".replace(r"\b", r"(?-u:\b)"), 1)
        value = pl.when(slot == f"fact.{name}").then(cut).otherwise(value)
    value = value.str.replace(f"(?i){_CLAUSE}", "").str.replace(CLOSE_ZH, "").str.to_lowercase()
    job, age = slot == "fact.job", slot == "fact.age"  # a job's place is no part of it; an age is a number
    value = pl.when(job).then(value.str.replace(r" (?:at|in|for|from) .*$", "")).otherwise(value)
    value = pl.when(age).then(pl.coalesce(value.str.extract(r"([0-9]{1,3})", 1), value)).otherwise(value)
    value = without_now(value).str.replace(r"^(?:the|a|an) ", "").str.strip_chars()
    return pl.when(value != "").then(value)
