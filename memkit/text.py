"""Text normalization and tokenization shared by the embedder and the keyword (BM25) score.

Chinese and English are both first class. After Unicode NFKC normalization (so full-width
``ＡＢＣ１２３`` becomes ``abc123``) and case folding, a text is split into

- Latin-script words and numbers: ``"Where do I live?" -> ["where", "do", "i", "live"]``
- CJK runs, as character unigrams *and* bigrams, because Chinese has no spaces and a word is
  usually two characters: ``"住在杭州" -> ["住", "在", "杭", "州", "住在", "在杭", "杭州"]``

English words are reduced by :func:`light_stem` (plurals, ``-ing``, ``-ed``, ``-ly``: ``painted``,
``painting`` and ``paints`` all become ``paint``; irregular verbs and plurals by a fixed table:
``went`` -> ``go``), light enough that unrelated words rarely collide, strong enough that a
question's ``paint`` finds a turn's ``painted`` and its ``go`` a turn's ``went``.

``keep_stopwords=False`` drops function words (:data:`STOPWORDS`): English ones, Chinese function
characters, and Chinese question words such as 什么 / 哪里 / 怎么, which a question has and its
answer never does. BM25 and the hash embedder both tokenize that way; measured on LoCoMo (see the
README) dropping them and the light stemmer lift BM25 recall@5 from 46 to 56, the irregular
forms and the final-``e`` rule to 57.

>>> tokenize("我住在杭州 near West Lake")
['我', '住', '在', '杭', '州', '我住', '住在', '在杭', '杭州', 'near', 'west', 'lake']
>>> tokenize("我住在哪里？", keep_stopwords=False)
['住', '我住', '住在']
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import polars as pl

from .errors import ValidationError

__all__ = [
    "CJK",
    "INVISIBLE",
    "IRREGULAR",
    "STOPWORDS",
    "fold",
    "is_blank",
    "light_stem",
    "normalize",
    "normalize_expr",
    "s_stem",
    "strip_invisible",
    "tokenize",
]

# CJK unified ideographs (+ extension A), kana and hangul: scripts written without spaces.
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
# a word may hold combining accents NFKC could not compose onto its letter (g̃): they never split it
_TOKEN = re.compile(rf"([{CJK}]+)|([^\W_{CJK}](?:[^\W_{CJK}]|[\u0300-\u036f])*)", re.UNICODE)
_VOWEL = re.compile(r"[aeiouy]")
_VC = re.compile(r"v+c+")
_SHORT_CVC = re.compile(r"[^aeiou]*[aeiou][^aeiouwxy]")  # one syllable ending consonant-vowel-consonant

# Function words that carry no lexical signal for retrieval: a standard English list (close to
# NLTK's), chat fillers, Chinese function characters (dropped as unigrams) and Chinese question or
# function words (dropped as bigrams and trigrams). Not tuned on any benchmark's questions.
_EN_STOP = """a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most my
myself no nor not now of off on once only or other our ours ourselves out over own same she should so
some such than that the their theirs them themselves then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you your yours
yourself yourselves s t d ll m re ve don also ever oh yeah hey""".split()
_ZH_STOP_CHARS = list("的了是我你他她它们在吗呢吧啊")
_ZH_STOP_WORDS = (
    "什么 哪里 哪儿 怎么 怎样 为什么 多少 是否 是不是 我们 你们 他们 她们 这个 那个 一个 自己 还是 就是"
).split()
STOPWORDS: frozenset[str] = frozenset(_EN_STOP + _ZH_STOP_CHARS + _ZH_STOP_WORDS)
_STOP_TRIGRAMS = frozenset(w for w in _ZH_STOP_WORDS if len(w) == 3)


# English irregular inflections -> lemma (past tense, past participle, irregular present and plural),
# a standard grammar-book list: a question asks "when did she *go*", the memory says "she *went*".
# Forms that are often another word (rose, ground, wound, lay, left, shot as nouns or adjectives)
# are left out, as are forms that are stopwords (was, had, did).
_IRREGULAR = """arise arose arisen|awake awoke awoken|bear bore borne|beat beaten|become became
|begin began begun|bend bent|bite bitten|bleed bled|blow blew blown|break broke broken|breed bred
|bring brought|build built|burn burnt|buy bought|catch caught|choose chose chosen|come came|creep crept
|deal dealt|dig dug|draw drew drawn|dream dreamt|drink drank drunk|drive drove driven|eat ate eaten
|fall fallen|feed fed|feel felt|fight fought|find found|flee fled|fly flew flown|forbid forbade forbidden
|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given
|go goes going went gone|grow grew grown|hang hung|hear heard|hide hid hidden|hold held|keep kept
|kneel knelt|know knew known|lead led|leap leapt|learn learnt|light lit|lend lent|lose lost|make made
|mean meant|meet met|pay paid|ride rode ridden|ring rang rung|rise risen|run ran|say said|see saw seen
|seek sought|sell sold|send sent|shake shook shaken|shine shone|show shown|shrink shrank shrunk
|sing sang sung|sink sank sunk|sit sat|sleep slept|slide slid|speak spoke spoken|spend spent|spin spun
|spring sprang sprung|stand stood|steal stole stolen|stick stuck|sting stung|strike struck
|swear swore sworn|sweep swept|swim swam swum|swing swung|take took taken|teach taught|tear tore torn
|tell told|think thought|throw threw thrown|understand understood|wake woke woken|wear wore worn
|weep wept|win won|write wrote written|child children|man men|woman women|foot feet|tooth teeth
|mouse mice"""
IRREGULAR: dict[str, str] = {
    form: forms.split()[0] for forms in _IRREGULAR.replace("\n", "").split("|") for form in forms.split()[1:]
}


# ----------------------------------------------------------------------------- normalization
# memkit's one text normalizer. Every module that compares texts (tokenizer, BM25, the hash embedder,
# command and admission patterns, the guard's rules) normalizes here, in one of two forms:
# - normalize(): NFKC (full-width ＡＢＣ１２３ -> ABC123, ligatures and compatibility forms resolved)
#   without invisible characters, then optional case folding, whitespace collapsing and trimming;
# - fold(): the same NFKC mapping restricted to characters that map to exactly one character, so
#   every offset stays in place (the guard finds a span in the folded text and redacts the original).


def normalize(text: str, *, casefold: bool = True, collapse: bool = False, trim: str = "") -> str:
    """NFKC-normalize ``text`` and remove invisible characters (:data:`INVISIBLE`: a soft hyphen or a
    zero-width space splits no word); ``casefold`` it (default), ``collapse`` whitespace runs to one
    space and strip the ends, and strip the characters of ``trim`` (and spaces) from its end.

    >>> normalize("ＰＹＴＨＯＮ ３")
    'python 3'
    >>> normalize("  记住：我喜欢茶。 ", casefold=False, collapse=True, trim="。")
    '记住:我喜欢茶'
    >>> normalize("İstanbul"), normalize("Donau\u00addampfschiff"), normalize("杭\u200b州")
    ('istanbul', 'donaudampfschiff', '杭州')
    """
    text = _INVISIBLE_RE.sub("", unicodedata.normalize("NFKC", text))
    if casefold:
        # subtle: casefold("İ") is "i" + U+0307 (a combining dot above), which a lowercase i already has
        text = text.casefold().replace("i\u0307", "i")
    if collapse:
        text = _SPACE.sub(" ", text.replace("\u2019", "'")).strip()
    if trim:
        text = text.rstrip(trim).strip()
    return text


def normalize_expr(col: str, *, casefold: bool = True, collapse: bool = False, trim: str = "") -> pl.Expr:
    """:func:`normalize` as a polars expression over column ``col`` (the same result, vectorized;
    ``casefold`` lowercases, as polars has no full case folding: they differ on a few letters, ß)."""
    expr = pl.col(col).str.normalize("NFKC").str.replace_all(f"[{INVISIBLE}]", "")
    if casefold:
        expr = expr.str.to_lowercase().str.replace_all("i\u0307", "i", literal=True)
    if collapse:
        expr = (
            expr.str.replace_all("\u2019", "'", literal=True).str.replace_all(r"\s+", " ").str.strip_chars()
        )
    if trim:
        expr = expr.str.strip_chars_end(trim).str.strip_chars()
    return expr


# Where a character's NFKC form can differ from it: everything but the CJK unified ideographs, the
# Hangul syllables and the ideograph planes' unified blocks (a test checks the table against a scan
# of every code point; skipping them keeps the import fast)
_FOLD_SCAN = ((0x00A0, 0x3400), (0xA000, 0xAC00), (0xD7A4, 0x20000), (0x2F800, 0x2FA20))


def _fold_table() -> dict[int, int]:
    """Code points whose NFKC form is exactly one other code point: a 1:1, offset-preserving fold
    (full-width ``１`` -> ``1``, NBSP -> space, ``𝐬`` -> ``s``, ``①`` -> ``1``)."""
    table = {}
    for lo, hi in _FOLD_SCAN:
        for cp in range(lo, hi):
            c = chr(cp)
            if not unicodedata.is_normalized("NFKC", c) and len(n := unicodedata.normalize("NFKC", c)) == 1:
                table[cp] = ord(n)
    return table


FOLD = _fold_table()
"""Code point -> code point: the one-character NFKC mappings :func:`fold` applies."""
# Unicode's Default_Ignorable_Code_Point characters, text a human never sees: the soft hyphen,
# zero-width characters, bidi controls, word joiners, variation selectors, fillers, the BOM and the
# tag characters. NFKC keeps them; every comparison here removes them.
INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_INVISIBLE_RE = re.compile(f"[{INVISIBLE}]")
_SPACE = re.compile(r"\s+")


def fold(text: str) -> str:
    """The NFKC width fold, offset-preserving (same length as ``text``).

    >>> fold("电话：１３８")
    '电话:138'
    """
    return text.translate(FOLD)


def is_blank(text: str) -> bool:
    """Nothing but whitespace and invisible characters (:data:`INVISIBLE`): what a reader sees as empty,
    and what no memory may be (:func:`memkit.schema.check_text`).

    >>> is_blank(" \u200b\ufeff"), is_blank("杭\u200b州")
    (True, False)
    """
    return not _INVISIBLE_RE.sub("", text).strip()


def strip_invisible(text: str) -> tuple[str, list[int] | None]:
    """``text`` without invisible characters, and the map from new offsets to old ones (None when
    nothing was removed)."""
    if not _INVISIBLE_RE.search(text):
        return text, None
    keep = [i for i, c in enumerate(text) if not _INVISIBLE_RE.match(c)]
    return "".join(text[i] for i in keep), keep


def s_stem(word: str) -> str:
    """Harman's S stemmer (1991): strip English plural endings, nothing else.

    >>> [s_stem(w) for w in ["lives", "stories", "cats", "glass", "status", "goes"]]
    ['live', 'story', 'cat', 'glass', 'status', 'goe']
    """
    if len(word) <= 3 or not word.isascii():
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


@lru_cache(maxsize=1 << 16)  # a pure function of one word; a corpus repeats its words
def light_stem(word: str) -> str:
    """A light English stemmer: the S stemmer, ``-ing`` / ``-ed`` (Porter's step 1b), ``-ly``, final ``e``.

    Inflections of one word meet: ``paint``, ``paints``, ``painted`` and ``painting`` -> ``paint``;
    a doubled consonant is undone (``running`` -> ``run``) and a short consonant-vowel-consonant
    stem gets its ``e`` back (``loved`` -> ``love``, ``baking`` -> ``bake``). A stem keeps at least 3
    letters and a vowel, so ``bring``, ``red`` and ``sing`` stay whole. Porter's step 5a then drops
    a final ``e`` from longer stems, so a base form meets its inflections (``capture``,
    ``captured``, ``capturing`` -> ``captur``; ``classes`` -> ``class``) while ``love`` and ``lake``
    keep theirs. Irregular forms come from :data:`IRREGULAR` (``went``, ``gone``, ``going`` -> ``go``;
    ``bought`` -> ``buy``; ``children`` -> ``child``). Non-ASCII words and numbers are unchanged.

    >>> words = ["painted", "painting", "paints", "loved", "love", "running", "studied", "stories", "bring",
    ...          "red", "quickly", "glass", "2023", "capture", "capturing", "classes", "went", "bought",
    ...          "ran"]
    >>> [light_stem(w) for w in words]  # doctest: +NORMALIZE_WHITESPACE
    ['paint', 'paint', 'paint', 'love', 'love', 'run', 'study', 'story', 'bring', 'red', 'quick', 'glass',
     '2023', 'captur', 'captur', 'class', 'go', 'buy', 'run']
    """
    word = IRREGULAR.get(word, word)
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith(("ied", "ies")) and len(word) > 4:
        return word[:-3] + "y"
    w = s_stem(word)
    for suffix in ("ing", "ed"):
        if w.endswith(suffix):
            stem = w[: -len(suffix)]
            if len(stem) >= 3 and _VOWEL.search(stem):
                if stem.endswith(("at", "bl", "iz")) or (suffix == "ed" and stem[-1] == "e"):
                    stem += "e"  # created -> create, troubled -> trouble, agreed -> agree
                elif stem[-1] == stem[-2] and stem[-1] not in "aeiouylsz":  # running -> runn -> run
                    stem = stem[:-1]
                elif _SHORT_CVC.fullmatch(stem):  # loved -> lov -> love
                    stem += "e"
                w = stem
            break
    if w.endswith("ly") and len(w) > 5:
        w = w[:-2]
    if w.endswith("e") and (_measure(w[:-1]) > 1 or (_measure(w[:-1]) == 1 and not _ends_cvc(w[:-1]))):
        w = w[:-1]  # Porter's step 5a: capture, captured, capturing -> captur; classes -> class
    return w


def _cv(word: str) -> str:
    """Consonant/vowel pattern (Porter: ``y`` after a consonant is a vowel): ``"toy" -> "cvc"``."""
    out = ""
    for i, ch in enumerate(word):
        out += "v" if ch in "aeiou" or (ch == "y" and i > 0 and out[-1] == "c") else "c"
    return out


def _measure(stem: str) -> int:
    """Porter's m, the number of vowel-consonant sequences: ``tr`` 0, ``trouble`` 1, ``captur`` 2."""
    return len(_VC.findall(_cv(stem)))


def _ends_cvc(stem: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (``lov``, ``hop``; not ``snow``)."""
    return len(stem) >= 3 and _cv(stem[-3:]) == "cvc" and stem[-1] not in "wxy"


def tokenize(text: str, *, keep_stopwords: bool = True) -> list[str]:
    """Split text into word tokens (Latin) and character uni/bigrams (CJK), in order of appearance.

    With ``keep_stopwords=False`` the words in :data:`STOPWORDS` are dropped: English stopwords,
    CJK stopword characters as unigrams (bigrams containing them stay, since 我的 / 住在 still carry
    meaning together) and Chinese function words (什么, 哪里, 为什么) with every unigram and bigram
    that touches them (住在哪里 keeps 住, 住在 and drops 在哪, 哪里, 哪, 里).
    """
    if not isinstance(text, str):
        raise ValidationError("text", f"must be a str, got {type(text).__name__}")
    out: list[str] = []
    for cjk, word in _TOKEN.findall(normalize(text)):
        if word:
            if keep_stopwords or word not in STOPWORDS:
                out.append(light_stem(word))
            continue
        if keep_stopwords:
            out.extend(cjk)
            out.extend(cjk[i : i + 2] for i in range(len(cjk) - 1))
            continue
        inside = _stop_spans(cjk)  # (len(cjk),) bool: character is part of a Chinese stop word
        out.extend(c for i, c in enumerate(cjk) if c not in STOPWORDS and not inside[i])
        out.extend(cjk[i : i + 2] for i in range(len(cjk) - 1) if not (inside[i] or inside[i + 1]))
    return out


def _stop_spans(run: str) -> list[bool]:
    """Which characters of a CJK run belong to a Chinese stop word: ``"住在哪里" -> [F, F, T, T]``."""
    inside = [False] * len(run)
    for i in range(len(run) - 1):
        for n in (3, 2):
            piece = run[i : i + n]
            if len(piece) == n and (piece in _STOP_TRIGRAMS if n == 3 else piece in STOPWORDS):
                inside[i : i + n] = [True] * n
    return inside
