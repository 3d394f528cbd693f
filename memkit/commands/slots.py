"""Fact slots: the user's own personal facts on a known subject get a key, as preferences do.

A stated preference on a known topic is keyed ``preference.<topic>`` so that a changed preference
replaces the old one. Personal facts are the same: "I live in Boston", then "I moved to Denver" (我住在
杭州, then 我搬到上海了) both speak of the slot ``fact.residence``; keyed, the second supersedes the
first instead of leaving two active answers to "where do I live?".

:data:`SLOTS` lists ``(slot, pattern)`` pairs, first match wins; :func:`slot_key` (Python ``re``, one
text) and :func:`slot_key_expr` (polars, a whole column) give the key, and a test keeps them in
agreement (the patterns are in the subset both engines read alike: no look-arounds, ``[0-9]`` not
``\\d``). Both match the text as :func:`memkit.commands.patterns.norm` gives it, ignoring case.

Only the user's own, current facts are keyed, and the rule errs on keeping a fact unkeyed (a key
replaces a value; an unkeyed fact only adds one):

- **the user only**: every pattern starts at the user (I / I'm / my name / 我 + 住在 …; "User lives in
  …", 用户住在… are read in the first person: :mod:`memkit.commands.subjects`); "my
  sister lives in Paris" and 我妹妹住在巴黎 name no slot of the user's and get no key at all (no
  ``fact.sister.residence``: the people around the user are open-ended, and a key would let a
  remark about one relative replace a fact about another);
- **not past** (:data:`PAST`: used to, previously, 以前, 曾经, 小时候 …), unless the text also says
  what holds now (:data:`NOW`: now, currently, 现在, 目前): "I used to live in Boston, now I live in
  Denver" is keyed, "I used to live in Boston" is not;
- **a value of the slot** (:mod:`memkit.commands.slot_values`, :data:`NOT_VALUE`): "I live in" names
  the residence before a proper name ("I live in Boston") or an article and a place noun ("a small
  town"), never before a time, a feeling or an object ("I work at night", "I live in fear of
  spiders", "I moved to a new desk"); 我在…工作 names the employer unless … is generic (家, 这里,
  公司 alone, 晚上) or a place (北京); "got married" keys the relationship only as a main clause ("I
  got married last month", not "It's where I got married");
- **one slot per text**: "My name is Ann and I live in Boston" states two slots and gets no key (a
  later "I moved to Denver" would supersede the whole memory and lose the name with it), also when the
  second clause has no subject of its own (:data:`SECOND`: 我叫李明，住在北京, "… and started a job at");
- **not hypothetical, reported, quoted or asked** (:data:`NOT_SLOT`: if, would, maybe, want to,
  如果, 要是, 想, "she thinks …", 他说 …, quotation marks, a question word or an opening "do I …"):
  never keyed, "now" or not.

>>> from memkit.commands.patterns import norm
>>> slot_key(norm("I moved to Denver")), slot_key(norm("我搬到上海了"))
('fact.residence', 'fact.residence')
>>> slot_key(norm("I used to live in Boston")), slot_key(norm("my sister lives in Paris"))
(None, None)
"""

from __future__ import annotations

import re

import polars as pl

from .patterns import FLAGS, matches_expr
from .slot_leads import LEAD_EN, NOW_EN, NOW_ZH, cased, en_leads, zh_leads
from .slot_values import (
    DATE_EN,
    DATE_ZH,
    EMPLOYER_NOUNS,
    GENERIC_ZH,
    MAIN_CLAUSE,
    NAME_EN,
    NAME_ZH,
    NOT_HOME_ZH,
    NOT_NAME_ZH,
    NOT_SCHOOL,
    NUMBERED,
    PLACE_NAMES,
    PLACE_NOUNS,
    PLACES_ZH,
    SCHOOL_NOUNS,
    SUFFIX_ZH,
    TEAM,
    TIMES,
    TOOL_SHAPE,
    TOOLS,
    value_en,
)
from .subjects import SPEAKER, THIRD_PERSON, first_person, first_person_expr

__all__ = [
    "ANY_SLOT",
    "NOT_SLOT",
    "NOT_VALUE",
    "NOW",
    "PAST",
    "SECOND",
    "SLOTS",
    "matches_expr",
    "slot_key",
    "slot_key_expr",
    "with_slot_key",
]

# adverbs between the subject and the verb that keep the statement current: I now live in · 我现在住在
# (slot_leads.NOW_EN, NOW_ZH), and a few that neither say so nor are a value (also, 也, 一直)
_NOW_EN = "(?:(?:{}|also) )*".format("|".join(NOW_EN))
_NOW_ZH = "(?:{}|还|一直|也|刚|暂时|平时|最近|终于)*".format("|".join(NOW_ZH))
_I_AM = r"\bi(?:'m| am) "
_I_HAVE = r"\bi(?:'ve| have)? "
# common occupations: "I'm a …" is a job only before one of these ("I'm a bit tired" is not)
_JOBS_EN = (
    r"(?:teacher|nurse|doctor|physician|surgeon|dentist|pharmacist|engineer|developer|programmer|designer"
    r"|lawyer|attorney|accountant|student|manager|consultant|writer|author|journalist|editor|artist"
    r"|musician|chef|cook|baker|scientist|researcher|professor|lecturer|driver|pilot|architect"
    r"|photographer|analyst|freelancer|entrepreneur|founder|salesperson|cashier|waiter|waitress"
    r"|mechanic|electrician|plumber|carpenter|farmer|soldier|officer|firefighter|therapist|librarian"
    r"|banker|translator|intern|receptionist|clerk|technician|veterinarian|vet|paramedic|barista)s?"
)
_JOBS_ZH = (
    r"(?:老师|教师|医生|护士|工程师|程序员|设计师|律师|会计|学生|经理|顾问|作家|记者|编辑|厨师|研究员"
    r"|教授|司机|飞行员|建筑师|摄影师|分析师|公务员|销售|店员|服务员|警察|军人|农民|创业者|研究生|博士生"
    r"|大学生|中学生|实习生|产品经理|架构师|翻译|导游|快递员|主播|演员|歌手|画家|药剂师|兽医)"
)
# Chinese drops the subject of a second clause: 我以前住在北京，现在搬到上海了 (I used to live in Beijing,
# now [I] moved to Shanghai). Only after the user's own past clause, so 我妹妹以前住在北京，现在… is not one.
_THEN_ZH = r"我(?:以前|之前|原来|本来|曾经|过去)(?:一直)?"
_BUT_NOW_ZH = r"(?:但是?|不过|可是)?(?:我)?(?:现在|目前|如今)(?:已经|还|刚)*"

# English leads of the slots with a place or an organization as value, each ending before the value
# (memkit.commands.slot_values): the preposition is lowercase, so "I LIVE IN FEAR" is none
_HIRED = "(?:got|started|took|accepted|landed) (?:a |the |my )?(?:new )?"  # … a new job at
_I, _AM, _HAVE = rf"\bi {_NOW_EN}", _I_AM + _NOW_EN, _I_HAVE + _NOW_EN  # the user, then NOW_EN
_RES_EN = en_leads("residence", moved=_HAVE, live=_I, living=_AM, my="")
_EMP_EN = en_leads("employer", work=_I, working=_AM, job=_HAVE + _HIRED, my="")
_SCHOOL_EN = en_leads("school", study=_I, studying=_AM)
_HOME = {"originally": _I_AM, "grew": r"\bi ", "born": r"\bi was ", "my": ""}  # not "I now grew up in"
_HOME_EN = "(?:{})".format("|".join(_HOME[n] + cased(LEAD_EN["hometown"][n]) for n in _HOME))
# "I'm from X" without "originally": a hometown only before a known place (slot_values.PLACE_NAMES), a
# place noun ("a small town"), or a town and a known place ("Austin, Texas"): not "I'm from Google"
_FROM_EN = _I_AM + cased(LEAD_EN["hometown"]["from"])
_JOB_EN = en_leads("job", False, work=_I, working=_AM, my="")
_BIRTH_EN = en_leads("birthday", False, my=r"\bmy ", born=r"\bi was ")
# Chinese leads: a verb before the value (住在), or a closer after 在 and the value (在杭州住)
_RES_ZH, _RES_AT = zh_leads("residence", "verbs"), zh_leads("residence", "closers")
_EMP_ZH, _EMP_AT = zh_leads("employer", "verbs"), zh_leads("employer", "closers")
_SCHOOL_AT, _HOME_ZH = zh_leads("school", "closers"), zh_leads("hometown", "verbs")
_HOME_AT = zh_leads("hometown", "closers")
_FROM_PLACE = (
    rf"(?:{PLACE_NAMES}|(?:a|an|the) (?:[a-z-]+ ){{0,2}}{PLACE_NOUNS}s?\b"
    rf"|(?-i:[A-Z])[A-Za-z.'-]*(?: (?-i:[A-Z])[A-Za-z.'-]*)?, {PLACE_NAMES})"
)
_WED_ZH = r"(?:结婚|离婚|订婚|分手|脱单)"
# what ends an English job noun after "I'm a": the clause, or at / in / for … ("I'm a nurse at St
# Mary's"; not "I'm a teacher's pet", "I'm a huge Doctor Who fan", "I'm a Student Ambassador")
_JOB_END = r"(?:$|[,.;:!?)，。；！？]| (?:at|in|for|with|from|by|and|now|currently|again|too|these days)\b)"
# what ends a Chinese job noun: the clause (我是老师的儿子, 我是学生家长 name no job)
_END_ZH = r"(?:了|啦|呢|哦|啊)?(?:$|[\s,。;:!?.、])"
# (slot, pattern): the user's own fact on a known subject. First match wins (among the slots whose
# value is one: NOT_VALUE).
SLOTS: tuple[tuple[str, str], ...] = (
    ("name", rf"(?:\bmy name(?: is|'s)|\bi(?:'m| am) called|\bi go by"
             rf"|(?:^|[,.;:!] ?)(?:(?:you can|you may|please|just) )*call me) {NAME_EN}"
             rf"|(?:我(?:的名字)?叫(?:做)?|我的名字是|(?:^|[,。;:!])(?:你)?(?:可以)?叫我){NAME_ZH}"),
    ("residence", rf"{_RES_EN} {value_en(PLACE_NOUNS, number=True)}"
                  rf"|我(?:们)?{_NOW_ZH}{_RES_ZH}|我家{_NOW_ZH}住在|我{_NOW_ZH}在[^,。;]{{1,12}}{_RES_AT}"
                  rf"|{_THEN_ZH}(?:住在|在)[^,。;]{{1,12}}[,;] ?{_BUT_NOW_ZH}{_RES_ZH}"),
    ("employer", rf"{_EMP_EN} {value_en(EMPLOYER_NOUNS)}"
                 rf"|我{_NOW_ZH}在[^,。;]{{1,12}}{_EMP_AT}|我{_NOW_ZH}{_EMP_ZH}"
                 rf"|我(?:的名字)?叫[^,。;]{{1,6}}[,;] ?{_NOW_ZH}在[^,。;]{{1,12}}{_EMP_AT}"
                 rf"|{_THEN_ZH}在[^,。;]{{1,12}}(?:工作|上班)[^,。;]{{0,6}}[,;] ?{_BUT_NOW_ZH}"
                 rf"(?:在[^,。;]{{1,12}}{_EMP_AT}|{_EMP_ZH})"),
    ("job", rf"{_JOB_EN}"
            rf" (?:(?:a|an) )?(?:[a-z-]+ ){{0,2}}{_JOBS_EN}\b"
            rf"|{_I_AM}{_NOW_EN}(?:a|an) (?:[a-z-]+ ){{0,2}}{_JOBS_EN}{_JOB_END}"
            rf"|(?:我{_NOW_ZH}是(?:一名|一个|一位|个|名)?|我{_NOW_ZH}(?:做|当)|我的(?:职业|工作)是)"
            rf"[^,。;]{{0,6}}{_JOBS_ZH}{_END_ZH}"),
    ("school", rf"{_SCHOOL_EN} {value_en(SCHOOL_NOUNS)}"
               rf"|我{_NOW_ZH}在[^,。;]{{1,12}}{_SCHOOL_AT}"),
    ("relationship", rf"{_I_AM}{_NOW_EN}(?:married|single|divorced|engaged|widowed|separated)\b"
                     rf"|{MAIN_CLAUSE}{_I_HAVE}{_NOW_EN}(?:got|gotten) (?:married|engaged|divorced)\b"
                     rf"|{_I_AM}{_NOW_EN}(?:dating|seeing someone|in a relationship)\b"
                     rf"|我{_NOW_ZH}{_WED_ZH}|我{_NOW_ZH}(?:单身|有(?:女朋友|男朋友|对象))"),
    ("partner", r"\bmy (?:wife|husband|partner|spouse|girlfriend|boyfriend|fiancee?)(?:'s name is"
                r"| is called| is named)\b"
                r"|我的?(?:老婆|老公|妻子|丈夫|爱人|对象|女朋友|男朋友|未婚妻|未婚夫)(?:叫|的名字是)"),
    ("age", rf"{_I_AM}{_NOW_EN}(?:turning )?[0-9]{{1,3}}(?: years old| years of age| now|$)"
            rf"|\bi {_NOW_EN}turned [0-9]{{1,3}}(?:$|[,.;!]| (?:today|yesterday|this|last|on|in)\b)"
            r"|\bmy age is\b"
            rf"|我{_NOW_ZH}(?:今年)?(?:[0-9]{{1,3}}|[一二三四五六七八九十]{{1,3}})(?:周)?岁"),
    ("birthday", rf"{_BIRTH_EN} {DATE_EN}"
                 rf"|我的?{zh_leads('birthday', 'verbs')}{DATE_ZH}"),
    ("hometown", rf"{_HOME_EN} {value_en(PLACE_NOUNS)}|{_FROM_EN} {_FROM_PLACE}"
                 rf"|我{_HOME_ZH}|我在[^,。;]{{1,12}}{_HOME_AT}"),
)  # fmt: skip
_OR_ZH = rf"(?:{GENERIC_ZH}|{PLACES_ZH}){SUFFIX_ZH}"
_NONE = r"(?:[,。;:!?]|$)"  # a lead with no value after it: 我住在
# slot -> what is no value of it: the slot's lead, then a value that is none (see slot_values). A
# slot whose pattern matches but whose NOT_VALUE matches too is passed over (the next slot may fire).
NOT_VALUE: dict[str, str] = {
    "name": rf"{_I_AM}called (?:[a-z'-]+ ){{1,3}}by\b"
            rf"|(?:我(?:的名字)?叫(?:做)?|我的名字是|(?:^|[,。;:!])(?:你)?(?:可以)?叫我){NOT_NAME_ZH}",
    "residence": rf"{_RES_EN} (?:the )?(?:{TIMES}|{TOOLS}|{TEAM}|{TOOL_SHAPE}|{NUMBERED})"
                 rf"|我(?:们|家)?{_NOW_ZH}{_RES_ZH}了?(?:{GENERIC_ZH}|{NOT_HOME_ZH}|{_NONE})"
                 rf"|我{_NOW_ZH}在{GENERIC_ZH}{SUFFIX_ZH}{_RES_AT}|我{_NOW_ZH}在{NOT_HOME_ZH}"
                 rf"|我{_NOW_ZH}在[^,。;]{{1,12}}住了(?:[0-9一二三四五六七八九十两半几整]|很久|好久|多年)",
    "employer": rf"{_EMP_EN} (?:the )?(?:{TIMES}|home(?:$|[^a-z ]| (?-i:[a-z])))"
                rf"|我{_NOW_ZH}在{_OR_ZH}{_EMP_AT}"
                rf"|我{_NOW_ZH}在(?:[^,。;]{{0,10}}(?:上|车里|途中|会议室|休息室|茶水间|书房|客厅|卧室)"
                rf"|[^,。;]{{2,10}}(?:里|内|中|前|旁))"
                rf"{_EMP_AT}|我{_NOW_ZH}在[^,。;]{{1,12}}(?:工作|上班)了[0-9一二三四五六七八九十两半几整]"
                r"|我(?:现在|目前|还|一直|也|正)*在(?:开会|考虑|准备|寻找|找|等|忙|学|想|做|申请|面试|换|赶)"
                rf"|我{_EMP_ZH}了?(?:[0-9一二三四五六七八九十两半几,。;!，]|$)",
    "school": rf"{_SCHOOL_EN} (?:the )?(?:{TIMES}|{TOOLS}|{NOT_SCHOOL}|{TOOL_SHAPE})"
              rf"|我{_NOW_ZH}在{_OR_ZH}{_SCHOOL_AT}",
    "relationship": rf"{_I_AM}{_NOW_EN}(?:engaged (?:in|with|by|on)\b|separated (?:from|by)\b|single-"
                    r"|single (?:handed|file|out|use|point|page|line)|married to (?:my|the|this|our) "
                    r"(?:job|work|career|code|idea|plan)"
                    r"|seeing someone (?:about|for|regarding|to|at|on)\b|single[- ]minded)"
                    rf"|{_I_HAVE}{_NOW_EN}(?:got|gotten) married to (?:a|an|my|the|this|that|our) "
                    r"(?:idea|concept|notion|thought|plan|job|work|career|code|project|cause|craft|mission|vision)\b"
                    rf"|我{_NOW_ZH}{_WED_ZH}(?:的|那|后|以后|之后|以来|前|时|纪念|典礼|照|戒指|请柬|酒|证)",
    "hometown": rf"(?:{_HOME_EN}|{_FROM_EN}) (?:the )?(?:{TIMES}|{TOOLS}|{TEAM}|{TOOL_SHAPE})"
                rf"|我{_HOME_ZH}(?:{GENERIC_ZH}|{NOT_HOME_ZH}|{_NONE})|我在{GENERIC_ZH}{SUFFIX_ZH}{_HOME_AT}"
                r"|我出生在[^,。;]{0,6}(?:年|月|日|号|世纪)",
}  # fmt: skip
# slot -> its lead in a clause without a subject of its own, after a comma, 和 or "and" (我叫李明，住在北京;
# "I moved to Denver and started a job at Acme"): a second slot when the text's key is another one
_BREAK_EN = rf"(?:[,;] ?|\band ){_NOW_EN}"
_BREAK_ZH = rf"(?:[,;] ?|和){_NOW_ZH}"
SECOND: dict[str, str] = {
    "residence": rf"{_BREAK_EN}(?:moved (?-i:to)|relocated (?-i:to)|lives? (?-i:in|at)|living (?-i:in))"
                 rf" {value_en(PLACE_NOUNS, number=True)}|{_BREAK_ZH}{_RES_ZH}",
    "employer": rf"{_BREAK_EN}(?:works? (?-i:at|for)|working (?-i:at|for)) {value_en(EMPLOYER_NOUNS)}"
                rf"|{_BREAK_EN}{_HIRED}{cased(LEAD_EN['employer']['job'])}|{_BREAK_ZH}在[^,。;]{{1,12}}{_EMP_AT}"
                rf"|{_BREAK_ZH}{_EMP_ZH}",
    "school": rf"{_BREAK_EN}(?:study|studies|studying) (?-i:at) {value_en(SCHOOL_NOUNS)}"
              rf"|{_BREAK_ZH}在[^,。;]{{1,12}}{_SCHOOL_AT}",
    "relationship": rf"{_BREAK_EN}(?:got|gotten) (?:married|engaged|divorced)\b|{_BREAK_ZH}{_WED_ZH}了",
    "job": rf"{_BREAK_EN}works? as\b|{_BREAK_ZH}(?:是|当|做)(?:一名|一个|一位|个|名)?{_JOBS_ZH}{_END_ZH}",
}  # fmt: skip
# a statement about the past: it does not say what holds now ... unless NOW is there too
PAST = (
    r"\bused to\b|\bformerly\b|\bpreviously\b|\bback then\b|\bback when\b|\bwhen i was\b"
    r"|\bas a (?:kid|child)\b|\bgrowing up\b|\bonce lived\b|\bno longer\b|\banymore\b|\byears ago\b"
    r"|以前|之前|曾经|过去|原来|本来|小时候|那时|当时|从前|早年|年前"
)
NOW = r"\bnow\b|\bcurrently\b|\bthese days\b|\bnowadays\b|现在|目前|如今"
# never the user's current fact: hypothetical, wished or planned, someone else's claim, a quotation,
# a transcript with another speaker's turn (SPEAKER), or a question without its question mark
NOT_SLOT = (
    r"\bif\b|\bsuppose|\bimagine|\bwould\b|\bcould\b|\bmight\b|\bmaybe\b|\bperhaps\b|\bwish|\bhope"
    r"|\bwant(?:s|ed)? to\b|\bplan(?:s|ned|ning)? to\b|\bthinking (?:of|about)\b|\bconsidering\b"
    r"|\bpretend|\bdream|\bunless\b|\bnot sure\b"
    r"|\b(?:says?|said|thinks?|thought|believes?|believed|claims?|claimed|assumes?|assumed|asks?|asked)\b"
    r"|\b(?:asking|wondering|whether)\b"
    rf"|{SPEAKER}"
    '|[“”「」『』"]'
    r"|\bi'd\b|\bcall me (?:back|later|tomorrow|tonight|today|when|at|on|if|after|before|anytime|any time"
    r"|now|asap|soon|again|sometime|maybe)\b"
    r"|^(?:do|does|did|am|is|are|was|were|can|could|should|will|shall|where|what|when|why|how|who|which)\b"
    r"|如果|要是|假如|假设|万一|的话|想|打算|希望|可能|也许|或许|梦|以为|听说|据说|假装|台词|歌词"
    r"|[他她]们?(?:说|觉得|认为)|别人说|有人说|哪|什么|谁|吗|几|多少|是不是|有没有|对不对|不叫我|别叫我"
    r"|岁的|的时候|在(?:努力|认真|拼命|专心|好好)"
)
# every slot in one alternation: one pass tells the few texts that could name a slot from the rest
ANY_SLOT = "|".join(f"(?:{p})" for _, p in SLOTS)
_SLOT_RE = [(name, re.compile(p, FLAGS)) for name, p in SLOTS]
_NOT_VALUE_RE = {name: re.compile(p, FLAGS) for name, p in NOT_VALUE.items()}
_ANY_RE = re.compile(ANY_SLOT, FLAGS)
_PAST_RE, _NOW_RE, _NOT_RE = (re.compile(p, FLAGS) for p in (PAST, NOW, NOT_SLOT))
_SECOND_RE = {name: re.compile(p, FLAGS) for name, p in SECOND.items()}


def slot_key(text: str) -> str | None:
    """``fact.<slot>`` when normalized ``text`` states the user's own current fact on a known slot,
    else None (one text, Python ``re``; see the module docstring).

    >>> from memkit.commands.patterns import norm
    >>> slot_key(norm("My name is Ann")), slot_key(norm("我叫小王")), slot_key(norm("我叫了外卖"))
    ('fact.name', 'fact.name', None)
    >>> slot_key(norm("我以前住在北京，现在搬到上海了")), slot_key(norm("如果我搬到上海"))
    ('fact.residence', None)
    """
    # "User lives in Boston", 用户住在杭州: the user's own, in the first person (memkit.commands.subjects)
    text = first_person(text)
    if _ANY_RE.search(text) is None:  # one pass for the many texts that name no slot
        return None
    slots = [f"fact.{name}" for name, p in _SLOT_RE if p.search(text) and not _no_value(name, text)]
    if len(slots) != 1 or _NOT_RE.search(text) or (_PAST_RE.search(text) and not _NOW_RE.search(text)):
        return None  # two slots in one text: a later change of one would supersede the other
    if any(f"fact.{name}" != slots[0] and p.search(text) for name, p in _SECOND_RE.items()):
        return None  # the second slot's clause has no subject of its own (SECOND)
    return slots[0]


def _no_value(name: str, text: str) -> bool:
    """Is the value of slot ``name`` in ``text`` none (:data:`NOT_VALUE`)?"""
    pattern = _NOT_VALUE_RE.get(name)
    return pattern is not None and pattern.search(text) is not None


def with_slot_key(df: pl.DataFrame, text: str, name: str, where: pl.Expr | None = None) -> pl.DataFrame:
    """``df`` with a column ``name``: :func:`slot_key_expr` of its normalized-text column ``text``
    (null where ``where`` is false). The blockers and the slot-by-slot patterns run only on the rows
    one pass of :data:`ANY_SLOT` picks out, so a large frame costs one regex pass, not thirteen.

    >>> with_slot_key(pl.DataFrame({"t": ["我叫小王", "hello"]}), "t", "k")["k"].to_list()
    ['fact.name', None]
    """
    hit = matches_expr(pl.col(text), ANY_SLOT) | matches_expr(pl.col(text), THIRD_PERSON)
    indexed = df.with_row_index("_slot_row")
    # the first-person text materialized once: every pattern reads it (an expression would be run again
    # for each of them)
    keys = (
        indexed.filter(hit if where is None else hit & where)
        .select("_slot_row", _me=first_person_expr(pl.col(text)))
        .select("_slot_row", _key_expr(pl.col("_me")).alias(name))
    )
    return indexed.join(keys, on="_slot_row", how="left", maintain_order="left").drop("_slot_row")


def slot_key_expr(norm_text: pl.Expr) -> pl.Expr:
    """:func:`slot_key` as a polars expression over normalized text (null: no slot). Over a frame,
    :func:`with_slot_key` is faster: it rewrites the third person once, not once per pattern.

    >>> df = pl.DataFrame({"t": ["I live in Boston", "我搬到上海了", "I'd love to live in Rome"]})
    >>> df.select(k=slot_key_expr(pl.col("t")))["k"].to_list()
    ['fact.residence', 'fact.residence', None]
    """
    return _key_expr(first_person_expr(norm_text))  # the user in the third person (memkit.commands.subjects)


def _key_expr(norm_text: pl.Expr) -> pl.Expr:
    """:func:`slot_key_expr` of a text already in the first person."""
    blocked = matches_expr(norm_text, NOT_SLOT) | (
        matches_expr(norm_text, PAST) & ~matches_expr(norm_text, NOW)
    )
    key, hits = pl.lit(None, dtype=pl.String), []
    for name, pattern in SLOTS:
        hit = matches_expr(norm_text, pattern)
        if name in NOT_VALUE:
            hit = hit & ~matches_expr(norm_text, NOT_VALUE[name])
        hits.append(hit.cast(pl.UInt8))
        key = pl.when(hit).then(pl.lit(f"fact.{name}")).otherwise(key)
    blocked = blocked | (pl.sum_horizontal(hits) != 1)  # none, or two slots in one text
    of = {slot: hit for (slot, _), hit in zip(SLOTS, hits, strict=True)}  # one slot: its hit is the key
    for name, pattern in SECOND.items():  # a second slot in a clause without a subject of its own
        blocked = blocked | (matches_expr(norm_text, pattern) & (of[name] == 0))
    return pl.when(blocked).then(pl.lit(None, dtype=pl.String)).otherwise(key)
