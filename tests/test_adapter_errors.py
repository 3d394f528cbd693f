"""Errors of the adapters (``import --from chat|mem0|cogx``) name the file and the record or line,
and a COGX archive's manifest counts are checked (h118 F9). Nothing is written on any of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import NOW

import memkit as mk
from memkit import adapters, cogx


def _file(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _refused(
    store: mk.MemoryStore, path: Path, source: str, match: str, error=mk.ValidationError, **kw
) -> None:
    with pytest.raises(error, match=match):
        adapters.import_file(store, path, source, now=NOW, **kw)
    assert store.count() == 0 and store.audit(op="add").height == 0


LONG = "I like green tea " * 7000  # 119,000 characters: above the content limit


def test_chat_errors_name_the_file_and_the_message(store: mk.MemoryStore, tmp_path: Path) -> None:
    ok, long = json.dumps({"role": "user", "content": "hi"}), json.dumps({"role": "user", "content": LONG})
    jsonl = _file(tmp_path / "chat.jsonl", f"\n{ok}\n{long}\n")  # a blank line 1: lines, not positions
    _refused(store, jsonl, "chat", r"^chat.jsonl: line 3.content: is 119000 characters", namespace="a")
    listed = _file(tmp_path / "chat.json", f"[{ok}, {long}]")
    _refused(store, listed, "chat", r"^chat.json: messages\[1\].content: is 119000", namespace="a")
    secret = _file(
        tmp_path / "s.jsonl",
        f"{ok}\n" + json.dumps({"role": "user", "content": "key sk-abcdefghijklmnopqrstuvwx"}),
    )
    _refused(store, secret, "chat", r"in row 1: .*\(s.jsonl: line 2\)$", mk.WriteRefused, namespace="a")
    bad = _file(tmp_path / "b.jsonl", f"{ok}\n{{oops\n")
    _refused(
        store, bad, "chat", r"^b.jsonl: line 2: json: Expecting property name", mk.FormatError, namespace="a"
    )


@pytest.mark.parametrize("indent", [None, 2])
def test_a_chat_file_that_is_one_object_says_so(store: mk.MemoryStore, tmp_path: Path, indent) -> None:
    """``{"messages": [...]}`` (a request body) was read as JSONL: ``messages[0].role: ... got None``."""
    body = _file(
        tmp_path / "req.json",
        json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]}, indent=indent),
    )
    _refused(
        store, body, "chat", r"^req.json: .*holds 'messages', it is not one: give the list", namespace="a"
    )


def test_mem0_errors_name_the_file_and_the_result(store: mk.MemoryStore, tmp_path: Path) -> None:
    def mem0(*records: dict) -> Path:
        return _file(tmp_path / "mem0.json", json.dumps({"results": list(records)}))

    _refused(store, mem0({"memory": "x", "user_id": "u", "categories": [1, 2]}), "mem0",
             r"^mem0.json: results\[0\].categories: must be a str, got int", mk.FormatError)  # fmt: skip
    _refused(store, mem0({"memory": "x", "user_id": "u"}, {"memory": "y"}), "mem0",
             r"^mem0.json: results\[1\].namespace: no user_id, .*--namespace", mk.FormatError)  # fmt: skip
    _refused(store, mem0({"memory": "x", "user_id": "u"}, {"memory": LONG, "user_id": "u"}), "mem0",
             r"^mem0.json: results\[1\].content: is 119000 characters")  # fmt: skip
    broken = _file(tmp_path / "mem0.json", '{"results": [\n  {"memory": "x",}\n]}')
    _refused(store, broken, "mem0", r"^mem0.json: json: Expecting property name .*line 2", mk.FormatError)
    # the caller's own argument is not the file's fault: not named by it
    _refused(
        store, mem0({"memory": "x", "user_id": "u"}), "mem0", r"^namespace: must be non-empty", namespace=" x"
    )


@pytest.fixture
def archive(store: mk.MemoryStore, tmp_path: Path) -> Path:
    with mk.MemoryStore() as src:
        src.add("likes tea", namespace="u", now=NOW)
        src.add("likes jazz", namespace="u", now=NOW)
        src.export_cogx(tmp_path / "cx", now=NOW)
    return tmp_path / "cx"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def test_a_truncated_cogx_archive_is_refused(store: mk.MemoryStore, archive: Path) -> None:
    """The manifest counts its records; a file cut at a line's end (or missing) imported the rest."""
    memories = archive / "memories.jsonl"
    lines = _lines(memories)
    memories.write_text(lines[0], encoding="utf-8")
    _refused(
        store,
        archive,
        "cogx",
        r"^cx: manifest.counts: says 2 memory records, memories.jsonl has 1",
        mk.FormatError,
    )
    memories.unlink()
    _refused(store, archive, "cogx", r"says 2 memory records, memories.jsonl has 0", mk.FormatError)
    manifest = json.loads((archive / "manifest.json").read_text())
    (archive / "manifest.json").write_text(json.dumps({**manifest, "counts": {"memory": "2"}}))
    _refused(
        store, archive, "cogx", r"^cx: manifest.counts: must be an object of record counts", mk.FormatError
    )
    (archive / "manifest.json").write_text(json.dumps({**manifest, "counts": {"memory": 2}}))
    memories.write_text("".join(lines), encoding="utf-8")
    assert adapters.import_file(store, archive, "cogx", now=NOW)["action"].to_list() == ["added"] * 2


def test_cogx_errors_name_the_file_and_the_line(store: mk.MemoryStore, archive: Path) -> None:
    memories = archive / "memories.jsonl"
    lines = _lines(memories)
    memories.write_text(lines[0] + "{oops\n", encoding="utf-8")
    _refused(store, archive, "cogx", r"^cx: memories.jsonl line 2: json: Expecting", mk.FormatError)
    with pytest.raises(mk.FormatError, match=r"^memories.jsonl line 2: json"):  # the reader alone
        cogx.read_cogx(archive)
    rec = json.loads(lines[1])
    rec["metadata"]["memkit"]["importance"] = 7  # a field memkit restores: checked with the others
    memories.write_text(lines[0] + json.dumps(rec) + "\n", encoding="utf-8")
    _refused(store, archive, "cogx", r"^cx: memories.jsonl line 2.importance: must be <= 1.0")
    del rec["scope"]
    memories.write_text(lines[0] + json.dumps(rec) + "\n", encoding="utf-8")
    _refused(
        store,
        archive,
        "cogx",
        r"memories.jsonl line 2.scope: .*--namespace on the command line",
        mk.FormatError,
    )
    memories.write_text("".join(lines), encoding="utf-8")
    manifest = archive / "manifest.json"
    manifest.write_text(manifest.read_text()[:-2])
    _refused(store, archive, "cogx", r"^cx: manifest.json: json: Expecting", mk.FormatError)
