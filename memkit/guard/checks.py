"""The checks a regex cannot make: boundaries, checksums, calendar dates and context words.

Every rule of :mod:`memkit.guard.rules` may carry a ``check(text, start, end) -> bool`` that
decides whether a pattern's match is really a finding. The checks run in Python only (after the
batch pre-filter), so unlike the patterns they may use look-behind and any other ``re`` syntax.
``text`` is the folded text with invisible characters removed, the text the patterns matched.
The secret rules' checks (is this value a password?) live in :mod:`memkit.guard.credentials`.

>>> id_checksum_ok("11010519491231002X"), luhn_ok("4111111111111111"), luhn_ok("4111111111111112")
(True, True, False)
>>> number_label("订单号 "), number_label("Paid for order, card: "), number_label("I prefer ")
(True, False, False)
>>> ipv4("server at 10.0.0.1", 10, 18), ipv4("Python 3.11.4.1", 7, 15), ipv6("ip 2001:db8::1", 3, 14)
(True, False, True)
>>> ssn("SSN 123-45-6789", 4, 15), ssn("SSN 666-45-6789", 4, 15), ipv6("at 12:30:45", 3, 11)
(True, False, False)
>>> ipv6("ip ::ffff:192.168.1.20", 3, 22), ipv6("ip ::ffff:192.168.1.20", 3, 13)
(True, False)
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from datetime import date

from ..text import CJK

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
# a version, a section number or a product token right before a dotted quad: not an address.
# Version words and signs (version, v, build, ==, 版本, 升级到), a product's name right before it
# (Python 3.11.4.1, Ubuntu 22.4.1.2), a product/ token (Chrome/120.0.0.1). A host's word (server,
# host, IP, 服务器) is no product, and a port or prefix length after it (:8080, /24) makes it an address.
_VERSION_CONTEXT = re.compile(
    r"(?i)(?:(?<![a-z])(?:version|ver\.?|v|rev\.?|revision|release|build|upgrade[ds]?(?:\s+to)?|updated?\s+to"
    r"|installed|section|sec\.|chapter|clause|article|paragraph|step)"
    r"|§|版本号?|升级到?|更新到?|安装了?|章节|条款|第)\s*[:：]?\s*$|[a-z]/$|[=~<>!]=\s*$"
    r"|(?<![a-z0-9])(?:python|py|java|jdk|jre|node\.?js|deno|bun|ruby|perl|php|go|golang|rustc?|cargo|gcc|g\+\+"
    r"|clang|llvm|cmake|dotnet|\.net|swift|kotlin|scala|julia|dart|flutter|npm|pip|conda|numpy|pandas|polars"
    r"|torch|pytorch|tensorflow|cuda|cudnn|django|flask|fastapi|react|angular|vue|rails|spring|ubuntu|debian"
    r"|centos|fedora|rhel|alpine|windows|win|macos|osx|ios|ipados|android|linux|kernel|chrome|chromium|firefox"
    r"|safari|opera|docker|kubernetes|k8s|helm|terraform|ansible|postgres(?:ql)?|mysql|mariadb|sqlite|redis"
    r"|mongodb|elasticsearch|kafka|nginx|apache|tomcat|openssl|openssh|git|vscode|excel|unity|electron|qt"
    r"|wordpress|laravel|firmware|bios|sdk|driver|package|library|plugin)[0-9]*\s*[:：]?\s*$"
)
_ADDRESS_AFTER = re.compile(r":[0-9]|/[0-9]")  # a port (10.0.0.1:8080) or a prefix length (/24)
# a phone's label right before a dotted quad (call 1.2.3.4, 手机1.2.3.4版本): a phone has no address
# to write, so the quad is its software's version; a version word right after it (1.2.3.4 版本,
# 1.2.3.4 version) is one too, unless a host's word stands right before it (IP 192.168.1.20 版本)
_PHONE_BEFORE = re.compile(
    r"(?i)(?:(?<![a-z])(?:call|phone|telephone|tel|mobile|cell|cellphone|iphone|smartphone)"
    r"|手机|手機|电话|電話)\s*[:：]?\s*$"
)
_VERSION_AFTER = re.compile(r"(?i)\s*(?:版本|版|version(?![a-z])|ver\.?(?![a-z]))")
_HOST_BEFORE = re.compile(
    r"(?i)(?:(?<![a-z])(?:ip|ipv4|server|host|address|addr|gateway|dns|proxy)|服务器|伺服器|主机|主機|地址|网关|網關)"
    r"\s*[:：]?\s*$"
)
_DOT_DIGIT, _DOTTED_MOBILE = re.compile(r"\.[0-9]"), re.compile(r"[0-9]{3}\.[0-9]{4}\.[0-9]{4}$")
_GROUPS_AFTER, _GROUPS_BEFORE = re.compile(r"[.-][0-9]"), re.compile(r"[0-9][.-]$")
PLUS_BEFORE = re.compile(r"\+[ (]*$")  # a country code's "+" right before: the number is international
_YEARS = re.compile(r"(?:19|20)[0-9]{2}-(?:19|20)[0-9]{2}")  # 2010-2015


def ok_around(text: str, start: int, end: int, chars: str) -> bool:
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
    if not ok_around(text, start, end, _ALNUM) or int(s[:2]) not in _PROVINCES:
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
    if not ok_around(text, start, end, _ALNUM) or not 13 <= len(d) <= 19 or len(set(d)) == 1:
        return False
    if number_label(text[:start]):
        return False  # "订单号 6222…" is an order id that happens to pass Luhn
    return _card_brand_ok(d) and luhn_ok(d)


def digits_between(lo: int, hi: int) -> Callable[[str, int, int], bool]:
    """A check: ``lo``..``hi`` digits in the span and no digit glued on either side (not a slice)."""

    def check(text: str, start: int, end: int) -> bool:
        n = sum(c.isdigit() for c in text[start:end])
        return ok_around(text, start, end, _DIGITS) and lo <= n <= hi

    return check


def more_groups(text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` goes on past either end: a dot or dash then a digit, or a
    space then a digit unless its own groups are set off by dashes (``6222 0212 3456 7891``: the
    middle is no phone number; ``010-6234-5678 2 次``: it is)."""
    spaced = "-" not in text[start:end]
    after, before = text[end : end + 2], text[max(0, start - 2) : start]
    if _GROUPS_AFTER.match(after) or _GROUPS_BEFORE.search(before):
        return True
    return spaced and (
        (after[:1] == " " and after[1:].isdigit()) or (before[1:] == " " and before[:1].isdigit())
    )


def mobile(text: str, start: int, end: int) -> bool:
    """MG102: 11 digits, 13 or 15 with the ``86`` / ``0086`` prefix; not labelled an order number nor
    after another country's ``+`` (``+14155550132``).
    Dots set off both groups or none (``138.1234.5678``; ``¥138.12345678`` is a price), and no
    ``.digit`` follows."""
    s = text[start:end]
    if "." in s and (not _DOTTED_MOBILE.search(s) or _DOT_DIGIT.match(text, end)):
        return False
    if PLUS_BEFORE.search(text, max(0, start - 3), start):
        return False  # +14155550132: another country's number (MG103 takes it whole)
    return digits_between(11, 15)(text, start, end) and not number_label(text[:start])


def landline(text: str, start: int, end: int) -> bool:
    """10-12 digits written with the area code set off (``010-…``, ``(0571)…``, ``010 6234 5678``),
    never a bare run nor groups of a longer number (``6222 0212 3456 7891 233``, a card); also Taiwan's
    mobile numbers (``0912-345-678``)."""
    s = text[start:end]
    if not digits_between(10, 12)(text, start, end) or number_label(text[:start]):
        return False
    if more_groups(text, start, end):
        return False
    return "-" in s or " " in s or s.startswith("(")


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
    3.1.4.1``, ``call 1.2.3.4``, ``1.2.3.4 版本``), not a network address (last number 0: ``13.0.0.0``),
    not a slice of a longer number."""
    if start > 0 and text[start - 1] in _ALNUM + ".":
        return False  # v1.2.3.4, 10.1.2.3.4
    after = text[end : end + 2]
    if after[:1].isdigit() or (after[:1] == "." and after[1:].isdigit()):
        return False  # part of a longer dotted number
    if text[start:end].endswith(".0"):
        return False  # a network (10.0.0.0) or a four-part version (13.0.0.0), never one host
    if _ADDRESS_AFTER.match(text, end):
        return True  # Redis 10.0.0.5:6379 is an address, whatever the word before
    before = text[max(0, start - _BEFORE) : start]
    if _VERSION_CONTEXT.search(before) or _PHONE_BEFORE.search(before):
        return False
    return not _VERSION_AFTER.match(text, end) or _HOST_BEFORE.search(before) is not None


def ipv6(text: str, start: int, end: int) -> bool:
    """MG106, IPv6: a valid address (:class:`ipaddress.IPv6Address`) of 3+ written groups, one of 3+
    characters, with a digit, not glued to letters, digits or colons; or any valid address ending in
    an IPv4 address (``::ffff:192.0.2.1``, ``64:ff9b::192.0.2.33``: one address, one finding, which
    wins the overlap with the IPv4 rule's). Not a time (``12:30:45``: no ``::`` nor 8 groups), a MAC
    address (6 groups), a name in code (``a::b``, ``dead::beef``), the loopback ``::1`` and ``::``
    (they name no one's machine), nor the head of a longer dotted number (``::1.2``)."""
    s = text[start:end]
    if not ok_around(text, start, end, _ALNUM + ":") or re.match(r"\.[0-9]", text[end : end + 2]):
        return False
    groups = s.split(":")
    # subtle: real addresses start with a network prefix of 3-4 hex digits (2001:, fe80:, fd00:);
    # 1:2:3:4:5:6:7:8 is valid but a list of small numbers. A dotted quad at the end is neither.
    short = sum(g != "" for g in groups) < 3 or max(map(len, groups)) < 3
    if ("." not in s and short) or not any(c.isdigit() for c in s):
        return False
    try:
        addr = ipaddress.IPv6Address(s)
    except ValueError:
        return False
    return not (addr.is_loopback or addr.is_unspecified)


def ssn(text: str, start: int, end: int) -> bool:
    """MG107, a US Social Security number: 9 digits as ``123-45-6789`` (or, after an ``SSN`` label,
    also ``123 45 6789`` / ``123456789``), separators the same twice, not glued to letters, digits or
    hyphens, not an order number, and a number the SSA issues: area not 000, 666 or 9xx, group not 00,
    serial not 0000."""
    s = text[start:end]
    d = re.sub(r"[ -]", "", s)
    seps = {c for c in s if c in " -"}
    if len(d) != 9 or len(seps) > 1 or (seps and not (s[3] in seps and s[6] in seps)):
        return False
    if not ok_around(text, start, end, _ALNUM + "-") or number_label(text[:start]):
        return False
    return d[:3] not in ("000", "666") and d[0] != "9" and d[3:5] != "00" and d[5:] != "0000"


def passport(text: str, start: int, end: int) -> bool:
    """MG108, after a passport label (the pattern's): 6-9 letters and digits, at least 5 of them digits
    (``E12345678``, ``EA1234567``, ``C01X00T47``; not ``pending``), not glued to letters or digits."""
    return ok_around(text, start, end, _ALNUM) and sum(c.isdigit() for c in text[start:end]) >= 5


def local_phone(text: str, start: int, end: int) -> bool:
    """MG102, after a phone label (the pattern's): a local number without its area code, 7-8 digits
    (``电话 8765 4321``, ``tel: 555-1234``), not a slice of a longer number (``9123 4567 8``, a dotted
    one) nor the national part of an international one (``电话 +852 9123 4567``: MG103 takes it
    whole), not a range of years (``call 2010-2015``)."""
    if more_groups(text, start, end) or PLUS_BEFORE.search(text, max(0, start - 3), start):
        return False
    if _YEARS.fullmatch(text, start, end):
        return False
    return digits_between(7, 8)(text, start, end) and ok_around(text, start, end, _ALNUM)


def old_id_number(text: str, start: int, end: int) -> bool:
    """MG104, a first-generation (15-digit) resident ID: no checksum, so a real province and a calendar
    birth date ``YYMMDD`` (19YY) at positions 7-12; not glued to letters, digits, dashes or dots; not
    labelled an order number."""
    s = re.sub(r"[ -]", "", text[start:end])
    if not ok_around(text, start, end, _ALNUM + "-.") or int(s[:2]) not in _PROVINCES:
        return False
    try:
        date(1900 + int(s[6:8]), int(s[8:10]), int(s[10:12]))
    except ValueError:
        return False
    return not number_label(text[:start])


def edge(chars: str) -> Callable[[str, int, int], bool]:
    """A check: no character of ``chars`` glued to either end (a key is not a slice of a longer token)."""
    return lambda text, start, end: ok_around(text, start, end, chars)


key_edge = edge(_ALNUM)
"""MG201's check: an API key is not a slice of a longer run of Latin letters and digits."""


def cjk_but(chars: str) -> str:
    """The class body of :data:`~memkit.text.CJK` without ``chars`` (ideographs of U+4E00-U+9FFF)."""
    body, lo = "", 0x4E00
    for c in sorted(map(ord, chars)):
        body, lo = body + f"{chr(lo)}-{chr(c - 1)}", c + 1
    return CJK.replace("\u4e00-\u9fff", body + f"{chr(lo)}-\u9fff")
