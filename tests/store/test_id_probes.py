"""memkit/store/gate.py (`_unseen`) + review.py + read.py's audit: an id alone tells a requester
nothing of a memory it may not read. Every id-taking entry point answers a real id of one exactly as
a made-up id (same exception, same message but the id), and the requester's own audit reads the same
after either; the operator's audit still records the refused probe."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import polars as pl
import pytest

import memkit as mk

NOW = datetime(2026, 3, 1, tzinfo=UTC)
FAKE = "0123456789abcdef"  # the shape of memkit's own ids
DIARY = {"zh": "carol 的私人日记：下周去杭州看病", "en": "carol's private diary: a doctor in Hangzhou"}

# each entry point, called by dave on `mid` (namespace omitted: None)
CALLS: dict[str, Callable[[mk.MemoryStore, str, str | None], Any]] = {
    "get": lambda s, mid, ns: s.get(mid, namespace=ns, requester="dave", now=NOW),
    "delete": lambda s, mid, ns: s.delete(mid, namespace=ns, requester="dave", now=NOW),
    "approve": lambda s, mid, ns: s.approve(mid, namespace=ns, requester="dave", now=NOW),
    "learn_lesson": lambda s, mid, ns: s.learn_lesson(
        mid, reason="坏 bad", namespace=ns, requester="dave", now=NOW
    ),  # fmt: skip
    "resolve": lambda s, mid, ns: s.resolve("diary", keep=mid, namespace=ns, requester="dave", now=NOW),
}
# where carol's private memory is, and the namespace dave names (None: omitted); named as its own
# namespace it is the read gate's AccessDenied (README, "Isolation: access"), not tested here
WHERE = [("v", None), ("v", "d"), ("d", None)]


def _store(lang: str, where: str) -> tuple[mk.MemoryStore, str]:
    """dave's namespace `d`; carol's private diary in `where` (-> its id), and public notes in both."""
    s = mk.MemoryStore()
    s.add("dave 的笔记 dave's note", namespace="d", requester="dave", now=NOW)
    for ns in ("d", "v"):
        s.add(f"公开 public {ns}", namespace=ns, requester="carol", now=NOW)
    m = s.add(DIARY[lang], namespace=where, requester="carol", access="private", key="diary", now=NOW)
    return s, m.id


def _view(s: mk.MemoryStore, where: str) -> list[dict[str, Any]]:
    """dave's audit, every namespace it may list and the diary's, without seq and ts."""
    spaces = sorted({*s.namespaces(requester="dave")["namespace"], where})
    return [s.audit(ns, requester="dave").drop("seq", "ts").to_dicts() for ns in spaces]


def _answer(call: Callable[[], Any], mid: str) -> tuple[str, str]:
    with pytest.raises(mk.MemkitError) as e:
        call()
    return type(e.value).__name__, str(e.value).replace(repr(mid), "<id>")


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("where", "named"), WHERE)
@pytest.mark.parametrize("entry", list(CALLS))
def test_a_real_unreadable_id_answers_as_a_made_up_one(entry: str, where: str, named: str | None,
                                                       lang: str) -> None:  # fmt: skip
    if entry == "resolve" and named is None:
        pytest.skip("resolve always names its namespace")
    s, mid = _store(lang, where)
    before = _view(s, where)
    real = _answer(lambda: CALLS[entry](s, mid, named), mid)
    after_real = _view(s, where)
    fake = _answer(lambda: CALLS[entry](s, FAKE, named), FAKE)
    assert real == fake
    assert real[0] == "NotFound" and "private" not in real[1]
    assert before == after_real == _view(s, where)  # the probe of a real id leaves dave no trace
    assert s.get(mid, namespace=where).content == DIARY[lang]  # nothing changed
    s.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("entry", ["get", "delete", "approve", "learn_lesson"])
def test_the_operator_still_sees_the_refused_probe(entry: str, lang: str) -> None:
    s, mid = _store(lang, "v")
    _answer(lambda: CALLS[entry](s, mid, None), mid)
    for log in (s.audit(op="deny"), s.audit("v", op="deny")):
        probes = log.filter(pl.col("memory_id") == mid).to_dicts()
        assert [p["requester"] for p in probes] == ["dave"]
        assert json.loads(probes[0]["detail"])["answered"] == "NotFound"
    assert s.audit("v", requester="carol", op="deny")["memory_id"].to_list() == [mid]  # its writer too
    s.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_reader_who_may_not_approve_is_still_refused_by_name(lang: str) -> None:
    """README: only the operator or a reviewer approves; a memory dave may read is no secret to it."""
    s, mid = _store(lang, "v")
    public = s.frame("v").filter(pl.col("access") == "public")["id"][0]
    for ns in (None, "v"):
        for call in ("approve", "learn_lesson"):
            with pytest.raises(mk.AccessDenied, match=public):
                CALLS[call](s, public, ns)
    with pytest.raises(mk.AccessDenied, match="private"):  # named: the read gate's refusal (documented)
        CALLS["approve"](s, mid, "v")
    s.close()


def test_a_langgraph_lookup_of_an_unreadable_id_leaves_no_trace() -> None:
    pytest.importorskip("langgraph")
    from memkit.integrations.langgraph import MemkitStore

    s, mid = _store("zh", "d")
    dave = MemkitStore(s, requester="dave", now=NOW)
    before = _view(s, "d")
    assert dave.get(("d",), mid) is None
    dave.delete(("d",), mid)
    after = _view(s, "d")
    assert dave.get(("d",), FAKE) is None
    dave.delete(("d",), FAKE)
    assert before == after == _view(s, "d")
    assert s.get(mid, namespace="d").content == DIARY["zh"]
    # a LangGraph lookup is "no item" for both, without a refusal in anyone's audit (only public calls)
    assert s.audit("d", op="deny").filter(pl.col("memory_id") == mid).height == 0
    s.close()


# ------------------------------------------------------------------------------------ unlearn
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("where", "erased"), [("v", False), ("d", False), ("d", True)])
def test_unlearning_a_lesson_of_an_unreadable_memory_answers_as_a_made_up_id(where: str, erased: bool,
                                                                             lang: str) -> None:  # fmt: skip
    """README (lessons): a non-reviewer naming a lesson of a memory it may not read (another writer's
    private one, or one erased since) learns nothing: the made-up id's NotFound, no trace in its audit."""
    s, mid = _store(lang, where)
    lid = s.learn_lesson(mid, reason="坏 bad", namespace=where, now=NOW)  # the operator's lesson
    if erased:
        s.delete(mid, namespace=where, now=NOW)
    before = _view(s, where)
    real = _answer(lambda: s.unlearn(lid, requester="dave", now=NOW), lid)
    after_real = _view(s, where)
    fake = _answer(lambda: s.unlearn(FAKE, requester="dave", now=NOW), FAKE)
    assert real == fake == ("NotFound", "no lesson with id <id>")
    assert before == after_real == _view(s, where)  # the probe of a real lesson leaves dave no trace
    assert s.lessons()["id"].to_list() == [lid]  # nothing changed
    probes = s.audit(op="deny").filter(pl.col("requester") == "dave").to_dicts()  # the operator sees it
    assert [(p["namespace"], p["memory_id"]) for p in probes] == [(where, None)]
    assert json.loads(probes[0]["detail"]) == {"attempted": "unlearn", "lesson": lid, "answered": "NotFound"}
    s.close()


def test_unlearning_a_lesson_of_a_readable_memory_is_still_refused_by_name() -> None:
    """README: only the operator or a reviewer unlearns; a lesson of a memory dave may read is no secret."""
    s, _ = _store("zh", "v")
    public = s.frame("v").filter(pl.col("access") == "public")["id"][0]
    lid = s.learn_lesson(public, reason="坏 bad", namespace="v", now=NOW)
    with pytest.raises(mk.AccessDenied, match=lid):
        s.unlearn(lid, requester="dave", now=NOW)
    mine = s.audit("v", requester="dave", op="deny").to_dicts()  # its own refusal, in its audit
    assert [json.loads(d["detail"]) for d in mine] == [{"attempted": "unlearn", "lesson": lid}]
    s.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("where", ["d", "v"])
def test_a_context_event_names_a_real_unreadable_id_as_a_made_up_one(lang: str, where: str) -> None:
    """log_context of ids a requester may not read (another's private one, here or elsewhere) and
    of a made-up one: its audit reads the same after each; the ids it may read stay, in order."""
    s, mid = _store(lang, where)
    mine = s.frame("d", requester="dave")["id"].to_list()
    views = []
    for probe in (mid, FAKE):
        s.log_context([mine[0], probe, *mine[1:]], namespace="d", requester="dave", now=NOW)
        views.append(s.audit("d", requester="dave", op="context")["detail"].to_list()[-1])
    assert views[0] == views[1] and json.loads(views[0])["ids"] == mine
    s.close()
