"""A name that starts a sentence before a possessive, or that ends as a past or -ing form does
(Mohammed, Xiaoming, Liping), stays a name: two different facts never merge (review h134 item 6)."""

from __future__ import annotations

import pytest

from memkit.facts import fact_difference, fact_tokens
from memkit.verb_forms import is_verb_form

APART = [
    ("Mohammed my brother is visiting us next week", "Ahmed my brother is visiting us next week"),
    ("Sarah my sister lives in Ohio", "Anna my sister lives in Ohio"),
    ("Xiaoming the intern fixed the login bug", "Liping the intern fixed the login bug"),
    ("Mohammed the intern fixed the login bug", "Xiaoming the intern fixed the login bug"),
    ("Jianping the manager approved it", "Meiling the manager approved it"),
]
ONE = [
    ("Discussed the budget", "discussed the budget"),
    ("Fixed my bike", "fixed my bike"),
    ("Reviewing the PRD with Gina", "reviewing the PRD with Gina"),
    ("Helped her move the sofa", "helped her move the sofa"),
    # an irregular past of a listed verb (review h137 M5)
    ("Bought my train ticket for Friday", "bought my train ticket for Friday"),
    ("Took my car to the garage", "took my car to the garage"),
    ("Sent my report to Gina", "sent my report to Gina"),
    ("Met my new manager today", "met my new manager today"),
    ("Wrote my thesis outline", "wrote my thesis outline"),
    ("Paid my rent", "paid my rent"),
]


@pytest.mark.parametrize(("a", "b"), APART)
def test_names_before_a_possessive_or_like_a_verb_form_stay_apart(a: str, b: str) -> None:
    assert fact_tokens(a) != fact_tokens(b) and fact_difference(a, b).startswith("names ")


@pytest.mark.parametrize(("a", "b"), ONE)
def test_a_listed_verb_starting_a_sentence_is_still_one_fact(a: str, b: str) -> None:
    assert fact_tokens(a) == fact_tokens(b) and fact_difference(a, b) == ""


def test_verb_forms_undo_endings_but_not_names() -> None:
    assert all(map(is_verb_form, ["planned", "moved", "tries", "copied", "making"]))
    assert not any(map(is_verb_form, ["mohammed", "ahmed", "xiaoming", "liping", "yuqing", "jianping"]))
