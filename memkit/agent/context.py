"""The context builder: which recalled memories enter the prompt, in what order, and why.

Retrieval returns the best-scoring memories; a prompt needs a clean, short, organised list. This
pure function over a hits frame (what :meth:`MemoryStore.search` returns) decides, in rank order:

- ``not active``: a superseded, quarantined or pending-conflict memory never enters (the store's
  search already skips them; a frame from elsewhere may still carry them);
- ``duplicate``: the same text (after NFKC, case folding and punctuation removal) as a better hit,
  or as the ``query`` itself (a question asked before is no answer to it);
- ``older value``: among hits sharing a ``key``, only the newest (latest ``created_at``) is kept,
  and its line says that it replaces an older value, so the model knows the fact changed;
- ``over budget``: lines are added best-first while the text stays within ``budget_chars``.

A hit whose key has a pending ``conflict`` version (the search frame's ``pending`` column) is
included with a note, ``(two values, unresolved; the other: …)``: the model sees that the fact is
disputed instead of being served the old value as settled.

What is kept is grouped by kind (preferences, facts, decisions, …), and each line carries the
memory id, so an answer can be traced back (``[m1a2b3]``). The result is the prompt text and a frame
with one row per hit: ``id, content, kind, key, score, included, reason``.

The whole decision is column expressions over the hits frame (one ``when/then`` chain gives every
row its reason), so it costs the same for 5 hits or 500 and every exclusion is explained in data,
never silently dropped. :func:`build_context` reads as its steps: check the inputs, put the rows in
rank order, group them by key and by text, give each row a reason and a line, cut at the budget,
and lay out the sections.

>>> import polars as pl
>>> hits = pl.DataFrame({"id": ["a", "b", "c"], "content": ["User likes latte", "User likes latte!",
...     "User lives in Hangzhou"], "kind": ["preference", "preference", "fact"], "score": [0.9, 0.8, 0.7]})
>>> ctx = build_context(hits)
>>> print(ctx.text)
Preferences:
- [a] User likes latte
Facts:
- [c] User lives in Hangzhou
>>> ctx.used["reason"].to_list()
['included', 'duplicate of a', 'included']
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..errors import ValidationError
from ..params import check_number

__all__ = ["Context", "KIND_TITLES", "build_context"]

# Section order and titles in the prompt: what the user wants first, then what is true, then plans.
KIND_TITLES: dict[str, str] = {
    "preference": "Preferences",
    "fact": "Facts",
    "decision": "Decisions and commitments",
    "event": "Earlier conversation",
    "reference": "References",
    "instruction": "Instructions",
}
USED_SCHEMA = {
    "id": pl.String,
    "content": pl.String,
    "kind": pl.String,
    "key": pl.String,
    "score": pl.Float64,
    "included": pl.Boolean,
    "reason": pl.String,
}
"""Columns and types of :attr:`Context.used` (the agent builds an empty one from it)."""

# whitespace, punctuation and symbols: removed before comparing texts, so "latte" == "latte!"
_PUNCT = r"[\s\p{P}\p{S}]+"


@dataclass(frozen=True)
class Context:
    """The memory section of a prompt (``text``, empty when nothing was kept) and, in ``used``, one
    row per recalled memory saying whether it was included and why (``reason``)."""

    text: str
    used: pl.DataFrame

    @property
    def ids(self) -> list[str]:
        """Ids of the memories that entered the prompt, best first."""
        return self.used.filter("included")["id"].to_list()


def build_context(hits: pl.DataFrame, *, budget_chars: int = 1500, query: str | None = None) -> Context:
    """Organise recalled memories for a prompt (see the module docstring for the rules).

    ``hits`` needs ``id`` and ``content``; ``kind``, ``key``, ``score``, ``rank``, ``created_at`` and
    ``status`` are used when present (a store search frame has them all but ``status``). Rows are
    taken in ``rank`` order (else by ``score`` descending, else as given). ``query``, when given, is
    the message being answered: a hit repeating it is dropped.
    """
    _check_inputs(hits, budget_chars, query)
    df = _in_rank_order(hits)
    df = _with_groups(df)
    df = df.with_columns(
        reason=_reason(query),
        _line=pl.lit("- [") + pl.col("id") + pl.lit("] ") + pl.col("content") + _note(df),
    )
    df = _apply_budget(df, budget_chars)
    used = df.with_columns(included=pl.col("reason") == "included").select(
        [pl.col(c).cast(t) for c, t in USED_SCHEMA.items()]
    )
    return Context(text=_sections(df.filter(pl.col("reason") == "included")), used=used)


def _check_inputs(hits: pl.DataFrame, budget_chars: int, query: str | None) -> None:
    """Raise a ValidationError naming the argument when an input has the wrong type or value."""
    if not isinstance(hits, pl.DataFrame):
        raise ValidationError("hits", f"must be a polars DataFrame, got {type(hits).__name__}")
    for col in ("id", "content"):
        if col not in hits.columns:
            raise ValidationError("hits", f"needs a {col!r} column; has {hits.columns}")
    # subtle: bool is an int in Python; budget_chars=True would otherwise mean a 1-character budget
    if isinstance(budget_chars, bool) or not isinstance(budget_chars, int):
        raise ValidationError("budget_chars", f"must be an int, got {type(budget_chars).__name__}")
    check_number("budget_chars", budget_chars, lo=1)
    if query is not None and not isinstance(query, str):
        raise ValidationError("query", f"must be a str or None, got {type(query).__name__}")


def _in_rank_order(hits: pl.DataFrame) -> pl.DataFrame:
    """``hits`` with every column the rules read, best hit first, plus helper columns.

    Missing optional columns are added as nulls (a missing ``kind`` means ``"fact"``), and the
    helpers are ``_pos`` (the row's place in rank order), ``_norm`` (the text compared for
    duplicates), ``_created`` (what "newest" sorts on) and ``_status`` (``"active"`` when absent).
    """
    df = hits.with_columns(
        **{
            c: pl.lit(None, dtype=t)
            for c, t in USED_SCHEMA.items()
            if c not in hits.columns and c != "included"
        }
    )
    if "kind" not in hits.columns:
        df = df.with_columns(kind=pl.lit("fact"))
    if "rank" in df.columns:
        df = df.sort("rank")
    # subtle: test `hits`, not `df`: `df` always has a score column by now (all nulls when added)
    elif "score" in hits.columns:
        df = df.sort("score", descending=True, nulls_last=True, maintain_order=True)
    df = df.with_row_index("_pos")
    # without timestamps the better-ranked of two versions counts as the newer one
    created = pl.col("created_at") if "created_at" in df.columns else -pl.col("_pos").cast(pl.Int64)
    status = pl.col("status") if "status" in df.columns else pl.lit("active")
    return df.with_columns(_norm=_text_key(pl.col("content")), _created=created, _status=status)


def _text_key(text: pl.Expr) -> pl.Expr:
    """The text two hits are compared on: NFKC, lower case, no spaces, punctuation or symbols.

    ``"User likes latte!" -> "userlikeslatte"``, ``"用户 喜欢 拿铁。" -> "用户喜欢拿铁"``.
    """
    return text.str.normalize("NFKC").str.to_lowercase().str.replace_all(_PUNCT, "")


def _with_groups(df: pl.DataFrame) -> pl.DataFrame:
    """Join what the groups say to each row: ``_newest`` (id of the newest active hit with the
    row's key), ``_older`` (the older values of that key, newest first) and ``_first`` (id of the
    best-ranked hit with the same text)."""
    # the newest version of each key among the hits; keyless rows are their own group
    newest = (
        df.filter(pl.col("key").is_not_null() & (pl.col("_status") == "active"))
        .sort("_created", "_pos", descending=[True, False])
        .group_by("key", maintain_order=True)
        .agg(_newest=pl.col("id").first(), _older=pl.col("content").slice(1))
    )
    df = df.join(newest, on="key", how="left", maintain_order="left")
    # maintain_order=True: the first row of a text group is its best-ranked hit (rows are in rank order)
    first_of_text = df.group_by("_norm", maintain_order=True).agg(_first=pl.col("id").first())
    return df.join(first_of_text, on="_norm", how="left", maintain_order="left")


def _reason(query: str | None) -> pl.Expr:
    """Why each row is in or out, as the first rule that applies: not active, an older value of its
    key, a repeat of the query, a repeat of a better hit, else ``"included"``."""
    repeats_query = pl.lit(query is not None) & (pl.col("_norm") == _text_key(pl.lit(query or "")))
    return (
        pl.when(pl.col("_status") != "active")
        .then(pl.lit("not active (") + pl.col("_status") + pl.lit(")"))
        .when(pl.col("_newest").is_not_null() & (pl.col("_newest") != pl.col("id")))
        .then(pl.lit("older value of key ") + pl.col("key") + pl.lit(" (newest: ") + pl.col("_newest") + ")")
        .when(repeats_query)
        .then(pl.lit("duplicate of the query"))
        .when(pl.col("_first") != pl.col("id"))
        .then(pl.lit("duplicate of ") + pl.col("_first"))
        .otherwise(pl.lit("included"))
    )


def _note(df: pl.DataFrame) -> pl.Expr:
    """What a line adds after its text: the older values it replaces and, when ``df`` has a
    ``pending`` column, the disputed value of an unresolved conflict ("" when neither applies)."""
    replaced = pl.col("_older").list.len().fill_null(0) > 0
    older = pl.col("_older").list.join(" / ")
    note = (
        pl.when(replaced)
        .then(pl.lit(" (newest value of ") + pl.col("key") + pl.lit("; replaces: ") + older + pl.lit(")"))
        .otherwise(pl.lit(""))
    )
    if "pending" in df.columns:  # a value disputed by a pending conflict is served as such, not as settled
        disputed = pl.col("pending").list.len().fill_null(0) > 0
        note = note + pl.when(disputed).then(
            pl.lit(" (two values, unresolved; the other: ") + pl.col("pending").list.join(" / ") + pl.lit(")")
        ).otherwise(pl.lit(""))
    return note


def _apply_budget(df: pl.DataFrame, budget_chars: int) -> pl.DataFrame:
    """Mark included rows ``"over budget"`` once the prompt text would pass ``budget_chars``.

    Lines are counted best first; a line costs its length plus a newline, plus its section title
    (``"Facts:"`` and a newline) when it is the first line of its kind. The budget is a prefix:
    once one line does not fit, no later line enters, so the prompt never skips a better memory
    for a shorter, worse one.
    """
    cand = df.filter(pl.col("reason") == "included")
    opens = cand["kind"].is_first_distinct()
    title_cost = (
        cand["kind"].replace_strict(KIND_TITLES, default=None).fill_null(cand["kind"]).str.len_chars() + 2
    )
    cost = cand["_line"].str.len_chars() + 1 + pl.Series(opens).cast(pl.Int64) * title_cost
    fits = (cost.cum_sum() - 1) <= budget_chars  # the last line needs no newline
    over = cand.filter(~fits)["id"]
    return df.with_columns(
        reason=pl.when(pl.col("id").is_in(over.implode()) & (pl.col("reason") == "included"))
        .then(pl.lit("over budget"))
        .otherwise(pl.col("reason"))
    )


def _sections(kept: pl.DataFrame) -> str:
    """The prompt text: one titled section per kind, in :data:`KIND_TITLES` order (unknown kinds
    last, alphabetically, titled by their own name), lines in rank order within a section."""
    order = list(KIND_TITLES)
    sections = []
    for kind in sorted(
        kept["kind"].unique().to_list(), key=lambda k: (order.index(k) if k in order else 99, k)
    ):
        lines = kept.filter(pl.col("kind") == kind)["_line"].to_list()  # one loop per kind, not per memory
        sections.append(KIND_TITLES.get(kind, kind) + ":\n" + "\n".join(lines))
    return "\n".join(sections)
