"""The guard over everything a write carries besides its text: structured values and names (pure).

A secret is no less a secret in ``value={"api_key": "sk-…"}``, a phone number no less PII in
``key="contact.13812345678"`` or ``tags=["alice@example.com"]``. :func:`screen_fields` screens, for a
batch of rows, with the same rules as the text (:func:`memkit.guard.screen_many`):

- **structured values**: every string in the JSON (object keys and leaves) and every whole-number
  leaf (``{"phone": 13812345678}``, or ``13812345678.0``) is screened, and an object entry whose key
  may name a credential as the text ``key: value``, for secrets (``{"password": "hunter22"}``: a name
  and a value, harmless apart; decided exactly as that text would be).
  Leaves are redacted with the typed placeholders of the text (``[PHONE]``); object *keys* with
  :func:`~memkit.guard.pseudonym` (``[PHONE:1a2b…]``) so that two keys never collapse into one
  and silently drop a value; should two keys still meet (the same number written twice), the
  later one gets a ``#2`` suffix.
- **names** (``key``, ``owner``, ``created_by``, ``tags``): redacted with pseudonyms too, so that two
  different numbers stay two keys and an owner keeps reading what it owns.

Per row, the verdict is the strictest of its fields (``refuse`` > ``quarantine`` > ``store``), and
findings say where they were found (``"in value: …"``, ``"in key: …"``), without spans.

>>> out = screen_fields({"value": ['{"13812345678": "home", "13900001111": "work"}'],
...                      "key": ["contact.13812345678"], "tags": [["vip"]]})
>>> out.columns["key"], out.actions
(['contact.[PHONE:fe06744d3e1a9a5be4d35e59]'], ['store'])
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ..errors import ValidationError
from ..params import GuardParams
from ..text import fold, strip_invisible
from .engine import FINDING_SCHEMA, NO_FINDINGS, Screening, screen_many
from .labels import encode_label, unescape

__all__ = ["NAME_FIELDS", "FieldScreening", "names_as_stored", "screen_fields", "strictest"]

NAME_FIELDS = ("key", "owner", "created_by")  # single names; ``tags`` is a list of names
# keys that may name a credential (a superset of the secret rules' names: only their entries are
# screened whole, as the text "key: value", so the rules decide exactly as they do in a text)
_DIRECTORY = re.compile(r"(?i)(?:^|_)(?:old)?(?:pwd|cwd)$")  # a shell's working directory
_CREDENTIAL_NAME = re.compile(
    r"(?i)pass|pwd|pin|secret|token|key|auth|cred|密码|口令|密钥|秘钥|私钥|令牌|授权码|验证码"
)
_RANK = {"store": 0, "quarantine": 1, "refuse": 2}


def _names_credential(key: str) -> bool:
    """May the object key ``key`` name a credential? Read as the rules read a text (the width fold,
    invisible characters removed): ``"ｐａｓｓｗｏｒｄ"`` and ``"pass\u200bword"`` do."""
    return _CREDENTIAL_NAME.search(key) is not None or (
        not key.isascii() and _CREDENTIAL_NAME.search(strip_invisible(fold(key))[0]) is not None
    )


def strictest(*actions: str) -> str:
    """The strictest of several verdicts: ``strictest("store", "quarantine") == "quarantine"``."""
    return max(actions, key=_RANK.__getitem__)


@dataclass(frozen=True, eq=False)
class FieldScreening:
    """The verdict on the fields of a batch: ``columns`` redacted (only the fields given),
    ``actions`` per row and ``findings`` (:data:`memkit.guard.FINDING_SCHEMA`, ``row`` = the row)."""

    columns: dict[str, list[Any]]
    actions: list[str]
    findings: pl.DataFrame


class _Texts:
    """Strings to screen, each remembered with its row and where it came from."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.rows: list[int] = []
        self.where: list[str] = []

    def add(self, text: str, row: int, where: str) -> int:
        self.texts.append(text)
        self.rows.append(row)
        self.where.append(where)
        return len(self.texts) - 1


class _Doc:
    """A parsed JSON value and where its strings are: object keys and string/whole-number leaves.

    Walked with an explicit stack, not recursion: a value may nest as deep as JSON allows.
    """

    def __init__(self, text: str, row: int, keys: _Texts, leaves: _Texts, pairs: _Texts) -> None:
        self.text, self.holder = text, [json.loads(text)]  # the holder lets the root be a leaf too
        self.dicts: list[tuple[dict[str, Any], list[int]]] = []  # each object and its keys' text indices
        self.slots: list[tuple[Any, Any, int]] = []  # (container, key or index, leaf text index)
        # (container, key or index, the credential name above it: its value's leaves meet it)
        stack: list[tuple[Any, Any, str | None]] = [(self.holder, 0, None)]
        while stack:
            parent, k, name = stack.pop()
            node = parent[k]
            if isinstance(node, dict):
                self.dicts.append((node, [keys.add(key, row, "value") for key in node]))
                stack.extend((node, key, key if _names_credential(key) else name) for key in node)
            elif isinstance(node, list):
                stack.extend((node, i, name) for i in range(len(node)))
            elif isinstance(node, str) or (isinstance(node, int) and not isinstance(node, bool)):
                self.slots.append((parent, k, leaves.add(str(node), row, "value")))
            if name is not None and _scalar(node, name):  # {"password": "hunter22"}, ["…"], {"value": "…"}
                pairs.add(f"{name}: {node}", row, "value")
            elif isinstance(node, float) and node.is_integer() and abs(node) < 1e18:  # 13812345678.0
                self.slots.append((parent, k, leaves.add(str(int(node)), row, "value")))

    def dumps(
        self, keys: list[str], leaves: list[str], before_keys: list[str], before_leaves: list[str]
    ) -> str:
        """The value's JSON after redaction; the original text when nothing in it changed."""
        changed = [(p, k, i) for p, k, i in self.slots if leaves[i] != before_leaves[i]]
        renamed = [(d, idx) for d, idx in self.dicts if any(keys[i] != before_keys[i] for i in idx)]
        if not changed and not renamed:
            return self.text
        for parent, k, i in changed:  # leaves first, while their objects still have the old keys
            parent[k] = leaves[i]
        for d, idx in renamed:
            items = list(d.items())
            d.clear()
            for (_, v), i in zip(items, idx, strict=True):
                name, n = keys[i], 2
                while name in d:  # two keys redacted alike (the same number twice): keep both values
                    name, n = f"{keys[i]}#{n}", n + 1
                d[name] = v
        return json.dumps(self.holder[0], ensure_ascii=False, sort_keys=True)


def names_as_stored(names: Sequence[str], params: GuardParams = GuardParams()) -> list[str]:
    """Names a caller looks up (a key, tags) as a write under ``params`` stores them: PII in them
    replaced by the same pseudonyms :func:`screen_fields` gives, so that a key written as
    ``contact.13812345678`` is read, resolved and filtered by that same name (and the audit log of
    the lookup holds the pseudonym, not the number).

    >>> names_as_stored(["pref.tea", "contact.13812345678"])
    ['pref.tea', 'contact.[PHONE:fe06744d3e1a9a5be4d35e59]']
    """
    if not params.enabled or not names:  # a store without a guard keeps names as written
        return list(names)
    return list(_screen_names(list(names), params, len(names)).texts)


def _screen_names(texts: list[str], params: GuardParams, upto: int) -> Screening:
    """``screen_many(texts, params, pseudonyms=True)``, where each of the first ``upto`` texts (names)
    that holds ``%XX`` escapes is also judged as it decodes (:func:`~memkit.guard.labels.unescape`: a
    LangGraph label is written so, and the guard must read what its writer wrote, ``AKIA\\u200b…``
    not ``AKIA%E2%80%8B…``): the strictest of both verdicts, the findings of both, and, when the
    decoded name had PII redacted, that redaction escaped again (``%2013812345678`` ->
    ``%20[PHONE:fe06744d3e1a9a5be4d35e59]``)."""
    views = {i: v for i in range(upto) if "%" in texts[i] and (v := unescape(texts[i])) != texts[i]}
    s = screen_many([*texts, *views.values()], params, pseudonyms=True)
    if not views:  # (names hold no escape: the common case, one batch as before)
        return s
    n = len(texts)
    actions, out = list(s.actions[:n]), list(s.texts[:n])
    for j, (i, view) in enumerate(views.items()):
        actions[i] = strictest(actions[i], s.actions[n + j])
        if s.texts[n + j] != view:  # PII in what the name decodes to: the decoded name, redacted
            out[i] = encode_label(s.texts[n + j])
    found = s.findings
    if found.height:  # a view's findings belong to its name
        owner = np.arange(n + len(views))
        owner[n:] = list(views)
        found = found.with_columns(row=pl.Series(owner[found["row"].to_numpy()]).cast(found.schema["row"]))
    return Screening(out, actions, s.scores[:n], found, s.probabilities[:n])


_NOTHING = Screening([], [], [], NO_FINDINGS, [])  # read here only, never handed out


def _nothing(params: GuardParams) -> Screening:
    """What :func:`screen_many` gives for no texts (after its check of ``params``), not computed: a
    plain add has no name, key or value to screen, and building that screening cost ~0.1 ms of it."""
    if not isinstance(params, GuardParams):
        raise ValidationError("params", f"must be a memkit.GuardParams, got {type(params).__name__}")
    return _NOTHING


def screen_fields(columns: dict[str, Sequence[Any]], params: GuardParams = GuardParams()) -> FieldScreening:
    """Screen the ``value`` (JSON text or None), name fields and ``tags`` of a batch -> the verdict.

    ``columns`` maps field names to one entry per row; absent fields are not screened. Each distinct
    name is screened once (a bulk write repeats its owner in every row), and only the rows holding a
    name the guard acted on are visited one by one.
    """
    n = len(next(iter(columns.values()))) if columns else 0
    keys, leaves, pairs = _Texts(), _Texts(), _Texts()
    given = columns.get("value") or []
    blank = isinstance(given, list) and given.count(None) == len(given)  # no value in any row (in C)
    docs = (
        [] if blank else [None if v is None else _Doc(v, i, keys, leaves, pairs) for i, v in enumerate(given)]
    )
    fields = [f for f in (*NAME_FIELDS, "tags") if f in columns]
    distinct: dict[str, None] = {}  # every name of every field, once, in order of appearance
    for f in fields:
        values = _each(columns[f], lambda ts: tuple(ts or ())) if f == "tags" else columns[f]
        for x in _distinct(values):  # a tag list is a tuple here, so it can be a dict key
            distinct.update(dict.fromkeys(x) if f == "tags" else {x: None} if x is not None else {})
    names = list(distinct)
    named = _screen_names(names + keys.texts, params, len(names)) if names or keys.texts else _nothing(params)
    plain = screen_many(leaves.texts, params) if leaves.texts else _nothing(params)
    # an entry whose key may name a credential, as the text "key: value" ({"password": "hunter22"}): a
    # secret's name is a key, its value a leaf, each harmless alone; only a refusal counts here
    refused = {t for t, a in zip(leaves.texts, plain.actions, strict=True) if a == "refuse"}
    refused |= {t for t, a in zip(keys.texts, named.actions[len(names) :], strict=True) if a == "refuse"}
    joined = _Secrets(screen_many(pairs.texts, params), pairs.texts, refused) if pairs.texts else None
    actions = ["store"] * n
    parts: list[pl.DataFrame] = []
    # the names: only rows holding a name the guard acted on or found something in, field by field
    flagged = {i for i, a in enumerate(named.actions[: len(names)]) if a != "store"}
    if named.findings.height:  # polars costs ~1 ms per call even on an empty frame: only when found
        flagged |= {r for r in named.findings["row"].to_list() if r < len(names)}
    if flagged:
        at, hits = {names[i]: i for i in flagged}, _Texts()  # hits: (index in names, row, field)
        for f in fields:
            for row, x in enumerate(columns[f]):
                for name in (x or ()) if f == "tags" else (x,):
                    if name in at:
                        hits.add(at[name], row, f)  # type: ignore[arg-type]
        _gather(hits.texts, hits.rows, hits.where, named, actions, parts)
    _gather([len(names) + j for j in range(len(keys.texts))], keys.rows, keys.where, named, actions, parts)
    _gather(list(range(len(leaves.texts))), leaves.rows, leaves.where, plain, actions, parts)
    if joined is not None:
        _gather(list(range(len(pairs.texts))), pairs.rows, pairs.where, joined, actions, parts)
    red = {x: y for x, y in zip(names, named.texts, strict=False)}  # each name as it is stored
    out: dict[str, list[Any]] = {}
    for f in fields:
        if f == "tags":  # redacted, and deduplicated again (two tags may redact alike)
            out[f] = _each(columns[f], lambda ts: list(dict.fromkeys(red[t] for t in ts or ())))
        else:
            out[f] = _each(columns[f], lambda x: None if x is None else red[x])
    if "value" in columns:
        key_texts = named.texts[len(names) :]
        out["value"] = (
            [None] * n
            if blank
            else [
                None if d is None else d.dumps(key_texts, plain.texts, keys.texts, leaves.texts) for d in docs
            ]
        )
    if not parts:
        return FieldScreening(out, actions, NO_FINDINGS.clear())
    findings = pl.concat([p.cast(FINDING_SCHEMA) for p in parts])
    return FieldScreening(out, actions, findings.sort("row", maintain_order=True))


def _scalar(leaf: Any, name: str) -> bool:
    """A value screened with the credential ``name`` above it (as the text ``name: value``): a string
    or number, but not the path a ``pwd`` / ``cwd`` names (``{"PWD": "/home/bob"}``: a directory)."""
    if isinstance(leaf, bool) or not isinstance(leaf, (str, int, float)) or leaf == "":
        return False
    return not (_DIRECTORY.search(name) and "/" in str(leaf))


class _Secrets:
    """The refusals of a screening of object entries (:func:`_gather` reads ``actions`` and
    ``findings``), but not of an entry whose key or value, alone, was refused already (one finding)."""

    def __init__(self, s: Any, pairs: list[str], refused: set[str]) -> None:
        entries = [p.partition(": ") for p in pairs]
        again = [k in refused or v in refused for k, _, v in entries]
        self.actions = [
            a if a == "refuse" and not r else "store" for a, r in zip(s.actions, again, strict=True)
        ]
        found = s.findings.filter(pl.col("kind") == "secret") if s.findings.height else s.findings
        self.findings = found.filter(~pl.Series(again)[found["row"]]) if found.height else found


def _distinct(column: Sequence[Any]) -> list[Any]:
    """The distinct values of ``column`` in order of appearance: one, without hashing every row, when
    every row holds the same value (a bulk write's owner, its keys and tags: compared in C)."""
    if isinstance(column, list) and column and column.count(column[0]) == len(column):
        return [column[0]]
    return list(dict.fromkeys(column))


def _each(column: Sequence[Any], fn: Any) -> list[Any]:
    """``[fn(x) for x in column]``, computed once when every row holds the same value (a bulk
    write's owner, its empty tag lists)."""
    if isinstance(column, list) and column and column.count(column[0]) == len(column):
        return [fn(column[0])] * len(column)
    return [fn(x) for x in column]


def _gather(
    texts: Sequence[int], rows: list[int], where: list[str], s: Any, actions: list[str], parts: list[Any]
) -> None:
    """Fold the verdicts of screened texts into their rows: ``texts[j]`` is the index, in the
    screening ``s``, of the text found in row ``rows[j]`` (field ``where[j]``). Each row's action
    becomes its strictest; findings join ``parts`` with that row and ``in <field>:``."""
    for j, row in enumerate(rows):
        if s.actions[texts[j]] != "store":
            actions[row] = strictest(actions[row], s.actions[texts[j]])
    if not rows or not s.findings.height:  # only when something was found: polars costs per call
        return
    seen = pl.DataFrame({"row": pl.Series(texts, dtype=pl.Int32), "_row": pl.Series(rows, dtype=pl.Int32),
                         "_where": where}).with_row_index("_j")  # fmt: skip
    found = s.findings.with_row_index("_k").join(seen, on="row").sort("_j", "_k")  # occurrence order
    parts.append(found.with_columns(
        message=pl.lit("in ") + pl.col("_where") + pl.lit(": ") + pl.col("message"),
        row=pl.col("_row"), start=pl.lit(None, pl.Int32), end=pl.lit(None, pl.Int32),
    ).drop("_row", "_where", "_j", "_k"))  # fmt: skip
