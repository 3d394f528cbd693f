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


def _as_before(store: mk.MemoryStore, name: str, form: str = "legacy") -> None:
    """Rewrite ``name``'s pseudonyms as a store written before kept them (what the old code wrote)."""
    old, new = identity(name, form=form), identity(name)
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
    before = store.read(f"contact:{JOHN}", namespace="u")  # a key is found by its older name (public)
    assert before.key == f"contact:{identity(JOHN, legacy=True)}"
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
    """Two chains of one key (each with a version 1: what a memkit that did not find the key by its
    older name wrote) cannot be told apart; one that today's writes continued can (helper 113)."""
    from tests.conftest import snapshot

    _written_before(store)
    m = store.add("call John on Fridays", namespace="u", key="other", now=NOW + timedelta(hours=1))
    store._run("UPDATE memories SET key = ? WHERE id = ?", [f"contact:{identity(JOHN)}", m.id])
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
    with _older(1, 1):  # the salary (its owner and creator); the key's are "assistant"
        assert main(["reidentify", "--db", path, JOHN, "alice@example.com"]) == 0
    out = capsys.readouterr().out
    assert f"{identity(JOHN, legacy=True)} -> {identity(JOHN)}: 5 values" in out and JOHN not in out
    assert "1 pseudonyms replaced (2 names)" in out
    with mk.MemoryStore(path) as s:
        assert s.get(private, namespace="u", requester=JOHN).content == "my salary is 9000"
    assert main(["reidentify", "--db", path, "sk-live-4eC39HqLyjWDarjtT1zdp7dc"]) == 2  # a secret: refused


@pytest.mark.duckdb_only("the CLI on a file")
def test_the_cli_reidentifies_at_the_clock_it_is_given(tmp_path, capsys) -> None:
    """`memkit reidentify --now`: as every command that writes an audit event (its API has now=); it
    was "unrecognized arguments", and the event was logged at the wall clock."""
    from memkit.cli import main

    path = str(tmp_path / "old.duckdb")
    with mk.MemoryStore(path) as s:
        _written_before(s)
    with _older(1, 1):
        assert main(["reidentify", "--db", path, JOHN, "--now", "2026-03-01T12:00:00+08:00"]) == 0
    assert "1 pseudonyms replaced (1 names)" in capsys.readouterr().out
    with mk.MemoryStore(path) as s:
        events = s.audit().filter(pl.col("op") == "reidentify")
        assert events["ts"].to_list() == [datetime(2026, 3, 1, 4, tzinfo=UTC)]
    assert main(["reidentify", "--db", path, JOHN, "--now", "2026-03-01T12:00:00"]) == 2  # no offset
    assert "--now: 2026-03-01T12:00:00 is not timezone-aware" in capsys.readouterr().err


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


def _fixture(tmp_path: Path) -> str:
    """The fixture file (module doc), unpacked into ``tmp_path`` -> its path."""
    path = tmp_path / "old.duckdb"
    path.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    return str(path)


def _older(rows: int, pseudonyms: int) -> pytest.WarningsRecorder:
    """The UserWarning an open gives of a store whose owners or creators hold older pseudonyms."""
    said = rf"holds {rows} memor(y|ies) whose owner or creator is the pseudonym of an older memkit"
    return pytest.warns(UserWarning, match=rf"{said} \({pseudonyms} distinct.*store\.reidentify\(names\)")


@pytest.fixture
def old_store(backend: str, tmp_path: Path) -> Iterator[mk.MemoryStore]:
    """The fixture file (module doc) opened by today's memkit; on PostgreSQL, copied as it is into a
    fresh schema (``copy_to`` carries rows, events and names unchanged)."""
    with _older(4, 3), mk.MemoryStore(_fixture(tmp_path)) as old:  # A and B: one pseudonym
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


# ------------------------------------------------------------------------- an upgraded store's keys
def test_an_upgraded_store_finds_its_keys_by_their_names(old_store: mk.MemoryStore) -> None:
    """Audit (helper 113): a key written before holds the short pseudonym of its number, which
    today's lookups did not match: ``read`` and ``versions`` of ``contact.<C>`` found nothing, the
    tags filter missed it, and a keyed write began a second chain beside it (which ``reidentify``
    then refused). A key's older names are matched too: the write continues its chain, and
    ``reidentify`` carries the one chain over."""
    key, old = f"contact.{C}", f"contact.{identity(C, form='short')}"
    first = old_store.read(key, namespace="team", requester="bob")
    assert (first.content, first.key) == ("call C on Mondays", old)
    assert old_store.versions(key, namespace="team", requester="bob")["id"].to_list() == [first.id]
    assert old_store.search("call", namespace="team", tags=[C], now=NOW, reinforce=False).height == 1
    bob = old_store.add("call C on Fridays", namespace="team", key=key, requester="bob", now=NOW)
    assert (bob.status, bob.version) == ("conflict", 2)  # disputes carol's, as before the upgrade
    won = old_store.resolve(key, namespace="team", keep=bob.id, now=NOW + timedelta(minutes=1))
    assert won.status == "active" and old_store.read(key, namespace="team").id == bob.id
    assert old_store.versions(key, namespace="team")["status"].to_list() == ["superseded", "active"]
    old_store.reidentify([C], now=NOW + timedelta(hours=1))  # one chain: carried over whole
    assert old_store.versions(key, namespace="team")["key"].unique().to_list() == [bob.key]
    assert old_store.frame("team").filter(pl.col("key").is_not_null()).height == 2


def test_a_private_key_written_before_is_found_and_stays_gated(store: mk.MemoryStore) -> None:
    """Only a key's lookup matches its older name, never an identity: A's private key written
    before is found (A's keyed write is refused, not begun again beside it) but not A's to read or
    continue until the operator re-identifies A."""
    key = f"plan.{A}"
    m = store.add("A's plan: resign in March", namespace="u", requester=A, key=key, access="private", now=NOW)
    _as_before(store, A, form="short")
    with pytest.raises(mk.AccessDenied):
        store.read(key, namespace="u", requester=A)
    with pytest.raises(mk.AccessDenied):
        store.add("A's plan: stay", namespace="u", requester=A, key=key, now=NOW + timedelta(hours=1))
    assert store.versions(key, namespace="u", requester=A).is_empty()
    assert store.versions(key, namespace="u")["id"].to_list() == [m.id]
    store.reidentify([A], now=NOW + timedelta(hours=2))
    assert store.read(key, namespace="u", requester=A).id == m.id


def test_an_upgraded_store_says_so_at_every_open(backend: str, tmp_path: Path) -> None:
    """Audit (helper 113): nothing told the operator that an upgraded store holds owners and
    creators named by an older pseudonym (people who cannot read their private memories until
    ``reidentify``). Every open of such a store, writable or read-only, warns, counting the rows."""
    where = _fixture(tmp_path)
    with _older(4, 3):
        old = mk.MemoryStore(where)
    if backend == "postgres":
        with old, mk.MemoryStore() as target:
            old.copy_to(target)
            where = target.path
        with _older(4, 3):
            old = mk.MemoryStore(where)
    with old:
        old.reidentify([C, ALICE], now=NOW)
    with _older(2, 1), mk.MemoryStore(where, read_only=True) as again:  # A and B's: told apart by hand
        assert again.frame("team").height == 5


def test_a_requester_with_a_bracketed_tag_of_its_own_is_a_name(store: mk.MemoryStore) -> None:
    """Review (helper 114): only memkit's own placeholder types are older pseudonyms; a job's name
    such as ``deploy-bot[RUN:20260315]`` was refused as one."""
    for name in ("deploy-bot[RUN:20260315]", "job[ID:deadbeefcafe]"):
        m = store.add("ran the nightly job", namespace="u", requester=name, access="private", now=NOW)
        assert store.get(m.id, namespace="u", requester=name).content == "ran the nightly job"
