"""memkit/store/merge.py: a merge the guard refuses leaves a trace. Members that pass one by one can add
up to what the guard refuses (a secret, an injection, a lesson's repeat) once merged: the cluster stays
unmerged, one ``deny`` event records it (the members' ids, the findings' codes and spans, never text),
and ``consolidate(dry_run=True)`` marks it ``refused`` rather than showing it as if it would be written."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
JOIN = r"[;；] ?[Ss]he also"  # only the merged text has it: the members' sentences joined
GUARDS = {
    "injection": mk.GuardParams(extra_injection_patterns=(JOIN,)),
    "secret": mk.GuardParams(extra_secret_patterns=(JOIN,)),
}
TEXTS = {
    "en": (
        "Alice likes green tea. Alice walks to work daily",
        "Alice likes green tea. She also likes coffee",
    ),
    "zh": ("用户喜欢喝绿茶。用户每天走路上班", "用户喜欢喝绿茶。She also likes coffee"),  # joined by "；"
}


def _pair(s: mk.MemoryStore, lang: str, ns: str = "u") -> list[str]:
    return [s.add(t, namespace=ns, requester="alice", now=NOW).id for t in TEXTS[lang]]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", list(GUARDS))
def test_a_refused_merge_is_denied_once_and_previewed_as_refused(kind: str, lang: str) -> None:
    with mk.MemoryStore(guard=GUARDS[kind]) as s:
        ids = _pair(s, lang)
        dry = s.consolidate("u", threshold=0.5, now=NOW, dry_run=True, requester="alice")
        assert dry["refused"].to_list() == ["guard"] and dry["merged_id"].to_list() == [None]
        assert s.audit(op="deny").is_empty()  # a dry run writes nothing
        out = s.consolidate("u", threshold=0.5, now=NOW, requester="alice")
        assert out["merged_id"].to_list() == [None] and out["refused"].to_list() == ["guard"]
        assert out.drop("merged_id").equals(dry.drop("merged_id"))  # the preview said what happened
        assert s.frame("u")["status"].to_list() == ["active", "active"]  # the members as they were
        denies = s.audit(op="deny").to_dicts()
        assert [(d["namespace"], d["memory_id"], d["requester"]) for d in denies] == [("u", None, "alice")]
        detail = json.loads(denies[0]["detail"])
        code = "MG290" if kind == "secret" else "MG390"
        start, end = re.search(JOIN, out["content"][0]).span()  # type: ignore[union-attr]
        assert detail == {"attempted": "merge", "reason": "guard", "members": ids,
                          "findings": [{"code": code, "kind": kind, "start": start, "end": end}]}  # fmt: skip
        assert not [w for w in ("coffee", "tea", "绿茶", "She") if w in denies[0]["detail"]]  # never text
        assert s.audit("u", requester="alice", op="deny").height == 1  # its own refusal, in its audit
        assert s.audit(op="merge").is_empty() and s.audit(op="supersede").is_empty()


def test_one_refused_cluster_beside_a_merged_one() -> None:
    """The deny is logged with the merge that did go through (one transaction), once per refused cluster."""
    with mk.MemoryStore(guard=GUARDS["injection"]) as s:
        bad = _pair(s, "en", "u")
        good = [s.add(t, namespace="w", now=NOW).id for t in ("用户喜欢喝美式咖啡", "用户喜欢喝美式咖啡。")]
        dry = s.consolidate(threshold=0.5, now=NOW, dry_run=True)
        out = s.consolidate(threshold=0.5, now=NOW)
        assert out.drop("merged_id").equals(dry.drop("merged_id"))
        refused = dict(zip(out["namespace"], out["refused"], strict=True))
        assert refused == {"u": "guard", "w": None}
        merged = out.filter(pl.col("namespace") == "w")["merged_id"][0]
        assert merged is not None and set(s.get(merged).merged_from) == set(good)
        assert s.frame("u")["status"].to_list() == ["active", "active"]
        denies = [json.loads(d) for d in s.audit(op="deny")["detail"]]
        assert [d["members"] for d in denies] == [bad]


def test_a_merge_near_a_lesson_is_left_unmerged_not_quarantined() -> None:
    """A lesson's repeat is held by the guard: the merged memory would be written quarantined and its
    members superseded (both gone from search); it is refused like any merge the guard would hold."""
    with mk.MemoryStore() as s:
        ids = [s.add(t, namespace="u", now=NOW).id for t in ("用户住在杭州西湖区", "用户住在杭州西湖区。")]
        planted = s.add("用户住在杭州西湖区!", namespace="u", tags=["tool"], now=NOW)
        s.learn_lesson(planted.id, reason="planted", now=NOW)
        later = NOW + timedelta(minutes=1)
        assert s.consolidate("u", threshold=0.5, now=later, dry_run=True)["refused"].to_list() == ["guard"]
        out = s.consolidate("u", threshold=0.5, now=later)
        assert out["merged_id"].to_list() == [None]
        assert s.frame("u").filter(pl.col("id").is_in(ids))["status"].to_list() == ["active", "active"]
        assert s.audit(op="quarantine")["memory_id"].to_list() == [planted.id]  # the lesson's own only
        (deny,) = [json.loads(d) for d in s.audit(op="deny")["detail"]]
        assert deny["members"] == ids and [f["code"] for f in deny["findings"]] == ["MG308"]
