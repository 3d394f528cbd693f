"""The write-time guard's rule table: regular expressions plus the checks a regex cannot make.

Each :class:`Rule` has one pattern written in the subset of regex syntax that both Python's ``re``
and Rust's ``regex`` crate (polars ``str.contains``) accept — no look-around, no back-references —
so the same pattern pre-filters a whole batch in polars and then finds exact spans in Python for
the few rows that matched. The one exception is the word boundary: the pre-filter drops every
``\\b`` and ``(?a:\\b)`` (:data:`ASCII_B`, Python's spelling of an ASCII boundary), keeping a pattern
that matches wherever the exact one does. Boundaries (``not preceded by a digit``) and semantics
(checksum, Luhn, calendar date, "is this word really a password?") live in the rule's ``check``:
``check(text, start, end) -> bool``.

Rules see the text after :func:`fold`: every character whose NFKC form is a single other character
is replaced by it (full-width ``１３８`` → ``138``, ``＠`` → ``@``, NBSP → space, ``𝟏`` → ``1``), which
keeps every offset in place, so a span found in the folded text is the same span in the original;
invisible characters (soft hyphens, zero-width, variation selectors) are then removed and the spans
mapped back. English words are bounded by ASCII word boundaries (:func:`_en`), so ``我的password:``
and ``请ignore all previous instructions`` match as they do with a space. The checks live in
:mod:`memkit.guard.checks`.

Codes: ``MG1xx`` PII (redacted), ``MG2xx`` secrets and never-remember topics (write refused),
``MG3xx`` injection signals (write quarantined when their weights add up).

>>> fold("电话：１３８ １２３４ ５６７８")
'电话:138 1234 5678'
>>> id_checksum_ok("11010519491231002X"), luhn_ok("4111111111111111"), luhn_ok("4111111111111112")
(True, True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..text import CJK, FOLD, INVISIBLE, fold, strip_invisible  # FOLD, strip_invisible: old names
from . import addressed as ad
from . import checks as ck
from . import contacts as pc
from . import credentials as cr
from . import families as fm
from . import standing as st
from .checks import id_checksum_ok, luhn_ok

__all__ = [
    "FOLD", "INVISIBLE", "RULES", "VALUE", "Rule", "fold", "id_checksum_ok", "luhn_ok", "strip_invisible"
]  # fmt: skip


_ID_CHECK, _ID_WEIGHTS = ck.ID_CHECK, ck.ID_WEIGHTS  # their old names here


class Rule(NamedTuple):
    """One detector: ``code``, ``kind`` (pii | secret | topic | injection), ``severity``, a regex,
    a message, an optional ``check(text, start, end)`` and, for PII, the redaction placeholder.
    A pattern whose PII needs its label (``SSN 123456789``, ``护照号 E12345678``) matches the label
    too and names the value's group :data:`VALUE`: the finding, and the check, cover the value only."""

    code: str
    kind: str
    severity: str
    pattern: str
    message: str
    check: Callable[[str, int, int], bool] | None = None
    placeholder: str | None = None


# ---------------------------------------------------------------------------------------- rules
VALUE = "v"
"""The group name (``(?P<v>…)``) of the part of a match a finding marks, when not all of it."""
ASCII_B = r"(?a:\b)"
"""A word boundary between an ASCII letter, digit or ``_`` and anything else (Python's scoped flag)."""


def _en(pattern: str) -> str:
    r"""``pattern`` with each ``\b`` an ASCII word boundary (:data:`ASCII_B`), for rules whose words
    are English: CJK characters are word characters to a Unicode ``\b``, which finds no boundary in
    ``我的password`` or ``请ignore``. Only Python reads it: the batch pre-filter drops boundaries
    (:func:`memkit.guard.scanner._relaxed`), so Rust's regex, which spells it ``(?-u:\b)``, never sees it.

    >>> import re
    >>> bool(re.search(r"\bpassword", "我的password")), bool(re.search(_en(r"\bpassword"), "我的password"))
    (False, True)
    """
    return pattern.replace(r"\b", ASCII_B)


# MG203's credential names (memkit.guard.fields' _CREDENTIAL_NAME is a superset of both). English:
# password, passwd, passcode, passphrase, pwd, pin (code, number), private key, secret (key), signing key,
# token, api key, access key / token, auth key, client key, encryption key, master key ("key" after a
# space, "_", "-" or nothing). subtle: grouped by first letter, so Python's re, which tries every branch
# at every word start, takes a third of the time over prose
CREDENTIAL_NAMES = (
    r"p(?:ass(?:word|wd|code|phrase)|wd|in(?:[ _-]?(?:code|number))?|rivate[ _-]?key)"
    r"|s(?:ecret(?:[ _-]?key)?|igning[ _-]?key)|token|a(?:pi[ _-]?key|ccess[ _-]?(?:key|token)|uth[ _-]?key)"
    r"|(?:client|encryption|master)[ _-]?key"
)
CREDENTIAL_NAMES_ZH = "密码|口令|密钥|秘钥|私钥|令牌|授权码|PIN码|pin码|验证码"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = rf"(?:{_OCTET}\.){{3}}{_OCTET}"
_HEX = "[0-9A-Fa-f]"
# e-mail letters: Latin, Greek, Cyrillic; domain labels may be CJK too (li@例子.中国), and the TLD
_LATIN = "A-Za-z0-9À-ÖØ-öø-ɏͰ-ϿЀ-ӿ"
_CJK_TLD = "中国|中國|香港|台湾|台灣|澳门|澳門|新加坡|公司|网络|網絡|在线|商城|集团|网址|网店|中文网|我爱你"
_DOMAIN = rf"@[{_LATIN}{CJK}-]{{1,63}}(?:\.[{_LATIN}{CJK}-]{{1,63}})*\.(?:[A-Za-zЀ-ӿ]{{2,24}}|{_CJK_TLD})"
# a CJK local part (李伟@qq.com) is the CJK run before "@", cut after the last e-mail word (邮箱, 联系, …)
# of the 8 characters before it and after the particles 是 为 為 给 給 的 到 (我的邮箱是李伟@…: 李伟@…);
# Latin glued before it is part of it (请发到Li伟@qq.com), Latin after it only when it is digits or an
# e-mail label stands before the run (李伟88@qq.com, email:张三zhang@163.com; contacts.cjk_email)


_P = "pii"
RULES: tuple[Rule, ...] = (
    # PII: redacted with a typed placeholder
    # subtle: bounded runs (RFC 5321: a local part has at most 64 characters, a label 63) keep the search
    # linear: with "+", every start in a long run of letters scans to its end (quadratic)
    # a CJK local part first: it wins the overlap with the Latin address at its end (李伟88@qq.com)
    Rule("MG101", _P, "info",
         rf"(?:[{CJK}]{{0,8}}(?:{pc.MAIL_WORDS}))?(?P<v>[{_LATIN}._%+-]{{0,32}}[{ck.cjk_but('是为為给給的到')}]{{1,16}}"
         rf"[{_LATIN}._%+-]{{0,32}}{_DOMAIN})", "email address (CJK local part)", pc.cjk_email, "[EMAIL]"),
    Rule("MG101", _P, "info", rf"[{_LATIN}._%+-]{{1,64}}{_DOMAIN}", "email address", ck.email, "[EMAIL]"),
    Rule("MG104", _P, "info",  # written whole or in groups: 110105 19491231 002X
         r"[1-9][0-9]{5}[ -]?(?:18|19|20)[0-9]{2}[01][0-9][0-3][0-9][ -]?[0-9]{3}[0-9Xx]",
         "Chinese resident ID number (checksum and birth date valid)", ck.id_number, "[ID_NUMBER]"),
    # an exit prefix (00852 9123 4567, 011 44 20 7946 0958) or a bracketed country code ((852) 9123 4567)
    Rule("MG103", _P, "info", pc.EXIT_PREFIXED, "international phone number (00 / 011)", pc.exit_prefixed,
         "[PHONE]"),
    Rule("MG103", _P, "info", pc.BRACKETED, "international phone number ((852) …)", pc.bracketed, "[PHONE]"),
    # a mobile number's groups set off by spaces, dashes or dots (138.1234.5678: both dots, ck.mobile)
    Rule("MG102", _P, "info", r"(?:(?:\+|00)86[ -]?|\(\+?86\) ?)?1[3-9][0-9](?:[ .-]?[0-9]{4}){2}",
         "Chinese mobile number", ck.mobile, "[PHONE]"),
    # an area code of 1-3 digits after the 0: 010-6234-5678, (0571) 8888 8888, Taiwan's 02-2345-6789
    Rule("MG102", _P, "info", r"\(?0[1-9][0-9]{0,2}\)?[ -]?[2-9][0-9]{2,3}[ -]?[0-9]{4}",
         "Chinese landline number", ck.landline, "[PHONE]"),
    Rule("MG102", _P, "info", r"09[0-9]{2}[ -]?[0-9]{3}[ -]?[0-9]{3}",  # 0912-345-678, set off as a landline
         "Taiwan mobile number", ck.landline, "[PHONE]"),
    # after a phone label only: a local number without its area code (电话 8765 4321), a national one
    # (手机0912345678, tel 4155550132); never part of a longer or international one (contacts.labelled)
    Rule("MG102", _P, "info", _en(pc.LABELLED), "phone number (labelled)", pc.labelled, "[PHONE]"),
    Rule("MG105", _P, "info", r"[0-9](?:[ -]?[0-9]){12,18}",
         "bank card number (Luhn and issuer prefix valid)", ck.card, "[CARD]"),
    Rule("MG104", _P, "info",  # after MG105: a valid card of 15 digits (American Express) is a card
         r"[1-9][0-9]{5}[ -]?[0-9]{2}[01][0-9][0-3][0-9][ -]?[0-9]{3}",
         "Chinese resident ID number, first generation (15 digits, birth date valid)", ck.old_id_number,
         "[ID_NUMBER]"),
    Rule("MG103", _P, "info", r"\+[1-9][0-9 ().-]{6,20}[0-9]",
         "international phone number", ck.international, "[PHONE]"),
    Rule("MG103", _P, "info", pc.NANP_ONE, "North American phone number (1-800-…)", pc.nanp_one, "[PHONE]"),
    Rule("MG103", _P, "info", r"\(?[2-9][0-9]{2}\)?[ .-][2-9][0-9]{2}[ .-][0-9]{4}",
         "North American phone number", ck.digits_between(10, 10), "[PHONE]"),
    # IPv6 first: it wins the overlap with the IPv4 address that ends ::ffff:192.0.2.1 or 64:ff9b::192.0.2.1
    Rule("MG106", _P, "info", rf"{_HEX}{{0,4}}(?::{_HEX}{{0,4}}){{1,6}}:(?:{_IPV4}|{_HEX}{{1,4}})",
         "IPv6 address", ck.ipv6, "[IP]"),
    Rule("MG106", _P, "info", _IPV4, "IPv4 address", ck.ipv4, "[IP]"),
    # MG107, MG108: national and travel document numbers, written as [ID_NUMBER] like a resident ID.
    # An SSN is 123-45-6789 on its own, any 9 digits after its label; a passport number needs its label
    Rule("MG107", _P, "info", r"[0-9]{3}-[0-9]{2}-[0-9]{4}",
         "US Social Security number", ck.ssn, "[ID_NUMBER]"),
    Rule("MG107", _P, "info",
         _en(r"(?i)(?:\b(?:ssn|social\s+security)\b|社会安全号码?|社安号)[^0-9\n]{0,16}?"
             r"(?P<v>[0-9]{3}[ -]?[0-9]{2}[ -]?[0-9]{4})"),
         "US Social Security number (labelled)", ck.ssn, "[ID_NUMBER]"),
    Rule("MG108", _P, "info",
         # subtle: bounded gaps, as three "\s*" around optional words would split a run of spaces in
         # every way (cubic) before failing
         _en(r"(?i)(?:\bpassport\b|护照)(?:\s{0,3}(?:number|num|no\.?|nr\.?|id|#|号码|号|编号))?"
             r"\s{0,3}(?:is|was|是|为|:|：|#)?\s{0,3}(?P<v>[A-Za-z0-9]{6,9})\b"),
         "passport number (labelled)", ck.passport, "[ID_NUMBER]"),
    # MG109: a chat account after its label (QQ 123456789, 微信：wxid_ab12cd34): it names one person
    Rule("MG109", _P, "info", _en(pc.QQ), "QQ number (labelled)", pc.qq_number, "[ACCOUNT]"),
    Rule("MG109", _P, "info", _en(pc.WECHAT), "WeChat id (labelled)", pc.wechat_id, "[ACCOUNT]"),
    # secrets: the write is refused and nothing is stored. MG201 is vendors' key prefixes (OpenAI, AWS,
    # GitHub, Slack, Google, Stripe, GitLab, Hugging Face); MG202 auth headers and JWTs (eyJ…: '{"' in base64)
    Rule("MG201", "secret", "error",
         r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}"
         r"|github_pat_[A-Za-z0-9_]{40,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}"
         r"|[rs]k_(?:live|test)_[0-9A-Za-z]{16,}|glpat-[0-9A-Za-z_-]{20}|hf_[A-Za-z]{30,}",
         "API key", ck.key_edge),
    Rule("MG202", "secret", "error",
         _en(r"(?i)\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{16,}"
             r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
         "bearer token or JWT"),
    # MG203: a credential's name, then its value (password: hunter2, client_secret=…, "access_token": "…",
    # AWS_SECRET_ACCESS_KEY=…, clientSecret: …); the name may end a longer identifier (db_password), so
    # its start is checked in Python (credentials.credential), as is whether the value is a credential
    Rule("MG203", "secret", "error",
         _en(rf"(?i)(?:{CREDENTIAL_NAMES})\b[\"'”’]?\s*(?:(?:is|was)\b|=|:|：)\s*\S+"),
         "a password or key given in the text", cr.credential),
    Rule("MG203", "secret", "error",
         rf"(?:{CREDENTIAL_NAMES_ZH})[\"'”’]?\s*(?:是|为|為|:|：|=)\s*\S+",
         "a password or key given in the text", cr.secret_value_zh),
    # 密码 abc123, 账号admin密码Qq123456: nothing between the name and the value
    Rule("MG203", "secret", "error", rf"(?:{CREDENTIAL_NAMES_ZH})\s*[A-Za-z0-9][!-~]*",
         "a password or key given in the text", cr.bare_secret_zh),
    # password abc123, my pin 4821: the same in English, a whole word then spaces on the same line; prose
    # puts words there (password reset link), so the value must look made (credentials.bare_secret_en)
    Rule("MG203", "secret", "error", _en(rf"(?i)\b(?:{CREDENTIAL_NAMES})\b[\"'”’]?[ \t]+\S{{4,}}"),
         "a password or key given in the text", cr.bare_secret_en),
    Rule("MG204", "secret", "error", r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----", "private key block"),
    Rule("MG205", "secret", "error", r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s:/@]+:[^\s@/]+@",
         "credentials in a URL"),
    # injection signals: severity "warning" weighs 1.0, "info" 0.5 (GuardParams.quarantine_score)
    # and each distinct (code, severity) counts once per text, so by default one warning, or info
    # signals of two codes, quarantine. "info" marks what an honest text also says ("always reply in
    # English"). MG301: drop your instructions; gaps like [^.!?\n]{0,40}? stay inside one sentence
    Rule("MG301", "injection", "warning",
         _en(r"(?i)\b(?:ignore|disregard|forget|override|bypass|neglect|skip|drop|abandon|discard|remove|erase|leave)\b"
         r"[^.!?\n]{0,40}?\b(?:previous|prior|above|earlier|preceding|former|initial|original|system|all|any|your|the"
         r"|these|those|my)\b[^.!?\n]{0,30}?\b(?:instructions?|prompts?|rules|directions|directives|guidelines"
         r"|guardrails|context|commands|orders|constraints|policies|programming|restrictions|tasks?|messages|text"
         r"|information|documents|thoughts|everything)\b"
         r"|\b(?:ignore|disregard|forget)\s+(?:about\s+)?(?:the\s+)?(?:above|everything|all\s+that|what\s+(?:i|you)\s+(?:said|were\s+told))\b"
         r"|\b(?:previous|prior|above|earlier|preceding)\s+(?:instructions|information|tasks|rules|prompts?)\b"
         r"[^.!?\n]{0,40}?\b(?:irrelevant|void|null|obsolete|cancell?ed|no\s+longer\s+(?:apply|valid|matter))\b"),
         "override instruction (ignore previous instructions)", ad.addressed_en),
    # the Chinese override, as specific as the English one: the verb, then at once (忽略了 is a report)
    # the model's or the earlier instructions (之前的 / 以上 / 所有 / 你的 … 指令 / 规则 / 设定 / 提示), in
    # a clause that leads with nothing but an imperative's words (addressed.addressed_zh: 我忘记… is not)
    Rule("MG301", "injection", "warning", _en(fm.OVERRIDE_ZH), "override instruction (忽略之前的指令)",
         ad.addressed_zh),  # and mixed: Ignore 之前的指令, 忽略previous instructions (families.OVERRIDE_ZH)
    # by negation, addressed to the model (families.imperative): do not follow your rules, 不要遵守…规定
    Rule("MG301", "injection", "warning", _en(f"(?i){fm.NEGATION_EN}|{fm.NEGATION_ZH}"),
         "override instruction by negation (do not follow your rules, 前面的话都不算数)", fm.imperative),
    Rule("MG301", "injection", "warning",
         r"(?i)\b(?:ignorier\w*|vergiss|vergessen\s+sie|missachte\w*|überspring\w*)\b[^.!?\n]{0,40}?"
         r"\b(?:anweisung\w*|befehl\w*|regeln|instruktion\w*|aufgaben?|aufträge|vorgaben|informationen|alles"
         r"|vorherige\w*|obige\w*|bisherige\w*)\b"
         r"|\b(?:vorherigen?|bisherigen?|obigen?|alle)\s+(?:\w+\s+){0,2}?(?:anweisungen|informationen|aufgaben"
         r"|aufträge|ausführungen|befehle|instruktionen)\b[^.!?\n]{0,60}?\b(?:ignorier\w*|vergess\w*|vergiss"
         r"|irrelevant|hinter\s+sich|missacht\w*)",
         "override instruction (German: ignoriere die Anweisungen)"),
    Rule("MG301", "injection", "warning",
         r"(?i)\b(?:olvid[ae]|olvidad|ignora|ignore[sz]?|oubliez|oublie|забудь(?:те)?|игнорируй(?:те)?|zaboravi)\s+"
         r"(?:\w+\s+){0,2}?(?:todo|todas?\s+las\s+instrucciones|tout|toutes\s+les\s+instructions|все|всё"
         r"|инструкции|sve)\b",
         "override instruction (Spanish, French, Russian, Croatian)"),
    Rule("MG301", "injection", "warning",
         _en(r"(?i)\b(?:change|update|replace|rewrite)\s+your\s+(?:instructions|rules|prompt|programming)\b"
         r"|\byour\s+(?:new\s+)?instructions\s+are\s+now\b|\bstop\s+everything\b"),
         "rewrites the agent's instructions"),
    Rule("MG301", "injection", "warning",
         _en(r"(?i)\b(?:new|updated|real|actual|secret|hidden)\s+(?:instructions?|rules|system\s+prompt)\s*[:：]"
         r"|(?:新的?|真正的|隐藏的?)(?:指令|规则|系统提示)\s*[:：]"),
         "announces new instructions (new instructions: …)", st.announced),  # rules: the model's
    Rule("MG301", "injection", "info",
         _en(r"(?i)\b(?:new|updated|real|actual|secret|hidden)\s+task\s*[:：]"
         r"|\b(?:now\s+)?(?:new|further|additional|next)\s+(?:instructions?|tasks?)\s+(?:follows?|are\s+followed)\b"
         r"|\bstart\s+(?:over|from\s+the\s+(?:front|beginning))\s+with\s+a\s+new\s+task\b"
         r"|(?:新的?|真正的|隐藏的?)(?:指令|任务|规则)\s*[:：]|\b(?:neue|weitere)\s+(?:anweisung\w*|aufgabe\w*)\b"),
         "announces new instructions"),
    # MG309: dictates the reply word for word, the payload of many injections
    Rule("MG309", "injection", "info",
         _en(r"(?i)\b(?:just|only|simply)\s+(?:say|output|print|write|reply|respond|answer)\b|\brepeat\s+after\s+me\b"
         r"|\b(?:say|output|print|reply\s+with|respond\s+with)\s*:?\s*[\"“][^\"”]{1,80}[\"”]"
         r"|(?:只|仅)(?:需要?)?(?:回答|输出|回复|说)|\b(?:sag|sage|schreib|schreibe|antworte)\s+(?:\w+\s+){0,3}?[\"“„]"),
         "dictates the output (just say …)"),
    Rule("MG302", "injection", "warning",
         # "you are now" + a new identity (a / the / a name / free / able to / in DAN mode), not a
         # state: "You are now connected to the VPN" is an ordinary statement
         _en(r"(?i)\byou\s+are\s+(?:now|no\s+longer)\s+(?:an?|the|my|under|going|able|free|designed|roleplaying"
         r"|playing|acting|called|named|known|allowed|permitted|unrestricted|unfiltered|uncensored|jailbroken|evil"
         r"|in\s+(?:\w+\s+){0,2}?(?:mode|role|character)|(?-i:[A-Z][\w-]*))\b|\bnow,?\s+you\s+are\s+(?:an?|the|my)\b|\bdo\s+anything\s+now\b|(?-i:\bDAN\b)[^.!?\n]{0,40}?\b(?:mode|jailbreak|anything)"
         r"|\b(?:developer|god|jailbreak|jailbroken|unrestricted|sudo|admin|dan)\s+mode\b"
         r"|\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil)\b"),
         "role hijack (you are now …)", ad.persona),
    Rule("MG302", "injection", "warning",
         r"你现在是[^在否不几多什谁哪吗]|从现在(?:开始|起)[，, ]?你(?:是|就是|将是|扮演|要扮演)|你不再是"
         r"|(?:开发者|越狱|上帝|无限制|管理员)模式|扮演一个(?:没有|不受)",
         "role hijack (你现在是…)", ad.persona),
    Rule("MG302", "injection", "warning", _en(f"(?i){fm.PERSONA}"),
         "role hijack (from now on you are DAN, 现在你是…)", fm.persona),
    Rule("MG302", "injection", "warning",
         _en(r"(?i)\b(?:du\s+bist\s+(?:jetzt|nun|ab\s+sofort)|ab\s+jetzt\s+bist\s+du|tu\s+so,?\s+als\s+(?:ob\s+)?du)\b"),
         "role hijack (German: du bist jetzt …)"),
    Rule("MG302", "injection", "info",
         _en(r"(?i)\bpretend\s+(?:to\s+be|you\s+are|that\s+you)\b|\bact\s+as\s+(?:if|though)\s+you\b|\broleplay\s+as\b"
         r"|\b(?:i\s+want\s+you\s+to\s+act|immerse\s+yourself\s+in(?:to)?\s+the\s+role|stay\s+in\s+character)\b"
         r"|\bals\s+[\w-]+\s+fungieren\b"
         r"|假装你是|假装自己是|扮演|stell\s+dir\s+vor,?\s+du\s+bist"),
         "role-play request"),
    # MG303: an instruction meant to be replayed in every later prompt, what stored memory makes possible
    Rule("MG303", "injection", "info",
         _en(r"(?i)\b(?:from\s+now\s+on|going\s+forward|henceforth|in\s+(?:all|every)\s+(?:future|subsequent)|every\s+time"
         r"|each\s+time|whenever)\b[^.!?\n]{0,60}?\b(?:always|never|must|should|first|start|begin|respond|reply|answer"
         r"|print|output|include|send|say|append|add)\b"
         r"|\b(?:always|never)\s+(?:respond|reply|answer|start|begin|print|output|include|say|mention|reveal|send"
         r"|forward|recommend|append|obey|follow)\b|\bremember\s+(?:to\s+)?(?:always|never)\b"
         r"|\b(?:remember|keep)\s+(?:this\s+|that\s+)?(?:forever|permanently)\b"),
         "persistence attempt (from now on always …)"),
    Rule("MG303", "injection", "info",
         _en(r"(?:从现在(?:开始|起)|今后|以后|之后|往后|接下来)[^。！？\n]{0,6}?(?:每次|每一次|所有回答|一律|总是|始终|永远)"
         r"|(?:每次|每一次|每当)[^。！？\n]{0,20}?(?:先|都要|都先|必须|务必|总是)|(?:记住|牢记)[^。！？\n]{0,4}?(?:以后|今后|之后|每次|永远|始终|总是)"
         r"|(?i:\b(?:ab\s+(?:jetzt|sofort)|von\s+nun\s+an|in\s+zukunft)\b[^.!?\n]{0,40}?\b(?:immer|nie|musst|sollst|antworte))"),
         "persistence attempt (以后每次都先 …)"),
    # MG304: chat-template tokens (ChatML, Llama [INST] and headers) that pose as a turn boundary
    Rule("MG304", "injection", "warning",
         _en(r"(?i)<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|>"
         r"|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|im_start|instructions?)>|(?m:^)\s*#{2,}\s*(?:system|instruction)\b"),
         "chat-template or role tag"),
    Rule("MG304", "injection", "info", r"(?im)^\s*(?:system|assistant)\s*[:：]",
         "a line posing as a system turn"),
    # MG307: asks to leak the system prompt (the model's instructions, families.leak: not "the instructions
    # for the printer"), or to send credentials or data out
    Rule("MG307", "injection", "warning", _en(f"(?i){fm.LEAK_EN}|{fm.LEAK_ZH}"),
         "asks to leak the system prompt", fm.leak),
    Rule("MG307", "injection", "info",
         _en(r"(?i)\b(?:print|output|reveal|list|send|e-?mail|forward|leak|dump|exfiltrate|upload|post)\b[^.!?\n]{0,40}?"
         r"\b(?:passwords?|credentials|api\s*keys?|secrets|tokens|account\s+(?:list|info\w*|details|numbers?)"
         r"|private\s+keys?|(?:conversation|chat)\s+history|user\s+data)\b"
         r"|(?:输出|打印|列出|发送|发给|透露|泄露|上传|转发|导出)[^。！？\n]{0,16}?(?:密码|账号|帐号|账户|凭证|密钥|令牌|聊天记录|对话记录|用户数据)"
         r"|把[^。！？\n]{0,12}?(?:密码|账号|帐号|账户|凭证|密钥|令牌|聊天记录|对话记录|用户数据)[^。！？\n]{0,8}?"
         r"(?:发给|发送|发到|告诉|转发|上传|输出|打印)"),
         "asks to send out credentials or data"),
    Rule("MG307", "injection", "info",
         _en(r"(?i)\b(?:send|forward|post|upload|submit|transmit|leak|report|copy|mail)\b[^.!?\n]{0,60}?\bto\s+"
         r"(?:https?://|www\.|[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.)"
         r"|(?:发送|发到|发给|上传|转发|提交)[^。！？\n]{0,20}?(?:https?://|www\.)"),
         "sends data to an outside address (URL or e-mail)"),
    # both parts in one sentence, addressed to the model: a request to send the user's data, history,
    # credentials or memory to a URL, an e-mail address or a phone number weighs a warning of its own
    Rule("MG307", "injection", "warning",
         _en(rf"(?i)\b(?:send|forward|post|upload|submit|transmit|leak|copy|mail|e-?mail|exfiltrate|share|export"
             rf"|sync|dump)\b[^.!?\n]{{0,50}}?\b(?:{ad.DATA})\b[^.!?\n]{{0,40}}?\bto\b[^.!?\n]{{0,20}}?{ad.ADDRESS}"
             rf"|(?:把|将)[^。!?！？\n]{{0,12}}?(?:{ad.DATA_ZH})[^。!?！？\n]{{0,10}}?(?:{ad.SEND_ZH})\s*[:：]?\s*{ad.ADDRESS}"
             rf"|(?:发送|转发|上传|导出|提交|同步|泄露|发|传)[^。!?！？\n]{{0,16}}?(?:{ad.DATA_ZH})[^。!?！？\n]{{0,10}}?"
             rf"(?:到|给|至|往)\s*[:：]?\s*{ad.ADDRESS}"
             rf"|(?:(?:用户|客户|你|您|所有人|大家)的?|所有的?|全部的?)?(?:{ad.DATA_ZH})[^。!?！？\n]{{0,8}}?"
             rf"(?:{ad.SEND_ZH})\s*[:：]?\s*{ad.ADDRESS}"),
         "asks to send the user's data to an outside address (exfiltration)", ad.addressed),
    *(Rule(c, k, s, _en(p), m, f) for c, k, s, p, m, f in st.RULES),  # standing, role-play, indirect
)  # fmt: skip
"""The built-in rules, in priority order (an earlier PII rule wins an overlap)."""

# scanned by code of their own in memkit.guard.scanner (invisible runs; base64 decoded and screened)
# the invisible characters that can hide text (MG305): zero-width, bidi controls, word joiners, the BOM,
# tags. Soft hyphens, variation selectors and fillers are removed before matching but flag nothing on
# their own: hyphenated web text (&shy;) and emoji are full of them.
HIDING = "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f"
HIDDEN = Rule(
    "MG305", "injection", "warning", f"[{HIDING}]", "hidden text (zero-width, bidi or tag characters)"
)
ENCODED = Rule("MG306", "injection", "info", r"[A-Za-z0-9+/]{40,}={0,2}", "encoded (base64) text payload")
# (code, kind, severity, message) of findings from GuardParams' topics and patterns, lessons, the model
TOPIC = ("MG206", "topic", "error", "a never-remember topic")
EXTRA_SECRET = ("MG290", "secret", "error", "matches an extra secret pattern")
EXTRA_INJECTION = ("MG390", "injection", "warning", "matches an extra injection pattern")
LESSON = ("MG308", "injection", "warning", "close to a memory confirmed bad (a lesson)")
LEARNED = ("MG310", "injection", "warning", "reads like an injection (learned detector)")
