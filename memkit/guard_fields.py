"""The guard over everything a write carries besides its text: structured values and names (pure).

A secret is no less a secret in ``value={"api_key": "sk-…"}``, a phone number no less PII in
``key="contact.13812345678"`` or ``tags=["alice@example.com"]``. :func:`screen_fields` screens, for a
batch of rows, with the same rules as the text (:func:`memkit.guard.screen_many`):

- **structured values**: every string in the JSON (object keys and leaves) and every integer leaf
  (``{"phone": 13812345678}``) is screened. Leaves are redacted with the typed placeholders of the
  text (``[PHONE]``); object *keys* with :func:`~memkit.guard.pseudonym` (``[PHONE:1a2b3c4d]``) so that
  two keys never collapse into one and silently drop a value; should two keys still meet (the same
  number written twice), the later one gets a ``#2`` suffix.
- **names** (``key``, ``owner``, ``created_by``, ``tags``): redacted with pseudonyms too, so that two
  different numbers stay two keys and an owner keeps reading what it owns.

Per row, the verdict is the strictest of its fields (``refuse`` > ``quarantine`` > ``store``), and
findings say where they were found (``"in value: …"``, ``"in key: …"``), without spans.

>>> out = screen_fields({"value": ['{"13812345678": "home", "13900001111": "work"}'],
...                      "key": ["contact.13812345678"], "tags": [["vip"]]})
>>> out.columns["key"], out.actions
(['contact.[PHONE:6798e7e2]'], ['store'])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from .guard import FINDING_SCHEMA, screen_many
from .params import GuardParams

__all__ = ["NAME_FIELDS", "FieldScreening", "screen_fields", "strictest"]

NAME_FIELDS = ("key", "owner", "created_by")  # single names; ``tags`` is a list of names
_RANK = {"store": 0, "quarantine": 1, "refuse": 2}


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


def _collect(node: Any, row: int, keys: _Texts, leaves: _Texts) -> Any:
    """Replace every string/integer of a JSON value by a ('k'|'v', index) slot, collecting texts."""
    if isinstance(node, dict):
        return {("k", keys.add(k, row, "value")): _collect(v, row, keys, leaves) for k, v in node.items()}
    if isinstance(node, list):
        return [_collect(v, row, keys, leaves) for v in node]
    if isinstance(node, str) or (isinstance(node, int) and not isinstance(node, bool)):
        return ("v", leaves.add(str(node), row, "value"), node)
    return node


def _rebuild(node: Any, keys: list[str], leaves: list[str], originals: list[str]) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for (_, i), v in node.items():
            name, n = keys[i], 2
            while name in out:  # two keys redacted alike (the same number twice): keep both values
                name, n = f"{keys[i]}#{n}", n + 1
            out[name] = _rebuild(v, keys, leaves, originals)
        return out
    if isinstance(node, list):
        return [_rebuild(v, keys, leaves, originals) for v in node]
    if isinstance(node, tuple):
        _, i, original = node
        return original if leaves[i] == originals[i] else leaves[i]
    return node


def _dump(
    original: str | None, tree: Any, keys: list[str], leaves: list[str], before: list[str]
) -> str | None:
    """The value's JSON after redaction; the original text when nothing in it changed."""
    if original is None:
        return None
    new = _rebuild(tree, keys, leaves, before)
    return original if new == json.loads(original) else json.dumps(new, ensure_ascii=False, sort_keys=True)


def screen_fields(columns: dict[str, Sequence[Any]], params: GuardParams = GuardParams()) -> FieldScreening:
    """Screen the ``value`` (JSON text or None), name fields and ``tags`` of a batch -> the verdict.

    ``columns`` maps field names to one entry per row; absent fields are not screened.
    """
    n = len(next(iter(columns.values()))) if columns else 0
    names, keys, leaves = _Texts(), _Texts(), _Texts()
    trees: list[Any] = []
    for i, v in enumerate(columns.get("value") or []):  # per row: values are small JSON documents
        trees.append(None if v is None else _collect(json.loads(v), i, keys, leaves))
    slots: dict[str, list[Any]] = {}
    for field in (*NAME_FIELDS, "tags"):
        if field not in columns:
            continue
        if field == "tags":
            slots[field] = [
                [names.add(t, i, "tags") for t in ts or ()] for i, ts in enumerate(columns[field])
            ]
        else:
            slots[field] = [
                None if x is None else names.add(x, i, field) for i, x in enumerate(columns[field])
            ]
    named = screen_many(names.texts + keys.texts, params, pseudonyms=True)
    plain = screen_many(leaves.texts, params)
    actions = ["store"] * n
    parts = []
    for texts, s, offset in ((names, named, 0), (keys, named, len(names.texts)), (leaves, plain, 0)):
        for j, row in enumerate(texts.rows):
            actions[row] = strictest(actions[row], s.actions[j + offset])
        if texts.rows:
            pos = pl.Series(range(offset, offset + len(texts.rows)), dtype=pl.Int32)
            found = s.findings.filter(pl.col("row").is_in(pos.implode()))
            parts.append(found.with_columns(
                message=pl.lit("in ") + pl.col("row").replace_strict(
                    pos, pl.Series(texts.where), return_dtype=pl.String) + pl.lit(": ") + pl.col("message"),
                row=pl.col("row").replace_strict(pos, pl.Series(texts.rows, dtype=pl.Int32)),
                start=pl.lit(None, pl.Int32), end=pl.lit(None, pl.Int32),
            ))  # fmt: skip
    out: dict[str, list[Any]] = {}
    name_texts, key_texts = named.texts[: len(names.texts)], named.texts[len(names.texts) :]
    for field, sl in slots.items():
        if field == "tags":
            out[field] = [list(dict.fromkeys(name_texts[j] for j in ts)) for ts in sl]
        else:
            out[field] = [None if j is None else name_texts[j] for j in sl]
    if "value" in columns:
        out["value"] = [
            _dump(v, t, key_texts, plain.texts, leaves.texts)
            for v, t in zip(columns["value"], trees, strict=True)
        ]
    findings = (
        pl.concat([p.cast(FINDING_SCHEMA) for p in parts]) if parts else pl.DataFrame(schema=FINDING_SCHEMA)
    )
    return FieldScreening(out, actions, findings.sort("row", maintain_order=True))
