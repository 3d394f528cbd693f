"""Pseudonyms of addresses keep their separators and are 96 bits long (memkit/guard/names.py), a
requester holding an older one is refused, and reidentify carries a store written before over
(memkit/store/identities.py). Runs on DuckDB and PostgreSQL.

``fixtures/pseudonyms_before_96_bits.duckdb.gz`` was written by memkit before 96-bit pseudonyms (the
commit before them), as ``A``, ``B`` (two phone numbers that shared a 32-bit one), ``C`` and
``ALICE`` each wrote a private memory and carol a public one keyed ``contact.<C>``, tagged ``C``."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from conftest import assert_unchanged, snapshot

import memkit as mk
from memkit.guard import identity

NOW = datetime(2026, 1, 1, tzinfo=UTC)
JOHN, JOHNS = "john.smith@corp.com", "johnsmith@corp.com"
A, B, C, ALICE = "13800006144", "13800033646", "13912345678", "alice@example.com"
FIXTURE = Path(__file__).parents[1] / "fixtures" / "pseudonyms_before_96_bits.duckdb.gz"


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
    olds = [identity(n, form=f) for n in (JOHN, "bob@example.com") for f in ("legacy", "short")]
    assert out["old"].to_list() == olds  # each older form of each address, carried to today's
    assert out["new"][0] == identity(JOHN) and out["rows"].to_list()[1:] == [0, 0, 0]  # bob wrote nothing
    assert out["rows"][0] == 5  # the salary's owner and creator, its add event's requester; a key; tags
    assert store.get(private, namespace="u", requester=JOHN).content == "my salary is 9000"
    hits = store.search("salary", namespace="u", requester=JOHN, now=NOW, reinforce=False, k=1)
    assert hits["id"].to_list() == [private]
    assert store.read(f"contact:{JOHN}", namespace="u").content == "call John on Mondays"
    assert store.search("John", namespace="u", tags=[JOHN], now=NOW, reinforce=False).height == 1
    log = store.audit()
    assert identity(JOHN, legacy=True) not in set(log["requester"].drop_nulls())
    assert log.filter(op="reidentify").height == 1 and JOHN not in str(log.to_dicts())
    again = store.reidentify([JOHN], now=NOW + timedelta(hours=2))
    assert again["rows"].to_list() == [0, 0]  # once is enough
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


# ------------------------------------------------------------------------------ 96-bit pseudonyms
def test_two_phone_numbers_that_shared_a_pseudonym_are_two_people(store: mk.MemoryStore) -> None:
    """Audit (helper 108, r1): a number's pseudonym was 32 bits, so among ~33k numbers two share one
    (A and B, found in 0.6 s): B read A's private memories, and ``contact.<A>`` and ``contact.<B>``
    were one key. Identities and names now carry 96 bits (24 hex)."""
    assert identity(A) != identity(B) and len(identity(A)) == len("[PHONE:]") + 24
    diary = store.add("A's diary: I am seeing a therapist", namespace="u", requester=A, access="private",
                      now=NOW)  # fmt: skip
    assert store.search("diary therapist", namespace="u", requester=B, now=NOW, reinforce=False).is_empty()
    assert store.frame("u", requester=B).is_empty()
    with pytest.raises(mk.AccessDenied):
        store.get(diary.id, namespace="u", requester=B)
    assert store.get(diary.id, namespace="u", requester=A).content == diary.content
    store.add("A's number", namespace="u", key=f"contact.{A}", now=NOW)
    store.add("B's number", namespace="u", key=f"contact.{B}", now=NOW + timedelta(seconds=1))
    assert store.read(f"contact.{A}", namespace="u").content == "A's number"
    assert store.frame("u").filter(status="active").height == 3
    assert identity(A, form="short") == identity(B, form="short") == "[PHONE:b2b806ff]"  # as they were


def test_an_identity_given_again_is_itself(store: mk.MemoryStore) -> None:
    """An identity handed on as a requester (the agent does, and so may an application that keeps
    ``created_by``) maps to itself, also when its digest holds digits that read as a phone number
    (one 96-bit digest in ~1,000): ``[PHONE:32b6e0b18439827169e6c900]`` holds ``18439827169``."""
    number = "13900000791"
    assert identity(number) == "[PHONE:32b6e0b18439827169e6c900]" == identity(identity(number))
    m = store.add("my plan", namespace="u", requester=number, key=f"plan.{number}", access="private", now=NOW)
    assert store.get(m.id, namespace="u", requester=identity(number)).content == "my plan"
    assert store.read(m.key, namespace="u", requester=number).id == m.id  # the stored key, given again


def test_a_requester_holding_an_older_pseudonym_is_refused(store: mk.MemoryStore) -> None:
    """Rows an older memkit wrote hold the short pseudonyms, which no identity of today is: a requester
    naming one (``[EMAIL:c733d071b967]`` is alice's, computable by anyone who knows her address)
    would reach them as their writer. It is refused, nothing logged."""
    m = store.add("alice's salary is 9000", namespace="u", requester=ALICE, access="private", now=NOW)
    before = snapshot(store)
    for forged in ("[EMAIL:c733d071b967]", identity(ALICE, legacy=True), "x-[PHONE:b2b806ff]"):
        for call in (
            lambda r: store.search("salary", namespace="u", requester=r, now=NOW),
            lambda r: store.get(m.id, namespace="u", requester=r),
            lambda r: store.add("hi", namespace="u", requester=r, now=NOW),
            lambda r: store.check_names(requester=r),
        ):
            with pytest.raises(mk.ValidationError, match="requester: holds .*older store's pseudonym"):
                call(forged)
    assert_unchanged(store, before)
    assert store.get(m.id, namespace="u", requester=identity(ALICE)).content == m.content  # today's: hers
    assert identity(ALICE, form="short") == "[EMAIL:c733d071b967]"  # what an older store kept of her


@pytest.fixture
def old_store(backend: str, tmp_path: Path) -> Iterator[mk.MemoryStore]:
    """The fixture file (module doc) opened by today's memkit; on PostgreSQL, copied as it is into a
    fresh schema (``copy_to`` carries rows, events and names unchanged)."""
    path = tmp_path / "old.duckdb"
    path.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    with mk.MemoryStore(str(path)) as old:
        if backend == "duckdb":
            yield old
            return
        with mk.MemoryStore() as target:
            old.copy_to(target)
            yield target


def _private(store: mk.MemoryStore, requester: str) -> list[str]:
    """The private memories ``requester`` reads in the fixture's namespace."""
    return store.frame("team", requester=requester).filter(pl.col("access") == "private")["content"].to_list()


def test_a_store_written_before_keeps_what_shared_a_pseudonym_from_both(old_store: mk.MemoryStore) -> None:
    """Upgrading closes the leak for what was written before too: no requester's identity is an older
    pseudonym, so A and B (one 32-bit pseudonym) read neither's private memory, nor does a requester
    naming that pseudonym. The operator carries people over by name (``reidentify``): C and alice then
    read theirs and C's key and tag are found by the number; A and B, whose rows cannot be told
    apart, are refused together and stay the operator's to settle by hand."""
    written = dict(old_store.frame("team").select("content", "created_by").iter_rows())
    shared = written["A's diary: I am seeing a therapist"]
    assert written["B's note: the spare key is under the mat"] == shared
    for who in (A, B, C, ALICE):
        assert _private(old_store, who) == []  # until the operator names them
    hits = old_store.search("diary therapist", namespace="team", requester=B, now=NOW, reinforce=False)
    assert hits["content"].to_list() == ["call C on Mondays"]  # the public one only
    with pytest.raises(mk.ValidationError, match="requester"):
        old_store.frame("team", requester=shared)
    before = snapshot(old_store)
    with pytest.raises(mk.ValidationError, match="names.*cannot be told apart"):
        old_store.reidentify([C, A, ALICE, B], now=NOW + timedelta(hours=1))
    assert_unchanged(old_store, before)
    out = old_store.reidentify([C, ALICE], now=NOW + timedelta(hours=1))
    carried = out.filter(pl.col("rows") > 0)["old"].to_list()
    assert carried == [identity(C, form="short"), identity(ALICE, form="short")]
    assert _private(old_store, C) == ["C's plan: resign in March"]
    assert _private(old_store, ALICE) == ["alice's salary is 9000"]
    assert old_store.read(f"contact.{C}", namespace="team").content == "call C on Mondays"
    assert old_store.search("call", namespace="team", tags=[C], now=NOW, reinforce=False).height == 1
    assert _private(old_store, A) == _private(old_store, B) == []
