"""Bad input at the edges a probe found (h182): the adapters, COGX, settings files, the switches and the
messages. Each is a MemkitError whose message names the field (a raw polars, Attribute or Value error
before, or a message naming another field), and a failed call changes nothing."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest
from conftest import NOW, assert_unchanged, snapshot

import memkit as mk
from memkit.guard import screen_many
from memkit.portable import adapters as A
from memkit.portable import cogx

D = timedelta(days=1)
CHAT = [{"role": "user", "content": "I live in Hangzhou"}, {"role": "user", "content": "I like green tea"}]


@pytest.fixture
def held() -> mk.MemoryStore:
    s = mk.MemoryStore()
    s.add("用户住在杭州滨江区", namespace="u", key="addr", requester="alice", now=NOW)
    s.add("用户住在上海浦东", namespace="u", key="addr", requester="bob", now=NOW)  # a conflict
    s.add("I like oolong tea", namespace="u", now=NOW)
    yield s
    s.close()


# ------------------------------------------------------------------------------------ F1 adapters
@pytest.mark.parametrize(
    ("frame", "match"),
    [
        (pl.DataFrame({"content": ["a"]}), "frame: missing columns: namespace"),
        (pl.DataFrame({"namespace": ["u"]}), "frame: missing columns: content"),
        ({"content": ["a"], "namespace": ["u"]}, "frame: must be a polars DataFrame"),
        (pl.DataFrame({"content": ["a"], "namespace": ["u"], "store": ["yes"]}), "frame: column 'store'"),
        (pl.DataFrame({"content": ["a"], "namespace": ["u"], "row": [0]}), "frame: has a column 'row'"),
    ],
)
def test_add_frame_checks_the_frame_first(held: mk.MemoryStore, frame: object, match: str) -> None:
    before = snapshot(held)
    with pytest.raises(mk.ValidationError, match=match):
        A.add_frame(held, frame, now=NOW)  # type: ignore[arg-type]
    assert_unchanged(held, before)


@pytest.mark.parametrize("store", [None, "memories.duckdb", pl.DataFrame()])
def test_add_frame_needs_a_store(store: object) -> None:
    with pytest.raises(mk.ValidationError, match="^store: must be a memkit.MemoryStore"):
        A.add_frame(store, pl.DataFrame({"content": ["a"], "namespace": ["u"]}), now=NOW)


@pytest.mark.parametrize("where", ["x", "ab", b"ab", {"a": 1}, 3, ["line 1"], ["line 1", 2]])
def test_chat_frame_where_is_a_list_of_one_name_a_message(where: object) -> None:
    with pytest.raises(mk.ValidationError, match="^where: "):
        A.chat_frame(CHAT, namespace="u", where=where)  # type: ignore[arg-type]
    assert A.chat_frame(CHAT, namespace="u", where=("line 1", "line 2"))["record"].to_list() == [
        "line 1",
        "line 2",
    ]


def test_mem0_frame_names_its_own_parameters() -> None:
    with pytest.raises(mk.FormatError, match="^data: must be get_all"):
        A.mem0_frame(None)
    with pytest.raises(mk.ValidationError, match="^namespace: must be a str"):
        A.mem0_frame({"results": [{"memory": "Likes tea", "user_id": "alice"}]}, namespace=3)  # type: ignore[arg-type]


def test_import_file_names_a_path_that_is_none(held: mk.MemoryStore) -> None:
    with pytest.raises(mk.ValidationError, match="^path: must be a file path"):
        A.import_file(held, None, "chat", namespace="u")  # type: ignore[arg-type]


def test_write_cogx_checks_its_arguments_before_writing(held: mk.MemoryStore, tmp_path: Path) -> None:
    d = tmp_path / "cx"
    for args, kw, match in [
        ((None, d), {}, "^frame: must be a polars DataFrame"),
        ((pl.DataFrame({"content": ["a"]}), d), {}, "^frame: missing columns: id, namespace"),
        ((held.frame(), None), {}, "^directory: must be a file path"),
        ((held.frame(), d), {"embedder": 3}, "^embedder: must be a str"),
        ((held.frame(), d), {"force": "yes"}, "^force: must be a bool"),
    ]:
        with pytest.raises(mk.ValidationError, match=match):
            cogx.write_cogx(*args, now=NOW, **kw)
        assert not d.exists()
    assert cogx.write_cogx(held.frame(), d, now=NOW)["counts"] == {"memory": 3}


def test_read_cogx_checks_its_arguments(held: mk.MemoryStore, tmp_path: Path) -> None:
    cogx.write_cogx(held.frame(), tmp_path, now=NOW)
    with pytest.raises(mk.ValidationError, match="^directory: must be a file path"):
        cogx.read_cogx(None)  # type: ignore[arg-type]
    with pytest.raises(mk.ValidationError, match="^namespace: must be a str"):
        cogx.read_cogx(tmp_path, namespace=5)  # type: ignore[arg-type]
    assert cogx.read_cogx(tmp_path, namespace="v")["namespace"].unique().to_list() == ["v"]


# ------------------------------------------------------------------------------------ F2 settings
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_a_settings_file_with_a_huge_integer_is_a_format_error(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"s{suffix}"
    digits = "9" * 5000
    path.write_text(
        '{"forget": {"capacity": ' + digits + "}}"
        if suffix == ".json"
        else f"[forget]\ncapacity = {digits}\n",
        encoding="utf-8",
    )
    with pytest.raises(mk.FormatError, match=r"^path: .* is not valid (JSON|TOML): .*4300 digits") as e:
        mk.load_settings(path)
    assert "set_int_max_str_digits" not in str(e.value)  # not advice to change the interpreter


# ------------------------------------------------------------------------------------ F3 switches
def test_switches_are_bools(held: mk.MemoryStore, tmp_path: Path) -> None:
    target = tmp_path / "s.toml"
    with pytest.raises(mk.ValidationError, match="^force: must be a bool, got str"):
        mk.save_settings(target, mk.Settings(), force="yes")  # type: ignore[arg-type]
    assert not target.exists()
    before = snapshot(held)
    frame = pl.DataFrame({"content": ["fresh"], "namespace": ["u"]})
    with pytest.raises(mk.ValidationError, match="^time_order: must be a bool, got str"):
        A.add_frame(held, frame, time_order="y", now=NOW)  # type: ignore[arg-type]
    assert_unchanged(held, before)
    with pytest.raises(mk.ValidationError, match="^pseudonyms: must be a bool"):
        screen_many(["hi"], pseudonyms="no")  # type: ignore[arg-type]
    with pytest.raises(mk.ValidationError, match="^log: must be a bool"):
        mk.views.decay_curves(
            pl.DataFrame({"label": ["a"], "importance": [0.5], "half_life_hours": [2.0]}),
            horizon_hours=5,
            log="y",
        )
    with pytest.raises(mk.ValidationError, match="^force: must be a bool"):  # every file writer's
        mk.outfile.write_file("path", tmp_path / "x.txt", lambda f: f.write("x"), force=1)
    assert not (tmp_path / "x.txt").exists()
    assert mk.errors.check_bool("force", False) is False


# ------------------------------------------------------------------------------------ F4 messages
def test_copy_to_names_target(held: mk.MemoryStore, tmp_path: Path) -> None:
    with pytest.raises(mk.ValidationError, match="^target: .* exists and is not a regular file"):
        held.copy_to(str(tmp_path))


def test_resolve_names_keep(held: mk.MemoryStore) -> None:
    before = snapshot(held)
    with pytest.raises(
        mk.NotFound, match=r"^keep='nope' is not a live \(active or conflict\) version of key"
    ):
        held.resolve("addr", namespace="u", keep="nope", now=NOW + D)
    assert_unchanged(held, before)


def test_a_missing_store_file_names_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.duckdb"
    with pytest.raises(mk.NotFound, match=r"^path '.*nope.duckdb' does not exist"):
        mk.MemoryStore(str(missing), create=False)
    assert not missing.exists()


@pytest.mark.parametrize(
    "returned", ["x", 5, {"code": "X1", "kind": "pii"}, ["x"], [{"code": "X1", "colour": "red"}], [3]]
)
def test_a_detector_returning_no_findings_names_detectors(held: mk.MemoryStore, returned: object) -> None:
    def mine(text: str) -> object:
        return returned

    held.guard = mk.GuardParams(detectors=(mine,))
    before = snapshot(held)
    with pytest.raises(mk.ValidationError, match=r"^GuardParams\.detectors: detector mine returned"):
        held.add("hi there", namespace="u", now=NOW)
    assert_unchanged(held, before)


def test_a_detector_still_may_return_findings_dicts_or_none(held: mk.MemoryStore) -> None:
    for found in (None, [], (f for f in [{"code": "X1", "kind": "pii", "start": 0, "end": 2}])):
        held.guard = mk.GuardParams(detectors=(lambda t, found=found: found,))
        held.add("hi there", namespace="u", now=NOW)

    def broken(text: str) -> list[object]:
        raise RuntimeError("model down")

    held.guard = mk.GuardParams(detectors=(broken,))  # its own error: as before, naming it
    with pytest.raises(mk.MemkitError, match="guard detector broken failed: RuntimeError: model down"):
        held.add("hi again", namespace="u", now=NOW)


# ------------------------------------------------------------------------------------ F5 odd values
@pytest.mark.parametrize("hl", [1e-320, 5e-324, 1e-7, 0.0])
def test_half_life_has_one_lower_bound_everywhere(held: mk.MemoryStore, tmp_path: Path, hl: float) -> None:
    before = snapshot(held)
    match = r"half_life_hours.*: must be >= 1e-06"
    with pytest.raises(mk.ValidationError, match=match):
        held.add("tiny", namespace="u", half_life_hours=hl, now=NOW)
    with pytest.raises(mk.ValidationError, match=match):  # the polars fast path and the row path
        held.add_many(
            pl.DataFrame({"content": ["a", "b"], "half_life_hours": [2.0, hl]}), namespace="u", now=NOW
        )
    assert_unchanged(held, before)
    path = tmp_path / "m.jsonl"
    held.export(path, now=NOW)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = json.dumps(json.loads(lines[1]) | {"half_life_hours": hl})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with mk.MemoryStore() as fresh:
        with pytest.raises(mk.FormatError, match=f"line 2: {match}"):
            fresh.import_(path, now=NOW)
        assert fresh.count() == 0
    with pytest.raises(mk.ValidationError, match=match):  # the evaluation's override, as the store's
        mk.evaluate.rank(None, half_life_hours=hl)  # type: ignore[arg-type]
    assert (
        held.add("short", namespace="u", half_life_hours=mk.params.MIN_HOURS, now=NOW).half_life_hours == 1e-6
    )


@pytest.mark.parametrize("pattern", [".*", "(?i)", "x*", "a|", "^", "(token)?"])
@pytest.mark.parametrize("field", ["extra_secret_patterns", "extra_injection_patterns"])
def test_a_pattern_matching_nothing_is_refused(field: str, pattern: str) -> None:
    with pytest.raises(mk.ValidationError, match=f"^GuardParams.{field}: .* matches the empty string"):
        mk.GuardParams(**{field: (pattern,)})
    assert getattr(mk.GuardParams(**{field: (r"\bACME-\d{6}\b",)}), field) == (r"\bACME-\d{6}\b",)


def test_log_context_detail_is_capped_as_memory_text(held: mk.MemoryStore) -> None:
    before = snapshot(held)
    cap = mk.schema.MAX_CONTENT_CHARS
    with pytest.raises(mk.ValidationError, match="^note: is 10,000,002 characters as JSON"):
        held.log_context([], namespace="u", now=NOW, step="a", note="a" * 10_000_000)
    with pytest.raises(mk.ValidationError, match="^b: "):  # the whole detail counts, naming its longest
        held.log_context([], namespace="u", now=NOW, a="a" * (cap // 2), b="b" * (cap // 2 + 10))
    assert_unchanged(held, before)
    held.log_context([], namespace="u", now=NOW, note="a" * (cap - 20))
