"""Which pairs of memories at the merge threshold become links of a cluster, and why the others do not.

:func:`memkit.consolidate.cluster_labels` joins the links into clusters and
:func:`memkit.consolidate.held_apart` lists the rest; both call :func:`candidate_pairs`, so what the
plan does and what it reports agree. A pair is a candidate when both memories are ``active``, in one
group (namespace, layer, key; the planner's callers add the access group) and at cosine >= the
threshold. It is no link when

- ``WEAK``: one memory is below the forgetting floor and the other not (a ``_weak`` column, as
  ``store.merge_candidates`` gives it): merged, the weak one would date fresh facts as old as itself;
- ``FACTS``: their fact tokens differ (:func:`memkit.facts.same_facts`: a number, a negation, a time
  word, a name; a relative time word, "next month", written on another day), when ``distinct_facts``
  is on;
- ``VALUE``: their structured ``value`` differs (a ``value`` column, as ``store.frame()`` gives it;
  JSON compared by content, key order aside): a merged memory holds one value, so two values are two
  facts, whatever the text says. A memory without a value links to one with a value, unless its
  cluster would then hold two different values: there every link between unequal values (a missing
  one included) is cut, so each value, and the memories without one, cluster apart. Always on.

Cost: the pairs come from blocked matrix products (:func:`memkit.scoring.similar_pairs`, memory
O(block²)); the fact rule tokenizes only the rows that candidate pairs name, each once, and compares
one key per row: on LoCoMo's 2,541 observations it reads 22 texts (README, "Consolidation").
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import polars as pl

from .fact_pairs import fact_differences
from .facts import same_facts
from .scoring import similar_pairs

__all__ = [
    "FACTS", "GROUP", "LINK", "REASONS", "VALUE", "WEAK", "candidate_pairs", "components", "unlinked",
    "value_keys",
]  # fmt: skip

LINK, WEAK, FACTS, VALUE = 0, 1, 2, 3
REASONS = {
    WEAK: "one is below the forgetting floor, the other not",
    FACTS: "fact tokens differ",
    VALUE: "values differ",
}
"""What each ``cut`` code of :func:`candidate_pairs` but ``LINK`` means, in words."""
GROUP = ("namespace", "layer", "key")
"""The columns two memories must share to be merged (the planner's callers add the access group)."""


def candidate_pairs(
    frame: pl.DataFrame,
    emb: np.ndarray,
    threshold: float,
    block_size: int,
    distinct_facts: bool = True,
    by: tuple[str, ...] = GROUP,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of active rows of ``frame`` in one group (same ``by`` columns) whose rows of ``emb``
    (``(n, dim)``, unit rows) have a cosine >= ``threshold`` -> ``(u, v, cut)``, each ``(e,)``: the
    row indices (``u < v``) and why the pair is no link (``LINK`` when it is one, else ``WEAK`` or
    ``FACTS`` or ``VALUE``, module doc). A loop over groups, never over memories or pairs.

    >>> f = pl.DataFrame({"namespace": ["u"] * 3, "layer": ["l"] * 3, "key": [None] * 3,
    ...                   "status": ["active"] * 3, "content": ["Has 2 cats", "Has two cats", "Has 3 cats"]})
    >>> [a.tolist() for a in candidate_pairs(f, np.ones((3, 1), np.float32), 0.85, 64)]
    [[0, 0, 1], [1, 2, 2], [0, 2, 2]]
    """
    groups = (
        frame.with_row_index("_row")
        .filter(pl.col("status").cast(pl.String) == "active")
        .group_by(*by, maintain_order=True)
        .agg("_row")
        .filter(pl.col("_row").list.len() >= 2)
    )
    edges_u, edges_v = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for rows in groups["_row"].to_list():  # a loop over groups, not memories
        rows = np.asarray(rows, dtype=np.int64)
        contiguous = rows[-1] - rows[0] + 1 == len(rows)  # one group, or a sorted frame: no copy
        sub = emb[rows[0] : rows[-1] + 1] if contiguous else emb[rows]
        i, j = similar_pairs(sub, threshold, block_size)
        edges_u.append(rows[i])
        edges_v.append(rows[j])
    u, v = np.concatenate(edges_u), np.concatenate(edges_v)  # (e,), (e,)
    cut = np.full(len(u), LINK, dtype=np.int8)
    if "_weak" in frame.columns:  # a weak-strong pair is no link: each side clusters on its own
        weak = frame["_weak"].to_numpy().astype(bool)  # (n,)
        cut[weak[u] != weak[v]] = WEAK
    if distinct_facts:  # only the candidates' own rows are tokenized: a few, never the whole namespace
        todo = np.flatnonzero(cut == LINK)
        written = frame["created_at"] if "created_at" in frame.columns else None  # (relative dates)
        cut[todo[~same_facts(frame["content"], u[todo], v[todo], written)]] = FACTS
    if "value" in frame.columns and frame["value"].null_count() < frame.height:  # (no value: no cut)
        _cut_values(frame, u, v, cut)
    return u, v, cut


def value_keys(values: Any, rows: np.ndarray) -> np.ndarray:
    """The ``value`` of each of ``rows`` (a column of JSON strings, or of Python objects) as one
    canonical JSON string (keys sorted, whole floats as ints), or None -> ``(r,)`` object array:
    equal keys, equal values.

    >>> value_keys(pl.Series(['{"b": 1, "a": 2}', None, '{"a":2,"b":1.0}']), np.arange(3)).tolist()
    ['{"a": 2, "b": 1}', None, '{"a": 2, "b": 1}']
    """
    out = np.full(len(rows), None, dtype=object)
    for k, raw in enumerate(values.gather(rows).to_list()):  # only the candidates' rows: a few
        if raw is None:
            continue
        try:
            obj = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            obj = raw  # (not JSON: compared as written)
        out[k] = json.dumps(_whole(obj), sort_keys=True, ensure_ascii=False, default=str)
    return out


def _whole(obj: Any) -> Any:
    """``obj`` with each float that is a whole number as an int (JSON's 5000.0 is 5000), throughout.

    >>> _whole({"a": [1.0, 2.5, True], "b": 5000.0})
    {'a': [1, 2.5, True], 'b': 5000}
    """
    if isinstance(obj, float) and obj.is_integer():
        return int(obj)
    if isinstance(obj, dict):
        return {k: _whole(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_whole(v) for v in obj]
    return obj


def _cut_values(frame: pl.DataFrame, u: np.ndarray, v: np.ndarray, cut: np.ndarray) -> None:
    """Cut (``VALUE``) each link of ``cut`` whose two values differ, and, in a component the links
    left would hold two different values, each link between unequal values (a missing one too)."""
    rows = np.unique(np.concatenate([u, v]))  # (r,) only the rows the pairs name
    if rows.size == 0:
        return
    keys = value_keys(frame["value"], rows)  # (r,)
    ku, kv = keys[np.searchsorted(rows, u)], keys[np.searchsorted(rows, v)]  # (e,) each
    has_u, has_v = ku != None, kv != None  # noqa: E711 (elementwise on an object array)
    cut[(cut == LINK) & has_u & has_v & (ku != kv)] = VALUE
    link = np.flatnonzero(cut == LINK)
    if link.size == 0:
        return
    local = components(len(rows), np.searchsorted(rows, u[link]), np.searchsorted(rows, v[link]))  # (r,)
    valued = pl.DataFrame(
        {"label": local, "key": keys.tolist()}, schema={"label": pl.Int64, "key": pl.String}
    )
    mixed = valued.drop_nulls("key").group_by("label").agg(pl.col("key").n_unique()).filter(pl.col("key") > 1)
    if mixed.is_empty():
        return
    label_u = local[np.searchsorted(rows, u[link])]  # (l,) each link's component
    bad = np.isin(label_u, mixed["label"].to_numpy()) & (ku[link] != kv[link])
    cut[link[bad]] = VALUE


def components(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Connected components of ``n`` nodes and edges ``(u, v)``: the smallest node of each, per node.

    >>> components(5, np.array([0, 3]), np.array([1, 1])).tolist()      # 0-1-3, 2, 4
    [0, 0, 2, 0, 4]
    """
    parent = np.arange(n, dtype=np.int64)  # invariant: parent[x] <= x, roots point to themselves
    while u.size:
        pu, pv = parent[u], parent[v]
        lo, hi = np.minimum(pu, pv), np.maximum(pu, pv)
        cross = lo != hi
        if not cross.any():
            break
        u, v = u[cross], v[cross]  # an edge inside one component stays inside it: drop it
        np.minimum.at(parent, hi[cross], lo[cross])  # hook each larger root onto a smaller one
        while True:  # pointer jumping until every node points at its root
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
    return parent


def unlinked(
    frame: pl.DataFrame, emb: np.ndarray, u: np.ndarray, v: np.ndarray, cut: np.ndarray
) -> pl.DataFrame:
    """The candidate pairs of :func:`candidate_pairs` that are no link -> ``namespace, id_a, id_b,
    content_a, content_b, similarity, reason``, most similar first (then by ids). The reason of a fact
    cut names the difference: ``"fact tokens differ: numbers 5000 ≠ 8000"``; of a value cut, the two
    values: ``'values differ: {"amount": 5000} ≠ {"amount": 8000}'`` (``—``: none)."""
    keep = cut != LINK
    u, v, cut = u[keep], v[keep], cut[keep]
    a, b = frame["content"].gather(u), frame["content"].gather(v)
    at = frame["created_at"] if "created_at" in frame.columns else None
    facts = np.flatnonzero(cut == FACTS)  # each text tokenized once, the pairs compared by joins
    why = fact_differences(frame["content"], u[facts], v[facts], at)
    reasons = np.array([REASONS[WEAK]] * len(cut), dtype=object)
    reasons[facts] = [f"{REASONS[FACTS]}: {w}" for w in why]
    valued = np.flatnonzero(cut == VALUE)
    if valued.size:
        ka, kb = (value_keys(frame["value"], x[valued]) for x in (u, v))
        reasons[valued] = [
            f"{REASONS[VALUE]}: {_short(a)} ≠ {_short(b)}" for a, b in zip(ka, kb, strict=True)
        ]
    return pl.DataFrame(
        {
            "namespace": frame["namespace"].gather(u).cast(pl.String),
            "id_a": frame["id"].gather(u),
            "id_b": frame["id"].gather(v),
            "content_a": a.cast(pl.String),
            "content_b": b.cast(pl.String),
            "similarity": np.einsum("ij,ij->i", emb[u], emb[v]).astype(np.float64).round(6),  # (e,)
            "reason": pl.Series(reasons.tolist(), dtype=pl.String),
        }
    ).sort("similarity", "id_a", "id_b", descending=[True, False, False])


def _short(key: str | None) -> str:
    """A canonical value as a reason shows it: ``—`` for none, at most 60 characters."""
    return "—" if key is None else key if len(key) <= 60 else key[:59] + "…"
