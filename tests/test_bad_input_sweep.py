"""Bad input found by a fuzz sweep of the public API (13,660 calls): each case raised something that
was not a MemkitError, took a bad value silently, or changed the store before failing. Every case
here is a ValidationError naming its field, and the store is as it was."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import NOW, assert_unchanged, snapshot

import memkit as mk
from memkit.agent.context import build_context


@pytest.fixture
def store() -> mk.MemoryStore:
    s = mk.MemoryStore()
    s.add("User likes oolong tea", namespace="u", key="drink", now=NOW)
    s.add("User lives in Hangzhou", namespace="u", now=NOW)
    return s


def _ids(s: mk.MemoryStore) -> list[str]:
    return s.frame("u")["id"].to_list()


CASES: dict[str, tuple[str, Callable[[mk.MemoryStore], Any]]] = {
    # a value compared with a list of choices: an array's == is elementwise and ambiguous
    "layer array": ("layer", lambda s: s.add("x", namespace="u", layer=np.array([1, 2]), now=NOW)),
    "kind series": ("kind", lambda s: s.add("x", namespace="u", kind=pl.Series(["fact"]), now=NOW)),
    "audit op array": ("op", lambda s: s.audit(op=np.array(["add"]))),
    # an explicit conflict policy is checked, never replaced by the store's when it is falsy
    "policy False": (
        "conflict_policy",
        lambda s: s.add("x", namespace="u", key="drink", conflict_policy=False),
    ),
    "policy empty": (
        "conflict_policy",
        lambda s: s.add_many(pl.DataFrame({"content": ["x"]}), namespace="u", conflict_policy="", now=NOW),
    ),
    "ids None": ("ids", lambda s: s.neighbours(None, namespace="u")),
    "ids a str": ("ids", lambda s: s.neighbours("abc", namespace="u")),
    "texts None": ("texts", lambda s: s.screen(None, namespace="u")),
    "texts a str": ("texts", lambda s: s.screen("hello", namespace="u")),
    "stale_days huge": ("stale_days", lambda s: s.analyze("u", now=NOW, stale_days=1e308)),
    "tags 0-d array": ("tags", lambda s: s.add("x", namespace="u", tags=np.array(3), now=NOW)),
    "tags a dict": ("tags", lambda s: s.add("x", namespace="u", tags={"a": 1}, now=NOW)),
    "detail surrogate": ("detail", lambda s: s.log_context(_ids(s), namespace="u", now=NOW, note="\ud800")),
    "detail NaN": ("detail", lambda s: s.log_context(_ids(s), namespace="u", now=NOW, note=float("nan"))),
    "detail too deep": (
        "detail",
        lambda s: s.log_context(_ids(s), namespace="u", now=NOW, note=_nested(5000)),
    ),
    "export long name": ("path", lambda s: s.export("x" * 300, "u", now=NOW)),
    "export NUL": ("path", lambda s: s.export("a\x00b.jsonl", "u", now=NOW)),
    "export surrogate": ("path", lambda s: s.export("\ud800.jsonl", "u", now=NOW)),
    "import None": ("path", lambda s: s.import_(None, now=NOW)),
    "import NUL": ("path", lambda s: s.import_("a\x00b.jsonl", now=NOW)),
    "namespace_map to a secret": (
        "namespace_map",
        lambda s: s.import_("unused.jsonl", namespace_map={"u": "team-AKIAIOSFODNN7EXAMPLE"}, now=NOW),
    ),
    "reembed dim True": ("embedder.dim", lambda s: s.reembed(_embedder(True))),
    "reembed dim 0": ("embedder.dim", lambda s: s.reembed(_embedder(0))),
    "reembed batch 0": ("batch_size", lambda s: s.reembed(batch_size=0)),
    "reembed batch None": ("batch_size", lambda s: s.reembed(batch_size=None)),
    "reembed batch True": ("batch_size", lambda s: s.reembed(batch_size=True)),
    "embedding overflow": (
        "embedding",
        lambda s: s.add_many(
            pl.DataFrame({"content": ["x"], "embedding": [[3e38] * 384]}), namespace="u", now=NOW
        ),
    ),
}


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def _embedder(dim: Any) -> Any:
    class Bad:
        name = "bad"

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 1), np.float32)

    bad = Bad()
    bad.dim = dim  # type: ignore[attr-defined]
    return bad


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_names_its_field_and_changes_nothing(store: mk.MemoryStore, case: str) -> None:
    field, call = CASES[case]
    before = snapshot(store)
    with pytest.raises(mk.ValidationError, match=f"^{field}: "):
        call(store)
    assert_unchanged(store, before)
    assert store.search("oolong tea", namespace="u", now=NOW)["content"][0] == "User likes oolong tea"


def test_a_closed_stores_neighbours_and_compaction_are_refused(store: mk.MemoryStore, tmp_path: Path) -> None:
    ids = _ids(store)
    store.close()
    with pytest.raises(mk.MemkitError, match="closed"):
        store.neighbours(ids, namespace="u")
    with mk.MemoryStore(str(tmp_path / "m.duckdb")) as s:
        s.add("x", namespace="u", now=NOW)
    with pytest.raises(mk.MemkitError, match="closed"):
        s.compact()


@pytest.mark.parametrize("path", ["   ", "x" * 300, "a\x00b.duckdb"])
def test_a_store_path_the_file_system_cannot_take_is_refused(path: str, tmp_path: Path) -> None:
    with pytest.raises(mk.ValidationError, match="^path: "):
        mk.MemoryStore(str(tmp_path / path) if path.strip() else path)


def test_settings_files_that_cannot_be_read_or_written_name_the_path(tmp_path: Path) -> None:
    for call in (
        lambda: mk.load_settings(tmp_path / "missing.toml"),
        lambda: mk.load_settings(None),
        lambda: mk.save_settings(tmp_path / "no" / "such" / "folder.toml", mk.Settings()),
        lambda: mk.save_settings(None, mk.Settings()),
    ):
        with pytest.raises(mk.ValidationError, match="^path: "):
            call()
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


def test_the_agents_prompt_checks_its_arguments(store: mk.MemoryStore) -> None:
    agent = mk.MemoryAgent(store, lambda prompt: "ok", namespace="u", requester="assistant", now=NOW)
    context = build_context(store.search("tea", namespace="u", now=NOW))
    assert "oolong" in agent.prompt("what do I drink?", context)
    with pytest.raises(mk.ValidationError, match="^message: "):
        agent.prompt(None, context)
    with pytest.raises(mk.ValidationError, match="^context: "):
        agent.prompt("what do I drink?", None)


@pytest.mark.parametrize("name", [" team-AKIAIOSFODNN7EXAMPLE", "team-AKIAIOSFODNN7EXAMPLE\u200b"])
def test_a_refused_name_is_not_quoted_back(store: mk.MemoryStore, name: str) -> None:
    """An error message reaches logs and terminals, and a name may hold a key."""
    with pytest.raises(mk.ValidationError, match="^namespace: ") as err:
        store.search("tea", namespace=name, now=NOW)
    assert "AKIA" not in str(err.value)


def test_lists_may_come_as_numpy_arrays_or_series(store: mk.MemoryStore) -> None:
    ids = _ids(store)
    assert store.neighbours(np.array(ids), namespace="u")["id"].to_list() == ids
    assert store.screen(pl.Series(["hello", "my password is hunter22"]), namespace="u")[
        "action"
    ].to_list() == [
        "store",
        "refuse",
    ]
    assert store.reembed(batch_size=np.int64(1)) == 2


def test_a_pipe_is_never_opened_as_a_store_or_settings(tmp_path: Path) -> None:
    """Opening a pipe waits for a writer: it is refused before anything opens it."""
    for name in ("m.duckdb", "memkit.toml"):
        os.mkfifo(tmp_path / name)
    with pytest.raises(mk.ValidationError, match="^path: .*not a regular file"):
        mk.MemoryStore(str(tmp_path / "m.duckdb"))
    with pytest.raises(mk.ValidationError, match="^path: .*not a regular file"):
        mk.load_settings(tmp_path / "memkit.toml")
    with pytest.raises(mk.ValidationError, match="^path: .*longer than a file system takes"):
        mk.MemoryStore(str(tmp_path / "/".join(["d" * 250] * 20)))


def test_errors_name_the_argument_the_caller_gave(store: mk.MemoryStore, tmp_path: Path) -> None:
    class NaNs:
        name, dim = "nans", 384

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.full((len(texts), 384), np.nan, np.float32)

    before = snapshot(store)
    with pytest.raises(mk.ValidationError, match="^embedder: contains NaN"):
        store.reembed(NaNs())
    assert_unchanged(store, before)
    with pytest.raises(mk.ValidationError, match="^settings: path: "):
        mk.MemoryStore(settings=" u ")
    closed = mk.MemoryStore()
    closed.close()
    with pytest.raises(mk.ValidationError, match="^target: .* is closed"):
        store.copy_to(closed)
