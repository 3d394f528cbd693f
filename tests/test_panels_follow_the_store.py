"""Panels follow the store's contents (helper 109, browser audit h106 items 3 and 4): a panel caches what
its sliders need when it is built, and another cell's write (lesson 03's ``store.consolidate``, lesson
05's ``store.forget``) left it drawing the store as it was: the merge explorer still offered 34 clusters
over memories already merged, the time machine drew 93 curves of which 63 were gone. Now a panel
compares ``store.revision`` at each refresh and reads the store again when it moved."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import memkit as mk

pytest.importorskip("ipywidgets")

T = datetime(2026, 1, 1, tzinfo=UTC)


def _store() -> mk.MemoryStore:
    s = mk.MemoryStore()
    s.add("the user drinks green tea every morning", namespace="u", now=T)
    s.add("the user drinks green tea every morning.", namespace="u", now=T + timedelta(hours=1))
    s.add("the user lives in Hangzhou", namespace="u", key="home", now=T + timedelta(hours=2))
    return s


# ------------------------------------------------------------------------------------ store.revision
def test_revision_moves_with_every_change_and_never_with_a_read() -> None:
    s = _store()
    seen = [s.revision]

    def moved() -> bool:
        seen.append(s.revision)
        return seen[-1] > seen[-2]

    # reads leave it: frames, past frames, a search that reinforces its hits, the audit log
    s.frame("u")
    s.frame("u", as_of=T)
    s.search("green tea", namespace="u", now=T + timedelta(hours=3))
    s.audit("u")
    assert not moved()
    m = s.add("the user works at a bakery", namespace="u", now=T + timedelta(hours=3))
    assert moved()
    s.add("the user lives in Shanghai", namespace="u", key="home", now=T + timedelta(hours=4))  # a conflict
    assert moved()
    s.resolve("home", namespace="u", keep=s.versions("home", namespace="u")["id"][-1])
    assert moved()
    assert s.consolidate("u", threshold=0.9, now=T + timedelta(hours=5)).height == 1
    assert moved()
    s.delete(m.id)
    assert moved()
    s.forget("u", now=T + timedelta(days=900), policy=mk.ForgetParams(min_strength=0.5))
    assert moved()
    last = s.revision
    s.close()
    assert s.revision == last  # a closed store keeps its last revision


def test_a_failed_write_leaves_the_revision() -> None:
    s = _store()
    before = s.revision
    with pytest.raises(mk.ValidationError):
        s.add("x", namespace="u", importance=2.0)
    with pytest.raises(mk.WriteRefused):
        s.add("my password is hunter2hunter2", namespace="u")
    assert s.revision == before
    s.close()


# ----------------------------------------------------------------------------------------- panels
def test_the_merge_explorer_plans_over_the_store_as_it_is_now() -> None:
    s = _store()
    panel = mk.widgets.merge_explorer(s, "u", now=T + timedelta(hours=3), threshold=0.9)
    assert panel.plan.height == 1  # the two tea memories
    s.consolidate("u", threshold=0.9, now=T + timedelta(hours=3))  # another cell merges them
    panel.refresh()  # the next slider move, or a call
    assert panel.plan.height == 0 and "0 clusters" in panel.message.value
    assert panel.similarities.height == s.merge_candidates("u", now=T + timedelta(hours=3))[0].height
    s.close()


def test_the_time_machine_draws_the_store_as_it_is_now() -> None:
    s = _store()
    tm = mk.widgets.time_machine(s, "u", at=T + timedelta(hours=2))
    assert tm.data.height == 3
    tea = s.frame("u")["id"][0]  # the first tea memory
    s.delete(tea)  # another cell erases one
    tm.refresh()
    curves = {r["id"] for r in tm.chart.to_dict()["datasets"].values() for r in r if "created_ms" in r}
    assert tea not in curves and len(curves) == 2  # the curves are today's frame, read again
    assert tm.data.height == 2 and "a search may return 2 memories" in tm.message.value
    s.close()


def test_the_weights_tuner_reranks_the_store_as_it_is_now() -> None:
    s = _store()
    tuner = mk.widgets.weights_tuner(
        s, ["where does the user work"], namespace="u", now=T + timedelta(days=1)
    )
    assert "bakery" not in " ".join(tuner.data["content"])
    s.add("the user works at a bakery", namespace="u", now=T + timedelta(hours=5))
    tuner.sliders["k"].value = 4  # a slider move
    assert tuner.data["content"][0] == "the user works at a bakery"
    s.close()


def test_a_panel_reads_the_store_once_while_it_does_not_change(monkeypatch: pytest.MonkeyPatch) -> None:
    s = _store()
    panel = mk.widgets.merge_explorer(s, "u", now=T + timedelta(hours=3))
    reads = []
    real = s.merge_candidates
    monkeypatch.setattr(s, "merge_candidates", lambda *a, **kw: reads.append(1) or real(*a, **kw))
    for t in (0.8, 0.9, 0.95):
        panel.sliders["threshold"].value = t
    assert reads == []  # slider moves re-plan from the cache
    s.add("the user has a cat", namespace="u", now=T + timedelta(hours=3))
    panel.sliders["threshold"].value = 0.85
    assert reads == [1]
    s.close()


@pytest.mark.parametrize("bob_importance", [0.9, 0.01])  # bob's memories outrank alice's / fade first
def test_the_time_machine_of_a_requester_previews_the_forget_it_may_run(bob_importance: float) -> None:
    """A requester's time machine plans the pass ``store.forget(requester=)`` makes: over what it may
    change, so another writer's public memories neither count toward its capacity nor show as dropped."""
    s = mk.MemoryStore()
    for i in range(3):
        s.add(f"Alice note {i} about hiking", namespace="u", requester="alice", importance=0.2,
              now=T + timedelta(minutes=i))  # fmt: skip
        s.add(f"Bob public note {i} about chess", namespace="u", requester="bob", importance=bob_importance,
              now=T + timedelta(minutes=10 + i))  # fmt: skip
    policy = mk.ForgetParams(capacity=2)
    tm = mk.widgets.time_machine(s, "u", requester="alice", at=T + timedelta(hours=1), policy=policy)
    run = s.forget("u", requester="alice", now=tm.at, policy=policy, dry_run=True)
    assert sorted(tm.plan["id"]) == sorted(run["id"]) and run.height == 1
