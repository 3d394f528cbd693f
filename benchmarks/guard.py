"""How well the write-time guard screens real injection and benign sets, and how fast.

Reads the public sets in ``../shared/data/injection/`` (see that folder's README; nothing is copied
into the repository) and screens every text with :func:`memkit.guard.screen_many` under the default
:class:`memkit.GuardParams`. A text is *flagged* when the guard would not store it as an ordinary
memory: ``quarantine`` (injection signals) or ``refuse`` (a secret). For each attack set it prints the
recall, for each benign set the false-positive rate, each with N — never one blended accuracy. The
deepset attacks are split by language (German rows are recognised by common German function words,
a heuristic) and by split: the rules were written for attack *families* while reading the train
split only (never fitted to rows); the test split is held out.

Speed: the batch path (one polars ``str.contains`` per rule over the batch, Python only for rows
that matched) is timed against screening the same texts one by one with :func:`memkit.guard.screen`
in the same run.

Run from the repository root::

    .venv/bin/python benchmarks/guard.py
    .venv/bin/python benchmarks/guard.py --data /path/to/injection --scale 20000

No figure is asserted; this prints numbers (and exits 0 with a message when the data is absent).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

import memkit as mk
from memkit.guard import screen, screen_many

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "injection"
_GERMAN = re.compile(
    r"(?i)\b(?:und|der|die|das|ich|nicht|ist|du|sie|mir|mich|ein|eine|auf|für|wie|was|bitte)\b"
)


def is_german(text: str) -> bool:
    """At least three distinct German function words: a crude language guess, good enough to split."""
    return len({w.lower() for w in _GERMAN.findall(text)}) >= 3


def load_sets(root: Path) -> list[tuple[str, str, list[str]]]:
    """``(name, "attack" | "benign", texts)`` for every set present under ``root``."""
    sets: list[tuple[str, str, list[str]]] = []
    for split in ("train", "test"):  # rules were written looking at train only; test is held out
        p = root / "deepset" / f"deepset_{split}.parquet"
        if not p.exists():
            continue
        d = pl.read_parquet(p)
        attacks = d.filter(pl.col("label") == 1)["text"].to_list()
        sets.append(
            (f"deepset {split} injections, English", "attack", [t for t in attacks if not is_german(t)])
        )
        sets.append((f"deepset {split} injections, German", "attack", [t for t in attacks if is_german(t)]))
        sets.append(
            (f"deepset {split} benign (en+de)", "benign", d.filter(pl.col("label") == 0)["text"].to_list())
        )
    gis = root / "giskard" / "prompt_injections.csv"
    if gis.exists():
        sets.append(("giskard injections", "attack", pl.read_csv(gis)["prompt"].to_list()))
    bip = [root / "bipia" / f"text_attack_{s}.json" for s in ("train", "test")]
    if all(p.exists() for p in bip):
        texts = [t for p in bip for ts in json.loads(p.read_text()).values() for t in ts]
        sets.append(("BIPIA indirect attack instructions", "attack", texts))
    mails = [root / "bipia" / f"email_{s}.jsonl" for s in ("train", "test")]
    if all(p.exists() for p in mails):
        texts = [json.loads(line)["context"] for p in mails for line in p.read_text().splitlines() if line]
        sets.append(("BIPIA clean emails", "benign", texts))
    ni = [root / "notinject" / f"NotInject_{s}.json" for s in ("one", "two", "three")]
    if all(p.exists() for p in ni):
        sets.append(
            (
                "NotInject (trigger words)",
                "benign",
                [r["prompt"] for p in ni for r in json.loads(p.read_text())],
            )
        )
    wg = root / "notinject" / "wildguard.json"
    if wg.exists():
        sets.append(("wildguard benign", "benign", [r["prompt"] for r in json.loads(wg.read_text())]))
    return [s for s in sets if s[2]]


def evaluate(sets: list[tuple[str, str, list[str]]], params: mk.GuardParams) -> pl.DataFrame:
    """One row per set: N, flagged, rate and how (quarantined / refused), and PII redactions."""
    rows = []
    for name, kind, texts in sets:
        s = screen_many(texts, params)
        actions = pl.Series(s.actions)
        q, r = int((actions == "quarantine").sum()), int((actions == "refuse").sum())
        pii = s.findings.filter(pl.col("kind") == "pii")["row"].n_unique()
        rows.append({
            "set": name, "N": len(texts), "flagged": q + r,
            "recall / FPR": f"{'recall' if kind == 'attack' else 'FPR'} {100 * (q + r) / len(texts):.1f}%",
            "quarantined": q, "refused": r, "PII redacted": pii,
        })  # fmt: skip
    return pl.DataFrame(rows)


def timing(texts: list[str], params: mk.GuardParams, loop_sample: int) -> dict[str, float]:
    """Seconds for the batch path over ``texts`` and for a per-text loop (timed on a sample,
    extrapolated linearly)."""
    t0 = time.perf_counter()
    screen_many(texts, params)
    batch = time.perf_counter() - t0
    sample = texts[:loop_sample]
    t0 = time.perf_counter()
    for t in sample:
        screen(t, params)
    loop = (time.perf_counter() - t0) * len(texts) / len(sample)
    return {"n": len(texts), "batch_s": batch, "loop_s": loop}


def ingest(n: int) -> tuple[float, float]:
    """Seconds of ``add_many`` of ``n`` short sample memories with the guard off and on."""
    from memkit.sample import load_sample

    sample = load_sample().drop("namespace", "key")
    frame = pl.concat([sample] * (n // sample.height + 1)).head(n)
    out = []
    for params in (mk.GuardParams(enabled=False), mk.GuardParams()):
        with mk.MemoryStore(guard=params) as store:
            t0 = time.perf_counter()
            store.add_many(frame, namespace="bench", now=datetime(2026, 1, 1, tzinfo=UTC))
            out.append(time.perf_counter() - t0)
    return out[0], out[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the injection/ folder")
    ap.add_argument("--scale", type=int, default=20_000, help="texts in the timing batch")
    args = ap.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: no data at {args.data} (see ../shared/data/README.md)")
        return 0
    sets = load_sets(args.data)
    if not sets:
        print(f"skipped: none of the expected files under {args.data}")
        return 0
    params = mk.GuardParams()
    print(f"memkit {mk.__version__} guard, default GuardParams; Python {platform.python_version()}, "
          f"polars {pl.__version__}, {platform.machine()}")  # fmt: skip
    table = evaluate(sets, params)
    with pl.Config(tbl_rows=40, tbl_width_chars=160, fmt_str_lengths=40, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True, float_precision=3, tbl_cols=-1):  # fmt: skip
        print(table)
    pool = [t for _, _, ts in sets for t in ts]
    batch = (pool * (args.scale // len(pool) + 1))[: args.scale]
    t = timing(batch, params, loop_sample=min(2000, len(batch)))
    print(f"\nspeed on {t['n']:,} texts (the sets above, repeated): screen_many {t['batch_s']:.2f} s "
          f"({t['n'] / t['batch_s']:,.0f} texts/s); one-by-one screen() loop {t['loop_s']:.2f} s "
          f"(extrapolated from 2,000); batch is {t['loop_s'] / t['batch_s']:.1f}x faster")  # fmt: skip
    off, on = ingest(args.scale)
    print(f"add_many of {args.scale:,} short sample memories: guard off {off:.2f} s, on {on:.2f} s "
          f"({on / off:.2f}x; screening {args.scale / max(on - off, 1e-9):,.0f} rows/s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
