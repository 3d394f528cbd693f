"""memkit/store/settable.py (``unscreened``) + pipeline.py: a write made with the guard, or a part of it,
turned off is told apart in the audit from a screened one (its ``add`` / ``import`` / ``merge`` events say
which parts were off), and a settings file that turns any part off warns when the store opens with it.
The default guard changes no event."""

from __future__ import annotations

import json
import warnings
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TEXT = "call 13812345678, key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
CASES = {  # the [guard] table of a settings file -> what the events record, what the warning names
    "off": ("enabled = false", {"guard": "off"}, r"enabled \(the whole guard\)"),
    "parts": (
        "redact_pii = false\nblock_secrets = false",
        {"unscreened": ["redact_pii", "block_secrets"]},
        "redact_pii, block_secrets",
    ),
    "injection": ("screen_injection = false", {"unscreened": ["screen_injection"]}, "screen_injection"),
}


def _settings(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "memkit.toml"
    path.write_text(f"memkit_settings = 1\n[guard]\n{table}\n", encoding="utf-8")
    return path


def _details(s: mk.MemoryStore, op: str) -> list[dict[str, object]]:
    return [json.loads(d) for d in s.audit(op=op)["detail"]]


def _writes(s: mk.MemoryStore, tmp_path: Path) -> None:
    """An add, a batch, a merge (the two added alike) and an import of the store's own export."""
    s.add("用户喜欢喝美式咖啡", namespace="u", now=NOW)
    batch = pl.DataFrame({"content": ["用户喜欢喝美式咖啡。", "The team meets on Mondays"]})
    s.add_many(batch, namespace="u", now=NOW)
    assert s.consolidate("u", threshold=0.8, now=NOW)["merged_id"].null_count() == 0
    s.export(tmp_path / "u.jsonl", "u", now=NOW)
    s.import_(tmp_path / "u.jsonl", namespace_map={"u": "v"}, on_conflict="new_ids", now=NOW)


@pytest.mark.parametrize("case", list(CASES))
def test_a_settings_file_that_turns_the_guard_off_warns_and_every_write_records_it(
    tmp_path: Path, case: str
) -> None:
    table, recorded, named = CASES[case]
    path = _settings(tmp_path, table)
    with pytest.warns(UserWarning, match=f"guard: {named} turned off by the settings file") as got:
        s = mk.MemoryStore(tmp_path / "m.duckdb", settings=path)
    assert len(got) == 1 and str(path) in str(got[0].message)
    with s:
        _writes(s, tmp_path)
        for op in ("add", "merge", "import"):
            details = _details(s, op)
            assert details and all({k: d[k] for k in recorded} == recorded for d in details), op
        if case != "injection":  # nothing redacted, nothing refused: which is what the events say
            assert s.add(TEXT, namespace="u", now=NOW).content.startswith("call 138")


def test_a_guard_given_in_code_records_it_without_a_warning(tmp_path: Path) -> None:
    """A GuardParams written in code says it where it is written: no warning, the same record."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = mk.MemoryStore(guard=mk.GuardParams(redact_pii=False, pii=()))
    with s:
        s.add(TEXT.split(",")[0], namespace="u", now=NOW)
        assert _details(s, "add") == [
            {"status": "active", "key": None, "version": 1, "unscreened": ["redact_pii"]}
        ]
        s.guard = mk.GuardParams(pii=())  # redaction on, of no type: nothing redacted either
        s.add("the second one", namespace="u", now=NOW)
        assert _details(s, "add")[1]["unscreened"] == ["pii"]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            s.settings = mk.Settings(guard=mk.GuardParams(enabled=False))  # in code: no warning either
        assert not s.guard.enabled


def test_a_settings_file_assigned_later_warns_before_it_changes_anything(tmp_path: Path) -> None:
    """The warning comes before any parameter is set: raised as an error, the store is as it was."""
    path = _settings(tmp_path, "enabled = false")
    with mk.MemoryStore() as s:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(UserWarning, match="turned off by the settings file"):
                s.settings = path
        assert s.guard.enabled and s.settings == mk.Settings()
        with pytest.warns(UserWarning, match="turned off by the settings file"):
            s.settings = path
        assert not s.guard.enabled


def test_the_default_guard_changes_no_event(tmp_path: Path) -> None:
    with mk.MemoryStore() as s:
        _writes(s, tmp_path)
        details = [d for op in ("add", "merge", "import") for d in _details(s, op)]
        assert len(details) == 3 + 1 + 4 and not [d for d in details if {"guard", "unscreened"} & set(d)]
        assert s.settings == mk.Settings()
