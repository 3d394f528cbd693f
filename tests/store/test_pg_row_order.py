"""A rewritten row goes to the end of the table order and of the search index, on PostgreSQL as on DuckDB.

Among memories written at the same instant (turns of one session), the table order (DuckDB's
``rowid``; on a server the identity column ``rowid``) decides neighbour expansion and near ties. DuckDB
writes a rewritten row at the table's end (an UPDATE of a list column is a delete and an insert there)
and its index appends it again; each test rewrites a row without changing its text, key, tags or
names, and checks that a PostgreSQL store — the writer, a store opened before the write (another
process, following the change log: :mod:`memkit.store.sync`) and one opened after it — ranks, pairs
neighbours and orders frames and exports exactly as a DuckDB store holding the same data.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import memkit as mk
from memkit.store.vectors import VectorsMixin

pytest.importorskip("psycopg", reason="the extra memkit[postgres] is not installed")

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
_FILES = itertools.count()  # export file names
OTHERS = ["What does the user drink?", "Bob plays the violin", "Alice enjoys hiking"]  # one session's turns
# texts this file merges on purpose differ in fact tokens (memkit.facts): merged by cosine alone
COSINE_ONLY = mk.MergeParams(distinct_facts=False)


def view(s: mk.MemoryStore, target: str, query: str, tmp_path: Path) -> dict[str, Any]:
    """What the table order decides, by text: ``target``'s neighbours, the top 3 of ``query``
    (with neighbour expansion), the frame's order and the export's line order."""
    text = dict(s.frame("u").select("id", "content").iter_rows())
    nb = s.neighbours([target], namespace="u", now=NOW + 9 * H).row(0, named=True)
    hits = s.search(query, namespace="u", k=3, now=NOW + 9 * H, reinforce=False)
    path = tmp_path / f"view{next(_FILES)}.jsonl"
    s.export(path, "u", now=NOW + 9 * H)
    lines = [json.loads(x)["id"] for x in path.read_text(encoding="utf-8").splitlines()[1:]]
    return {
        "neighbours": [text.get(nb[c]) for c in ("prev", "next", "prev2", "next2")],
        "search": [text[i] for i in hits["id"]],
        "neighbour scores": [round(x, 9) for x in hits["neighbour"]],
        "frame": list(text.values()),
        "export": [text[i] for i in lines],
    }


@pytest.fixture
def stores(url: str) -> Iterator[Callable[[], mk.MemoryStore]]:
    """``open()`` -> a store on the test's PostgreSQL schema (each one like another process's)."""
    opened: list[mk.MemoryStore] = []

    def open_() -> mk.MemoryStore:
        opened.append(mk.MemoryStore(url))
        return opened[-1]

    yield open_
    for s in opened:
        s.close()


def run(
    stores: Callable[[], mk.MemoryStore], tmp_path: Path, write: Callable[[mk.MemoryStore], tuple[str, str]]
) -> None:
    """``write(store) -> (target id, query)`` on DuckDB and on PostgreSQL; every PostgreSQL store
    (the writer, one opened before the write, one opened after) sees what DuckDB sees."""
    with mk.MemoryStore() as duck:
        want = view(duck, *write(duck), tmp_path)
    pg, before = stores(), stores()
    before.count()  # opened, index loaded, before the write
    target, query = write(pg)
    for s in (pg, before, stores()):
        assert view(s, target, query, tmp_path) == want


def test_rederived_merge_with_the_same_text_moves_to_the_end(stores, tmp_path: Path) -> None:
    """Erasing a member whose sentence the merge already says re-derives the same text: the merge
    still moves to the end (sync.py applied it in place, keeping its old neighbours)."""

    def write(s: mk.MemoryStore) -> tuple[str, str]:
        texts = [
            "User likes black coffee. Lives in Paris.",
            "User likes black coffee!",
            "User likes black coffee.",
        ]
        ids = [s.add(t, namespace="u", created_at=NOW, now=NOW).id for t in texts]
        merged = s.consolidate("u", now=NOW + H, threshold=0.6, params=COSINE_ONLY)["merged_id"][0]
        for t in OTHERS:
            s.add(t, namespace="u", created_at=NOW, now=NOW + 2 * H)
        before = s.get(merged, namespace="u").content
        s.delete(ids[1], now=NOW + 3 * H)  # "User likes black coffee!" adds nothing to the merged text
        assert s.get(merged, namespace="u").content == before
        return merged, "black coffee Paris"

    run(stores, tmp_path, write)


def test_rederived_merge_takes_a_new_place_in_the_table(stores, tmp_path: Path) -> None:
    """A re-derived merge with a new text: an UPDATE kept its identity rowid on PostgreSQL, so a
    store opened after it (and frames, exports) put it back where the merge was first written."""

    def write(s: mk.MemoryStore) -> tuple[str, str]:
        texts = ["User likes black coffee. Lives in Paris.", "User likes black coffee. Has a cat.",
                 "User likes black coffee."]  # fmt: skip
        ids = [s.add(t, namespace="u", created_at=NOW, now=NOW).id for t in texts]
        merged = s.consolidate("u", now=NOW + H, threshold=0.6, params=COSINE_ONLY)["merged_id"][0]
        for t in OTHERS:
            s.add(t, namespace="u", created_at=NOW, now=NOW + 2 * H)
        before = s.get(merged, namespace="u").content
        s.delete(ids[1], now=NOW + 3 * H)  # re-derived from the two members left
        assert s.get(merged, namespace="u").content != before
        return merged, "black coffee Paris"

    run(stores, tmp_path, write)


def test_overwritten_row_with_the_same_content_moves_to_the_end(stores, tmp_path: Path) -> None:
    """An overwriting import of an unchanged row writes it again at the table's end: the index too
    (sync.py applied the change log's row in place)."""

    def write(s: mk.MemoryStore) -> tuple[str, str]:
        ids = [
            s.add(t, namespace="u", created_at=NOW, now=NOW).id for t in ["User likes black coffee.", *OTHERS]
        ]
        path = tmp_path / f"all{next(_FILES)}.jsonl"
        s.export(path, "u", now=NOW + H)
        head, first, *_ = path.read_text(encoding="utf-8").splitlines()
        header = json.loads(head)
        header["counts"]["memories"] = 1
        one = tmp_path / f"one{next(_FILES)}.jsonl"
        one.write_text(json.dumps(header) + "\n" + first + "\n", encoding="utf-8")
        report = s.import_(one, on_conflict="overwrite", now=NOW + 2 * H)
        assert report["action"].to_list() == ["overwritten"]
        return ids[0], "black coffee"

    run(stores, tmp_path, write)


def test_row_written_again_while_the_index_loads(stores, tmp_path: Path, monkeypatch) -> None:
    """A store reads the rowids, then the index: a row another store writes again in between is
    in the index at its new place, but its noted rowid is the old one. The next look applies that
    write again (and notes the new rowid), so a later change in place (a reinforcement) leaves it there."""
    a = stores()
    ids = [a.add(t, namespace="u", created_at=NOW, now=NOW).id for t in ["User likes black coffee.", *OTHERS]]
    path, one = tmp_path / "all.jsonl", tmp_path / "one.jsonl"
    a.export(path, "u", now=NOW + H)
    head, first, *_ = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(head)
    header["counts"]["memories"] = 1
    one.write_text(json.dumps(header) + "\n" + first + "\n", encoding="utf-8")
    load, hooked = VectorsMixin._load_index, []

    def load_after_a_write(self: mk.MemoryStore) -> None:
        if not hooked:  # once: the other store writes between the two reads
            hooked.append(a.import_(one, on_conflict="overwrite", now=NOW + 2 * H))
        load(self)

    monkeypatch.setattr(VectorsMixin, "_load_index", load_after_a_write)
    b = stores()
    monkeypatch.undo()
    assert hooked[0]["action"].to_list() == ["overwritten"]
    a.add("Carol collects stamps", namespace="u", created_at=NOW, now=NOW + 3 * H)
    b.search("stamps", namespace="u", now=NOW + 3 * H, reinforce=False)  # b applies the change log
    a.search("black coffee", namespace="u", k=1, now=NOW + 4 * H)  # reinforces the overwritten row
    want = view(stores(), ids[0], "black coffee", tmp_path)  # a store opened now: the table order
    assert view(b, ids[0], "black coffee", tmp_path) == want
    assert view(a, ids[0], "black coffee", tmp_path) == want
