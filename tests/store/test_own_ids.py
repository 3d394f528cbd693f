"""memkit/store/names.py and memkit/portable/ids.py: a store pattern that matches memkit's own ids does
not break the store. The ids memkit mints (16 lowercase hex digits) are judged by the built-in secret
rules only, so ``log_context`` (an agent's every turn) and the re-import of the store's own export work
under ``extra_secret_patterns=(r"\\b[0-9a-f]{16}\\b",)``; an id of any other shape that the pattern
matches is still refused, as before."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

import memkit as mk
from memkit.portable.rows import new_ids

NOW = datetime(2026, 1, 1, tzinfo=UTC)
HEX = mk.GuardParams(extra_secret_patterns=(r"\b[0-9a-f]{16}\b",))
PATTERNS = [  # patterns that hold every (or, by chance, many of) memkit's ids
    pytest.param(HEX, id="hex16"),
    pytest.param(mk.GuardParams(extra_secret_patterns=(r"(?i)[0-9a-f]{16}",)), id="any-case"),
    pytest.param(mk.GuardParams(extra_secret_patterns=(r"[0-9]{6}",)), id="digits"),
]
DIGITS_ID = "1234567890abcdef"  # memkit's shape, holding the digits pattern (one id in four does)


def test_the_ids_memkit_mints_have_its_own_shape() -> None:
    from memkit.portable.ids import own_id

    ids = new_ids(2000)
    assert all(map(own_id, ids))
    with mk.MemoryStore() as s:
        assert own_id(s.add("User likes tea", namespace="u", now=NOW).id)
    for other in ("9F3AD0C4E1B27A65", "9f3ad0c4e1b27a6", "9f3ad0c4e1b27a65f", "mem-9f3ad0c4e1b27a65",
                  "123e4567-e89b-12d3-a456-426614174000", "9f3ad0c4e1b27a6g"):  # fmt: skip
        assert not own_id(other), other


@pytest.mark.parametrize("guard", PATTERNS)
def test_log_context_names_the_stores_own_ids_under_a_pattern_that_matches_them(guard) -> None:
    with mk.MemoryStore(guard=guard) as s:
        ids = [s.add(f"User likes tea {i}", namespace="u", now=NOW).id for i in range(3)]
        # the operator's event names every id as given (a requester's, only memories it may read)
        s.log_context([*ids, DIGITS_ID], namespace="u", now=NOW)
        event = s.audit(op="context").row(0, named=True)
        assert json.loads(event["detail"])["ids"] == [*ids, DIGITS_ID]


def test_an_id_of_another_shape_the_pattern_matches_is_still_refused() -> None:
    with mk.MemoryStore(guard=HEX) as s:
        m = s.add("User likes tea", namespace="u", now=NOW)
        events = s.audit().height
        for other in (f"mem-{m.id}", f"{m.id}.x"):
            with pytest.raises(mk.ValidationError, match="^ids: holds something that looks like a secret"):
                s.log_context([m.id, other], namespace="u", now=NOW)
        with pytest.raises(mk.ValidationError, match="^ids: holds"):  # the built-in rules, for any id
            s.log_context([m.id, "sk-live-4eC39HqLyjWDarjtT1zdp7dc"], namespace="u", now=NOW)
        assert s.audit().height == events  # nothing logged
    upper = mk.GuardParams(extra_secret_patterns=(r"(?i)\b[0-9a-f]{16}\b",))
    with mk.MemoryStore(guard=upper) as s:  # upper case is not memkit's shape: judged
        with pytest.raises(mk.ValidationError, match="^ids: holds"):
            s.log_context(["9F3AD0C4E1B27A65"], namespace="u", now=NOW)


@pytest.mark.parametrize("guard", PATTERNS)
def test_the_stores_own_export_imports_again_under_the_pattern(guard, tmp_path: Path) -> None:
    with mk.MemoryStore(guard=guard) as s:
        s.add("User lives in Hangzhou", namespace="u", key="city", now=NOW)
        s.add("User lives in Shanghai", namespace="u", key="city", conflict_policy="supersede", now=NOW)
        s.add_many(pl.DataFrame({"content": [f"note {i}" for i in range(20)]}), namespace="u", now=NOW)
        s.log_context(s.frame("u")["id"].to_list()[:3], namespace="u", now=NOW)
        path = tmp_path / "u.jsonl"
        s.export(path, namespace="u", include_events=True)
        again = s.import_(path, on_conflict="skip")  # the store's own export, into itself
        assert set(again["action"]) == {"skipped"}
        with mk.MemoryStore(guard=guard) as t:  # and into a new store of the same rules
            report = t.import_(path)
            assert set(report["action"]) == {"added"}
            cols = ["id", "key", "status", "version", "supersedes", "content"]
            assert t.frame("u").select(cols).sort("id").rows() == s.frame("u").select(cols).sort("id").rows()


def test_an_imported_id_of_another_shape_the_pattern_matches_is_still_refused(tmp_path: Path) -> None:
    with mk.MemoryStore() as s:  # written without the pattern
        s.add("User lives in Hangzhou", namespace="u", key="city", now=NOW)
        s.add("User lives in Shanghai", namespace="u", key="city", conflict_policy="supersede", now=NOW)
        path = tmp_path / "u.jsonl"
        s.export(path, namespace="u")
    lines = path.read_text(encoding="utf-8").splitlines()
    # version 1 on line 2, its successor on line 3 (the export orders rows written at one instant by
    # write order; a test names lines, so it fixes them itself)
    lines[1:] = sorted(lines[1:], key=lambda x: json.loads(x).get("supersedes") is not None)
    first = json.loads(lines[1])["id"]
    assert json.loads(lines[2])["supersedes"] == first
    for field, other in (("id", f"mem-{first}"), ("supersedes", f"mem-{first}"), ("id", first.upper())):
        if other == first:  # (an id without a letter, 1 in ~1,800: upper-casing changes nothing)
            continue
        line = 2 if field == "id" else 3  # the first line naming it: the version, or its successor
        edited = [*lines[: line - 1], *(x.replace(first, other) for x in lines[line - 1 :])]
        bad = tmp_path / "bad.jsonl"
        bad.write_text("\n".join(edited) + "\n", encoding="utf-8")
        guard = mk.GuardParams(extra_secret_patterns=(r"(?i)\b[0-9a-f]{16}\b",))
        with mk.MemoryStore(guard=guard) as t:
            with pytest.raises(mk.FormatError, match=f"^line {line}: {field}: holds something"):
                t.import_(bad)
            assert (t.count(), t.audit().height) == (0, 0)
        if field == "id":  # without the pattern the same file imports (the id is an identifier)
            with mk.MemoryStore() as t:
                assert t.import_(bad).height == 2


def test_an_agent_works_under_a_pattern_that_matches_its_ids() -> None:
    """The symptom: every turn's ``log_context`` was refused, so the agent could not answer at all."""
    with mk.MemoryStore(guard=HEX) as s:
        m = s.add("User drinks oolong tea", namespace="u", requester="assistant", now=NOW)
        agent = mk.MemoryAgent(s, mk.agent.ScriptedLLM(["Oolong tea."]), namespace="u", requester="assistant",
                               now=NOW)  # fmt: skip
        reply = agent.chat("What tea do I drink?")
        assert reply.text == "Oolong tea." and m.id in reply.context.ids
        assert m.id in json.loads(s.audit(op="context")["detail"][0])["ids"]
