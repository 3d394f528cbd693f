"""PII the rules redacted only in part or missed, and numbers of the same shapes they must keep.

A phone label before an international number (``香港电话 +852 9123 4567``) let the labelled-local rule
take ``852 9123`` and leave ``4567``; 手机, mobile, cell and their kin were no phone labels; Taiwan
numbers (``0912-345-678``, ``02-2345-6789``), ``010 6234 5678`` with spaces only, ``138.1234.5678``,
15-digit first-generation ID numbers and e-mail addresses with CJK (``李伟@qq.com``, ``li@例子.中国``)
were missed. Each case goes through ``store.add``, ``store.add_many`` (a batch past the polars
pre-filter's threshold) and a JSONL import, which must store the same text.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pii_paths import stored_by_every_path

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
P = mk.GuardParams(learned=False)

# every country-code length (1-3 digits) after each phone label, spaces, dashes or dots between groups
_LABELS = ["电话", "香港电话", "电话：", "手机", "手机号：", "phone", "tel:", "mobile", "cell:", "联系方式："]
_NUMBERS = {"1": ["415", "555", "0132"], "44": ["20", "7946", "0958"], "852": ["9123", "4567"]}
INTERNATIONAL = [
    (f"{label} +{cc}{sep}{sep.join(groups)}", f"{label} [PHONE]")
    for label in _LABELS
    for cc, groups in _NUMBERS.items()
    for sep in (" ", "-", ".")
]

# (text, what is stored)
REDACTED = [
    ("香港电话 +852 9123 4567", "香港电话 [PHONE]"),
    ("电话 +853 6612 3456", "电话 [PHONE]"),
    ("电话：+852 2123 4567，找陈先生", "电话：[PHONE]，找陈先生"),
    # phone labels in both languages
    ("我的手机 9123 4567", "我的手机 [PHONE]"),
    ("手机号：9123 4567", "手机号：[PHONE]"),
    ("手机号码是 9123-4567", "手机号码是 [PHONE]"),
    ("移动电话 9123 4567", "移动电话 [PHONE]"),
    ("手機 9123 4567", "手機 [PHONE]"),
    ("電話：2123 4567", "電話：[PHONE]"),
    ("座机 6234 5678", "座机 [PHONE]"),
    ("联系方式：9123 4567", "联系方式：[PHONE]"),
    ("mobile 9123 4567", "mobile [PHONE]"),
    ("Mobile no. 9123 4567", "Mobile no. [PHONE]"),
    ("cell: 555-1234", "cell: [PHONE]"),
    ("cell phone 555 1234", "cell phone [PHONE]"),
    ("my cellphone is 9123 4567", "my cellphone is [PHONE]"),
    # local numbers the landline and mobile patterns missed
    ("台湾手机 0912-345-678", "台湾手机 [PHONE]"),
    ("call 0912 345 678 tonight", "call [PHONE] tonight"),
    ("台北办公室 02-2345-6789", "台北办公室 [PHONE]"),
    ("北京010 6234 5678", "北京[PHONE]"),
    ("手机138.1234.5678", "手机[PHONE]"),
    ("电话 010-6234-5678 2 次", "电话 [PHONE] 2 次"),
    ("卡号 6222-0212-3456-7891-233", "卡号 [CARD]"),  # was 卡号 6222-[PHONE]-233
    # first-generation (15-digit) resident ID numbers: a real province and birth date (YYMMDD)
    ("老身份证号110101900307451", "老身份证号[ID_NUMBER]"),
    ("身份证 110101 900307 451", "身份证 [ID_NUMBER]"),
    ("ID 440301851231123 expired", "ID [ID_NUMBER] expired"),
    # e-mail addresses with CJK: an IDN domain, a CJK local part
    ("li@例子.中国", "[EMAIL]"),
    ("email li@例子.中国谢谢", "email [EMAIL]谢谢"),
    ("写信到 wang@公司.com", "写信到 [EMAIL]"),
    ("李伟@qq.com", "[EMAIL]"),
    ("邮箱：李伟@qq.com。", "邮箱：[EMAIL]。"),
    ("我的邮箱是李伟@qq.com谢谢", "我的邮箱是[EMAIL]谢谢"),
    ("我的邮箱李伟@qq.com", "我的邮箱[EMAIL]"),
    ("联系李伟@qq.com", "联系[EMAIL]"),
    ("给我发邮件到张三@example.com", "给我发邮件到[EMAIL]"),
    ("王老师李伟@qq.com", "[EMAIL]"),  # no e-mail word nor particle: the whole CJK run
    ("email 李伟@例子.中国", "email [EMAIL]"),
    ("联系li@x.cn", "联系[EMAIL]"),
    ("我的邮箱是li.wei@example.cn谢谢", "我的邮箱是[EMAIL]谢谢"),
]

# numbers of the same shapes that are no PII, kept as written (with and without the new labels)
KEPT = [
    "订单号202406011234567890",
    "订单号 110101900307451",
    "order number 12345678901",
    "order 0912-345-678",
    "日期2024-06-01",
    "发布于2024.06.01",
    "房价¥1380000",
    "价格 ¥138.12345678",
    "价格 13800000 元",
    "版本 v10.2.3.4",
    "升级到 1.2.3.4 了",
    "timestamp 1717200000000",
    "ts=1717200000",
    "ISBN 978-7-111-12345-6",
    "ISBN 978-0-306-40615-7",
    "user_id = 1234567890123456789",
    "id = 1790123456789012345",
    "会议时间 12:30-13:45",
    "比分 3-2",
    "2010-2015 年间",
    "mobile sales 2010-2015 grew",
    "手机销量 2023-2024",
    "手机 2024.06.01 发布",
    "cell 12:30-13:45",
    "手机 3-2 输了",
    "手机销量 25000000 台",
    "mobile users 23456789",
    "call 2010-2015",
    # a label or an area code never redacts a slice of a longer number (电话 [PHONE] 5678 9012 was stored)
    "电话 8765 4321 5678 9012",
    "6222-0212-3456-7891",
    "phone bill 12345",
    "a::b and 1.2.3.4.5",
    "@王五 明天见",
    "请@李伟 看一下",
    "abc.def@ 中国",
]

_TEXTS = [t for t, _ in INTERNATIONAL] + [t for t, _ in REDACTED] + KEPT


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str, str]]:
    """Each text -> what add, add_many and a JSONL import stored."""
    return stored_by_every_path(_TEXTS, P, tmp_path_factory.mktemp("pii"), NOW)


@pytest.mark.parametrize(("text", "expected"), INTERNATIONAL)
def test_a_label_before_an_international_number_leaves_no_digit(text: str, expected: str, stored) -> None:
    assert stored[text] == (expected,) * 3


@pytest.mark.parametrize(("text", "expected"), REDACTED)
def test_pii_variants_are_redacted_on_every_path(text: str, expected: str, stored) -> None:
    assert stored[text] == (expected,) * 3


@pytest.mark.parametrize("text", KEPT)
def test_numbers_of_the_same_shapes_are_kept(text: str, stored) -> None:
    assert stored[text] == (text,) * 3
