"""Crash safety: SIGKILL a writer process at random moments, reopen, and check nothing acknowledged
was lost and nothing was half-applied.

The writer (``tests/crash_writer.py``) prints one line per call after the call returned. Trials reuse
one file, so each reopen also recovers from the previous crash. After every kill:

- the file opens (DuckDB replays its write-ahead log) and the store keeps working;
- durability: every acknowledged add, batch, merge and import is there; every acknowledged delete
  is gone;
- atomicity: a memory row exists iff its creating audit event (``add``, ``merge``, ``import``) does;
  a batch is all there or not at all; a consolidation is all or nothing (merged row present and
  every member ``superseded``, or neither); an import is all or nothing (all rows of its file in its
  namespace, or none); a deleted row left its ``delete`` event and nothing else.

Time is simulated throughout: the writer's clock (``crash_writer.T0`` plus ``TRIAL_SPAN_S`` seconds per
trial) and the recovery check's, which reads and writes just after the trial's last simulated write;
nothing here reads the wall clock.

Seeded (``MEMKIT_CRASH_SEED``; the seed is printed). Every trial always runs: 16 by default
(``MEMKIT_CRASH_TRIALS``; ~35 s on 2 cores), 150 with ``MEMKIT_SOAK=1``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from crash_writer import T0, TRIAL_SPAN_S

import memkit as mk

SOAK = os.environ.get("MEMKIT_SOAK") == "1"
TRIALS = 150 if SOAK else int(os.environ.get("MEMKIT_CRASH_TRIALS", 16))
WRITER = Path(__file__).with_name("crash_writer.py")
BATCH = 5
CREATING_OPS = ("add", "merge", "import")


class Acks:
    """What the writers acknowledged, over all trials."""

    def __init__(self) -> None:
        self.added: set[str] = set()
        self.written: set[str] = set()  # by add and add_many (imports copy their rows' counters)
        self.deleted: set[str] = set()
        self.merges: dict[str, list[str]] = {}
        self.imports: dict[str, list[str]] = {}
        self.searches: set[datetime] = set()  # the `now` of every acknowledged search
        self.lines = 0
        self.trials = 0

    def read(self, text: str) -> None:
        # only complete lines are acknowledgements: a long line (an import's ids) is flushed in several
        # pipe writes, so SIGKILL can cut it, leaving a torn tail such as a 4-character id prefix
        complete, _, _torn = text.rpartition("\n")
        for line in complete.splitlines():
            parts = line.split(" ")
            if len(parts) < 2 or line == "READY":
                continue
            op, rest = parts[0], parts[1:]
            if op in ("ADD", "MANY"):
                self.added.update(rest[0].split(","))
                self.written.update(rest[0].split(","))
            elif op == "DEL":
                self.deleted.add(rest[0])
            elif op == "MERGE":
                self.merges[rest[0]] = rest[1].split(",")
                self.added.add(rest[0])
            elif op == "SEARCH":
                self.searches.add(datetime.fromisoformat(rest[0]))
            elif op == "IMPORT":
                ids = rest[2].split(",") if len(rest) > 2 and rest[2] else []
                self.imports[rest[0]] = ids
                self.added.update(ids)
            else:
                continue
            self.lines += 1


def _run_writer(path: str, seed: int, trial: int, rng: random.Random) -> tuple[str, float]:
    """Start a writer, let it write for a random while after it is ready, SIGKILL it -> its stdout."""
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), path, str(seed), str(trial)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # READY, once the store is open
    if first.strip() != "READY":
        proc.kill()
        _, err = proc.communicate(timeout=60)
        pytest.fail(f"writer did not start (seed {seed}): {first!r} {err[-2000:]}")
    delay = rng.uniform(0.05, 2.5)
    time.sleep(delay)  # subtle: the only sleep here picks the kill moment; nothing is timed or asserted on it
    proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, f"writer died on its own (seed {seed}): {err[-3000:]}"
    return out, delay


def after_trial(trial: int) -> datetime:
    """The simulated instant just after trial ``trial``'s writes: later than every step of it
    (``T0 + trial·span + step``, step < span) and earlier than the next trial's first step."""
    return T0 + timedelta(seconds=(trial + 1) * TRIAL_SPAN_S)


def check_recovered(path: str, acks: Acks, now: datetime) -> dict[str, int]:
    """Open the crashed file at simulated time ``now`` and check durability and atomicity -> a few
    counts."""
    with mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=64)) as s:
        frame = s.frame()
        audit = s.audit()
        # the check's clock is after everything in the file (else search at `now` would hide rows)
        assert audit.is_empty() or audit["ts"].max() < now, (audit["ts"].max(), now)
        ids = set(frame["id"])
        # durability: an acknowledged row is there, unless a delete in flight when the writer died
        # (run, not yet acknowledged) erased it, which its delete event shows; deletes stay done
        deleted_ev = set(audit.filter(pl.col("op") == "delete")["memory_id"])
        lost = (acks.added - acks.deleted) - ids - deleted_ev
        assert not lost, f"acknowledged writes lost: {sorted(lost)[:5]}"
        revived = acks.deleted & ids
        assert not revived, f"acknowledged deletes undone: {sorted(revived)[:5]}"
        # an erasure takes along what holds the same text (a merge's members, a merge left empty):
        # those events are consequences, not deletes of their own
        primary = audit.filter(
            (pl.col("op") == "delete") & pl.col("detail").str.json_path_match("$.cascade").is_null()
        )
        in_flight = (acks.added - acks.deleted) & set(primary["memory_id"])
        assert len(in_flight) <= acks.trials, f"more unacknowledged deletes than crashes: {len(in_flight)}"
        # a row exists iff its creating event does (they commit together); a delete left its event
        created = audit.filter(pl.col("op").is_in(CREATING_OPS))
        born = set(created["memory_id"].drop_nulls())
        assert ids <= born, f"rows without their creating event: {sorted(ids - born)[:5]}"
        assert born - ids <= deleted_ev, (
            f"events of rows that never landed: {sorted(born - ids - deleted_ev)[:5]}"
        )
        assert not (ids & deleted_ev), "a row outlived its delete event"
        # a batch (one add_many call: bulk add events at one ts) is all there or not at all
        bulk = created.filter(
            (pl.col("op") == "add") & (pl.col("detail").str.json_path_match("$.bulk") == "true")
        )
        sizes = bulk.group_by("ts").len()["len"].to_list()
        assert set(sizes) <= {BATCH}, f"partial batches: {sizes}"
        # a consolidation is all or nothing
        by_id = {r["id"]: r for r in frame.select("id", "status", "merged_from").to_dicts()}
        merged_rows = [r for r in by_id.values() if r["merged_from"]]
        for r in merged_rows:
            for m in r["merged_from"]:
                if m in by_id:  # a member may have been deleted later, never left active
                    assert by_id[m]["status"] == "superseded", (
                        f"merge {r['id']} left member {m} {by_id[m]['status']}"
                    )
        # ... and so are its events: each member retired by a merge is a member of a merge logged at the
        # same instant, whose merged row is there (or was deleted later, which revives nothing)
        merges = audit.filter(pl.col("op") == "merge").with_columns(
            members=pl.col("detail").str.json_path_match("$.members").str.json_decode(pl.List(pl.String))
        )
        for ev in merges.select("memory_id", "members").to_dicts():
            assert ev["memory_id"] in ids or ev["memory_id"] in deleted_ev
            for m in ev["members"]:
                assert m not in by_id or by_id[m]["status"] == "superseded", f"merge {ev} left {m} live"
        logged = {(t, m) for t, ms in zip(merges["ts"], merges["members"], strict=True) for m in ms}
        retired = audit.filter(
            (pl.col("op") == "supersede") & (pl.col("detail").str.json_path_match("$.merged") == "true")
        )
        merged_members = retired["memory_id"]
        orphan = set(zip(retired["ts"], retired["memory_id"], strict=True)) - logged
        assert not orphan, f"members retired by a merge that was not logged: {sorted(orphan)[:5]}"
        for merged, members in acks.merges.items():
            if merged in ids:
                assert sorted(by_id[merged]["merged_from"]) == sorted(members)
        # an import is all or nothing: its namespace got every row of its file, or none (counted by
        # their import events, which commit with the rows: later deletes and merges change the rows)
        counts = audit.filter(pl.col("op") == "import").group_by("namespace").len()
        per_ns = dict(zip(counts["namespace"], counts["len"], strict=True))
        exports = Path(path).with_suffix(".exports")
        imports_checked = 0
        for f in sorted(exports.glob("*.jsonl")) if exports.exists() else []:
            try:
                header = json.loads(f.read_text(encoding="utf-8").splitlines()[0])
            except (ValueError, IndexError):
                continue  # an export cut short: its import never started
            ns = "imp" + f.stem
            want = header["counts"]["memories"]
            assert per_ns.get(ns, 0) in (0, want), f"partial import into {ns}: {per_ns.get(ns)} of {want}"
            imports_checked += per_ns.get(ns, 0) == want and want > 0
        # deferred reads: every acknowledged search has its event (journaled before it returned,
        # replayed on open), and its reinforcement went with it: a row written by add has been
        # reinforced exactly as often as search events name it (the event and the UPDATE commit together)
        searched = audit.filter(pl.col("op") == "search")
        missing = acks.searches - set(searched["ts"].to_list())
        assert not missing, f"acknowledged searches without their event: {sorted(missing)[:3]}"
        named = (
            searched.filter(pl.col("detail").str.json_path_match("$.reinforce") != "false")
            .select(pl.col("detail").str.json_path_match("$.ids").str.json_decode(pl.List(pl.String)))
            .explode("detail")
            .group_by("detail")
            .len()
        )
        times = dict(zip(named["detail"], named["len"], strict=True))
        plain = frame.filter(pl.col("id").is_in(list(acks.written)))
        for row in plain.select("id", "access_count").to_dicts():
            assert row["access_count"] == times.get(row["id"], 0), (row, times.get(row["id"], 0))
        # the index rebuilt from the file agrees with it, and the store still writes
        hits = s.search("Hangzhou", namespace="u1", k=10_000, now=now, min_strength=0.0, reinforce=False)
        live = frame.filter((pl.col("namespace") == "u1") & (pl.col("status") == "active"))
        assert set(hits["id"]) == set(live["id"])
        probe = s.add("after the crash", namespace="probe", now=now)
        assert s.get(probe.id, now=now).content == "after the crash"
        return {
            "rows": len(ids),
            "merges": len(merged_rows),
            "imports": imports_checked,
            "batches": len(sizes),
            "retired_by_merge": len(merged_members),
            "searches": len(searched),
        }


def test_sigkill_loses_no_acknowledged_write_and_leaves_nothing_partial(tmp_path: Path) -> None:
    seed = int(os.environ.get("MEMKIT_CRASH_SEED", random.randrange(1_000_000)))
    print(f"\ncrash test seed: {seed} (rerun with MEMKIT_CRASH_SEED={seed})")
    rng = random.Random(seed)
    path = str(tmp_path / "crash.duckdb")
    acks = Acks()
    trials, last = 0, {}
    for trial in range(TRIALS):
        out, _ = _run_writer(path, rng.randrange(2**31), trial, rng)
        acks.read(out)
        acks.trials += 1
        last = check_recovered(path, acks, now=after_trial(trial))
        trials += 1
    print(
        f"crash test: {trials} SIGKILL trials, {acks.lines} acknowledged operations "
        f"({len(acks.added)} ids written, {len(acks.deleted)} deleted, {len(acks.merges)} merges, "
        f"{len(acks.imports)} imports, {len(acks.searches)} searches acknowledged), 0 lost, 0 partial;"
        f" final file {last}"
    )
    assert trials == TRIALS and acks.lines > 0


def test_acks_parser_reads_every_kind_of_line() -> None:
    acks = Acks()
    acks.read(
        "READY\nADD a\nMANY b,c\nDEL a\nMERGE m x,y\nIMPORT imp1_2 2 p,q\nIMPORT imp1_3 0 \n"
        "SEARCH 2026-01-01T00:00:05+00:00 a,b\n"
    )
    assert acks.added == {"a", "b", "c", "m", "p", "q"} and acks.deleted == {"a"}
    assert acks.merges == {"m": ["x", "y"]} and acks.imports == {"imp1_2": ["p", "q"], "imp1_3": []}
    assert acks.searches == {datetime.fromisoformat("2026-01-01T00:00:05+00:00")}
    assert acks.lines == 7


def test_acks_parser_ignores_a_line_torn_by_the_kill() -> None:
    # regression: a torn IMPORT line's last id prefix ("4807") was taken for an acknowledged write
    acks = Acks()
    acks.read("READY\nADD a\nIMPORT imp1_2 3 p,q,4807")
    assert acks.added == {"a"} and acks.imports == {} and acks.lines == 1


def test_writer_module_has_no_import_side_effects() -> None:
    code = "import runpy, sys; sys.argv = ['x']; import importlib.util as u; "
    code += f"s = u.spec_from_file_location('w', {str(WRITER)!r}); m = u.module_from_spec(s); "
    code += "s.loader.exec_module(m)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "", r.stdout + r.stderr
