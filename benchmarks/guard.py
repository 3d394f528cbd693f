"""How well the write-time guard screens real injection and benign sets, and how fast.

Two tables, then speed:

1. **Leave-one-dataset-out** (the learned detector, :mod:`memkit.guard.learned`): for each set of
   :mod:`injection_sets` (the shared sets in ``../shared/data/injection/`` and the extra ones in
   ``../extra-data/``, read in place, never copied), a model trained by ``train_guard.py``'s recipe on
   all the *other* sets scores it ("out of set"); "in set" is 5-fold cross-validation over all sets.
   Recall on attacks and false-positive rate on benign texts, per set, part and language, with N, at
   the default thresholds (``injection_threshold`` for user texts, ``strict_threshold`` for the
   tool-sourced parts: e-mails and documents), never one blended accuracy. A text is flagged when the
   rules (weight >= ``quarantine_score``) or the probability flag it, as in :func:`screen_many`.
2. **The shipped guard** (rules + the shipped model, default ``GuardParams``) on the shared sets.

Speed: ``screen_many`` on a batch (>= 20k texts/s is the goal), one ``screen`` per text, and
``add_many`` / ``add`` with the guard off and on.

Run from the repository root (training 14 models takes a few minutes on 2 cores)::

    .venv/bin/python benchmarks/guard.py
    .venv/bin/python benchmarks/guard.py --no-lodo --scale 20000

No figure is asserted; this prints numbers (and exits 0 with a message when the data is absent).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import injection_sets  # noqa: E402
import train_guard  # noqa: E402

import memkit as mk  # noqa: E402
from memkit.guard import screen, screen_many  # noqa: E402
from memkit.guard.learned import load_model  # noqa: E402

STRICT_PARTS = ("clean e-mails", "e-mails with an instruction", "documents with an instruction",
                "the same documents, clean")  # fmt: skip

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "injection"
_GERMAN = re.compile(
    r"(?i)\b(?:und|der|die|das|ich|nicht|ist|du|sie|mir|mich|ein|eine|auf|für|wie|was|bitte)\b"
)


def is_german(text: str) -> bool:
    """At least three distinct German function words: a crude language guess, good enough to split."""
    return len({w.lower() for w in _GERMAN.findall(text)}) >= 3


def rule_verdicts(codes: list[list[str]], params: mk.GuardParams) -> np.ndarray:
    """Whether the rules alone quarantine each text (their findings' weights reach the score)."""
    weight = [sum(train_guard.RULE_WEIGHT[c.split(":")[1]] for c in set(cs)) for cs in codes]
    return np.asarray(weight, dtype=np.float64) >= params.quarantine_score


def thresholds(frame: pl.DataFrame, params: mk.GuardParams) -> np.ndarray:
    """Each row's quarantine threshold: the strict one for e-mails and documents (``source="tool"``)."""
    strict = frame["part"].is_in(STRICT_PARTS).to_numpy()
    return np.where(strict, params.strict_threshold, params.injection_threshold)


def lodo_table(params: mk.GuardParams) -> pl.DataFrame:
    """The leave-one-dataset-out table (see the module docstring): per set, part and language, the
    % flagged by the rules alone, in set (5-fold CV) and out of set (the set left out of training)."""
    frame = injection_sets.load_all()
    codes = train_guard.rule_codes(frame["text"].to_list())
    scored = train_guard.lodo(frame, codes)
    strict = scored["part"].is_in(STRICT_PARTS)
    limit, ruled = thresholds(scored, params), rule_verdicts(codes, params)
    scored = scored.with_columns(
        source=pl.when(strict).then(pl.lit("tool")).otherwise(pl.lit("user")),
        rules=pl.Series(ruled),
        out=pl.Series(ruled | (scored["out_of_set"].to_numpy() >= limit)),
        ins=pl.Series(ruled | (scored["in_set"].to_numpy() >= limit)),
    )
    return (
        scored.group_by("set", "part", "lang", "label", "source", maintain_order=True)
        .agg(
            N=pl.len(),
            rules_alone=pl.col("rules").mean() * 100,
            in_set=pl.col("ins").mean() * 100,
            out_of_set=pl.col("out").mean() * 100,
        )  # fmt: skip
        .with_columns(measure=pl.when(pl.col("label") == 1).then(pl.lit("recall")).otherwise(pl.lit("FPR")))
        .filter(pl.col("N") >= 5)  # a handful of mislabelled-language rows is no figure
        .select("set", "part", "lang", "source", "N", "measure", "rules_alone", "in_set", "out_of_set")
        .sort("measure", "set", "part", "lang", descending=[True, False, False, False])
    )


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
    """One row per set: N, and the % flagged (recall on attacks, FPR on benign texts) by the default
    guard (rules alone) and with ``learned=True``; e-mails are screened as ``source="tool"``."""
    rows = []
    for name, kind, texts in sets:
        sources = ["tool" if "email" in name else "user"] * len(texts)
        row, measure = {"set": name, "N": len(texts)}, "recall" if kind == "attack" else "FPR"
        for col, p in (
            ("rules alone (default)", params),
            ("with learned=True", replace(params, learned=True)),
        ):
            actions = pl.Series(screen_many(texts, p, sources=sources).actions)
            row[col] = f"{measure} {100 * float((actions != 'store').mean()):.1f}%"
        rows.append(row)
    return pl.DataFrame(rows)


def timing(texts: list[str], params: mk.GuardParams, loop_sample: int) -> dict[str, float]:
    """Seconds for the batch path over ``texts``, the model alone over them, and the median
    milliseconds of one ``screen`` per text (timed on a sample)."""
    t0 = time.perf_counter()
    screen_many(texts, params)
    batch = time.perf_counter() - t0
    t0 = time.perf_counter()
    load_model().probability(texts)
    model = time.perf_counter() - t0
    one = []
    for t in texts[:loop_sample]:
        t0 = time.perf_counter()
        screen(t, params)
        one.append(time.perf_counter() - t0)
    return {"n": len(texts), "batch_s": batch, "model_s": model, "one_ms": 1000 * float(np.median(one))}


def single_add(repeats: int = 300) -> tuple[float, float]:
    """Median milliseconds of one ``add`` with the learned detector off and on (the rules run in both)."""
    out = []
    for params in (mk.GuardParams(learned=False), mk.GuardParams(learned=True)):
        with mk.MemoryStore(guard=params) as store:
            times = []
            for i in range(repeats):
                t0 = time.perf_counter()
                store.add(f"The user prefers green tea, note {i}", namespace="bench",
                          now=datetime(2026, 1, 1, tzinfo=UTC))  # fmt: skip
                times.append(time.perf_counter() - t0)
            out.append(1000 * float(np.median(times)))
    return out[0], out[1]


def ingest(n: int) -> tuple[float, float, float]:
    """Seconds of ``add_many`` of ``n`` short sample memories with the guard off, the rules alone, and
    rules + learned detector."""
    from memkit.sample import load_sample

    sample = load_sample().drop("namespace", "key")
    frame = pl.concat([sample] * (n // sample.height + 1)).head(n)
    out = []
    for params in (mk.GuardParams(enabled=False), mk.GuardParams(), mk.GuardParams(learned=True)):
        with mk.MemoryStore(guard=params) as store:
            t0 = time.perf_counter()
            store.add_many(frame, namespace="bench", now=datetime(2026, 1, 1, tzinfo=UTC))
            out.append(time.perf_counter() - t0)
    return out[0], out[1], out[2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the injection/ folder")
    ap.add_argument("--scale", type=int, default=20_000, help="texts in the timing batch")
    ap.add_argument("--no-lodo", action="store_true", help="skip the leave-one-dataset-out table")
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
          f"polars {pl.__version__}, {platform.machine()}; model: {load_model().info}")  # fmt: skip
    table = evaluate(sets, params)
    with pl.Config(tbl_rows=60, tbl_width_chars=180, fmt_str_lengths=40, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True, float_precision=1, tbl_cols=-1):  # fmt: skip
        if not args.no_lodo:
            print(
                "\nleave-one-dataset-out, % flagged (rules + learned detector; tool-sourced parts at "
                f"strict_threshold {params.strict_threshold}, the rest at {params.injection_threshold}):"
            )
            print(lodo_table(params))
        print("\nthe shipped guard on the shared sets (in set for the learned detector: it saw them):")
        print(table)
    pool = [t for _, _, ts in sets for t in ts]
    batch = (pool * (args.scale // len(pool) + 1))[: args.scale]
    learned = replace(params, learned=True)
    for label, p in (("rules alone", params), ("rules + learned", learned)):
        t = timing(batch, p, loop_sample=min(2000, len(batch)))
        rate, alone = t["n"] / t["batch_s"], t["n"] / t["model_s"]
        print(f"\n{label}: screen_many on {t['n']:,} texts (the sets above, repeated) {t['batch_s']:.2f} s "
              f"({rate:,.0f} texts/s; the model alone {alone:,.0f} texts/s); one screen() "
              f"{t['one_ms']:.2f} ms (median of 2,000)", end="")  # fmt: skip
    ms_off, ms_on = single_add()
    print(f"\none add(): {ms_off:.2f} ms without the learned detector, {ms_on:.2f} ms with it "
          f"({ms_on - ms_off:+.2f} ms; medians of 300)")  # fmt: skip
    off, rules, both = ingest(args.scale)
    print(f"add_many of {args.scale:,} short sample memories: guard off {off:.2f} s, rules {rules:.2f} s, "
          f"rules + learned {both:.2f} s (the learned detector: {args.scale / max(both - rules, 1e-9):,.0f} "
          "rows/s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
