"""PII shapes the rules still got wrong: versions read as addresses, mixed local parts, chat accounts.

Stored wrongly before: a dotted quad after a phone label or before a version word (``call 1.2.3.4``,
``手机1.2.3.4版本``: ``[IP]``). Redacted in part: a local part of CJK then Latin (``邮箱李伟88@qq.com``
was ``邮箱李伟[EMAIL]``). Missed: QQ numbers and WeChat ids after their labels (``QQ 123456789``,
``微信：wxid_ab12cd34``, now ``[ACCOUNT]``) and a local number after a bare ``号码`` (``号码是 62345678``).
Each case goes through ``store.add``, ``store.add_many`` (past the polars pre-filter's threshold) and a
JSONL import, which must store the same text.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pii_paths import stored_by_every_path

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
P = mk.GuardParams(learned=False)
A, E, IP, T = "[ACCOUNT]", "[EMAIL]", "[IP]", "[PHONE]"

# (text, what is stored)
REDACTED = [
    # a host's address stays one, whatever follows it
    ("server 10.0.0.1", f"server {IP}"),
    ("IP 192.168.1.20", f"IP {IP}"),
    ("登录IP：8.8.8.8", f"登录IP：{IP}"),
    ("IP 192.168.1.20 版本", f"IP {IP} 版本"),
    ("call 10.0.0.5:8080", f"call {IP}:8080"),  # a port makes it an address
    # a CJK local part with Latin after it, glued to its label
    ("邮箱李伟88@qq.com", f"邮箱{E}"),
    ("email:张三zhang@163.com", f"email:{E}"),
    ("e-mail: 张三zhang@163.com", f"e-mail: {E}"),
    ("我的邮箱是李伟88@qq.com谢谢", f"我的邮箱是{E}谢谢"),
    ("李伟88@qq.com", E),
    ("Li伟88@qq.com", E),
    ("联系邮箱wang.li@example.cn", f"联系邮箱{E}"),
    # prose before a Latin local part stays prose
    ("联系我li@example.com谢谢", f"联系我{E}谢谢"),
    ("王老师li@x.cn", f"王老师{E}"),
    ("发给张三zhang@163.com", f"发给张三{E}"),
    # QQ numbers and WeChat ids after their labels
    ("QQ 123456789", f"QQ {A}"),
    ("QQ号：1234567890", f"QQ号：{A}"),
    ("我的QQ是 12345678，加我", f"我的QQ是 {A}，加我"),
    ("qq:10001", f"qq:{A}"),
    ("QQ号码 23456789", f"QQ号码 {A}"),  # the QQ label's, not a bare 号码's phone number
    ("QQ123456789", f"QQ{A}"),
    ("my QQ number is 987654321", f"my QQ number is {A}"),
    ("微信：wxid_ab12cd34", f"微信：{A}"),
    ("微信号 li_wei-88", f"微信号 {A}"),
    ("WeChat: zhang_san88", f"WeChat: {A}"),
    ("加我微信zhangsan2024", f"加我微信{A}"),
    ("微信号：zhangsan", f"微信号：{A}"),
    ("my WeChat ID is lisa_w", f"my WeChat ID is {A}"),
    ("微信號 chen88", f"微信號 {A}"),
    # a local number after 号码 (a bare one, or a contact's)
    ("号码是 62345678", f"号码是 {T}"),
    ("号码 13812345678", f"号码 {T}"),
    ("号码：021-62345678", f"号码：{T}"),
    ("联系号码 (0755) 8888 6666", f"联系号码 {T}"),
    ("联系号码 62345678", f"联系号码 {T}"),
    ("我的号码：8765 4321", f"我的号码：{T}"),
    ("他的新号码是 62345678", f"他的新号码是 {T}"),
    # a WeChat id of letters alone, then punctuation (the review of 99c51c3)
    ("微信号：zhangsan。", "微信号：[ACCOUNT]。"),
    ("微信：zhangsan，记得加", "微信：[ACCOUNT]，记得加"),
    ("QQ 123456789 分享给你", "QQ [ACCOUNT] 分享给你"),
]

# look-alikes of the new shapes, kept as written
KEPT = [
    # an English word glued to the Chinese sentence after 微信：, counts and durations after QQ (the review)
    "微信：Android版本更新了",
    "微信: Python学习群",
    "微信：Thanks收到",
    "微信：Meeting改到三点",
    "QQ 10000 多人在线",
    "QQ 12345678 分钟",
    "QQ 2000 小时",
    # versions after a phone label or before a version word
    "call 1.2.3.4",
    "手机1.2.3.4版本",
    "phone 1.2.3.4",
    "手机 10.0.0.1",
    "升级后是 1.2.3.4 版本",
    "app 1.2.3.4 version",
    "firmware is 2.3.4.5 version",
    # chat labels before no account
    "QQ音乐",
    "QQ音乐 123456 首歌",
    "微信支付了 35 元",
    "WeChat Pay",
    "WeChat payments grew",
    "WeChat: download it",
    "WeChat mini-program",
    "QQ group chat 3 people",
    "QQ 2024 年度报告",
    "QQ 12345 people online",
    "QQ 20000000 用户",
    "QQ群 123456789",
    "微信 2024 年",
    "微信群 abc123 里",
    "QQ 123.45 元",
    # 号码 after another noun: no phone number
    "订单号码 62345678",
    "房间号码 2345678",
    "中奖号码是 62345678",
    "车牌号码 62345678",
    "号码牌 62345678",
    "座位号码：23456789",
]

_TEXTS = [t for t, _ in REDACTED] + KEPT


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str, str]]:
    """Each text -> what add, add_many and a JSONL import stored."""
    return stored_by_every_path(_TEXTS, P, tmp_path_factory.mktemp("pii"), NOW)


@pytest.mark.parametrize(("text", "expected"), REDACTED)
def test_accounts_and_mixed_addresses_are_redacted_on_every_path(text: str, expected: str, stored) -> None:
    assert stored[text] == (expected,) * 3


@pytest.mark.parametrize("text", KEPT)
def test_look_alikes_are_kept_on_every_path(text: str, stored) -> None:
    assert stored[text] == (text,) * 3


def test_accounts_have_their_own_type_and_code() -> None:
    v = mk.guard.screen("QQ 123456789, 微信：wxid_ab12cd34")
    assert v.text == "QQ [ACCOUNT], 微信：[ACCOUNT]"
    assert v.findings["code"].to_list() == ["MG109", "MG109"]
    off = mk.guard.screen("QQ 123456789", mk.GuardParams(pii=("email", "phone")))
    assert off.text == "QQ 123456789"
