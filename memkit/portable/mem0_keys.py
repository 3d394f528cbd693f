"""mem0's memories are the user's own facts and preferences: the key the agent would give them.

mem0's extractor writes what a user says about themselves without a subject: "Lives in Boston",
"Name is Alex", "Is vegetarian", "Likes tea", "Moved to Denver", 住在杭州, 喜欢喝茶. A record scoped to a
user (its ``user_id``) is that user's own statement, so :func:`mem0_keys` reads such a text in the first
person (:func:`first_person_mem0`: "Lives in Boston" -> "I live in Boston", "Name is Alex" -> "my name is
Alex", 住在杭州 -> 我住在杭州, the verb made to agree as :mod:`memkit.commands.subjects` does for "User
lives ...") and gives it the key :func:`memkit.commands.admit_many` gives a user's turn
(``fact.residence``, ``preference.drink``; every rule of :mod:`memkit.commands.slots` applies: the past,
plans, two slots, a relative's fact get none).

Only a text that *opens* with a verb (or with one of the user's own attributes: name, birthday,
favorite ...) is read so; a text with its own subject keeps it ("Her sister lives in Paris", "Alex's wife
is a doctor", "The user's mother ..." read as "my mother ...": none of them the user's slot), and so does a
record scoped only to an ``agent_id`` or ``run_id`` (what an agent or a run knows is not the user's
statement) or to a user *and* an agent (mem0 then extracts the assistant's own traits, "Prefers concise
answers", with its agent prompt when the conversation has assistant turns: whose it is, the record does
not say). A chat's turn without a subject is *not* read so (:mod:`~memkit.commands.subjects`): there the
missing subject is the previous turn's topic; in mem0's store it is the user.

>>> first_person_mem0(pl.Series(["Lives in Boston", "Name is Alex", "喜欢喝茶", "Her sister lives in Paris"]))
... # doctest: +NORMALIZE_WHITESPACE
shape: (4,)
Series: '' [str]
[
    "I live in Boston"
    "my name is Alex"
    "我喜欢喝茶"
    "Her sister lives in Paris"
]
"""

from __future__ import annotations

import polars as pl

from ..commands import admit_many
from ..commands.slot_leads import NOW_EN

__all__ = ["first_person_mem0", "mem0_keys"]

# the third person singular of the verbs mem0's extractor opens a memory with -> the first person
_AGREE = {
    "is": "am", "has": "have", "does": "do", "doesn't": "don't", "isn't": "am not", "hasn't": "haven't",
    "was": "was", "wasn't": "wasn't", "goes": "go", "studies": "study", "teaches": "teach",
    "watches": "watch", "relaxes": "relax", "fixes": "fix", "misses": "miss", "finishes": "finish",
    "identifies": "identify", "tries": "try", "flies": "fly", "carries": "carry", "worries": "worry",
}  # fmt: skip
_S_VERBS = (  # -> the word without its final s
    "lives works likes loves enjoys prefers dislikes hates wants plans needs owns drinks eats plays uses"
    " speaks avoids reads listens runs drives travels follows attends wears cooks writes adores values"
    " supports volunteers commutes rents knows feels hopes wishes thinks believes intends tends keeps visits"
    " takes practices collects celebrates cares spends trains"
).split()
_PAST = (  # one form for every person
    "moved relocated grew got started turned graduated lived worked used had became joined left quit bought"
    " adopted switched changed stopped began finished married divorced can cannot can't"
).split()
_VERBS = {**_AGREE, **{v: v[:-1] for v in _S_VERBS}, **{v: v for v in _PAST}}
# adverbs between the missing subject and its verb, kept: "Currently lives in Denver" — the holds-now
# words the slots accept (NOW_EN), "also", and adverbs of frequency
_ADV_EN = "|".join(
    [*NOW_EN, *"also usually often really mostly generally never always sometimes rarely".split()]
)
# the user's own attributes a memory may open with: "Name is Alex" -> "my name is Alex"
_OWN_EN = (
    "name|full name|first name|last name|nickname|favorite|favourite|preferred|hometown|birthday|age|job"
    "|occupation|profession|employer|address|home|native language|mother tongue|wife|husband|partner|spouse"
    "|girlfriend|boyfriend|fiance|fiancee"
)
_BULLET = r"((?:[-*•] ?)?)"
_EN_VERB = rf"(?i)^{_BULLET}((?:(?:{_ADV_EN}) )*)({'|'.join(sorted(_VERBS, key=len, reverse=True))})( .+)$"
_EN_OWN = rf"(?i)^{_BULLET}({_OWN_EN})((?:'s)? .+)$"
# Chinese: the adverbs and the verbs (or the user's attributes, 的) a subjectless memory opens with
_ADV_ZH = (
    "现在|目前|如今|已经|还|一直|也|刚刚|刚|最近|平时|经常|通常|总是|特别|非常|很|更|最|不|从不|终于|曾经|以前"
    "|本来|原来"
)
_LEAD_ZH = (
    "住在|住|定居|搬到|搬去|搬家|搬回|在|是|叫|喜欢|爱|热爱|喜爱|钟爱|讨厌|偏好|偏爱|吃|喝|对|来自|出生|老家|今年"
    "|养|有|就职|入职|毕业|就读|单身|已婚|结婚|离婚|订婚|习惯|使用|会|从事|做|当|怕|害怕"
)
# what opens with a lead but is a subject of its own: 用户 (the user: memkit.commands.subjects), 爱人 (the
# spouse), 对象 (the partner), 有人 (someone), 会员 (a member), 当地人 (the locals)
_NOT_ZH = r"^(?:[-*•] ?)?(?:用户|爱人|对象|有人|会员|当地|在座|是否)"
_OWN_ZH = "名字|生日|职业|爱好|家乡|年龄|工作是"
_ZH = rf"^{_BULLET}((?:{_ADV_ZH})*)({_LEAD_ZH})(.+)$"
_ZH_OWN = rf"^{_BULLET}({_OWN_ZH})(.+)$"


def first_person_mem0(texts: pl.Series) -> pl.Series:
    """``texts`` with a memory that has no subject read in the first person (module docstring); every
    other text as it is. Vectorized: four regular expressions over the column."""
    t = pl.col("t")
    verb = t.str.extract_groups(_EN_VERB)
    own = t.str.extract_groups(_EN_OWN)
    zh = t.str.extract_groups(_ZH)
    zh_own = t.str.extract_groups(_ZH_OWN)
    said = pl.col("v").struct.field("3").str.to_lowercase()
    out = pl.DataFrame({"t": texts}, schema={"t": pl.String}).with_columns(
        pl.col("t").str.replace_all("’", "'")
    )
    out = out.with_columns(v=verb, o=own, z=zh, zo=zh_own)
    return out.select(
        pl.when(pl.col("v").struct.field("3").is_not_null())
        .then(
            pl.concat_str(
                pl.col("v").struct.field("1"),
                pl.lit("I "),
                pl.col("v").struct.field("2").str.to_lowercase(),
                said.replace_strict(_VERBS, default=said),
                pl.col("v").struct.field("4"),
            )
        )
        .when(pl.col("o").struct.field("2").is_not_null())
        .then(
            pl.concat_str(
                pl.col("o").struct.field("1"),
                pl.lit("my "),
                pl.col("o").struct.field("2").str.to_lowercase(),
                pl.col("o").struct.field("3"),
            )
        )
        .when(pl.col("zo").struct.field("2").is_not_null())
        .then(
            pl.concat_str(
                pl.col("zo").struct.field("1"),
                pl.lit("我的"),
                pl.col("zo").struct.field("2"),
                pl.col("zo").struct.field("3"),
            )
        )
        .when(pl.col("z").struct.field("3").is_not_null() & ~t.str.contains(_NOT_ZH))
        .then(
            pl.concat_str(
                pl.col("z").struct.field("1"), pl.lit("我"), *(pl.col("z").struct.field(i) for i in "234")
            )
        )
        .otherwise(t)
        .alias(texts.name)
    ).to_series()


def mem0_keys(contents: pl.Series, mine: pl.Series) -> pl.Series:
    """The key of each memory the agent would give its user's statement (``key``: null where none), for the
    rows where ``mine`` (the record is scoped to a user) is true; null elsewhere."""
    texts = first_person_mem0(contents.filter(mine))
    keys = admit_many(texts, "user")["key"] if len(texts) else pl.Series([], dtype=pl.String)
    out = pl.Series("key", [None] * len(contents), dtype=pl.String)
    return out.scatter(mine.arg_true(), keys) if len(keys) else out
