"""Pseudonyms of addresses keep their separators (memkit/guard/names.py), and reidentify carries a
store written before that over (memkit/store/identities.py). Runs on DuckDB and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import memkit as mk
from memkit.guard import identity

NOW = datetime(2026, 1, 1, tzinfo=UTC)
JOHN, JOHNS = "john.smith@corp.com", "johnsmith@corp.com"


def test_addresses_that_differ_by_a_dot_are_two_people(store: mk.MemoryStore) -> None:
    """Every separator was dropped before the digest: john.smith@ and johnsmith@ were one identity
    (each read the other's private memories), contact.a.li@ and contact.ali@ one key (the second
    write superseded the first), 10.10.1.1 and 10.1.0.11 one requester."""
    assert identity(JOHN) != identity(JOHNS) and identity("10.10.1.1") != identity("10.1.0.11")
    m = store.add("my salary is 9000", namespace="u", requester=JOHN, access="private", now=NOW)
    assert store.search("salary", namespace="u", requester=JOHNS, now=NOW, reinforce=False).is_empty()
    with pytest.raises(mk.AccessDenied):
        store.get(m.id, namespace="u", requester=JOHNS)
    assert store.get(m.id, namespace="u", requester=JOHN).content == "my salary is 9000"
    store.add("Li A.", namespace="u", key="contact.a.li@corp.com", now=NOW)
    store.add("Ali", namespace="u", key="contact.ali@corp.com", now=NOW + timedelta(seconds=1))
    assert store.read("contact.a.li@corp.com", namespace="u").content == "Li A."
    assert store.frame("u").filter(status="active").height == 3


def _as_before(store: mk.MemoryStore, name: str) -> None:
    """Rewrite ``name``'s pseudonyms as a store written before kept them (what the old code wrote)."""
    old, new = identity(name, legacy=True), identity(name)
    for table, column in (("memories", "owner"), ("memories", "created_by"), ("memories", "key"),
                          ("events", "requester")):  # fmt: skip
        store._run(f"UPDATE {table} SET {column} = replace({column}, ?, ?) WHERE strpos({column}, ?) > 0",
                   [new, old, new])  # fmt: skip
    for memory_id, tags in store._run("SELECT id, tags FROM memories"):
        if any(new in t for t in tags):
            back = [t.replace(new, old) for t in tags]
            store._run("UPDATE memories SET tags = ? WHERE id = ?", [back, memory_id])
    store._load_index()


def _written_before(store: mk.MemoryStore) -> str:
    """A store of John's memories as an older memkit kept them -> the private memory's id."""
    m = store.add("my salary is 9000", namespace="u", requester=JOHN, access="private", now=NOW)
    store.add("call John on Mondays", namespace="u", key=f"contact:{JOHN}", tags=[JOHN], now=NOW)
    _as_before(store, JOHN)
    return m.id


def test_reidentify_gives_a_person_back_what_they_wrote(store: mk.MemoryStore) -> None:
    private = _written_before(store)
    # before: the private memory's owner is the old pseudonym, which John's requester no longer is
    hits = store.search("salary", namespace="u", requester=JOHN, now=NOW, reinforce=False)
    assert private not in hits["id"].to_list()
    assert store.read(f"contact:{JOHN}", namespace="u") is None
    out = store.reidentify([JOHN, "alice", "bob@example.com"], now=NOW + timedelta(hours=1))
    assert out["old"].to_list() == [identity(JOHN, legacy=True), identity("bob@example.com", legacy=True)]
    assert out["new"][0] == identity(JOHN) and out["rows"].to_list()[1] == 0  # bob wrote nothing here
    assert out["rows"][0] == 5  # the salary's owner and creator, its add event's requester; a key; tags
    assert store.get(private, namespace="u", requester=JOHN).content == "my salary is 9000"
    hits = store.search("salary", namespace="u", requester=JOHN, now=NOW, reinforce=False, k=1)
    assert hits["id"].to_list() == [private]
    assert store.read(f"contact:{JOHN}", namespace="u").content == "call John on Mondays"
    assert store.search("John", namespace="u", tags=[JOHN], now=NOW, reinforce=False).height == 1
    log = store.audit()
    assert identity(JOHN, legacy=True) not in set(log["requester"].drop_nulls())
    assert log.filter(op="reidentify").height == 1 and JOHN not in str(log.to_dicts())
    assert store.reidentify([JOHN], now=NOW + timedelta(hours=2))["rows"].to_list() == [0]  # once is enough
    assert store.audit().filter(op="reidentify").height == 1


def test_names_that_shared_a_pseudonym_are_refused(store: mk.MemoryStore) -> None:
    from tests.conftest import snapshot

    _written_before(store)
    before = snapshot(store)
    with pytest.raises(mk.ValidationError, match="names.*cannot be told apart"):
        store.reidentify([JOHN, JOHNS], now=NOW)
    for bad in ("john@x.com", None, ["sk-live-4eC39HqLyjWDarjtT1zdp7dc"], [""]):
        with pytest.raises(mk.ValidationError, match="names"):
            store.reidentify(bad, now=NOW)  # type: ignore[arg-type]
    after = snapshot(store)
    assert before[0] == after[0] and before[1].equals(after[1]) and before[2].equals(after[2])


def test_a_key_held_under_both_pseudonyms_is_refused(store: mk.MemoryStore) -> None:
    from tests.conftest import snapshot

    _written_before(store)
    store.add("call John on Fridays", namespace="u", key=f"contact:{JOHN}", now=NOW + timedelta(hours=1))
    before = snapshot(store)
    with pytest.raises(mk.MemkitError, match="two chains of one key"):
        store.reidentify([JOHN], now=NOW + timedelta(hours=2))
    after = snapshot(store)
    assert before[1].equals(after[1]) and before[2].equals(after[2])


@pytest.mark.duckdb_only("the CLI on a file")
def test_the_cli_reidentifies_a_file(tmp_path, capsys) -> None:
    from memkit.cli import main

    path = str(tmp_path / "old.duckdb")
    with mk.MemoryStore(path) as s:
        private = _written_before(s)
    assert main(["reidentify", "--db", path, JOHN, "alice@example.com"]) == 0
    out = capsys.readouterr().out
    assert f"{identity(JOHN, legacy=True)} -> {identity(JOHN)}: 5 values" in out and JOHN not in out
    assert "1 pseudonyms replaced (2 names)" in out
    with mk.MemoryStore(path) as s:
        assert s.get(private, namespace="u", requester=JOHN).content == "my salary is 9000"
    assert main(["reidentify", "--db", path, "sk-live-4eC39HqLyjWDarjtT1zdp7dc"]) == 2  # a secret: refused
