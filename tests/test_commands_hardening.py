"""Hardening of memkit.commands (and of the GuardParams lists that sit beside it in the settings): what an
adversarial audit found.

- The command patterns run in Python's backtracking ``re``: a politeness loop and an acknowledgement
  loop that could both take "ok, " made ``parse("ok, " * n + "x")`` quadratic (50 s at 16 KB, through
  ``admit`` and ``MemoryAgent.chat`` too). The rewrite must match the same prefixes, each in one way.
- Bad input to ``is_question`` and ``admit_many`` is a ValidationError naming the argument, and
  ``admit_many`` decides a text with a lone surrogate as ``admit`` does.
- ``GuardParams`` refuses at construction what a settings file could not save (a lone surrogate) and
  reviewer names no requester could have (memkit.schema.check_name's rule).
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import textwrap

import pytest

import memkit as mk
from memkit.commands import admit, admit_many, is_question, parse
from memkit.commands import patterns as P
from memkit.schema import check_name

# ------------------------------------------------------------------------------- linear-time parsing
# 32 KB messages of the shapes that backtrack: "ok, " runs (both loops took them), other
# acknowledgements and politeness, Chinese ones, and near misses of each command verb at the end
ADVERSARIAL = [
    ("ok, ", "x"), ("ok,", "x"), ("okay, ", "?"), ("ok. ", "remember"), ("ok ", "delete the last"),
    ("ok , , ", "remember this"), ("hey, ok, ", "what do you know about"), ("ok, please ", "forget"),
    ("please ", "x"), ("好的，", "记住了"), ("嗯", "x"), ("请", "忘了"), ("帮我", "把我"),
    ("好的，请", "不要记"), ("我很", "x"), ("i really ", "x"), ("哈", "x"), ("ok 👍 ", "x"), ("《", "x"),
]  # fmt: skip
# what now takes well under a second: the old patterns needed minutes for the first shape alone
TIMEOUT_S = 20


def test_parsing_adversarial_messages_is_linear() -> None:
    """parse, admit, admit_many and MemoryAgent.chat on 32 KB near misses finish in a subprocess with
    a generous timeout (no timing is asserted: a regression to backtracking takes minutes)."""
    code = textwrap.dedent(
        f"""
        from datetime import datetime, timezone
        import memkit as mk
        from memkit.agent import ScriptedLLM
        from memkit.commands import admit, admit_many, parse
        texts = [u * ({32 * 1024} // len(u.encode())) + tail for u, tail in {ADVERSARIAL!r}]
        for text in texts:
            parse(text), admit(text), admit(text, role="assistant")
        admit_many(texts)
        agent = mk.MemoryAgent(mk.MemoryStore(), ScriptedLLM(default="ok"), namespace="u", requester="a",
                               now=datetime(2026, 1, 1, tzinfo=timezone.utc))
        agent.chat(texts[0])
        print("done")
        """
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"parsing 32 KB adversarial messages took over {TIMEOUT_S} s: a pattern backtracks")
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-2000:]


# the politeness prefix before the rewrite: the rewrite must accept exactly the same prefixes
_OLD_ACK_EN = r"(?:(?:ok|okay|alright|all right|sure)\s*[,.!]+\s*)*"
_OLD_PE = (
    rf"{_OLD_ACK_EN}(?:(?:please|pls|hey|ok|okay|can you|could you|would you|will you|assistant)[,\s]+)*"
)
_TOKENS = ["ok", "OKAY", "alright", "sure", "please", "hey", "can you", ",", " ", ".", "!", ", ", " , ", "x"]


def test_the_politeness_prefix_matches_what_it_matched_before() -> None:
    """Every sequence of up to four tokens (acknowledgements, politeness, separators) before a command:
    the old and the new prefix agree on a match and on its payload."""
    old = re.compile(rf"^{_OLD_PE}remember that (?P<text>.*)$", P.FLAGS)
    new = re.compile(rf"^{P._PE}remember that (?P<text>.*)$", P.FLAGS)
    differ = []
    for n in range(5):
        for seq in itertools.product(_TOKENS, repeat=n):
            s = "".join(seq) + "remember that I'm vegan"
            a, b = old.search(s), new.search(s)
            if (a and a.group("text")) != (b and b.group("text")):
                differ.append(s)
    assert differ == []


@pytest.mark.parametrize(
    ("text", "op", "payload"),
    [
        ("ok, ok, please remember that I'm vegan", "remember", "I'm vegan"),
        ("OK. Remember that I'm vegan", "remember", "I'm vegan"),
        ("ok remember that I'm vegan", "remember", "I'm vegan"),
        ("alright, hey, forget my address", "forget", "my address"),
        ("ok, ok, delete the last memory", "delete_last", ""),
        ("Okay! what do you know about me?", "show", ""),
        ("好的，请记住我喜欢茶", "remember", "我喜欢茶"),
        ("嗯嗯，忘掉我的生日", "forget", "我的生日"),
    ],
)
def test_acknowledged_commands_still_parse(text: str, op: str, payload: str) -> None:
    cmd = parse(text)
    assert cmd is not None and (cmd.op, cmd.text) == (op, payload)


def test_an_acknowledgement_alone_is_no_command() -> None:
    assert parse("ok, ok, ok, x") is None and admit("ok, ok, thanks").store is False


# ------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [None, 3, b"remember that", ["a"]])
def test_is_question_refuses_a_non_str(bad: object) -> None:
    with pytest.raises(mk.ValidationError, match="^text: must be a str"):
        is_question(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("roles", [None, 3, 1.5, {"user"}])
def test_admit_many_refuses_roles_that_are_no_sequence(roles: object) -> None:
    with pytest.raises(mk.ValidationError, match="^roles: must be a str or a sequence of str"):
        admit_many(["a"], roles=roles)  # type: ignore[arg-type]


def test_admit_many_decides_a_lone_surrogate_as_admit_does() -> None:
    texts = ["a\ud800", "记住我对花生过敏\udfff", "ok", "a\ud800", "我喜欢喝咖啡\udc80"]
    frame = admit_many(texts, roles=["user", "user", "user", "assistant", "user"])
    assert frame.height == len(texts) and frame["text"][0] == "a\ufffd"  # a polars column holds valid text
    for row, text in zip(frame.iter_rows(named=True), texts, strict=True):
        a = admit(text, role=row["role"])
        assert (row["store"], row["layer"], row["kind"], row["importance"], row["reason"], row["key"]) == (
            a.store, a.layer, a.kind, a.importance, a.reason, a.key
        )  # fmt: skip


# ------------------------------------------------------------------------------- GuardParams lists
@pytest.mark.parametrize(
    "field",
    ["never_remember", "extra_secret_patterns", "extra_injection_patterns", "reviewers"],
)
def test_guard_params_refuse_a_lone_surrogate_naming_the_field(field: str) -> None:
    with pytest.raises(mk.ValidationError, match=f"^GuardParams.{field}: contains a lone surrogate"):
        mk.GuardParams(**{field: ("ok", "bad\ud800")})


NAMES = ["alice", "张三", "alice@example.com", "a b", "a\x00", " admin ", "admin ", "a\u200b", "a\n",
         "x" * 256, "x" * 257, "\ud800"]  # fmt: skip


@pytest.mark.parametrize("name", NAMES, ids=repr)
def test_reviewers_follow_the_rule_for_requester_names(name: str) -> None:
    """A reviewer is accepted exactly when check_name accepts the name as a requester's, and a refusal
    names the field without quoting the name back."""
    try:
        check_name("requester", name)
    except mk.ValidationError:
        with pytest.raises(mk.ValidationError, match="^GuardParams.reviewers: ") as e:
            mk.GuardParams(reviewers=("bob", name))
        assert repr(name) not in str(e.value)
    else:
        assert mk.GuardParams(reviewers=("bob", name)).reviewers == ("bob", name)
