"""LoCoMo (Maharana et al., ACL 2024) as two polars frames: memories and labelled queries.

LoCoMo holds long conversations between two speakers over many sessions, each session with a date,
and questions whose ``evidence`` names the turns (``dia_id`` such as ``"D1:3"``) that answer them.
The retrieval protocol used here (and by the reference figures in ``../shared/data/README.md``):
every turn is one memory with the text ``"[session date] speaker: text"``, created at its session's
date (so decay and recency mean something), and a question ranks the turns of its own conversation.

The file has quirks, handled here rather than in every caller:

- malformed evidence: several ids in one string (``"D8:6; D9:17"``, ``"D9:1 D4:4"``), stray colons
  (``"D:11:26"`` -> ``"D11:26"``), bare ``"D"`` (dropped); ids naming no turn are dropped too;
- adversarial questions (category 5) have no ``answer`` but an ``adversarial_answer``;
- answers are sometimes numbers (``2022``): they become strings;
- dates without sessions (``session_20_date_time`` with no ``session_20``) are ignored, and a
  session without a date takes the date of the nearest earlier session (else the nearest later one).

>>> _parse_evidence(["D8:6; D9:17", "D:11:26", "D", "D1:3"])
['D8:6', 'D9:17', 'D11:26', 'D1:3']
>>> _parse_date("1:56 pm on 8 May, 2023").isoformat()
'2023-05-08T13:56:00+00:00'
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import FormatError

__all__ = ["CATEGORIES", "load_locomo"]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


def _parse_evidence(items: Any) -> list[str]:
    """Evidence strings -> clean ``D<session>:<turn>`` ids, in order, without repeats."""
    if isinstance(items, str):
        items = [items]
    out: list[str] = []
    for item in items or ():
        for s, t in _EVIDENCE.findall(str(item)):
            dia = f"D{int(s)}:{int(t)}"
            if dia not in out:
                out.append(dia)
    return out


def _parse_date(text: str) -> datetime:
    """LoCoMo's ``"1:56 pm on 8 May, 2023"`` -> an aware UTC datetime."""
    try:
        return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        raise FormatError("session_date_time", f"cannot parse {text!r}") from None


def _session_dates(conv: dict[str, Any], sessions: list[int], sample: str) -> dict[int, datetime]:
    """Date of each session; a session without one borrows its nearest earlier (else later) date."""
    given = {
        n: _parse_date(conv[f"session_{n}_date_time"])
        for n in sessions
        if isinstance(conv.get(f"session_{n}_date_time"), str)
    }
    if not given:
        raise FormatError("conversation", f"{sample}: no session has a date")
    out = {}
    for n in sessions:
        earlier = [m for m in given if m <= n]
        out[n] = given[max(earlier)] if earlier else given[min(given)]
    return out


def _load_audit(path: str | Path) -> dict[str, list[str]]:
    """``question_id -> corrected evidence`` from locomo_audit_errors.json (entries that have one)."""
    try:
        items = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise FormatError("audit", f"cannot read {path}: {e}") from None
    if not isinstance(items, list):
        raise FormatError("audit", "must be a JSON list of issues")
    return {
        str(it["question_id"]): _parse_evidence(it["correct_evidence"])
        for it in items
        if isinstance(it, dict) and it.get("question_id") and it.get("correct_evidence")
    }


def load_locomo(
    path: str | Path, *, audit: str | Path | None = None, captions: bool = False
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read ``locomo10.json`` -> ``(memories, queries)``.

    ``memories``: ``id`` (``"<conversation>:<dia_id>"``), ``conversation``, ``session``, ``dia_id``,
    ``speaker``, ``content`` (``"[8 May 2023] Caroline: ..."``), ``created_at`` (UTC).

    ``queries``: ``query_id`` (``"<conversation>:q<i>"``), ``audit_id`` (the audit's
    ``"locomo_<sample>_qa<i>"``), ``conversation``, ``question``, ``answer`` (null for category 5),
    ``category`` (1-5), ``category_name``, ``relevant`` (memory ids of the evidence turns that
    exist), ``evidence`` (the parsed dia_ids). With ``audit=`` (locomo_audit_errors.json) the
    ``relevant`` ids of audited questions are replaced by the corrected evidence and ``audited`` is
    True for them. Questions whose evidence names no turn keep an empty ``relevant`` list; the
    metrics skip them. ``captions=True`` appends the image caption of a photo-sharing turn
    (``"... [shares a photo of a lake sunrise]"``): not the reference protocol, so report it apart.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise FormatError("path", f"cannot read {path}: {e}") from None
    if not isinstance(data, list):
        raise FormatError("path", "LoCoMo must be a JSON list of samples")
    fixes = _load_audit(audit) if audit is not None else {}
    mem: dict[str, list[Any]] = {c: [] for c in ("id", "conversation", "session", "dia_id", "speaker")}
    mem.update(content=[], created_at=[])
    qs: dict[str, list[Any]] = {c: [] for c in ("query_id", "audit_id", "conversation", "question")}
    qs.update(answer=[], category=[], relevant=[], evidence=[], audited=[])
    for si, sample in enumerate(data):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise FormatError("conversation", f"sample {si} has no conversation")
        conv = sample["conversation"]
        cid = str(sample.get("sample_id") or f"sample-{si}")
        sessions = sorted(
            int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)) and isinstance(conv[k], list)
        )
        dates = _session_dates(conv, sessions, cid)
        turns: set[str] = set()
        for n in sessions:
            day = f"{dates[n].day} {dates[n]:%B %Y}"
            for turn in conv[f"session_{n}"]:
                dia = _parse_evidence([turn.get("dia_id", "")])
                text = turn.get("text")
                if not dia or not isinstance(text, str) or not text.strip():
                    continue  # a turn without id or text cannot be evidence nor a memory
                turns.add(dia[0])
                mem["id"].append(f"{cid}:{dia[0]}")
                mem["conversation"].append(cid)
                mem["session"].append(n)
                mem["dia_id"].append(dia[0])
                mem["speaker"].append(str(turn.get("speaker", "?")))
                caption = turn.get("blip_caption") if captions else None
                extra = f" [shares {caption.strip()}]" if isinstance(caption, str) and caption.strip() else ""
                mem["content"].append(f"[{day}] {turn.get('speaker', '?')}: {text.strip()}{extra}")
                mem["created_at"].append(dates[n])
        for qi, qa in enumerate(sample.get("qa") or ()):
            audit_id = f"locomo_{si}_qa{qi}"
            evidence = _parse_evidence(qa.get("evidence"))
            audited = audit_id in fixes
            chosen = fixes[audit_id] if audited else evidence
            answer = qa.get("answer")
            qs["query_id"].append(f"{cid}:q{qi}")
            qs["audit_id"].append(audit_id)
            qs["conversation"].append(cid)
            qs["question"].append(str(qa.get("question", "")))
            qs["answer"].append(None if answer is None else str(answer))
            qs["category"].append(int(qa.get("category", 0)))
            qs["relevant"].append([f"{cid}:{d}" for d in chosen if d in turns])
            qs["evidence"].append(evidence)
            qs["audited"].append(audited)
    memories = pl.DataFrame(
        mem,
        schema={
            "id": pl.String, "conversation": pl.String, "session": pl.Int32, "dia_id": pl.String,
            "speaker": pl.String, "content": pl.String, "created_at": pl.Datetime("us", "UTC"),
        },
    )  # fmt: skip
    queries = pl.DataFrame(
        qs,
        schema={
            "query_id": pl.String,
            "audit_id": pl.String,
            "conversation": pl.String,
            "question": pl.String,
            "answer": pl.String,
            "category": pl.Int32,
            "relevant": pl.List(pl.String),
            "evidence": pl.List(pl.String),
            "audited": pl.Boolean,
        },
    ).with_columns(category_name=pl.col("category").replace_strict(CATEGORIES, default="unknown"))
    return memories, queries
