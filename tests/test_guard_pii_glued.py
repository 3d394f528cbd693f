"""PII the rules still kept as written, in both languages, and look-alikes of the new shapes.

Missed before: a number glued to its label (``电话02162345678``, ``tel5551234``) or after it in a
national form (``台湾手机0912345678``, ``UK mobile 07700 900123``, ``phone: 4155550132``); a number
dialled with an exit prefix (``00852 9123 4567``, ``011 44 20 7946 0958``: ``00 1 [PHONE]`` was left)
or with its country code in brackets (``(852) 9123 4567``); NANP's ``1`` before a number (``call
1-[PHONE]`` was stored); ``+14155550132`` read as a Chinese mobile after its ``+``; a CJK local part
glued to a Latin one (``请发到Li伟@qq.com``). Stored wrongly before: ``phone sales 25000000 units``
(``[PHONE]``) and ``邮箱@163.com 后缀`` (``[EMAIL]``). Each case goes through ``store.add``,
``store.add_many`` (past the polars pre-filter's threshold) and a JSONL import, which must store the
same text.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pii_paths import stored_by_every_path

import memkit as mk
from memkit.guard.contacts import country_code

NOW = datetime(2026, 1, 1, tzinfo=UTC)
P, E = "[PHONE]", "[EMAIL]"

# (text, what is stored)
REDACTED = [
    # glued to the label, or after it in a national form
    ("电话02162345678", f"电话{P}"),
    ("打座机02162345678找我", f"打座机{P}找我"),
    ("联系电话02887654321", f"联系电话{P}"),
    ("座机：075588886666", f"座机：{P}"),
    ("台湾手机0912345678", f"台湾手机{P}"),
    ("手机号码:0912345678", f"手机号码:{P}"),
    ("tel5551234", f"tel{P}"),
    ("phone5551234", f"phone{P}"),
    ("fax5551234 or cell5551234", f"fax{P} or cell{P}"),
    ("Call1-800-555-0199", f"Call{P}"),
    ("phone: 4155550132", f"phone: {P}"),
    ("call me on 4155550132 after 6", f"call me on {P} after 6"),
    ("phone=4155550132&x=1", f"phone={P}&x=1"),
    ("cell 555.1234", f"cell {P}"),
    ("UK mobile 07700 900123", f"UK mobile {P}"),
    ("my landline is 01632 960123", f"my landline is {P}"),
    ("call me 0800 123 4567", f"call me {P}"),
    ("mobile: 0412 345 678", f"mobile: {P}"),
    ("phone 01 23 45 67 89", f"phone {P}"),
    # exit prefixes: 00, and 011 from North America
    ("香港手机 00852 9123 4567", f"香港手机 {P}"),
    ("香港电话0085291234567", f"香港电话{P}"),
    ("我在香港的手机是00852-6123-4567", f"我在香港的手机是{P}"),
    ("澳门号码 00853 6612 3456", f"澳门号码 {P}"),
    ("Hong Kong: 00852 9123 4567", f"Hong Kong: {P}"),
    ("从美国打回来拨 011 86 138 1234 5678", f"从美国打回来拨 {P}"),
    ("联系方式：00 86 138 1234 5678", f"联系方式：{P}"),
    ("从国内拨 00 1 415 555 0132", f"从国内拨 {P}"),
    ("国际长途 001 415 555 0132", f"国际长途 {P}"),
    ("美国号码 001-415-555-0132", f"美国号码 {P}"),
    ("From the US dial 011 44 20 7946 0958", f"From the US dial {P}"),
    ("from the US: 011-852-9123-4567", f"from the US: {P}"),
    ("Tel.: 0041 44 668 18 00", f"Tel.: {P}"),
    ("Whatsapp 0085261234567", f"Whatsapp {P}"),
    # a country code in brackets
    ("香港 (852) 9123 4567", f"香港 {P}"),
    ("他的香港号码：(852) 9123-4567", f"他的香港号码：{P}"),
    ("拨打 (853) 2812 3456", f"拨打 {P}"),
    ("他台湾的电话是 (886) 2 2345 6789", f"他台湾的电话是 {P}"),
    ("HK office (852) 9123 4567", f"HK office {P}"),
    ("(+852) 6123 4567", P),
    ("London (+44) 20 7946 0958", f"London {P}"),
    # NANP's 1, and another country's + before 11 digits
    ("call 1-800-555-0199 for support", f"call {P} for support"),
    ("my number is 1 (415) 555-0132", f"my number is {P}"),
    ("call 1 (800) 555-0199", f"call {P}"),
    ("phone:+14155550132", f"phone:{P}"),
    ("tel:+14155550132", f"tel:{P}"),
    # a CJK local part glued to a Latin one
    ("请发到Li伟@qq.com", f"请发到{E}"),
    ("邮箱:abc李伟@163.com", f"邮箱:{E}"),
    ("抄送Wang小明@example.com", f"抄送{E}"),
    ("请发邮件到Zhang伟@example.com谢谢", f"请发邮件到{E}谢谢"),
    ("我老婆的邮箱是xiao美@163.com", f"我老婆的邮箱是{E}"),
]

# kept as written: look-alikes of the new shapes
KEPT = [
    "phone sales 25000000 units",
    "phone shipments 2345678901 in 2024",
    "call volume 2345678",
    "电话销量 2500 0000",
    "phone bill 0123456789 account",
    "邮箱@163.com 后缀",
    "网易邮箱@163.com",
    "账号 0012345678901",
    "客户号 0012345678901",
    "编号 0085291234567",
    "参考文献 (20) 1234 5678",
    "see (12) 3456 7890",
    "Table (3) 1234567",
    "call on 01.02.2024 10:00",
    "call at 1717200000",
    "telnet 5551234",
    "telegram 5551234",
    "mobility 2345678",
    "cellular 2345678 subscribers",
    "Tel Aviv 2024",
    "hotel 5551234 stars",
    "金额 1 000 000 000 元",
    "bitmask 00 11 01 10 11 00 01",
    "2000 1234 5678 9012",
    "code 0000 1234 5678",
    "ISBN 978-0-00-123456-7",
    "version 1.00.1234567",
    "电话 010 开头的是北京",
    "手机号 +86 开头",
    "@王五 明天见",
    "Order #4111111111111111",
    "tracking number 1Z999AA10123456784",
    "Windows 10.0.19045.3803",
    "call 2010-2015",
    "手机销量 25000000 台",
]

_TEXTS = [t for t, _ in REDACTED] + KEPT


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str, str]]:
    """Each text -> what add, add_many and a JSONL import stored."""
    return stored_by_every_path(_TEXTS, mk.GuardParams(learned=False), tmp_path_factory.mktemp("glued"), NOW)


@pytest.mark.parametrize(("text", "expected"), REDACTED)
def test_glued_and_prefixed_pii_is_redacted_on_every_path(text: str, expected: str, stored) -> None:
    assert stored[text] == (expected,) * 3


@pytest.mark.parametrize("text", KEPT)
def test_look_alikes_of_the_new_shapes_are_kept(text: str, stored) -> None:
    assert stored[text] == (text,) * 3


def test_country_codes_are_read_prefix_free() -> None:
    assert [country_code(d) for d in ("14155550132", "74951234567", "4420794609", "85291234567")] == [
        "1", "7", "44", "852"
    ]  # fmt: skip
    assert country_code("0123") is None and country_code("") is None
