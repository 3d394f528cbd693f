"""memkit.settings: the parameters file (TOML and JSON), strict loading and atomic saving."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tomllib
from pathlib import Path

import pytest

import memkit as mk
from memkit.params import NEVER_REMEMBER
from memkit.settings import FORMAT_VERSION, Settings, load_settings, save_settings

# every section away from its defaults; floats that need all 17 digits to read back bit-equal
TUNED = Settings(
    weights=mk.Weights(
        similarity=0.1 + 0.2, importance=0.05, recency=1 / 3, keyword=0.6, neighbour=0.0, tie=0.0
    ),
    decay=mk.DecayParams(time_scale_hours=72.5, min_strength=0.1, reinforce_step=1e-05),
    keyword=mk.KeywordParams(k1=1.2, b=0.75),
    guard=mk.GuardParams(
        learned=True,
        redact_pii=False,
        injection_threshold=0.7,
        strict_sources=("tool",),
        min_hits=5,
        pii=("email", "card"),
        never_remember=(*NEVER_REMEMBER, '引号"与\\反斜杠', "tab\tand\x7fdel"),
        extra_secret_patterns=(r"sk-[A-Za-z0-9]{20,}\b", r"\d{4}-\d{4}"),
        reviewers=("审核员", "o'brien"),
    ),
    forget=mk.ForgetParams(capacity=120, drop_expired=False, cost_access=2.5),
    merge_threshold=0.875,
    conflict_policy="supersede",
)


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_round_trip_keeps_every_value_exactly(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"memkit{suffix}"
    save_settings(path, TUNED)
    loaded = load_settings(path)
    assert loaded == TUNED
    assert loaded.weights.similarity == 0.30000000000000004  # repr keeps the last bit
    assert loaded.weights.recency == 1 / 3
    assert loaded.guard.never_remember[-2:] == ('引号"与\\反斜杠', "tab\tand\x7fdel")
    assert isinstance(loaded.guard.min_hits, int) and isinstance(loaded.forget.capacity, int)
    assert "密码" in path.read_text(encoding="utf-8")  # Chinese is written as itself, not escaped


def test_default_toml_is_the_documented_file(tmp_path: Path) -> None:
    """The TOML for the defaults: version and scalars first, one table per section, tuples as lists."""
    path = tmp_path / "memkit.toml"
    save_settings(path, Settings())
    text = path.read_text(encoding="utf-8")
    head = 'memkit_settings = 1\nmerge_threshold = 0.85\nconflict_policy = "flag"\n\n[weights]\n'
    assert text.startswith(head)
    assert 'strict_sources = ["tool", "import"]\n' in text and "never_remember = []\n" in text
    assert tomllib.loads(text) == Settings().to_dict()
    assert load_settings(path) == Settings()


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_the_merge_fact_rule_switch_round_trips_and_is_written_only_when_off(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"memkit{suffix}"
    off = dataclasses.replace(TUNED, merge_distinct_facts=False)
    save_settings(path, off)
    assert load_settings(path) == off and load_settings(path).merge_distinct_facts is False
    assert "merge_distinct_facts" in path.read_text(encoding="utf-8")
    save_settings(path, TUNED)  # the default (True) is not written: an older memkit reads the file
    assert "merge_distinct_facts" not in path.read_text(encoding="utf-8")
    assert load_settings(path).merge_distinct_facts is True


def test_json_file_is_the_same_dict(tmp_path: Path) -> None:
    path = tmp_path / "memkit.json"
    save_settings(path, TUNED)
    assert json.loads(path.read_text(encoding="utf-8")) == TUNED.to_dict()
    assert Settings.from_dict(TUNED.to_dict()) == TUNED


def test_defaults_are_the_librarys() -> None:
    s = Settings()
    assert (s.weights, s.decay, s.keyword, s.forget) == (
        mk.Weights(),
        mk.DecayParams(),
        mk.KeywordParams(),
        mk.ForgetParams(),
    )
    assert s.guard == mk.GuardParams()
    assert s.merge_threshold == mk.MergeParams().threshold == 0.85
    assert s.conflict_policy == "flag"


def test_a_file_with_only_weights_takes_defaults_elsewhere(tmp_path: Path) -> None:
    path = tmp_path / "memkit.toml"
    path.write_text("[weights]\nkeyword = 0.5\n", encoding="utf-8")
    assert load_settings(path) == Settings(weights=mk.Weights(keyword=0.5))


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"weights": {"keywrod": 0.5}}, "weights.keywrod"),
        ({"wieghts": {"keyword": 0.5}}, "wieghts"),
        ({"guard": {"judge": "llm"}}, "guard.judge"),
        ({"guard": {"detectors": []}}, "guard.detectors"),
    ],
)
def test_unknown_section_or_field_is_named(data: dict, field: str) -> None:
    with pytest.raises(mk.ValidationError, match=f"^{field}: ") as e:
        Settings.from_dict(data)
    assert e.value.field == field


def test_unknown_field_in_a_toml_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "memkit.toml"
    path.write_text("[decay]\nhalf_life = 3.0\n", encoding="utf-8")
    with pytest.raises(mk.ValidationError, match="^decay.half_life: unknown field; known: time_scale_hours"):
        load_settings(path)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"decay": {"min_strength": 2}}, "decay.min_strength"),
        ({"weights": {"keyword": "0.7"}}, "weights.keyword"),
        ({"weights": {"similarity": 0, "keyword": 0}}, "weights"),
        ({"forget": {"drop_expired": "yes"}}, "forget.drop_expired"),
        ({"forget": {"capacity": 10.5}}, "forget.capacity"),
        ({"guard": {"never_remember": "密码"}}, "guard.never_remember"),
        ({"guard": {"strict_sources": ["email"]}}, "guard.strict_sources"),
        ({"guard": {"extra_secret_patterns": ["(unclosed"]}}, "guard.extra_secret_patterns"),
        ({"keyword": 0.3}, "keyword"),
        ({"merge_threshold": 0.4}, "merge_threshold"),
        ({"merge_threshold": True}, "merge_threshold"),
        ({"merge_distinct_facts": "false"}, "merge_distinct_facts"),
        ({"merge_distinct_facts": 0}, "merge_distinct_facts"),
        ({"conflict_policy": "overwrite"}, "conflict_policy"),
        ([1, 2], "settings"),
    ],
)
def test_bad_value_is_named_section_dot_field(data: object, field: str) -> None:
    with pytest.raises(mk.ValidationError) as e:
        Settings.from_dict(data)
    assert e.value.field == field
    assert str(e.value).startswith(f"{field}: ")


def test_constructor_checks_types_too() -> None:
    with pytest.raises(mk.ValidationError, match="^weights: must be a memkit.Weights, got dict"):
        Settings(weights={"keyword": 1.0})  # type: ignore[arg-type]


@pytest.mark.parametrize("version", [2, FORMAT_VERSION + 10])
def test_a_newer_format_version_is_refused(tmp_path: Path, version: int) -> None:
    path = tmp_path / "memkit.toml"
    path.write_text(f"memkit_settings = {version}\n", encoding="utf-8")
    with pytest.raises(mk.ValidationError, match=f"^memkit_settings: the file is settings format {version}"):
        load_settings(path)


@pytest.mark.parametrize("version", [0, "1", True])
def test_a_bad_format_version_is_refused(version: object) -> None:
    with pytest.raises(mk.ValidationError, match="^memkit_settings: must be a format version"):
        Settings.from_dict({"memkit_settings": version})


@pytest.mark.parametrize("name", ["memkit.yaml", "memkit", "memkit.toml.bak"])
def test_bad_suffix_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(mk.ValidationError, match="^path: must end in .toml or .json"):
        save_settings(tmp_path / name, Settings())
    with pytest.raises(mk.ValidationError, match="^path: "):
        load_settings(tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_suffix_is_case_insensitive(tmp_path: Path) -> None:
    save_settings(tmp_path / "MEMKIT.TOML", TUNED)
    assert load_settings(tmp_path / "MEMKIT.TOML") == TUNED


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_text_that_is_not_the_format_is_a_format_error(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"memkit{suffix}"
    path.write_text("[weights\nkeyword = ", encoding="utf-8")
    with pytest.raises(mk.FormatError, match=f"is not valid {suffix[1:].upper()}"):
        load_settings(path)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"weights": {"keyword": 0.5, "keyword": 0.6}}', "weights.keyword"),  # before: "keyword"
        ('{"weights": {}, "weights": {"keyword": 0.5}}', "weights"),
        ('{"guard": {"reviewers": ["a"]}, "weights": {"tie": 0.1, "tie": 0.1}}', "weights.tie"),
    ],
)
def test_a_repeated_json_key_is_refused_with_its_section(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "memkit.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(mk.ValidationError, match=f"^{field}: appears twice") as e:
        load_settings(path)
    assert e.value.field == field


@pytest.mark.parametrize(
    ("suffix", "text"), [(".toml", "[weights]\nkeyword = 0.5\n"), (".json", '{"weights": {"keyword": 0.5}}')]
)
def test_a_byte_order_mark_is_accepted(tmp_path: Path, suffix: str, text: str) -> None:
    """Windows editors start a UTF-8 file with one; before, TOML's parser refused it obscurely."""
    path = tmp_path / f"memkit{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert load_settings(path).weights.keyword == 0.5
    with mk.MemoryStore(settings=path) as s:
        assert s.weights.keyword == 0.5


def test_a_store_or_the_cli_names_the_settings_file_of_an_error(tmp_path: Path, capsys) -> None:
    """Before: ``settings: weights.similarty: unknown field; ...``, without the file."""
    from memkit.cli import main

    path = tmp_path / "tuned.toml"
    path.write_text("[weights]\nsimilarty = 0.5\n", encoding="utf-8")
    want, where = "settings: weights.similarty: unknown field", f" (settings file '{path}')"
    with pytest.raises(mk.ValidationError, match=f"^{re.escape(want)}.*{re.escape(where)}$") as e:
        mk.MemoryStore(settings=path)
    assert e.value.field == "settings"
    db = tmp_path / "m.duckdb"
    mk.MemoryStore(str(db)).close()
    assert main(["analyze", "--db", str(db), "--settings", str(path)]) == 2
    err = capsys.readouterr().err
    assert want in err and where in err
    with pytest.raises(mk.ValidationError, match=f"^settings: path: cannot read '{re.escape(str(db))}.toml'"):
        mk.MemoryStore(settings=f"{db}.toml")  # about the path itself: named once


@pytest.mark.parametrize("fail", ["fsync", "replace"])
def test_a_failed_save_leaves_the_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: str
) -> None:
    """The failure strikes after the new text went to the temporary file (fsync) or at the rename."""
    path = tmp_path / "memkit.toml"
    save_settings(path, Settings())
    before = path.read_bytes()

    def boom(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, fail, boom)
    with pytest.raises(OSError, match="disk full"):
        save_settings(path, TUNED)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["memkit.toml"]  # no temporary file left behind
    assert load_settings(path) == Settings()


def test_callables_in_the_guard_are_not_saved(tmp_path: Path) -> None:
    guarded = Settings(guard=mk.GuardParams(judge=lambda query, contents: [False] * len(contents)))
    with pytest.raises(mk.ValidationError, match="^guard.judge: callables cannot be saved"):
        save_settings(tmp_path / "memkit.toml", guarded)
    assert list(tmp_path.iterdir()) == []
    plain = dataclasses.replace(guarded, guard=dataclasses.replace(guarded.guard, judge=None))
    save_settings(tmp_path / "memkit.toml", plain)
    assert load_settings(tmp_path / "memkit.toml") == Settings()


def test_toml_strings_round_trip_through_tomllib() -> None:
    """json.dumps gives a TOML basic string, once DEL is escaped (TOML refuses it raw)."""
    from memkit.settings import _toml_value

    for text in ["密码", 'a"b', "c:\\x\\", "\x7f", "\x00\x1f\t\n\r\b\f", "😀", "\u2028", "\x85"]:
        assert tomllib.loads(f"x = {_toml_value(text)}")["x"] == text
    for number in [0.1, 1e-05, 1e16, 5e-324, 100.0, 0.30000000000000004]:
        assert tomllib.loads(f"x = {_toml_value(number)}")["x"] == number


@pytest.mark.parametrize(
    ("suffix", "text"),
    [
        (".toml", "memkit_settings = 1\nx = " + "[" * 100_000 + "]" * 100_000 + "\n"),
        (".json", '{"memkit_settings": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"),
        (".json", '{"memkit_settings": 1, "x": ' + "[" * 900 + "]" * 900 + "}\n"),  # parses; checked
    ],
)
def test_a_deeply_nested_file_is_a_format_error_naming_it(
    tmp_path: Path, suffix: str, text: str, capsys
) -> None:
    """Brackets nested thousands deep: Python's parsers (and the repeated-key check) recursed until a
    RecursionError escaped, a 3,000-line traceback from `memkit analyze --settings deep.toml`."""
    from memkit.cli import main

    path = tmp_path / f"deep{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(mk.ValidationError, match=f"{re.escape(str(path))}") as e:
        load_settings(path)
    assert isinstance(e.value, mk.FormatError) or "unknown section or field" in str(e.value)
    db = tmp_path / "m.duckdb"
    mk.MemoryStore(str(db)).close()
    assert main(["analyze", "--db", str(db), "--settings", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("memkit: ") and str(path) in err
    if len(text) > 100_000:
        assert f"'{path}' is not valid {suffix[1:].upper()}: nested too deeply" in err
