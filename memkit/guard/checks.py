"""The checks a regex cannot make: boundaries, checksums, calendar dates and context words.

Every rule of :mod:`memkit.guard.rules` may carry a ``check(text, start, end) -> bool`` that
decides whether a pattern's match is really a finding. The checks run in Python only (after the
batch pre-filter), so unlike the patterns they may use look-behind and any other ``re`` syntax.
``text`` is the folded text with invisible characters removed, the text the patterns matched.

>>> id_checksum_ok("11010519491231002X"), luhn_ok("4111111111111111"), luhn_ok("4111111111111112")
(True, True, False)
>>> number_label("订单号 "), number_label("Paid for order, card: "), number_label("I prefer ")
(True, False, False)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

__all__ = ["ID_CHECK", "ID_WEIGHTS", "id_checksum_ok", "luhn_ok", "number_label"]

_DIGITS = "0123456789"
_ALNUM = _DIGITS + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# GB 11643: the weights of the first 17 digits, and the check character for each sum mod 11
ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
ID_CHECK = "10X98765432"
# GB/T 2260 province-level codes: the first two digits of a resident ID
_PROVINCES = {11, 12, 13, 14, 15, 21, 22, 23, 31, 32, 33, 34, 35, 36, 37, 41, 42, 43, 44, 45, 46}
_PROVINCES |= {50, 51, 52, 53, 54, 61, 62, 63, 64, 65, 71, 81, 82, 83}
_BEFORE = 24  # characters before a number where its label or version word is looked for
# a number's label right before it: an order word, then at most a number word (号 / no. / # / id)
# and punctuation, so "订单号 4111…" is an order id but "这个订单用的信用卡4111…" is a card. English
# words stand alone: "prefer" holds "ref" and is no label.
_NUMBER_LABEL = re.compile(
    r"(?i)(?:订单|运单|快递|物流|工单|流水|序列|编号|单号"
    r"|(?<![a-z])(?:order|tracking|invoice|ref|reference|serial|sku|sn))"
    r"(?:\s*(?:号码?|编号|单号|id|no\.?|nr\.?|number|num|#))?\s*[:：#.]?\s*$"
)
# a version, a section number or a product token right before a dotted quad: not an address
_VERSION_CONTEXT = re.compile(
    r"(?i)(?:(?<![a-z])(?:version|ver\.?|release|build|section|sec\.|chapter|clause|article|paragraph|step)"
    r"|§|版本|升级到?|更新到?|章节|条款|第)\s*[:：]?\s*$|[a-z]/$"
)


def _ok_around(text: str, start: int, end: int, chars: str) -> bool:
    """Neither the character before ``start`` nor the one at ``end`` is in ``chars``."""
    return (start == 0 or text[start - 1] not in chars) and (end >= len(text) or text[end] not in chars)


def number_label(before: str) -> bool:
    """Whether the text right before a number labels it an order, tracking or serial number."""
    return _NUMBER_LABEL.search(before[-_BEFORE:]) is not None


def id_checksum_ok(s: str) -> bool:
    """GB 11643 check digit of an 18-character Chinese resident ID (ISO 7064 MOD 11-2)."""
    if len(s) != 18 or not s[:17].isdigit():
        return False
    total = sum(int(c) * w for c, w in zip(s[:17], ID_WEIGHTS, strict=True))
    return ID_CHECK[total % 11] == s[17].upper()


def id_number(text: str, start: int, end: int) -> bool:
    """MG104: not glued to letters or digits, a real province, a calendar birth date from 1900, checksum.
    The number may be written in groups (``110105 19491231 002X``)."""
    s = re.sub(r"[ -]", "", text[start:end])
    if not _ok_around(text, start, end, _ALNUM) or int(s[:2]) not in _PROVINCES:
        return False
    try:  # the birth date must exist on the calendar
        born = date(int(s[6:10]), int(s[10:12]), int(s[12:14]))
    except ValueError:
        return False
    return born.year >= 1900 and id_checksum_ok(s)


def luhn_ok(digits: str) -> bool:
    """The Luhn (mod 10) check of a card number given as digits only."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _card_brand_ok(d: str) -> bool:
    """Issuer prefix and length of the major networks (Visa, Mastercard, Amex, UnionPay, Discover, JCB)."""
    n = len(d)
    return (
        (d[0] == "4" and n in (13, 16, 19))
        or (51 <= int(d[:2]) <= 55 and n == 16)
        or (2221 <= int(d[:4]) <= 2720 and n == 16)
        or (d[:2] in ("34", "37") and n == 15)
        or (d[:2] == "62" and 16 <= n <= 19)
        or ((d[:4] == "6011" or d[:2] == "65") and n in (16, 19))
        or (3528 <= int(d[:4]) <= 3589 and 16 <= n <= 19)
    )


def card(text: str, start: int, end: int) -> bool:
    """MG105: 13-19 digits, not glued to Latin letters or digits (``SN4111…`` is a serial), not one
    digit repeated, not an order id, an issuer's prefix and length, Luhn."""
    d = re.sub(r"[ -]", "", text[start:end])
    if not _ok_around(text, start, end, _ALNUM) or not 13 <= len(d) <= 19 or len(set(d)) == 1:
        return False
    if number_label(text[:start]):
        return False  # "订单号 6222…" is an order id that happens to pass Luhn
    return _card_brand_ok(d) and luhn_ok(d)


def digits_between(lo: int, hi: int) -> Callable[[str, int, int], bool]:
    """A check: ``lo``..``hi`` digits in the span and no digit glued on either side (not a slice)."""

    def check(text: str, start: int, end: int) -> bool:
        n = sum(c.isdigit() for c in text[start:end])
        return _ok_around(text, start, end, _DIGITS) and lo <= n <= hi

    return check


def mobile(text: str, start: int, end: int) -> bool:
    """MG102: 11 digits, 13 or 15 with the ``86`` / ``0086`` prefix; not labelled an order number."""
    return digits_between(11, 15)(text, start, end) and not number_label(text[:start])


def landline(text: str, start: int, end: int) -> bool:
    """10-12 digits written with the area code set off (``010-…``, ``(0571)…``), never a bare run."""
    s = text[start:end]
    if not digits_between(10, 12)(text, start, end) or number_label(text[:start]):
        return False
    return "-" in s or s.startswith("(")


def international(text: str, start: int, end: int) -> bool:
    """MG103 ``+…``: 8-15 digits and no bracket left open inside (``+3 (2025-12-31`` is a score and a
    date; ``+44 (0)20 …`` and ``(+44) 20 …`` are numbers)."""
    s = text[start:end]
    last_open = s.rfind("(")
    return digits_between(8, 15)(text, start, end) and (last_open < 0 or ")" in s[last_open:])


def email(text: str, start: int, end: int) -> bool:
    """Not glued to more address characters; a final dot is sentence punctuation."""
    before, after = text[start - 1 : start], text[end : end + 1]
    return (not before or before not in _ALNUM + "._%+-") and (not after or after not in _ALNUM + "@-")


def ipv4(text: str, start: int, end: int) -> bool:
    """A host's dotted quad on its own: not a version number (``Chrome/120.0.0.0``, ``section
    3.1.4.1``), not a network address (last number 0: ``13.0.0.0``), not a slice of a longer number."""
    if start > 0 and text[start - 1] in _ALNUM + ".":
        return False  # v1.2.3.4, 10.1.2.3.4
    after = text[end : end + 2]
    if after[:1].isdigit() or (after[:1] == "." and after[1:].isdigit()):
        return False  # part of a longer dotted number
    if text[start:end].endswith(".0"):
        return False  # a network (10.0.0.0) or a four-part version (13.0.0.0), never one host
    return not _VERSION_CONTEXT.search(text[max(0, start - _BEFORE) : start])


def edge(chars: str) -> Callable[[str, int, int], bool]:
    """A check: no character of ``chars`` glued to either end (a key is not a slice of a longer token)."""
    return lambda text, start, end: _ok_around(text, start, end, chars)


key_edge = edge(_ALNUM)
"""MG201's check: an API key is not a slice of a longer run of Latin letters and digits."""

# words that follow "password is" in ordinary talk ("the password is wrong"): never a credential
_NOT_SECRETS = frozenset(
    "required incorrect wrong invalid expired reset changed strong weak correct needed missing empty set "
    "protected secure same different new old forgotten long short too not the a an my your our their "
    "what how where".split()
)
# the verb or sign, an opening quote if any (group 1), the value (group 2)
_VALUE = re.compile(r"(?i)(?:is|was|=|:|：|是|为|為)\s*([\"'“‘「『]?)(\S+)\s*$")


def secret_value(text: str, start: int, end: int) -> bool:
    """After "password is", a value that looks like a credential: assigned (``=``, ``:``), quoted
    (``"swordfish"``) or not a plain lowercase word (``the password is wrong`` is talk)."""
    return _secret_value(text[start:end], words=False)


def secret_value_zh(text: str, start: int, end: int) -> bool:
    """After "密码是 / 密码为", any value with credential characters: an English word there
    (``WiFi密码是sunshine``) is the password, not talk about it."""
    return _secret_value(text[start:end], words=True)


def _secret_value(span: str, words: bool) -> bool:
    """The value after the verb: at least 3 characters, some ASCII letter, digit or symbol, not a word
    of ordinary talk; a plain lowercase word counts only when ``words``, assigned or quoted."""
    m = _VALUE.search(span)
    if m is None:
        return False
    value = m.group(2).strip("\"'”’“‘「」『』.,;:!?，。；：！？")
    if len(value) < 3 or value.lower() in _NOT_SECRETS:
        return False
    if not any(c.isascii() and (c.isalnum() or c in "!@#$%^&*_-+=") for c in value):
        return False  # 密码是什么 / 密码是必须的: no credential characters at all
    plain_word = value.isascii() and value.isalpha() and value.islower()
    assigned = bool(re.search(r"[=:：]", m.group(0)))
    return words or assigned or bool(m.group(1)) or not plain_word
