"""The numbers, currencies and symbols of a text, for :mod:`memkit.facts` (its ``n:``, ``cur:`` and
``sym:`` fact tokens).

- **numbers** (:func:`numbers`): ASCII and full-width digits (``5,000`` = ``5000``) with their sign
  (``-5`` ≠ ``5``; a hyphen between two numbers is a range, not a sign) and an English scale word
  after them (``5 million`` = ``five million`` = ``5000000``); Chinese numerals (``二十五``, ``两千``,
  ``3万``, ``二〇一九``, and the spoken short forms ``三千五`` = 3500, ``两百五`` = 250, ``两万五`` =
  25000, which a 零 turns into ``三千零五`` = 3005); English number words (``twenty-five``) and
  ordinals (``third`` = ``3rd`` = 3, ``twenty-first`` = 21); a Chinese 一 used as an article
  (``一名``) or in a word (``一起``) is no number;
- **currencies** (:func:`currencies`): a currency sign (``$ € £ ¥ ₹ ₩ ₽ ...``) and the English and
  Chinese words and codes of the common ones (``dollars`` = ``USD`` = ``美元`` = ``$``); ``元`` / ``块``
  alone are no token (the Chinese texts that say them rarely write ``¥``);
- **symbols** (:func:`symbols`): every other symbol character (Unicode category ``So``: emoji, ``★``,
  ``♥``), each its own token (``I love 🐶`` ≠ ``I love 🐱``), but the degree signs (``5°C`` = ``5℃``).

>>> numbers("temp -5, range 3-5, 2.5 million, 三千五, third")
['3500', '2500000', '-5', '3', '5', '3']
>>> sorted(currencies("$5 or 5 euros")), symbols("I love 🐶!")
(['$', '€'], {'🐶'})
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["CURRENCY_WORDS", "NUMBER_WORDS", "ZH_DIGIT", "currencies", "numbers", "symbols", "zh_number"]

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}  # fmt: skip
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_ORDINALS = {w: i for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth"
    " fifteenth sixteenth seventeenth eighteenth nineteenth".split(), 1)} | {
    w: 10 * i for i, w in enumerate("twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth"
                                    " ninetieth".split(), 2)}  # fmt: skip
NUMBER_WORDS = frozenset(_UNITS.keys() | _TENS.keys() | _SCALES.keys() | _ORDINALS.keys())
"""The English words of numbers (no name even when capitalized: "Third floor")."""
_NOT_ONE_BEFORE = [[w] for w in "no any every some the this that which each".split()]  # "no one"

# a sign: - or − right before a digit, not after a word, a number or "3 " (3-5, 3 - 5 are ranges)
_NUMBER = re.compile(r"(?:(?<![\w.,])(?<!\d\s)[-−](?=\d))?(?:\d+(?:,\d{3})+(?!\d)|\d+(?:[.:]\d+)?)")
_SCALED = re.compile(r"(?<![\w.])(\d+(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?)\s*(hundred|thousand|million|billion)\b")
ZH_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
"""Chinese digits -> their values."""
_ZH_UNIT = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10**4, "亿": 10**8}
_ZH_NUM = re.compile(r"(\d+(?:\.\d+)?)([十百千万亿]+)|[零〇一二两三四五六七八九十百千万亿]+")
_ZH_NOT_NUM = re.compile(  # 一 inside a word
    "一心一意|一起|一直|一样|一些|一般|一定|一切|一旦|一向|一致|一下|一会|一边|统一|唯一|万一|千万|十分|万分|不一|同一"
)
_ZH_ARTICLE = re.compile(  # 一 as an article: before a measure word, not after a numeral or 第
    r"(?<![零〇一二两三四五六七八九十百千万亿\d第])一(?=[个只名位条件张本台辆家把杯份种项篇首座间套双对])"
)
_CURRENCY_SIGNS = "$€£¥₹₩₽₺₫₪฿₱₴₦¢"
_CURRENCY_WORDS = {
    **dict.fromkeys(("dollar", "dollars", "usd", "美元", "美金"), "$"),
    **dict.fromkeys(("euro", "euros", "eur", "欧元"), "€"),
    **dict.fromkeys(("gbp", "英镑"), "£"),
    **dict.fromkeys(("yen", "jpy", "yuan", "rmb", "cny", "日元", "人民币"), "¥"),
}
CURRENCY_WORDS = frozenset(w for w in _CURRENCY_WORDS if w.isascii())
"""The English words and codes of currencies (no name even when capitalized: "USD")."""
_CURRENCY = re.compile(
    rf"[{re.escape(_CURRENCY_SIGNS)}]|\b(?:dollars?|usd|euros?|eur|gbp|yen|jpy|yuan|rmb|cny)\b"
    "|美元|美金|欧元|英镑|日元|人民币"
)
_NOT_SYMBOLS = frozenset("°℃℉") | frozenset(_CURRENCY_SIGNS)


def zh_number(run: str) -> int:
    """``"二十五" -> 25``, ``"两千" -> 2000``, ``"二〇一九" -> 2019``, ``"三万五千" -> 35000``, and a
    last digit right after a unit counts a tenth of it (``"三千五" -> 3500``, ``"一百二" -> 120``)."""
    if len(run) > 1 and all(c in ZH_DIGIT for c in run):
        return int("".join(str(ZH_DIGIT[c]) for c in run))  # digit by digit: a year
    total = section = 0
    digit: int | None = None
    unit = 0  # the unit right before the last digit (0: none, or a 零 between)
    for c in run:
        if c in ZH_DIGIT:
            unit = 0 if digit is not None or c in "零〇" else unit
            digit = ZH_DIGIT[c]
        elif c in _ZH_UNIT:
            section += (1 if digit is None else digit) * _ZH_UNIT[c]
            digit, unit = None, _ZH_UNIT[c]
        else:  # 万, 亿
            total = (total + section + (digit or 0)) * _ZH_BIG[c]
            section, digit, unit = 0, None, _ZH_BIG[c]
    if digit is not None and unit > 10:  # 三千五: five hundred (十五 is fifteen either way)
        digit *= unit // 10
    return total + section + (digit or 0)


def _en_numbers(words: list[str]) -> list[int]:
    """The values of the runs of English number words: ``["twenty", "five"] -> [25]``, an ordinal as
    its number (``"twenty", "third"`` -> 23); "one" is no number after no / any / every / some / the /
    this / that / which / each or before "of"."""
    out: list[int] = []
    current: int | None = None
    for k, w in enumerate([*words, ""]):
        if w == "one" and (words[k - 1 : k] in _NOT_ONE_BEFORE or words[k + 1 : k + 2] == ["of"]):
            w = ""  # "no one", "the one", "one of them"
        if w in _UNITS or w in _TENS or w in _ORDINALS:
            value = _UNITS.get(w, _TENS.get(w, _ORDINALS.get(w, 0)))
            tens = current is not None and current % 100 in _TENS.values() and value < 10
            current = current + value if tens else value  # twenty five -> 25
        elif w in _SCALES and current is not None:
            current *= _SCALES[w]
        elif current is not None:
            out.append(current)
            current = None
    return out


def _scaled(m: re.Match[str]) -> str:
    """A number and the scale word after it -> the value (``2.5 million`` -> ``2500000``)."""
    value = float(m[1].replace(",", "")) * _SCALES[m[2]]
    return str(int(value)) if value == int(value) else str(value)


def numbers(low: str) -> list[str]:
    """The numbers of a casefolded text whose time words are gone, as canonical strings: Chinese
    numerals (not inside words, not 一 as an article), ``3万``, digits with their sign and scale word,
    runs of English number words and ordinals."""
    low = low.replace("千米", "公里").replace("千克", "公斤")  # a kilometre is no thousand metres here
    low = _ZH_ARTICLE.sub(" ", _ZH_NOT_NUM.sub(" ", low))
    out = []
    for m in _ZH_NUM.finditer(low):
        if m[1]:  # 3万, 2.5千: digits times the units
            value = float(m[1])
            for c in m[2]:
                value *= _ZH_UNIT.get(c, 1) * _ZH_BIG.get(c, 1)
            out.append(str(int(value)) if value == int(value) else str(value))
        else:
            out.append(str(zh_number(m[0])))
    low = _ZH_NUM.sub(" ", low)
    out += [_scaled(m) for m in _SCALED.finditer(low)]
    low = _SCALED.sub(" ", low)
    out += [m.replace(",", "").replace("−", "-") for m in _NUMBER.findall(low)]
    words = re.findall(r"[a-z]+|[^\sa-z-]", low)  # punctuation ends a run: "twenty. five" is two numbers
    return out + [str(v) for v in _en_numbers(words)]


def currencies(low: str) -> set[str]:
    """The currencies a casefolded text names, each as its sign (``{"$"}`` for "$5", "5 USD", "5美元")."""
    return {_CURRENCY_WORDS.get(m, m) for m in _CURRENCY.findall(low)}


def symbols(text: str) -> set[str]:
    """The symbol characters of ``text`` (emoji, ``★``), but currency and degree signs."""
    return {c for c in text if c not in _NOT_SYMBOLS and unicodedata.category(c) == "So"}
