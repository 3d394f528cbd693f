"""What a COGX round trip drops, as the README now states it (helper 100, audit t4/t6): the archive
holds every version, but reading it back writes only the active memories, as new ones; since
neighbour expansion pairs memories whatever their status, the copy's neighbour scores differ where a
dropped row sat between two. memkit's JSONL keeps every row, and the same scores."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import memkit as mk

T = datetime(2026, 1, 1, tzinfo=UTC)


def _scores(store: mk.MemoryStore) -> dict[str, tuple[float, float]]:
    hits = store.search("green tea", namespace="u", k=5, now=T + timedelta(hours=5), reinforce=False)
    return {c: (round(s, 9), round(n, 9)) for c, s, n in hits.select("content", "score", "neighbour").rows()}


def test_a_cogx_round_trip_keeps_only_active_rows_and_neighbour_scores_change(tmp_path: Path) -> None:
    with mk.MemoryStore(conflict_policy="supersede") as a:
        a.add("the user drinks green tea", namespace="u", now=T)
        a.add("the tea shop is on Main Street", namespace="u", key="shop", now=T + timedelta(hours=1))
        a.add("the user walks to work", namespace="u", now=T + timedelta(hours=2))
        a.add("the tea shop is on Hill Road", namespace="u", key="shop", now=T + timedelta(hours=3))
        a.export_cogx(tmp_path / "cg", "u", now=T + timedelta(hours=4))
        a.export(tmp_path / "u.jsonl", "u", include_events=True, now=T + timedelta(hours=4))
        with mk.MemoryStore() as cogx, mk.MemoryStore() as jsonl:
            report = mk.adapters.import_file(cogx, tmp_path / "cg", "cogx", now=T + timedelta(hours=4))
            jsonl.import_(tmp_path / "u.jsonl", now=T + timedelta(hours=4))
            assert sorted(report["action"].to_list()) == ["added", "added", "added", "skipped"]
            assert cogx.frame("u")["status"].to_list() == ["active"] * 3  # the superseded version is gone
            assert jsonl.frame("u").equals(a.frame("u"))  # every row, ids, versions, lineage
            assert _scores(jsonl) == _scores(a)
            walk = "the user walks to work"
            # the original pairs it with the superseded version before it; the copy with the tea
            assert _scores(a)[walk][1] < _scores(cogx)[walk][1]
