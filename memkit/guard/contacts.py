"""Phone numbers and e-mail addresses in the shapes the plain patterns of :mod:`memkit.guard.rules`
miss: an international number dialled with an exit prefix (``00852 9123 4567``, ``011 44 20 7946
0958``) or written with its country code in brackets (``(852) 9123 4567``), a US number after its
``1`` (``1-800-555-0199``), a number glued to its label (``tel5551234``, ``电话02162345678``) or
written after it in a national form (``0912345678``, ``07700 900123``, ``4155550132``), a CJK
local part glued to a Latin one (``Li伟@qq.com``, ``李伟88@qq.com``); and QQ numbers and WeChat ids
after their label (``QQ 123456789``, ``微信：wxid_ab12cd34``: MG109). The patterns are here as text for
the rule table; the checks decide, as in :mod:`memkit.guard.checks`.

>>> country_code("85291234567"), country_code("14155550132"), country_code("4420794609")
('852', '1', '44')
>>> exit_prefixed("拨 00852 9123 4567", 2, 17), exit_prefixed("编号 0085291234567", 3, 16)
(True, False)
>>> labelled("tel5551234", 3, 10), labelled("telegram5551234", 8, 15)
(True, False)
>>> qq_number("QQ 123456789", 3, 12), qq_number("QQ 20000000 用户", 3, 11)
(True, False)
>>> wechat_id("微信：zhangsan", 3, 11), wechat_id("WeChat: download", 8, 16)
(True, False)
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..text import CJK
from . import checks as ck

Check = Callable[[str, int, int], bool]

__all__ = [
    "BRACKETED", "EXIT_PREFIXED", "LABELLED", "MAIL_WORDS", "NANP_ONE", "QQ", "WECHAT", "bracketed",
    "cjk_email", "country_code", "exit_prefixed", "labelled", "nanp_one", "qq_number", "wechat_id",
]  # fmt: skip

_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# the e-mail words a CJK local part is cut after (我的邮箱是李伟@qq.com: 李伟@qq.com)
MAIL_WORDS = "邮箱|郵箱|电邮|電郵|邮件|郵件|信箱|地址|联系|聯繫|联络|聯絡"
_MAIL_WORD_END = re.compile(f"(?:{MAIL_WORDS})$")
_CJK_RUN = re.compile(f"[{CJK}]+")
# an e-mail label right before a local part (邮箱李伟li@…, email:张三zhang@…, 我的邮箱是张三zhang@…);
# 联系 and 地址 are no such label: 联系我li@example.com
_MAIL_LABEL_END = re.compile(
    r"(?i)(?:邮箱|郵箱|电邮|電郵|邮件|郵件|信箱|(?<![a-z])e-?mail)(?:地址|address)?\s*(?:是|为|為|:|：)?\s*$"
)

# phone labels before a number: any words may sit between these and it (电话打 8765 4321); an English
# one may be glued to it (tel5551234), as nothing else may (telegram 5551234 is no label)
_PHONE_EN = "tel|phone|telephone|ph|fax|landline|call|ext"
_PHONE_ZH = "电话|電話|座机|座機|固话|固話|传真|傳真|分机|分機"
# these name the device or the contact too (手机销量 25000000 台): only a number word, "is" or a colon
# may come between them and the number (手机号码是 9123 4567, mobile no. 9123 4567, cell phone: 555-1234);
# no boundary after the English ones: what follows must be one of those or the number (cell5551234)
_MOBILE_EN, _MOBILE_ZH = (
    "mobile|mob|cell|cellphone|whatsapp",
    "手机|手機|联系方式|聯繫方式|聯絡方式|号码|號碼",
)
_MOBILE = (
    rf"(?:\b(?:{_MOBILE_EN})|{_MOBILE_ZH})[ \t]{{0,3}}"
    r"(?:(?:\b(?:phone|number|num|no|nr)\b\.?|#|号码|號碼|号|號)[ \t]{0,3})?"
    r"(?:(?:\bis\b|是|为|為)[ \t]{0,3})?[:：#]?[ \t]{0,3}"
)
# the value: a national number with its trunk 0 (0912345678, 07700 900123, 01 23 45 67 89), a bare
# North American one (4155550132) or a local one without its area code (8765 4321, 555-1234, 555.1234)
LABELLED = (
    rf"(?i)(?:\b(?:{_PHONE_EN})(?:\b[^0-9\n]{{0,10}}?)?|(?:{_PHONE_ZH})[^0-9\n]{{0,10}}?|{_MOBILE})"
    r"(?P<v>0[1-9](?:[ .-]?[0-9]){8,10}|[2-9][0-9]{2}[2-9][0-9]{6}|[2-9][0-9]{2,3}[ -]?[0-9]{4}"
    r"|[2-9][0-9]{2}\.[0-9]{4})"
)
_GLUED = re.compile(rf"(?i)(?:^|[^a-z])(?:{_PHONE_EN}|{_MOBILE_EN})$")
# a count of phones or a thing of the phone's, not a number to call: phone sales 25000000 units, call
# volume 2345678, phone bill 0123456789, 电话费
_NOT_A_NUMBER = re.compile(
    r"(?i)(?:(?<![a-z])(?:sales|sold|shipments?|shipped|users|subscribers|owners|units|volume|market|count"
    r"|bills?|model|plan)|销量|销售|出货|用户|型号|费)[^0-9\n]{0,10}$"
)
_LABEL_NEAR = re.compile(rf"(?i)(?:{_PHONE_EN}|{_MOBILE_EN}|{_PHONE_ZH}|{_MOBILE_ZH})[^0-9\n]{{0,10}}$")
# a bare 号码 names a phone's number only after nothing of a word (号码：…), a contact's word or a
# person's (联系号码, 我的号码, 他的新号码); after any other noun it is that thing's (订单号码, 中奖号码)
_NUMBER_WORD = re.compile(r"(?:号码|號碼)[ \t]{0,3}(?:(?:是|为|為)[ \t]{0,3})?[:：#]?[ \t]{0,3}$")
_NUMBER_OWNER = re.compile(
    rf"(?:^|[^{CJK}A-Za-z0-9]|联系|聯繫|联络|聯絡|(?:我|你|您|他|她|我们|我們|他们|他們)的?新?的?|新的?|拨打|撥打|打|留)$"
)
_OTHER_LABEL = re.compile(
    rf"(?i)(?:{_PHONE_EN}|{_MOBILE_EN}|{_PHONE_ZH}|手机|手機|联系方式|聯繫方式|聯絡方式)[ \t]*$"
)
_LONE_ONE = re.compile(r"(?:^|[^0-9])1[ .-]?$")  # 1 (800) 555-0199: NANP's country code (NANP_ONE)
# an exit prefix (00, or 011 from North America), then a country code and the national number
EXIT_PREFIXED = r"(?:00|011)[ .-]?[1-9](?:[ .-]?[0-9]){6,14}"
# a country code in brackets ((852) 9123 4567, (+852) …, (00852) …)
BRACKETED = r"\((?:\+|00)?[1-9][0-9]{0,2}\)[ .-]?[0-9](?:[ .-]?[0-9]){6,11}"
NANP_ONE = r"1[ .-]?\(?[2-9][0-9]{2}\)?[ .-]?[2-9][0-9]{2}[ .-][0-9]{4}"  # 1-800-555-0199, 1 (415) 555-0132

# ITU-T E.164 country codes of two digits (1 and 7 are the one-digit ones; every other code has three)
_CC2 = {20, 27, 30, 31, 32, 33, 34, 36, 39, 40, 41, 43, 44, 45, 46, 47, 48, 49, 51, 52, 53, 54, 55, 56, 57}
_CC2 |= {58, 60, 61, 62, 63, 64, 65, 66, 81, 82, 84, 86, 90, 91, 92, 93, 94, 95, 98}
# the national numbers' lengths where they are fixed: NANP, China, Hong Kong, Macau, Taiwan
_NATIONAL = {"1": (10, 10), "86": (10, 11), "852": (8, 8), "853": (8, 8), "886": (8, 9)}


def country_code(digits: str) -> str | None:
    """The country code ``digits`` start with (E.164 codes are prefix-free), or None (a leading 0)."""
    if not digits or digits[0] == "0":
        return None
    if digits[0] in "17":
        return digits[0]
    return digits[:2] if int(digits[:2]) in _CC2 else digits[:3]


def _national_ok(cc: str, national: str) -> bool:
    """Whether ``national`` is a phone number of country ``cc``: a known length (NANP's area code and
    exchange start 2-9; China's mobiles 1[3-9]), 7-12 digits elsewhere; no trunk 0 but Italy's."""
    if not national or (national[0] == "0" and cc != "39"):
        return False
    lo, hi = _NATIONAL.get(cc, (7, 12))
    if not lo <= len(national) <= hi:
        return False
    if cc == "1":
        return national[0] not in "01" and national[3] not in "01"
    return cc != "86" or len(national) == 10 or national[0] != "1" or national[1] in "3456789"


def _alone(text: str, start: int, end: int) -> bool:
    """Not glued to letters or digits, not a part of a longer number, not labelled an order number."""
    return (
        ck.ok_around(text, start, end, _ALNUM)
        and not ck.more_groups(text, start, end)
        and not ck.number_label(text[:start])
    )


def exit_prefixed(text: str, start: int, end: int) -> bool:
    """MG103 after an exit prefix, ``00`` or ``011``: a country code and a national number of its
    length. Written without a separator (``0085291234567``) only for China, Hong Kong, Macau and
    Taiwan, whose lengths are fixed (:data:`_NATIONAL`), or after a phone label: a run of digits
    after ``00`` is otherwise an account or a serial (``账号 0012345678901``)."""
    s = text[start:end]
    d = re.sub(r"[ .-]", "", s)
    prefix = "011" if s.startswith("011") else "00"
    rest = d[len(prefix) :]
    cc = country_code(rest)
    if cc is None or not _alone(text, start, end) or not _national_ok(cc, rest[len(cc) :]):
        return False
    labelled = _LABEL_NEAR.search(text, max(0, start - 24), start) is not None
    return s != d or (cc in _NATIONAL and cc != "1") or labelled


def bracketed(text: str, start: int, end: int) -> bool:
    """MG103 with the country code in brackets: any after ``+`` / ``00``; else one of 3 digits or
    China's 86 (``(852) 9123 4567``; ``(1) 2345 6789``, ``(20) 1234 5678`` are a list's items or a
    reference), not after NANP's 1 (``1 (800) 555-0199`` is :data:`NANP_ONE`'s); then a national
    number of its length."""
    s = text[start:end]
    inside = s[1 : s.index(")")]
    code = inside.lstrip("+").removeprefix("00")
    national = re.sub(r"[ .-]", "", s[s.index(")") + 1 :])
    if country_code(code + national) != code or (code == inside and len(code) < 3 and code != "86"):
        return False
    if _LONE_ONE.search(text, max(0, start - 3), start):
        return False
    return _alone(text, start, end) and _national_ok(code, national)


def _glued_ok(text: str, start: int, end: int, check: Check) -> bool:
    """``check`` on the number at ``start:end``, which may be glued to an English phone label before
    it (``tel5551234``: the label's last letter is read as a space, offsets unchanged)."""
    if start > 0 and text[start - 1] in _ALNUM:
        if not _GLUED.search(text, max(0, start - 12), start):
            return False
        text = text[: start - 1] + " " + text[start:]
    return check(text, start, end)


def nanp_one(text: str, start: int, end: int) -> bool:
    """MG103, a North American number after its country code ``1`` (``1-800-555-0199``; glued to an
    English phone label too: ``call1-800-555-0199``)."""
    return _glued_ok(text, start, end, _alone) and not ck.PLUS_BEFORE.search(text, max(0, start - 3), start)


def _labelled(text: str, start: int, end: int) -> bool:
    if _NOT_A_NUMBER.search(text, max(0, start - 24), start):
        return False
    word = _NUMBER_WORD.search(text, max(0, start - 12), start)
    if word and not _OTHER_LABEL.search(text, max(0, word.start() - 12), word.start()):
        if not _NUMBER_OWNER.search(text, max(0, word.start() - 5), word.start()):
            return False  # 订单号码 62345678: another thing's number
    s = text[start:end]
    d = re.sub(r"[ .-]", "", s)
    if len(d) < 10:
        return ck.local_phone(text, start, end)
    if ck.PLUS_BEFORE.search(text, max(0, start - 3), start) or not _alone(text, start, end):
        return False
    # one separator throughout and a last group of 2+: 01 23 45 67 89, not 010-6234-5678 2 (a count
    # after it) nor 01.02.2024 10:00 (a date and a time)
    return len(set(re.findall(r"[ .-]", s))) <= 1 and len(re.split(r"[ .-]", s)[-1]) >= 2


def labelled(text: str, start: int, end: int) -> bool:
    """MG102 after a phone label (the pattern's): a national number with its trunk 0 (10-12 digits),
    a bare North American one (10 digits) or a local one (:func:`memkit.guard.checks.local_phone`);
    glued to the label only if the label is an English one (``tel5551234``); never a count of phones
    nor a thing of the phone's (``phone sales 25000000 units``, ``phone bill 0123456789``)."""
    return _glued_ok(text, start, end, _labelled)


def cjk_email(text: str, start: int, end: int) -> bool:
    """MG101 with a CJK local part (``李伟@qq.com``, ``Li伟@qq.com``): an address on its own
    (:func:`memkit.guard.checks.email`) whose CJK run is no e-mail word (``邮箱@163.com 后缀`` names a
    domain). Latin after the run (``李伟88@qq.com``) is part of it when it is digits or when an
    e-mail label stands right before the run (``email:张三zhang@163.com``, ``邮箱李伟li@qq.com``);
    otherwise the run is prose before a Latin address (``王老师li@x.cn``, ``联系我li@x.cn``: MG101's
    plain rule)."""
    local = text[start : text.index("@", start)]
    run = _CJK_RUN.search(local)
    if run is None or not ck.email(text, start, end) or _MAIL_WORD_END.search(run.group()):
        return False
    tail = local[run.end() :]
    return not tail or tail.isdigit() or _MAIL_LABEL_END.search(text, max(0, start - 16), start) is not None


# MG109: a chat account after its label. QQ: a number of 5-11 digits, not 0-led (QQ号：1234567890,
# QQ123456789); WeChat: 6-20 letters, digits, "_" and "-", a letter first (微信：wxid_ab12cd34).
# Only a number word, is/是/为 and a colon may come between: QQ音乐, QQ群, 微信支付 are no label.
_ACCOUNT_GAP = r"[ \t]{0,3}(?:(?:\bis\b|是|为|為)[ \t]{0,3})?[:：#]?[ \t]{0,3}"
QQ = (
    r"(?i)\bqq[ \t]{0,3}(?:(?:号码|號碼|号|號|账号|帳號|\b(?:number|num|no|id)\b\.?|#)[ \t]{0,3})?"
    rf"{_ACCOUNT_GAP}(?P<v>[1-9][0-9]{{4,10}})"
)
WECHAT = (
    r"(?i)(?:\b(?:wechat|weixin)(?:[ \t]{0,3}\b(?:id|account|handle)\b)?|微信(?:号|號|账号|帳號|id)?)"
    rf"{_ACCOUNT_GAP}(?P<v>[A-Za-z][A-Za-z0-9_-]{{5,19}})"
)
# a count or an amount after the number (QQ 20000000 用户, QQ 12345 people online, QQ 123.45 元)
_COUNTED = re.compile(
    r"(?i)[.,][0-9]|\s*(?:万|萬|亿|億|千|百|多|余|餘|人|个|個|位|名|元|块|塊|次|年|首|条|條|分钟|分鐘|秒|小时|小時|天"
    r"|在线|在線|%|用户|用戶"
    r"|(?:users?|people|members|followers|friends|times|yuan|online|years?|minutes?|hours?|days?)(?![a-z]))"
)
# the labels after which a WeChat id may be letters alone: an id word (微信号, WeChat ID) or 微信 then
# a colon or 是 (微信：zhangsan); "WeChat: download it" is prose
_ID_LABEL = re.compile(
    r"(?i)(?:微信(?:号|號|账号|帳號|id)[ \t]*(?:是|为|為)?|微信[ \t]*(?:是|为|為|:|：)"
    r"|(?<![a-z])(?:wechat|weixin)[ \t]*(?:id|account|handle)[ \t]*(?:is)?)[ \t]*[:：#]?[ \t]*$"
)


_ID_END = ".,;:!?)]}>\"'，。；：！？、）】》」』"  # what may follow an id of letters alone


def _free_after(text: str, end: int, chars: str) -> bool:
    return end >= len(text) or text[end] not in chars


def qq_number(text: str, start: int, end: int) -> bool:
    """MG109, a QQ number after its label (the pattern's): not glued to letters or digits after it,
    not a count or an amount (``QQ 20000000 用户``, ``QQ 123.45 元``)."""
    return _free_after(text, end, _ALNUM) and not _COUNTED.match(text, end)


def wechat_id(text: str, start: int, end: int) -> bool:
    """MG109, a WeChat id after its label (the pattern's): not glued to letters, digits, ``_`` or
    ``-`` after it; made, not a word: a digit or ``_`` in it (``wxid_ab12cd34``, ``zhang_san88``), or
    letters after an id word or a colon (``微信号 lisa-w``, ``微信：zhangsan``, ``WeChat ID lisawang``;
    not ``WeChat payments``, ``WeChat: download it``, ``WeChat mini-program``), then a space, a
    punctuation mark or the end (``微信：Android版本更新了`` is prose)."""
    if not _free_after(text, end, _ALNUM + "_-"):
        return False
    if any(c.isdigit() or c == "_" for c in text[start:end]):
        return True
    if end < len(text) and not (text[end].isspace() or text[end] in _ID_END):  # 微信：Android版本更新了:
        return False  # a word glued to the sentence that goes on, not an id
    return _ID_LABEL.search(text, max(0, start - 16), start) is not None
