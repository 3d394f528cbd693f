"""Every JSONL reader splits lines on "\\n" only (memkit.portable.lines, h118 F15): a text holding
U+2028, U+2029 or U+0085 (JSON allows them raw; ``json.dumps(ensure_ascii=False)`` writes them so)
was cut in two by ``str.splitlines``, and a valid chat log was refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import NOW

import memkit as mk
from memkit import adapters, cogx
from memkit.portable.sample import load_sample

BREAKS = ["\u2028", "\u2029", "\u0085"]  # what str.splitlines splits on and JSON keeps raw in a string
TEXTS = [f"I live in Berlin{b}and I like jazz" for b in BREAKS]


def _jsonl(path: Path, records: list[dict], end: str = "\n") -> Path:
    path.write_bytes("".join(json.dumps(r, ensure_ascii=False) + end for r in records).encode("utf-8"))
    return path


def test_numbered_splits_on_newline_only() -> None:
    from memkit.portable.lines import numbered  # (here: the other tests also run on a memkit without it)

    data = "a\u2028b\u0085c\r\nd\u2029e\nlast".encode()
    assert list(numbered(data)) == [(1, "a\u2028b\u0085c", True), (2, "d\u2029e", True), (3, "last", False)]
    with pytest.raises(mk.FormatError, match=r"x.jsonl line 2: line: is not valid UTF-8 \(byte 1"):
        list(numbered(b"ok\na\xffb\n", file="x.jsonl"))


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_a_chat_log_whose_texts_hold_unicode_line_breaks_imports(
    store: mk.MemoryStore, tmp_path: Path, end: str
) -> None:
    path = _jsonl(tmp_path / "chat.jsonl", [{"role": "user", "content": t} for t in TEXTS], end)
    report = adapters.import_file(store, path, "chat", namespace="a", now=NOW)
    assert report["action"].to_list() == ["added"] * 3
    assert sorted(store.frame("a")["content"]) == sorted(TEXTS)


def test_a_chat_log_names_the_right_line_after_such_a_text(store: mk.MemoryStore, tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "chat.jsonl", [{"role": "user", "content": TEXTS[0]}, {"role": "robot"}])
    with pytest.raises(mk.FormatError, match=r"^chat.jsonl: line 2.role: must be one of"):
        adapters.import_file(store, path, "chat", namespace="a", now=NOW)
    assert store.count() == 0


def test_a_cogx_archive_whose_texts_hold_them_imports(store: mk.MemoryStore, tmp_path: Path) -> None:
    d = tmp_path / "cx"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps({"cogx_version": "0.1", "counts": {"memory": 3}}))
    recs = [
        {"kind": "memory", "external_id": f"m{i}", "content": t, "scope": {"user_id": "u"}}
        for i, t in enumerate(TEXTS)
    ]
    _jsonl(d / "memories.jsonl", recs)
    assert cogx.read_cogx(d)["content"].to_list() == TEXTS


def test_memkits_own_file_keeps_them(store: mk.MemoryStore, tmp_path: Path) -> None:
    for t in TEXTS:
        store.add(t, namespace="u", now=NOW)
    store.export(tmp_path / "a.jsonl", include_embeddings=True, now=NOW)
    assert len((tmp_path / "a.jsonl").read_bytes().split(b"\n")) == 5  # header, 3 lines, the final \n
    with mk.MemoryStore() as dst:
        dst.import_(tmp_path / "a.jsonl", now=NOW)
        assert dst.frame().equals(store.frame())


def test_the_sample_loader_keeps_them(tmp_path: Path) -> None:
    recs = [{"namespace": "u", "content": t, "created_at": "2026-01-01T00:00:00+00:00"} for t in TEXTS]
    assert load_sample(_jsonl(tmp_path / "s.jsonl", recs))["content"].to_list() == TEXTS
