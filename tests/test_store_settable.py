"""memkit/store/settable.py: a store's parameters assigned after the open are checked as the
constructor checks them; a refused assignment names the attribute and changes nothing. Before, a dict
given for ``store.guard`` was accepted and the next write failed with an AttributeError. What the open
fixes (``path``, ``read_only``, ``index``, ``embedder``) is refused; ``store.settings = ...`` sets every
parameter at once, all or nothing."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

import memkit as mk
from memkit.embed import HashEmbedder
from memkit.portable.sample import SAMPLE_NOW, load_into

NOW = datetime(2026, 1, 1, tzinfo=UTC)
WRONG = {
    "guard": {"extra_secret_patterns": ("ACME-[0-9]{6}",)},
    "decay": {"min_strength": 0.1},
    "keyword": None,
    "weights": mk.DecayParams(),
    "forget_policy": "weak",
    "merge_threshold": 0.4,
    "merge_distinct_facts": "no",
    "conflict_policy": "overwrite",
}


@pytest.mark.parametrize("name", list(WRONG))
def test_a_wrong_parameter_is_refused_naming_it_and_changes_nothing(name: str) -> None:
    with mk.MemoryStore() as s:
        before = s.settings
        with pytest.raises(mk.ValidationError, match=f"^{name}: ") as e:
            setattr(s, name, WRONG[name])
        assert e.value.field == name
        assert s.settings == before
        assert s.add("hello there", namespace="u", now=NOW).status == "active"  # the store still writes


def test_a_right_parameter_is_taken() -> None:
    acme = mk.GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",))
    with mk.MemoryStore() as s:
        s.guard, s.merge_threshold, s.conflict_policy = acme, 0.9, "supersede"
        s.weights = dataclasses.replace(s.weights, keyword=0.5)
        assert (s.guard, s.merge_threshold, s.conflict_policy, s.weights.keyword) == (
            acme,
            0.9,
            "supersede",
            0.5,
        )
        with pytest.raises(mk.WriteRefused):  # the new guard is the one that screens
            s.add("the code is ACME-123456", namespace="u", now=NOW)


# ---------------------------------------------------------------------- what the open fixes
class _Other:
    """Another "model" of the same dimension: the hash embedder's vectors, permuted."""

    name, dim, version = "other-384", 384, "1"
    order = np.random.default_rng(0).permutation(384)

    def embed(self, texts: list[str]) -> np.ndarray:
        return HashEmbedder().embed(texts)[:, self.order]


def test_another_embedder_is_refused_on_an_open_store_and_reembed_is_the_way(tmp_path: Path) -> None:
    """Before: accepted; the next add wrote _Other's vector into a file recording the hash embedder,
    which reopened healthy, and a search for that exact text scored -0.057."""
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("the user drinks green tea", namespace="u", now=NOW)
        with pytest.raises(mk.ValidationError, match=r"^embedder: .*store\.reembed\(embedder\)") as e:
            s.embedder = _Other()
        assert e.value.field == "embedder" and s.embedder.name == HashEmbedder().name
        s.embedder = HashEmbedder()  # the same model again (name and dim): harmless, taken
        s.add("the user drinks black coffee", namespace="u", now=NOW)
    with mk.MemoryStore(path) as s:
        hit = s.search("the user drinks black coffee", namespace="u", k=1, now=NOW, reinforce=False)
        assert hit["content"][0] == "the user drinks black coffee" and hit["similarity"][0] > 0.99
        assert s.reembed(_Other()) == 2  # the one way to another embedder, through the store
        assert s.embedder.name == "other-384"
        assert s.search("black coffee", namespace="u", k=1, now=NOW, reinforce=False)["content"][0] == (
            "the user drinks black coffee"
        )


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("read_only", False, "reopen it with read_only="),
        ("path", "other.duckdb", "open another MemoryStore"),
        ("index", "int8", "reopen it with index="),
    ],
)
def test_an_attribute_fixed_at_open_is_refused_naming_it(
    tmp_path: Path, name: str, value: object, match: str
) -> None:
    """Before: ``store.read_only = False`` was taken, and the next add raised DuckDB's own error."""
    path = tmp_path / "m.duckdb"
    with mk.MemoryStore(str(path)) as s:
        s.add("hello there", namespace="u", now=NOW)
    with mk.MemoryStore(str(path), read_only=True) as s:
        before = (s.path, s.read_only, s.index)
        with pytest.raises(mk.ValidationError, match=f"^{name}: is fixed when the store opens.*{match}"):
            setattr(s, name, value)
        assert (s.path, s.read_only, s.index) == before
        setattr(s, name, getattr(s, name))  # the same value again changes nothing: taken
        with pytest.raises(mk.MemkitError):  # still the store's own refusal, not DuckDB's
            s.add("another", namespace="u", now=NOW)
        assert s.count() == 1


def test_compact_on_erase_may_be_assigned_a_bool_only() -> None:
    with mk.MemoryStore() as s:
        with pytest.raises(mk.ValidationError, match="^compact_on_erase: must be a bool"):
            s.compact_on_erase = "no"  # truthy: it would have kept compacting
        assert s.compact_on_erase is True
        s.compact_on_erase = False
        assert s.compact_on_erase is False


# --------------------------------------------------------------------- store.settings = ...
TUNED = mk.Settings(
    weights=mk.Weights(similarity=0.5, importance=0.2, recency=0.15, keyword=0.4, neighbour=0.3, tie=0.05),
    decay=mk.DecayParams(time_scale_hours=48.0, min_strength=0.05, reinforce_step=0.01),
    keyword=mk.KeywordParams(k1=1.2, b=0.75),
    guard=mk.GuardParams(never_remember=("lottery",), reviewers=("admin",)),
    forget=mk.ForgetParams(capacity=50, min_strength=0.2),
    merge_threshold=0.9,
    conflict_policy="supersede",
)
QUERIES = ["用户住在哪里", "what does the user drink", "对什么过敏", "where does the user work"]


def _answers(store: mk.MemoryStore) -> dict[str, list[tuple[str, float]]]:
    load_into(store)
    return {
        q: store.search(q, namespace="user_87", k=5, now=SAMPLE_NOW, reinforce=False)
        .select("content", "score")
        .rows()
        for q in QUERIES
    }


@pytest.mark.parametrize("as_file", [False, True])
def test_assigned_settings_rank_as_a_store_opened_with_them(tmp_path: Path, as_file: bool) -> None:
    """Before: AttributeError (a property without a setter)."""
    given: object = TUNED
    if as_file:
        given = tmp_path / "memkit.toml"
        mk.save_settings(given, TUNED)
    with mk.MemoryStore(settings=TUNED) as opened, mk.MemoryStore() as assigned:
        assigned.settings = given
        assert assigned.settings == TUNED
        want, got = _answers(opened), _answers(assigned)
    assert got == want and want != {}
    with mk.MemoryStore() as untuned:
        assert _answers(untuned) != want  # the settings matter to these queries


def test_a_bad_settings_assignment_changes_nothing(tmp_path: Path) -> None:
    forged = dataclasses.replace(TUNED)
    object.__setattr__(forged, "merge_threshold", 0.4)  # past the Settings' own check
    bad_file = tmp_path / "bad.toml"
    bad_file.write_text("conflict_policy = 'supersede'\n[weights]\nsimilarty = 0.5\n", encoding="utf-8")
    with mk.MemoryStore() as s:
        before = s.settings
        with pytest.raises(mk.ValidationError, match="^merge_threshold: must be >= 0.5"):
            s.settings = forged  # the threshold is checked after weights, decay, ...: none was set
        bad = r"^settings: weights.similarty: .* \(settings file .*bad.toml'\)$"  # (before: file named first)
        with pytest.raises(mk.ValidationError, match=bad):
            s.settings = bad_file
        with pytest.raises(mk.ValidationError, match="^settings: must be a memkit.Settings"):
            s.settings = TUNED.to_dict()
        assert s.settings == before


def test_settings_of_a_default_store_name_no_embedder_and_apply_anywhere_silently() -> None:
    """Review (helper 114): ``store.settings`` named ``embedder="hash"`` for a default store, so it no
    longer equalled ``mk.Settings()`` and applying it to a store of another embedder warned (an error
    under ``-W error``). The default embedder is not named; a model's is."""
    with mk.MemoryStore() as a, mk.MemoryStore(embedder=HashEmbedder(dim=64)) as b:
        assert a.settings == mk.Settings()
        b.settings = a.settings  # no warning (the suite runs with filterwarnings=error)
        with mk.MemoryStore(embedder=HashEmbedder(dim=64), settings=a.settings) as c:
            assert c.settings.embedder == "hash:64"
