"""The checks of the secret rules (MG203): is the value after "password:" / "密码" a credential?

A rule's pattern finds a credential *name* and the value after it (``password: hunter2``,
``client_secret=8f3k…``, ``"access_token": "ya29…"``, ``密码 abc123``, ``password abc123``); the check
decides whether the value is one, so that talk about passwords (``the password is wrong``, ``密码错误``,
``token: none``, ``a token of appreciation``) is stored. Like :mod:`memkit.guard.checks`, each
check is ``check(text, start, end) -> bool`` on the folded text, and runs in Python only.

Names come in two strengths:

- a **password** name (``password``, ``passwd``, ``pwd``, ``passcode``, ``passphrase``, ``pin``, and
  ``api key``, ``secret key``, ``access token``: what nothing but a credential is called) takes any
  value of 3+ characters that is not a word of ordinary talk; a plain lowercase word only when it is
  assigned (``=``, ``:``) or quoted;
- a **token** name (``secret``, ``token`` and other ``…_key`` names, whatever their prefix:
  ``client_secret``, ``refreshToken``, ``x-auth-token``), also a word of prose, takes only a value
  that looks made: 8+ characters with a digit, a symbol or mixed case (``token: abc123def456``), or
  6+ characters assigned with ``=`` or quoted; never digits alone unless quoted (``max_token: 4096``
  is a count).

A name is a whole identifier or its last part: the character before it is not a letter or digit, is
``_`` / ``-``, or a camelCase step (``clientSecret``); ``spin: 3`` holds no ``pin``. Placeholders
(``${TOKEN}``, ``<your key>``, ``********``, ``os.getenv("KEY")``, ``none``) are never a secret.
With nothing but spaces between a whole-word name and its value (``password abc123``, ``pin 4821``:
:func:`bare_secret_en`, like ``密码 abc123``: :func:`bare_secret_zh`) the value must look made in a
way prose words do not (``password reset link sent``, ``secret santa 2024`` are stored).

>>> text = "client_secret=8f3kd93kdl2"
>>> credential(text, 7, len(text)), credential("token: none", 0, 11), credential("spin: 12345", 1, 11)
(True, False, False)
>>> secret_value_zh("密码是sunshine", 0, 11), bare_secret_zh("密码 abc123", 0, 9)
(True, True)
>>> bare_secret_zh("密码 2024 年", 0, 7), bare_secret_zh("密码 SHA256 加密", 0, 9)
(False, False)
>>> bare_secret_en("password abc123", 0, 15), bare_secret_en("pin 4821", 0, 8)
(True, True)
>>> bare_secret_en("password reset", 0, 14), bare_secret_en("pin PA10", 0, 8)
(False, False)
"""

from __future__ import annotations

import re

__all__ = ["bare_secret_en", "bare_secret_zh", "credential", "secret_value", "secret_value_zh"]

# words that follow "password is" in ordinary talk ("the password is wrong"): never a credential
_NOT_SECRETS = frozenset(
    "required incorrect wrong invalid expired reset changed strong weak correct needed missing empty set "
    "protected secure same different new old forgotten long short too not the a an my your our their "
    "what how where valid revoked rotated stored saved shared sent".split()
)
# the verb or sign, an opening quote if any (group 1), the value (group 2)
_VALUE = re.compile(r"(?i)(?:is|was|=|:|：|是|为|為)\s*([\"'`“‘「『]?)(\S+)\s*$")
# a credential name then its value: name, closing quote of a JSON key, verb or sign, opening quote, value
_NAMED = re.compile(
    r"(?i)(?P<name>[a-z _-]+?)[\"'”’]?\s*(?P<sep>(?:is|was)(?![a-z0-9_])|=|:|：)\s*"
    r"(?P<quote>[\"'`“‘「『]?)(?P<value>\S+)"
)
_PASSWORD_NAME = re.compile(r"(?i)pass|pwd|pin|api[ _-]?key|secret[ _-]?key|access[ _-]?token")
# a stand-in for a value, not the value: ${TOKEN}, <your key>, {{token}}, %(token)s, ********, xxx,
# your_token_here, os.getenv("KEY") / settings.KEY[...] (code reading it), none / null / …
_PLACEHOLDER = re.compile(
    r"(?i)\$\{?[a-z_][a-z0-9_]*\}?|<[^<>]*>|\{\{?[^{}]*\}\}?|%\(?[a-z_]*\)?s|[*x•#._-]{3,}"
    r"|(?:your|my|the)[_-][a-z0-9_-]+|[a-z_][a-z0-9_.]*[(\[].*"
    r"|none|null|nil|true|false|undefined|empty|n/a|tbd|todo|redacted|hidden|masked|placeholder|example"
)
_PSEUDONYM = re.compile(r"SECRET:(?:[0-9a-f]{8}|[0-9a-f]{24})\]")  # after "[": guard.pseudonym("[SECRET]", …)
_TRIM = "\"'`”’“‘「」『』.,;:!?，。；：！？)]}"  # quotes (Markdown's backticks too) and punctuation
_SYMBOLS = "!@#$%^&*_+=/~|"  # not "-", "." or "'": prose writes them inside words (well-known)


def _name_starts(text: str, start: int) -> bool:
    """The name at ``start`` begins an identifier or its last part: after a non-alphanumeric character
    (space, ``_``, ``-``, ``"``, a CJK character) or a camelCase step (``clientSecret``)."""
    before = text[start - 1 : start]
    if not (before.isascii() and before.isalnum()):
        return True
    return (before.islower() or before.isdigit()) and text[start].isupper()


def _made(value: str) -> bool:
    """A value prose does not write: a digit, a symbol, or mixed case inside a word (``wJalrXUtn``,
    ``iPhone``; not ``Garden`` or ``NONE``)."""
    letters = "".join(c for c in value if c.isascii() and c.isalpha())
    mixed = any(a.islower() and b.isupper() for a, b in zip(letters, letters[1:], strict=False))
    return mixed or _marked(value)


def _marked(value: str) -> bool:
    """The stronger half of :func:`_made`: a digit or a symbol (mixed case alone is also a brand's)."""
    return any(c.isdigit() or c in _SYMBOLS for c in value)


def credential(text: str, start: int, end: int) -> bool:
    """MG203: a credential name (a whole identifier or its last part) given a value that looks like a
    credential (the module docstring says which, by the name's strength)."""
    m = _NAMED.fullmatch(text, start, end)
    if m is None or not _name_starts(text, start):
        return False
    if text[start - 1 : start] == "[" and _PSEUDONYM.match(text, start):
        return False  # memkit's own pseudonym ([SECRET:1f2e3d4c], a digest): what replaced a secret
    value = m.group("value").strip(_TRIM)
    if _PLACEHOLDER.fullmatch(value) or value.lower() in _NOT_SECRETS:
        return False
    if _PASSWORD_NAME.search(m.group("name")):
        return _secret_value(text[start:end], words=False)
    quoted, assigned = bool(m.group("quote")), m.group("sep") == "="
    if len(value) < (6 if quoted or assigned else 8) or not re.search(r"[A-Za-z0-9]", value):
        return False  # short: "token: abc", "token: ERC-20"; no credential characters
    if value.isdigit() and not quoted:
        return False  # a count: "max_token: 128000"
    return quoted or assigned or _made(value)


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
    of ordinary talk nor a placeholder; a plain lowercase word counts only when ``words``, assigned or
    quoted."""
    m = _VALUE.search(span)
    if m is None:
        return False
    value = m.group(2).strip(_TRIM)
    if len(value) < 3 or value.lower() in _NOT_SECRETS or _PLACEHOLDER.fullmatch(value):
        return False
    if not any(c.isascii() and (c.isalnum() or c in "!@#$%^&*_-+=") for c in value):
        return False  # 密码是什么 / 密码是必须的: no credential characters at all
    plain_word = value.isascii() and value.isalpha() and value.islower()
    assigned = bool(re.search(r"[=:：]", m.group(0)))
    return words or assigned or bool(m.group(1)) or not plain_word


# after a bare number, a Chinese counter or unit makes it a quantity: 密码 6 位, 2024 年, 验证码 60 秒
_UNIT = re.compile(r"\s*[年月日号位次个元块天周岁分秒条人字]")
# names of algorithms, not values: 密码 SHA256 加密, 密钥 AES-128, password PBKDF2, passphrase ed25519
_ALGORITHM = re.compile(
    r"(?i)(?:md|sha|aes|rsa|des|sm|crc|base|utf|ecc|hmac|pbkdf)[0-9-]*|argon2(?:id|i|d)?|(?:ed|x)(?:25519|448)"
)


def bare_secret_zh(text: str, start: int, end: int) -> bool:
    """MG203, Chinese without a verb or sign: ``密码 abc123``, ``验证码 834920``, ``账号admin密码Qq123456``.
    With nothing said between the name and the value, the value must look made: 4+ characters with a
    digit, not a quantity (``密码 6 位``, ``2024 年``) nor an algorithm (``SHA256``)."""
    m = re.search(r"[A-Za-z0-9][!-~]*$", text[start:end])
    if m is None:
        return False
    value = m.group().rstrip(_TRIM)
    if len(value) < 4 or not any(c.isdigit() for c in value) or _ALGORITHM.fullmatch(value):
        return False
    return not (value.isdigit() and _UNIT.match(text, start + m.start() + len(value)))


# after a bare number, an English unit makes it a quantity: password 1000 times, pin 1234 digits long
_UNIT_EN = re.compile(
    r"(?i)\s*(?:characters?|chars?|digits?|letters?|symbols?|numbers?|times|attempts?|tries|retries|days?"
    r"|hours?|minutes?|mins?|seconds?|secs?|weeks?|months?|years?|users?|accounts?|%)(?![a-z])"
)
# what prose puts right after a credential's name that no one would take for its value: a URL, an e-mail
# address, a path, a mention or hashtag, a version, a time, a number with its unit or ordinal (2nd, 10x,
# 6-digit), words joined by / & + (and/or) or a hyphen (ERC20-compatible), an identifier (reset_token,
# PASSWORD_HASHERS), a key file's name (id_ed25519), an Ethereum address (public, 0x + 40 hex digits)
_PROSE_VALUE = re.compile(
    r"(?i)[a-z][a-z0-9+.-]*://\S*|www\.\S*|[^@\s]+@[^@\s]+\.[a-z]{2,}|(?:~|\.{1,2})?/[\w./-]*"
    r"|[@#][a-z_][\w-]*|v?[0-9]+(?:\.[0-9]+)+[a-z]?|[0-9]{1,2}(?::[0-9]{2}){0,2}(?:am|pm)"
    r"|[0-9]+(?:st|nd|rd|th|x|s|ms|h|hrs?|d|min|mins|k|kb|mb|gb|tb|px)|[0-9]+(?:-[a-z]+)+"
    r"|[a-z]+(?:[/&+][a-z]+)+|[a-z0-9]+(?-i:-[a-z]{4,})|(?-i:[a-z]+(?:_[a-z]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"
    r"|id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?|0x[0-9a-f]{40}"
)
_PUNCT_SECRET = "!@^&*_=|"  # in a value of digits without letters, what no quantity or date has (12!34)


def bare_secret_en(text: str, start: int, end: int) -> bool:
    """MG203, English without a verb or sign: ``password abc123``, ``my passcode Zx9!k2``, ``pin 4821``,
    ``api key abcDEF123456``. Prose puts words there (``password reset``, ``token ring``, ``secret santa
    2024``), so the value must look made, more so than after a sign (:func:`_marked`: a digit or a
    symbol; mixed case alone is a brand's, ``iCloud``) and be none of :data:`_PROSE_VALUE`.

    By name: a ``pin`` takes 4-12 digits only (``pin A12`` names a connector's); another password
    name (:data:`_PASSWORD_NAME`) 4+ characters, digits alone when no unit follows (``password 1000
    times``), digits and punctuation only with a symbol no number has (``2024-01-05`` is a date);
    ``secret``, ``token`` and the other ``…key`` names 8+ characters with a letter and a digit, never
    digits alone. ``passwd`` is the Unix command, whose argument is a user's name (``passwd deploy1``).
    """
    name, raw = text[start:end].rsplit(None, 1)
    name = name.rstrip("\"'”’").lower()
    value = raw.strip(_TRIM + "([{<*")
    if name == "passwd" or len(value) < 4 or value.lower() in _NOT_SECRETS:
        return False
    if _PLACEHOLDER.fullmatch(value) or _PROSE_VALUE.fullmatch(value) or _ALGORITHM.fullmatch(value):
        return False
    if value.isdigit():  # a PIN, or a count
        long_enough = len(value) <= 12 if name.startswith("pin") else _PASSWORD_NAME.search(name)
        after = end - len(raw) + raw.index(value) + len(value)
        return bool(long_enough) and not _UNIT_EN.match(text, after)
    if name.startswith("pin"):
        return False
    letter = any(c.isascii() and c.isalpha() for c in value)
    if _PASSWORD_NAME.search(name):
        return _marked(value) if letter else any(c in _PUNCT_SECRET for c in value)
    return len(value) >= 8 and letter and any(c.isdigit() for c in value)
