"""Common English verbs, to tell a verb that starts a sentence from a name (:mod:`memkit.facts`).

"Discussed the budget" and "discussed the budget" are one fact, but "Mohammed my brother" and
"Ahmed my brother", "Xiaoming the intern" and "Liping the intern" are two: a name may end as a past
or -ing form does. A word reads as a verb only when it is a form of one of :data:`VERBS` (the base,
-s / -es, -ed / -d, -ing; a doubled last consonant and a dropped e undone; an irregular past in
:data:`IRREGULAR`: bought, took, wrote), a small closed list of everyday verbs of notes and chats:
a verb missing from it reads as a name (a duplicate missed, never two facts merged).

>>> [is_verb_form(w) for w in ("discussed", "reviewing", "planned", "loves", "mohammed", "xiaoming")]
[True, True, True, True, False, False]
"""

from __future__ import annotations

__all__ = ["IRREGULAR", "VERBS", "is_verb_form"]

VERBS = frozenset(
    """accept add agree answer apply arrange ask attend book borrow bring build buy call cancel change
    check choose clean close collect compare complete confirm cook copy create cut debug decide
    delete deliver deploy design discuss do drink drive drop eat email enjoy explain feed fill find
    finish fix follow forget get give go hate have help hire hold host install invite join keep
    learn leave lend like list listen look lose love make manage mark meet merge miss move need note
    offer open order organize pack paint pay pick plan play post prefer prepare print push read
    receive record remember remind rent repair replace reply report request reschedule return review
    run save schedule see sell send set share ship show sign sleep sort spend start stop study submit
    take talk teach tell test text thank track train travel try update upload use visit wait walk
    want wash watch wear work write""".split()
)


# the irregular past and participle forms of VERBS ("Bought my ticket" is "bought my ticket")
IRREGULAR = frozenset(
    """ate bought brought built chose chosen did done drank drunk driven drove eaten fed forgot forgotten
    found gave given gone got gotten had has held kept left lent lost made met paid ran saw seen
    sent shown slept sold spent taken taught thought told took went woken wore worn written wrote""".split()
)


def is_verb_form(word: str) -> bool:
    """Is casefolded ``word`` a form of one of :data:`VERBS` (base, -s, -es, -ed, -d, -ing, or an
    irregular past in :data:`IRREGULAR`)?"""
    if word in VERBS or word in IRREGULAR:
        return True
    for end in ("ing", "ed", "es", "s", "d"):
        if word.endswith(end) and len(word) > len(end) + 1:
            stem = word[: -len(end)]
            undoubled = stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem
            if {stem, stem + "e", undoubled} & VERBS or (stem.endswith("i") and stem[:-1] + "y" in VERBS):
                return True
    return False
