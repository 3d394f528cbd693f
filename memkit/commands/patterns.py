"""The lexical patterns behind :mod:`memkit.commands`: memory commands and admission rules.

Pure data (regular expressions) plus the text normalization they are matched on. Every pattern is
written in the subset of regex syntax that Python's ``re`` and polars' Rust engine read the same way
(no look-arounds, no back-references), because :func:`memkit.commands.parse` runs them one text at
a time and :func:`memkit.commands.admit_many` runs them as polars expressions over a whole column.

Command patterns are matched on the text as :func:`norm` gives it (memkit's one normalizer,
:func:`memkit.text.normalize`: NFKC, whitespace collapsed, trailing punctuation removed) ignoring
case; ``ENTITY`` is the one case-sensitive pattern (it looks for capitals).

Two families live here. The *command* patterns (:data:`COMMANDS`, :data:`NOT_COMMANDS`,
:data:`ORDER`) decide whether a message is an instruction about memory and cut out its payload, in
the named group ``text``. The *admission* patterns (:data:`FILLER`, :data:`PREFERENCE`,
:data:`COMMITMENT`, :data:`FACT`, :data:`ENTITY`, :data:`PREFERENCE_TOPICS`) decide whether an
ordinary message is worth keeping; the table in :mod:`memkit.commands.admission` gives each one's
kind and importance. They are lexical on purpose: cheap, predictable, testable, and blind to
paraphrase.

>>> norm("  记住：我喜欢茶。 ")
'记住:我喜欢茶'
>>> [topic for topic, _ in PREFERENCE_TOPICS][:3]
['drink', 'food', 'music']
"""

from __future__ import annotations

import re

import polars as pl

from ..text import normalize, normalize_expr

# Matched on the NFKC form, stripped, whitespace collapsed, trailing punctuation removed, ignoring case.
# _PZ / _PE: politeness a command may open with, any number of times: 请帮我记住… · "hey, can you please
# remember: …". A command must start the message, after these.
# an acknowledgement before it (好的，忘掉… · 嗯，记住…), always with its punctuation ("好的" alone is a turn)
_ACK_ZH = r"(?:(?:好的|好吧|好|嗯+|行|对了|那么|那|哦|噢)\s*[,、.。!~]+\s*)*"
# Chinese politeness; 请， / 麻烦， with a comma too
_PZ = rf"{_ACK_ZH}(?:(?:请|麻烦)\s*,\s*)?(?:(?:请|麻烦|你|您|帮我|给我|能不能|可不可以|可以|要|一定要)\s*)*"
# an English acknowledgement, with its punctuation ("Alright, forget …", "ok. remember …"); not "yes",
# "yeah", "right" or "well", which as often answer the conversation as open a command
_ACK_EN = r"(?:(?:ok|okay|alright|all right|sure|oops|whoops|sorry)\s*[,.!]+\s*)*"
_POLITE_EN = r"(?:please|pls|kindly|hey|(?:can|could|would|will) (?:you|u)|assistant)"  # and "ok" / "okay"
# subtle: "ok, " is both an acknowledgement and politeness, and a loop of each that can both take it
# backtracks quadratically on "ok, ok, ok, … x" (16 KB of it took 50 s). So the politeness loop must
# open with what no acknowledgement takes: a politeness word, or "ok" followed by spaces without a
# comma ("ok please") or by two comma runs (", , "). The same prefixes match as with a plain
# {_ACK_EN}(?:(?:{_POLITE_EN}|ok|okay)[,\s]+)*, but each in one way only, so a near miss fails in
# linear time. No atomic group or possessive quantifier: polars' regex engine reads neither.
_PE = (
    rf"{_ACK_EN}(?:(?:{_POLITE_EN}[,\s]+|(?:ok|okay)(?:\s+|\s*,+\s+,[,\s]*))"
    rf"(?:(?:{_POLITE_EN}|ok|okay)[,\s]+)*)?"
)
_ACK = rf"{_ACK_ZH}{_ACK_EN}"  # before a sentence that is not a command, too (NOT_COMMANDS)
# the user's own statement after 别忘了 / 记得: 我 + not 们 (a shared plan reminds), and 我的… only
# with a verb (我的生日是…; 别忘了我的伞 reminds)
_ME_ZH = r"我(?:[^们的了吧哈哦啊呀啦]|的[^,。]*(?:是|叫|在|为|有|要|不|住|对))"
# the verbs that undo (删除 · 删掉 · 撤销 · 不要了 · 忘掉), and "the last one": 刚才那条 · 上一条记忆 ·
# 最后一个; in English "the last memory", "your latest entry", "the previous one you saved"
_DEL_ZH = r"(?:删除|删掉|删了|去掉|撤销|撤回|不要了|别记了|不要记了|忘了|忘掉)"
_END_ZH = r"\s*(?:吧|哈|哦|啊|呀|啦)?"  # a closing particle (memkit.commands.courtesy.PARTICLES)
_THIS_ZH = r"(?:这个|这条|这句|那个|那条|刚才(?:那条|那句|说的|的)?)"
_NO_NOTE_ZH = r"(?:不要|别|不用|不必)(?:再)?(?:记住|记得|记下|记录|记)"
_LAST_ZH = r"(?:刚才|刚刚|上一|最后一|最近一|前一)(?:那|一)?(?:条|个|句)?(?:记忆|记录|内容|说的|的)?"
_LAST_EN = (
    r"(?:the\s+|that\s+|your\s+)?(?:last|latest|previous|most recent)"
    r"(?:\s+(?:memory|one|thing|entry|note|item|record))?(?:\s+you\s+(?:saved|stored|wrote|remembered|made))?"
)

COMMANDS: dict[str, list[str]] = {
    # "the last one" undone: the payload is empty, the op names its target
    "delete_last": [
        # 删除刚才那条
        rf"^{_PZ}(?:把)?{_DEL_ZH}\s*{_LAST_ZH}{_END_ZH}$",
        # 把上一条删了
        rf"^{_PZ}(?:把)?{_LAST_ZH}\s*(?:给我)?{_DEL_ZH}{_END_ZH}$",
        # 撤销一下 · 好的，撤销吧 · 麻烦你撤回: after the acknowledgement and politeness every command takes
        rf"^{_PZ}(?:撤销|撤回)(?:一下)?{_END_ZH}$",
        # 别记这条
        rf"^{_PZ}{_NO_NOTE_ZH}\s*{_THIS_ZH}{_END_ZH}$",
        # 这条别记了 · 算了，不用记了: what was just said
        rf"^{_PZ}(?:{_THIS_ZH}|算了\s*,?)?\s*(?:就)?{_NO_NOTE_ZH}了{_END_ZH}$",
        # don't save that
        rf"^{_PE}(?:don't|do not) (?:remember|store|save|keep) (?:that|this)$",
        # delete the last memory
        rf"^{_PE}(?:delete|remove|erase|forget|undo|drop|discard|scratch)\s+{_LAST_EN}$",
        # scratch that
        rf"^{_PE}(?:undo|undo that|scratch that|forget that|delete that|forget what i just said)$",
    ],
    # the question about the user as a whole; "what do you remember about my diet?" is ordinary recall
    "show": [
        # 你都记得我哪些事
        rf"^{_ACK_ZH}(?:关于我\s*[,]?\s*)?(?:你|您)?(?:都|还|到底|现在)?(?:记得|记住了|知道|记着|存了|保存了|记录了)"
        r"(?:关于)?我?(?:的)?(?:一些|些)?(?:什么|哪些|多少)(?:事情|事|东西|信息|内容)?(?:呢|吗|啊|呀|啦|哦)?$",
        # 看看你的记忆
        rf"^{_ACK_ZH}(?:请|麻烦(?:你|您)?)?(?:列出|显示|查看|看看|看一下|展示)(?:一下)?(?:你|我的|你的)?(?:记得的|保存的)?(?:所有)?"
        r"(?:关于我的)?(?:记忆|回忆|信息)$",
        # what do you know about me
        rf"^{_PE}what (?:do|did|else do) you (?:remember|know|recall) about me$",
        # what have you learned about me
        rf"^{_PE}what have you (?:remembered|stored|saved|learned|learnt) about me$",
        # what's in your memory
        rf"^{_PE}what(?: do you have|'s| is) in your memory(?: about me)?$",
        # show me my memories
        rf"^{_PE}(?:show|list|display|tell)(?: me)? (?:my|your|all)(?: stored| saved)? memories"
        r"(?: about me)?$",
        # tell me what you know about me
        rf"^{_PE}(?:show|tell) me what you (?:remember|know) about me$",
    ],
    # (?P<text>…) is the payload, from its first character that is not a space or a separator.
    # 记得 commands only after 请 / 要 (记得明天开会 alone is not one). A bare English "remember" needs
    # "that", ":" or a first-person word after it ("remember the titans" is no command); "please
    # remember …" always is one.
    "remember": [
        # 记一下：明天开会 -> 明天开会
        rf"^{_PZ}(?:帮我)?(?:记住|记下来|记下|记一下|记着|牢记|记录一下)\s*[:,、]?\s*(?P<text>[^\s:,、].*)$",
        # 请记得明天开会 -> 明天开会
        r"^(?:请|你要|一定要|要)记得\s*[:,]?\s*(?P<text>[^\s:,、].*)$",
        # 别忘了我对花生过敏 · 千万记得我不吃香菜: before the user's own statement (记得带伞 reminds)
        rf"^{_PZ}(?:千万(?:要)?)?(?:别|不要|不能)忘(?:了|记|掉)?\s*,?\s*(?P<text>{_ME_ZH}.*)$",
        rf"^{_ACK_ZH}(?:千万(?:要)?)?记得\s*,?\s*(?P<text>{_ME_ZH}.*)$",
        # 别忘了：周五交报告 (the colon says what to keep)
        rf"^{_PZ}(?:千万(?:要)?)?(?:记得|(?:别|不要|不能)忘(?:了|记|掉)?)\s*:\s*(?P<text>[^\s:,、].*)$",
        # remember that I'm vegan -> I'm vegan
        rf"^{_PE}(?:remember|note|keep in mind|don't forget|do not forget|make a note|memorize)"
        r"(?: this)?(?: that|:)\s*(?P<text>[^\s:,、].*)$",
        # please note the meeting moved -> the meeting moved
        r"^(?:please|pls)[,\s]+(?:remember|memorize|note)\s*:?\s+(?P<text>[^\s:,、].*)$",
        # remember my wife is Ann -> my wife is Ann
        r"^(?:remember|memorize)\s*,?\s+(?P<text>(?:i|i'm|i've|i'd|my|we|we're|our|me)\b.+)$",
    ],
    # 忘了 / 忘记 also mean "I forgot" (忘了带钥匙), so bare they command only before 我 · 关于 · 那 ·
    # 这 · 上次 … or with a closing 吧; after politeness (请忘记…) and as 忘掉 they always do.
    "forget": [
        # 请忘记我的地址 -> 我的地址
        rf"^{_ACK_ZH}(?:请|麻烦|你|您|帮我)(?:\s*(?:请|麻烦|你|您|帮我))*\s*(?:忘掉|忘记|忘了)(?:关于)?\s*[:,]?\s*"
        r"(?P<text>[^\s:,、].*)$",
        # 忘掉我的生日 -> 我的生日
        rf"^{_ACK_ZH}忘掉(?:关于)?\s*[:,]?\s*(?P<text>[^\s:,、].*)$",
        # 忘了我喜欢美式咖啡 -> 我喜欢美式咖啡
        rf"^{_ACK_ZH}(?:忘了|忘记)(?:关于)?\s*[:,]?\s*(?P<text>(?:我|关于|刚才|那|这|之前|以前|上次).+)$",
        # 忘了咖啡的事吧 -> 咖啡 (PAYLOAD_TAIL drops 的事)
        rf"^{_ACK_ZH}(?:忘了|忘记)\s*(?P<text>[^\s:,、].*?)吧$",
        # 不要再记住我的电话 -> 我的电话
        rf"^{_PZ}(?:不要|别|不用|不必|无需)(?:再)?(?:记住|记得|记下|记录|记)(?:关于)?\s*[:,]?\s*"
        r"(?P<text>[^\s:,、].*)$",
        # 把我的地址忘了吧 -> 我的地址
        rf"^{_PZ}把(?P<text>[^\s:,、].*?)(?:忘了|忘掉|忘记|删了|删掉|删除)(?:吧)?$",
        # stop remembering my address -> my address
        rf"^{_PE}(?:forget|stop remembering|don't remember|do not remember|don't store|do not store"
        r"|don't keep|do not keep|don't save|do not save)\s+(?:about\s+|that\s+|everything about\s+)?"
        r"(?P<text>[^\s:,、].*)$",
        # delete all memories about my ex -> my ex
        rf"^{_PE}(?:delete|erase|remove) (?:the |any |all )?memor(?:y|ies) (?:about|of|that)"
        r" (?P<text>[^\s:,、].*)$",
    ],
}
# Sentences that fit a pattern above but are not commands (checked on the same normalized text):
# 记住了吗 (a question), "remember that movie" (a recollection), 不要记错 (don't mix it up), "forget it"
# (never mind). A match here skips the whole op, not one pattern.
NOT_COMMANDS: dict[str, list[str]] = {
    "remember": [
        rf"^{_ACK}(?:记住|记下|记着)(?:了|吗|没|住)",
        rf"^{_ACK}(?:千万(?:要)?)?记得我[^,。]*(?:什么|哪|谁|多少|几)",  # 记得我喜欢什么: a question
        rf"^{_ACK}remember that (?:movie|film|book|song|show|place|restaurant|time|day|night|trip|guy|girl"
        r"|man|woman|one|thing)\b",
    ],
    "forget": [
        r"(?:不要|别|不用)(?:再)?记(?:错|混|乱|反)",
        # "forget it" ends the sentence, or a clause ("forget about it, the weather is nice")
        rf"^{_ACK}(?:please[,\s]+)?forget\s+(?:it|about it|it all|that|this|everything)(?:$|\s*[,.!;])",
        rf"^{_ACK}(?:忘掉|忘了|忘记)(?:吧|了)?$",  # 好，忘掉吧: never mind
    ],
}
# Patterns are tried in this order: the narrow intents before the broad ones ("forget that" is delete_last).
ORDER = ("delete_last", "show", "remember", "forget")
# ASCII word boundaries and classes: CJK characters are not "word" characters, so "我喜欢coffee" has a
# boundary before "coffee" (polars uses the same, see memkit.commands._any); matching ignores case
FLAGS = re.IGNORECASE | re.ASCII
# what parse() runs, compiled once (admission compiles its own set: memkit.commands.admission)
COMPILED = {op: [re.compile(p, FLAGS) for p in COMMANDS[op]] for op in ORDER}
COMPILED_NOT = {op: [re.compile(p, FLAGS) for p in ps] for op, ps in NOT_COMMANDS.items()}
QUESTION = r"(?:[?]|吗|么|呢)$"  # on the stripped text (norm would trim the "?")
# ... but a polite request phrased as a question still commands: "Can you remember that I like jazz?"
REQUEST = r"(?i)^(?:can you|could you|would you|will you|can u|能不能|可不可以|能否|可以|你能|你可以)"
# trimmed from the end before matching: sentence punctuation of both scripts, tildes, the ellipsis
TRAIL = "。.!?！？~～…,，;； \t\n"
# Payload cleanup: "忘了我喜欢美式咖啡这件事吧" -> "我喜欢美式咖啡" (forget payloads only).
PAYLOAD_TAIL = re.compile(r"(?:这件事|那件事|这个|那个|的事情|的事)?\s*(?:了)?$")  # 吧: courtesy.particle_off
# Payload cleanup for every op: thanks or "please" closing the message are not part of what to
# remember or forget ("forget that I like tea, thanks" -> "I like tea"; 忘掉我喜欢拿铁，谢谢 -> 我喜欢拿铁).
# After a comma it always goes; after a space (or straight after Chinese) it stays when it is what was
# said (POLITE_SAID).
POLITE_TAIL = re.compile(
    r"(?P<sep>\s*[,;、]\s*|\s+)?(?:please|pls|plz|thanks(?: a lot| so much)?"
    r"|thank you(?: very much| so much)?|thx|谢谢(?:你|您|啦|了)?|多谢(?:你|您|啦|了)?|谢啦|谢了)$",
    re.IGNORECASE,
)
# the word before it that makes it what was said: "she never says please", "hard to please", "no
# thanks", "my dog is called Thanks", "Please Please", "my song: Thank You", 他从不说谢谢, 他说了谢谢,
# 我要谢谢你
POLITE_SAID = re.compile(
    r"(?:\b(?:say|says|said|saying|tell|tells|told|write|writes|wrote|word|called|named|is|was|are|be|a|the"
    r"|to|no|and|or|please|thanks|thank)|[:：说讲写句声叫是要想得该会很不没]|[说讲写道]了)$",
    re.IGNORECASE,
)
# straight after a Chinese character only these are thanks (谢了 / 谢啦 end words: 凋谢了, 道谢了, 不用谢了)
POLITE_ZH_BARE = ("谢谢", "多谢")


def norm(text: str) -> str:
    """The form patterns are matched on: :func:`memkit.text.normalize` keeping case, collapsing
    whitespace and trimming trailing punctuation (:data:`TRAIL`).

    Case is kept because :data:`ENTITY` looks for capitals; the other patterns ignore case
    (:data:`FLAGS`), so no second, lowercased copy is needed.
    """
    return normalize(text, casefold=False, collapse=True, trim=TRAIL)


def norm_expr(col: str) -> pl.Expr:
    """:func:`norm` as a polars expression over column ``col``: what
    :func:`memkit.commands.admit_many` matches a whole column on."""
    return normalize_expr(col, casefold=False, collapse=True, trim=TRAIL)


def matches_expr(expr: pl.Expr, pattern: str, *, ignore_case: bool = True) -> pl.Expr:
    """Does ``pattern`` (one of this module's, in the subset Python's ``re`` and polars both read)
    match ``expr``? Word boundaries are ASCII ones, as with ``re.ASCII`` (:data:`FLAGS`): the Unicode
    ``\\b`` would push Rust's regex engine off its fast DFA on Chinese text (~30x slower)."""
    return expr.str.contains(("(?i)" if ignore_case else "") + pattern.replace(r"\b", r"(?-u:\b)"))


# what may sit between filler words: spaces, punctuation of both scripts, emoji (U+1F300-1FAFF,
# U+2600-27BF), so "ok 👍" and "嗯嗯，好的！" are filler
_SEP = r"[\s,.!?~…。、:;'\"()\-—\U0001F300-\U0001FAFF\u2600-\u27BF]"


def _alt(words: str) -> str:
    """``"a b c"`` -> ``"(?:a|b|c)"``; a ``_`` inside a word stands for a space.

    >>> _alt("ok thank_you")
    '(?:ok|thank you)'
    """
    return "(?:" + "|".join(w.replace("_", " ") for w in words.split()) + ")"


# subtle: no word here repeats itself ("哈+", "k+"): FILLER repeats the words, and a repeat inside a
# repeat backtracks exponentially in Python's re on a near-miss ("哈哈…哈x"). Words are disjoint from _SEP.
_FILLER_WORDS = _alt(
    "嗯 哦 噢 喔 哈 呵 嘿 啊 额 呃 嗯哼 好的 好吧 好滴 好哒 好 行 可以 收到 "
    "知道了 明白了 明白 了解 谢谢你 谢谢啦 谢谢了 谢谢 多谢 感谢 对的 对 是的 是 没问题 没事 "
    "ok okay okie k thanks thank_you thank_you_so_much thanks_a_lot thx ty cool nice great sure yes "
    "yeah yep yup no nope lol ha hm hmm um umm uh got_it alright fine right i_see wow oh ah"
)
# the whole message is filler and separators: 嗯嗯好的 · ok thanks! · 哈哈哈 · 👍 (never stored)
FILLER = rf"^{_SEP}*(?:{_FILLER_WORDS}{_SEP}*)*$"
# PREFERENCE (user turns, importance 0.7): 我 + adverbs + a verb of liking (我不太喜欢香菜, 我平时爱喝茶),
# I / I'm + adverbs + one in English (I really don't like spicy food, I'm into jazz), "I'd rather",
# "my favourite", "I'm vegan"
_ADVERBS_ZH = _alt(
    "现在 平时 一直 还是 其实 也 通常 比较 更 最 特别 很 非常 真的 挺 不太 不 都 向来 从来不 从不 一般"
)
# a change of habit states a preference too: 改喝 · 换成 · 只吃
_LIKES_ZH = _alt(
    "喜欢 爱喝 爱吃 爱看 爱听 爱 偏好 偏爱 讨厌 受不了 习惯 倾向 "
    "不吃 不喝 吃素 改喝 改吃 改用 换成 改成 只喝 只吃"
)
# negations count as adverbs: "I don't like jazz", "I no longer like coffee" are preferences too
_ADVERBS_EN = _alt(
    "really usually now still also actually much always generally totally definitely "
    "don't do_not no_longer never"
)
_LIKES_EN = _alt("prefer like love enjoy hate dislike can't_stand cannot_stand adore into")
PREFERENCE = (
    rf"我{_ADVERBS_ZH}*{_LIKES_ZH}"
    rf"|\bi(?:'m| am)?\s+(?:{_ADVERBS_EN}\s+)*{_LIKES_EN}\b"
    r"|\bi'd rather\b|\bi would rather\b|\bmy (?:favou?rite|preferred)\b"
    r"|\bi(?:'m| am) (?:a )?(?:vegetarian|vegan)\b"
)
# COMMITMENT (user and assistant turns, importance 0.7, kind decision): a promise, a decision or a
# deadline: I'll send it by Friday · we agreed · 我打算… · 我们说好了… · 下周三之前交
# first-person future, plans and obligations: I'll · I'm going to · let's · I have to
_WILL_EN = _alt(
    "i'll i_will i'm_going_to i_am_going_to i'm_gonna we'll we_will i_promise i_plan_to i'm_planning_to "
    "i_intend_to i_decided i've_decided we_decided we've_decided we_agreed let's i_have_to i_need_to i_must"
)
_BY_EN = _alt(
    "monday tuesday wednesday thursday friday saturday sunday tomorrow tonight next_week the_end_of"
)
# Chinese deadlines are "… before" (之前): 下周三之前 · 月底之前 · 之前要交
COMMITMENT = (
    rf"\b{_WILL_EN}\b|\bdeadline\b|\bdue (?:by|on)\b|\bby {_BY_EN}\b"
    r"|我(?:会|将|打算|计划|决定|准备|答应|保证|必须)|我们(?:决定|约定|说好|定了|打算|计划)|决定了|说好了|约好了|截止"
    r"|之前(?:要|得|必须)?(?:完成|交|提交|发|做完|给)|(?:下|这)(?:周|星期|个月)[一二三四五六日天]?之前"
    r"|(?:明天|后天|今晚|月底|周末)之前"
)
# FACT (user turns, importance 0.6): the user's name, home, work, family, allergies: 我叫… · 我住在… ·
# 我的生日 · 对花生过敏 · my wife … · I live in … · I'm allergic … · call me …
_MY_ZH = _alt(
    "生日 老婆 老公 妻子 丈夫 女儿 儿子 孩子 妈妈 爸爸 父母 宠物 狗 猫 邮箱 电话 地址 工作 职业 公司"
)
_MY_EN = _alt(
    "name wife husband son daughter kids? children birthday address email phone job boss team company "
    "dog cat partner girlfriend boyfriend mom mother dad father sister brother"
)
# 我在…工作 allows 1-12 characters between, none of them a comma or 。: one clause
FACT = (
    r"我(?:叫|的名字(?:是|叫)|姓|住在|家在|来自|老家|在[^,。]{1,12}(?:工作|上班|上学|读书|实习)|是(?:一名|一个)"
    rf"|的{_MY_ZH}|(?:老婆|老公|妻子|丈夫|女儿|儿子|孩子)(?:叫|是|今年))|过敏"
    rf"|\bmy {_MY_EN}\b|\bi (?:live|work|study) (?:in|at|for)\b"
    r"|\bi(?:'m| am) (?:from|allergic|based in|married|divorced|pregnant|retired)\b|\bi work as\b|\bcall me\b"
)
# ENTITY (user turns, importance 0.5). The capital must follow a lowercase letter, a digit or a
# mid-sentence mark, so the capital that opens a sentence is no name: "met Alice at Acme" is kept as a
# fact, "Alice called" is not.
ENTITY = (  # case-sensitive: a capitalized word inside a sentence, a book title, a named organisation
    # a name right after Chinese characters counts too: 我见了Alice
    r"[a-z0-9,;:]\s+[A-Z][a-z]+|[\u4e00-\u9fff]\s*[A-Z][a-z]+|《[^》]{1,60}》"
    r"|[\u4e00-\u9fff]{2}(?:公司|大学|医院|学校|银行|餐厅|酒店|集团|中学|小学)"  # {2}, not {2,}: linear
)

# The subject of a stated preference, so that a changed preference replaces the old one (same key
# ``preference.<topic>``): (topic, Chinese words, English words). First match wins; a preference on
# no listed topic gets no key. English words match whole (plural -s allowed): "seats" is not "eat".
# subtle: "replie" is there for "replies" (reply + s would not match it).
_TOPIC_WORDS = (
    ("drink", "咖啡|拿铁|美式|奶茶|喝|茶|果汁|啤酒|酒|可乐",
     "coffee|tea|latte|americano|espresso|cappuccino|beer|wine|juice|drink"),
    ("food", "吃|菜|香菜|辣|面条|米饭|披萨|素食", "food|eat|spicy|cuisine|pizza|sushi|vegetarian|vegan|meat"),
    ("music", "音乐|歌|爵士|摇滚|古典", "music|jazz|rock|song|classical"),
    ("seat", "座位|靠窗|过道", "seat|aisle|window"),
    ("reply_style", "回答|回复|中文|英文|简短|详细",
     "reply|replie|answer|respond|language|english|chinese|concise|brief"),
    ("sport", "运动|跑步|游泳|篮球|足球|瑜伽", "sport|running|swim|swimming|basketball|football|soccer|yoga"),
    ("schedule", "早上|晚上|上午|下午|周末", "morning|evening|night|weekend"),
    ("media", "电影|书|剧", "movie|film|book|series|show"),
    ("color", "颜色|红色|蓝色|绿色|黑色|白色", "color|colour"),
    ("travel", "旅行|旅游|酒店|航班|飞机", "travel|hotel|flight"),
)  # fmt: skip
# (topic, pattern): the Chinese words anywhere (CJK text has no word boundaries), the English whole
PREFERENCE_TOPICS: tuple[tuple[str, str], ...] = tuple(
    (name, rf"{zh}|\b(?:{en})s?\b") for name, zh, en in _TOPIC_WORDS
)
