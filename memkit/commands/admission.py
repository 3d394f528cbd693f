"""The admission rule: what a chat turn should keep in memory, and where.

**What should be kept?** :func:`admit` (one text) and :func:`admit_many` (a polars frame, for
importers) apply the articles' admission rules, first match wins:

================= ======= ============ ========== =========== ===========================================
rule              store   layer        kind       importance  example
================= ======= ============ ========== =========== ===========================================
empty / filler    no      short_term   event      0.0         嗯 · 好的 · ok · thanks · 哈哈
other command     no      short_term   event      0.0         forget / delete / show: not a memory
system message    no      short_term   instruction 0.0        a system prompt is not about the user
explicit remember yes     long_term    (by text)  0.9 + prot. 记住我对花生过敏
question          yes     short_term   event      0.2         我平时喜欢喝什么？
preference        yes     long_term    preference 0.7         我喜欢… · I prefer… (user turns only)
commitment        yes     long_term    decision   0.7         I'll… · 我打算… · 下周三之前…
personal fact     yes     long_term    fact       0.6         我叫… · I live in… · 对花生过敏 (user only)
named entity      yes     long_term    fact       0.5         met Alice at Acme · 《三体》 · …公司
ordinary          yes     short_term   event      0.2         everything else
================= ======= ============ ========== =========== ===========================================

``key``: a preference on a known topic is keyed ``preference.<topic>``; the user's own current fact
on a known slot (a personal fact, or an explicit remember of one) ``fact.<slot>`` -- ``fact.residence``
for "I moved to Denver" and 我搬到上海了, never for another person's, a past or hypothetical one or a
question (:mod:`memkit.commands.slots`), so a changed fact replaces the old one as a preference does.

``store=False`` means the text is never written to the store (it may still sit in an agent's
recent-turn buffer). The layer is not a rule of its own: it is :func:`memkit.schema.default_layer` of
the rule's importance and kind (the one admission rule every write without a layer follows), which
is why everything below importance 0.3 is short-term, tool turns included. The rules are lexical patterns:
they are cheap and predictable, and they miss paraphrases an LLM judge would catch.

Both forms run the same regular expressions (Python's ``re`` and polars' Rust engine understand the
same subset used here), and a test checks that they agree.

>>> a = admit("I prefer window seats")
>>> a.layer, a.kind, a.importance
('long_term', 'preference', 0.7)
>>> admit("好的！").store
False
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from ..errors import ValidationError
from ..schema import default_layer, layer_expr
from . import patterns as _in
from .courtesy import core_expr
from .parser import is_question, parse
from .slots import slot_key, with_slot_key

__all__ = ["Admission", "ROLES", "admit", "admit_many"]

ROLES = ("user", "assistant", "system", "tool")


@dataclass(frozen=True)
class Admission:
    """What the admission rule decides for one message (see the module docstring's table).

    ``store`` is False when the text must not be written at all (filler, a command, a system
    prompt); otherwise ``layer``, ``kind``, ``importance`` and ``protected`` are the write's fields and
    ``reason`` names the rule that fired.
    """

    store: bool
    layer: str
    kind: str
    importance: float
    protected: bool
    reason: str
    # preference.<topic> for a preference on a known topic, fact.<slot> for the user's own current fact
    # on a known slot (memkit.commands.slots)
    key: str | None = None


# (reason, store, kind, importance, protected), in order of precedence; the layer follows from
# importance and kind by schema.default_layer
_RULES = (
    ("empty", False, "event", 0.0, False),
    ("filler", False, "event", 0.0, False),
    ("system message", False, "instruction", 0.0, False),
    ("command", False, "event", 0.0, False),
    ("explicit remember", True, "fact", 0.9, True),  # kind refined from the text below
    ("question", True, "event", 0.2, False),
    ("stated preference", True, "preference", 0.7, False),
    ("commitment", True, "decision", 0.7, False),
    ("personal fact", True, "fact", 0.6, False),
    ("named entity", True, "fact", 0.5, False),
    ("ordinary turn", True, "event", 0.2, False),
)
_RULE_FRAME = pl.DataFrame(
    [r for r in _RULES],
    schema=["reason", "store", "kind", "importance", "protected"],
    orient="row",
).with_row_index("_rule")


def _any(expr: pl.Expr, patterns: Sequence[str], *, ignore_case: bool = True) -> pl.Expr:
    """Does any of ``patterns`` match (:func:`~memkit.commands.patterns.matches_expr`)?"""
    return pl.any_horizontal([_in.matches_expr(expr, p, ignore_case=ignore_case) for p in patterns])


def _command_expr(on: pl.Expr, question: pl.Expr, blocked_on: Sequence[pl.Expr]) -> pl.Expr:
    """The op :func:`parse` would return, as an expression over normalized text ``on`` (null: no
    command); an op is out where its NOT_COMMANDS match any of ``blocked_on``."""
    out = pl.lit(None, dtype=pl.String)
    for op in reversed(_in.ORDER):  # built inside out, so the first op of _in.ORDER wins
        hit = _any(on, _in.COMMANDS[op])
        for text in blocked_on if op in _in.NOT_COMMANDS else ():
            hit = hit & ~_any(text, _in.NOT_COMMANDS[op])
        if op in ("remember", "forget"):
            hit = hit & ~question
        out = pl.when(hit).then(pl.lit(op)).otherwise(out)
    return out


def _with_command(df: pl.DataFrame, question: pl.Expr) -> pl.DataFrame:
    """``df`` with ``_cmd``, the op :func:`parse` would return: matched on ``_core``, the text without
    the courtesy closing it; where that is no command, on the whole ``_norm`` (the courtesy word was the
    payload: "forget thanks"), on those few rows only."""
    core, norm = pl.col("_core"), pl.col("_norm")
    df = df.with_row_index("_cmd_row").with_columns(_cmd=_command_expr(core, question, [core]))
    rest = df.filter(pl.col("_cmd").is_null() & (core != norm))
    whole = rest.select("_cmd_row", _cmd_whole=_command_expr(norm, question, [core, norm]))
    df = df.join(whole, on="_cmd_row", how="left", maintain_order="left")
    return df.with_columns(_cmd=pl.coalesce("_cmd", "_cmd_whole")).drop("_cmd_row", "_cmd_whole")


def admit_many(texts: Sequence[str] | pl.Series, roles: str | Sequence[str] = "user") -> pl.DataFrame:
    """Admission for many messages at once -> a frame ``text, role, store, layer, kind, importance,
    protected, reason, key`` (one row per message, in order). Vectorized: the rules run as polars
    expressions, so importing thousands of chat messages costs one pass per rule. A text with a lone
    surrogate (invalid Unicode, which a polars column cannot hold) is decided as :func:`admit` decides
    it and listed with U+FFFD in the surrogate's place.

    >>> texts = ["嗯嗯", "我喜欢喝美式咖啡", "记住我对花生过敏"]
    >>> admit_many(texts).select("store", "layer", "kind", "importance")
    shape: (3, 4)
    ┌───────┬────────────┬────────────┬────────────┐
    │ store ┆ layer      ┆ kind       ┆ importance │
    │ ---   ┆ ---        ┆ ---        ┆ ---        │
    │ bool  ┆ str        ┆ str        ┆ f64        │
    ╞═══════╪════════════╪════════════╪════════════╡
    │ false ┆ short_term ┆ event      ┆ 0.0        │
    │ true  ┆ long_term  ┆ preference ┆ 0.7        │
    │ true  ┆ long_term  ┆ fact       ┆ 0.9        │
    └───────┴────────────┴────────────┴────────────┘
    """
    values = texts.to_list() if isinstance(texts, pl.Series) else texts
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise ValidationError("texts", f"must be a sequence of str, got {type(texts).__name__}")
    for i, t in enumerate(values):
        if not isinstance(t, str):
            raise ValidationError("texts", f"row {i} must be a str, got {type(t).__name__}")
    if not isinstance(roles, (str, Sequence, pl.Series)):
        raise ValidationError("roles", f"must be a str or a sequence of str, got {type(roles).__name__}")
    role_list = [roles] * len(values) if isinstance(roles, str) else list(roles)
    if len(role_list) != len(values):
        raise ValidationError("roles", f"has {len(role_list)} entries for {len(values)} texts")
    for i, r in enumerate(role_list):
        if r not in ROLES:
            raise ValidationError("roles", f"row {i} must be one of {ROLES}, got {r!r}")
    try:
        given = pl.DataFrame({"text": list(values), "role": role_list}, schema=_GIVEN)
    except UnicodeEncodeError:  # a lone surrogate: decided as admit() decides it (see _valid_text)
        given = pl.DataFrame({"text": [_valid_text(t) for t in values], "role": role_list}, schema=_GIVEN)
    df = given.unique(maintain_order=True)  # chat logs repeat themselves ("ok", "thanks"): decide once
    raw = pl.col("text").str.normalize("NFKC").str.strip_chars()
    # materialized once: every pattern below reads these two columns (~40 patterns)
    df = df.with_columns(_norm=_in.norm_expr("text"), _raw=raw)
    df = df.with_columns(_core=core_expr(pl.col("_norm")))  # what commands are matched on
    norm = pl.col("_norm")
    question = _any(pl.col("_raw"), [_in.QUESTION]) & ~_any(pl.col("_raw"), [_in.REQUEST])
    df = with_slot_key(df.with_columns(_question=question), "_norm", "_slot", pl.col("role") == "user")
    question, slot = pl.col("_question"), pl.col("_slot")
    user, role = pl.col("role") == "user", pl.col("role")
    pref, commit = _any(norm, [_in.PREFERENCE]), _any(norm, [_in.COMMITMENT])
    conds = [
        norm == "",
        _any(norm, [_in.FILLER]),
        role == "system",
        pl.col("_cmd").is_not_null() & (pl.col("_cmd") != "remember") & user,
        (pl.col("_cmd") == "remember") & user,
        question,
        pref & user,
        commit & role.is_in(["user", "assistant"]),
        (_any(norm, [_in.FACT]) | slot.is_not_null()) & user,
        _any(norm, [_in.ENTITY], ignore_case=False) & user,
    ]
    rule = pl.lit(len(_RULES) - 1, dtype=pl.UInt32)
    for i in reversed(range(len(conds))):
        rule = pl.when(conds[i]).then(pl.lit(i, dtype=pl.UInt32)).otherwise(rule)
    out = (
        _with_command(df, question)
        .with_columns(_rule=rule, _pref=pref, _commit=commit)
        .join(_RULE_FRAME, on="_rule", how="left", maintain_order="left")
    )
    # an explicit remember keeps the kind its text states: 记住我喜欢… is a preference
    remembered = pl.col("reason") == "explicit remember"
    kind = (
        pl.when(remembered & pl.col("_pref"))
        .then(pl.lit("preference"))
        .when(remembered & pl.col("_commit"))
        .then(pl.lit("decision"))
        .otherwise(pl.col("kind"))
    )
    out = out.with_columns(kind=kind).with_columns(layer=layer_expr(pl.col("importance"), pl.col("kind")))
    topic = pl.lit(None, dtype=pl.String)
    for name, pattern in reversed(_in.PREFERENCE_TOPICS):
        topic = pl.when(_any(norm, [pattern])).then(pl.lit(f"preference.{name}")).otherwise(topic)
    keyed = pl.col("reason").is_in(["personal fact", "explicit remember"]) & (pl.col("kind") == "fact")
    out = out.with_columns(_fact_key=pl.when(keyed).then(slot))
    prefs = out.filter(pl.col("kind") == "preference").select("text", "role", _topic=topic)  # few rows
    cols = ["text", "role", "store", "layer", "kind", "importance", "protected", "reason", "key"]
    out = out.join(prefs, on=["text", "role"], how="left").with_columns(
        key=pl.coalesce("_topic", "_fact_key")
    )
    out = out.select(cols)
    return given.join(out, on=["text", "role"], how="left", maintain_order="left")


_GIVEN = {"text": pl.String, "role": pl.String}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(text: str) -> str:
    """``text`` with each lone surrogate (which UTF-8, and so a polars column, cannot hold) replaced
    by U+FFFD, one character for one: no pattern tells the two apart, so the decision is
    :func:`admit`'s on the original text.

    >>> _valid_text("ok\\ud800")
    'ok\ufffd'
    """
    return _SURROGATE.sub("\ufffd", text)


def admit(text: str, *, role: str = "user") -> Admission:
    """The admission decision for one message (``role``: user, assistant, system or tool): the same
    rules as :func:`admit_many`, run with Python's ``re`` (a test keeps the two in agreement).

    >>> a = admit("记住我对花生过敏")
    >>> a.store, a.layer, a.kind, a.importance, a.protected, a.reason
    (True, 'long_term', 'fact', 0.9, True, 'explicit remember')
    >>> admit("我打算下周三之前交报告").kind, admit("今天天气不错").layer
    ('decision', 'short_term')
    """
    if not isinstance(text, str):
        raise ValidationError("text", f"must be a str, got {type(text).__name__}")
    if role not in ROLES:
        raise ValidationError("role", f"must be one of {ROLES}, got {role!r}")
    norm = _in.norm(text)
    user = role == "user"
    cmd = parse(text) if user and norm else None
    pref = _RE["preference"].search(norm) is not None
    commit = _RE["commitment"].search(norm) is not None
    conds = (  # evaluated lazily, in order: the first that holds decides
        lambda: norm == "",
        lambda: _RE["filler"].search(norm) is not None,
        lambda: role == "system",
        lambda: cmd is not None and cmd.op != "remember",
        lambda: cmd is not None and cmd.op == "remember",
        lambda: is_question(text),
        lambda: pref and user,
        lambda: commit and role in ("user", "assistant"),
        lambda: user and (_RE["fact"].search(norm) is not None or slot_key(norm) is not None),
        lambda: user and _RE["entity"].search(norm) is not None,
    )
    rule = next((i for i, c in enumerate(conds) if c()), len(_RULES) - 1)
    reason, store, kind, importance, protected = _RULES[rule]
    if reason == "explicit remember":
        kind = "preference" if pref else "decision" if commit else kind
    key = None
    if kind == "preference":
        key = next((f"preference.{name}" for name, p in _TOPICS if p.search(norm)), None)
    elif kind == "fact" and reason in ("personal fact", "explicit remember"):
        key = slot_key(norm)
    return Admission(store, default_layer(importance, kind), kind, importance, protected, reason, key)


_RE = {
    "filler": re.compile(_in.FILLER, _in.FLAGS),
    "preference": re.compile(_in.PREFERENCE, _in.FLAGS),
    "commitment": re.compile(_in.COMMITMENT, _in.FLAGS),
    "fact": re.compile(_in.FACT, _in.FLAGS),
    "entity": re.compile(_in.ENTITY, re.ASCII),
}
_TOPICS = [(name, re.compile(p, _in.FLAGS)) for name, p in _in.PREFERENCE_TOPICS]
