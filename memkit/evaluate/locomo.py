"""LoCoMo (Maharana et al., ACL 2024) as two polars frames: memories and labelled queries.

LoCoMo holds long conversations between two speakers over many sessions, each session with a date,
and questions whose ``evidence`` names the turns (``dia_id`` such as ``"D1:3"``) that answer them.
The retrieval protocol used here (and by the reference figures in ``../shared/data/README.md``):
every turn is one memory with the text ``"[session date] speaker: text"``, created at its session's
date (so decay and recency mean something), and a question ranks the turns of its own conversation.
A question's ``relevant`` list is then the answer key: recall@k asks how many of those turns the top
k of a ranking found (:mod:`memkit.evaluate.metrics`).

The file, abridged (one sample per conversation; keys this loader does not read are left out)::

    [{"sample_id": "conv-26",
      "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023",
                       "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! ..."},
                                     {"speaker": "Caroline", "dia_id": "D1:5", "text": "...",
                                      "blip_caption": "a photo of a dog walking past a wall ..."}],
                       "session_2_date_time": "...", "session_2": [...]},
      "qa": [{"question": "When did Melanie paint a sunrise?", "answer": 2022,
              "evidence": ["D1:12"], "category": 2},
             {"question": "...", "evidence": ["D2:3"], "category": 5, "adversarial_answer": "..."}]}]

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

from ..errors import FormatError, check_bool

__all__ = ["CATEGORIES", "load_locomo"]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""LoCoMo's question categories by number (the ``category_name`` column)."""

# a dia_id anywhere in an evidence string: "D1:3", and the stray-colon form "D:11:26"
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")  # a session's turns; "session_3_date_time" is its date

# column types, fixed so that an empty file, or one whose answers are all numbers, gives the same frames
_MEMORY_SCHEMA = {
    "id": pl.String,
    "conversation": pl.String,
    "session": pl.Int32,
    "dia_id": pl.String,
    "speaker": pl.String,
    "content": pl.String,
    "created_at": pl.Datetime("us", "UTC"),
}
_QUERY_SCHEMA = {
    "query_id": pl.String,
    "audit_id": pl.String,
    "conversation": pl.String,
    "question": pl.String,
    "answer": pl.String,
    "category": pl.Int32,
    "relevant": pl.List(pl.String),
    "evidence": pl.List(pl.String),
    "audited": pl.Boolean,
}


def _parse_evidence(items: Any) -> list[str]:
    """Evidence strings -> clean ``D<session>:<turn>`` ids, in order, without repeats.

    ``"D9:1 D4:4" -> ["D9:1", "D4:4"]``, ``["D01:3", "D1:3"] -> ["D1:3"]`` (numbers lose their zero
    padding, so both spellings name one turn). A single string counts as a list of one; anything
    that is not a string is read through ``str()``, so a stray number does not crash the loader.
    """
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
    """LoCoMo's ``"1:56 pm on 8 May, 2023"`` -> an aware UTC datetime.

    Runs of spaces are collapsed first. The file gives no time zone; UTC is a convention that keeps
    every date comparable with the store's (aware) timestamps, and only the gaps between sessions
    matter to decay and recency.
    """
    try:
        return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        raise FormatError("session_date_time", f"cannot parse {text!r}") from None


def _session_dates(conv: dict[str, Any], sessions: list[int], sample: str) -> dict[int, datetime]:
    """Date of each session; a session without one borrows its nearest earlier (else later) date.

    With dates for sessions 2 and 4 of sessions 1-5: 1 takes 2's date (nothing earlier), 3 takes
    2's, 5 takes 4's. A conversation with no date at all raises (``sample`` names it).
    """
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
    """``question_id -> corrected evidence`` from locomo_audit_errors.json (entries that have one).

    The audit is a JSON list of issues, ``{"question_id": "locomo_0_qa4", "correct_evidence":
    ["D1:1", "D2:2"], ...}``; an issue with an empty ``correct_evidence`` reports a problem without
    a fix and is ignored.
    """
    items = _json_list(path, "audit", "must be a JSON list of issues")
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
    exist), ``evidence`` (the parsed dia_ids, as cited). With ``audit=`` (locomo_audit_errors.json)
    the ``relevant`` ids of the questions it gives ``correct_evidence`` for are replaced by it, and
    ``audited`` is True for them: also where it is the cited evidence again (62 of the 155 in the
    published audit), so ``audited`` marks what the audit checked, not what it changed (compare
    ``relevant`` with ``evidence``). Questions whose evidence names no turn keep an empty
    ``relevant`` list; the metrics skip them. ``captions=True`` appends the image caption of a
    photo-sharing turn (``"... [shares a photo of a lake sunrise]"``): not the reference protocol,
    so report it apart.

    Any malformed input raises :class:`~memkit.errors.FormatError` naming the part at fault
    (``path``, ``audit``, ``conversation``, ``session_date_time``); nothing is half-loaded.
    """
    check_bool("captions", captions)
    samples = _read_samples(path)
    fixes = _load_audit(audit) if audit is not None else {}
    memories: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for si, sample in enumerate(samples):
        cid, conv = _conversation(sample, si)
        turns = _turn_rows(conv, cid, captions)
        memories += turns
        # evidence can only point at turns that became memories (a turn without text did not)
        queries += _question_rows(sample, si, cid, {t["dia_id"] for t in turns}, fixes)
    return pl.DataFrame(memories, schema=_MEMORY_SCHEMA), pl.DataFrame(
        queries, schema=_QUERY_SCHEMA
    ).with_columns(category_name=pl.col("category").replace_strict(CATEGORIES, default="unknown"))


def _read_samples(path: str | Path) -> list[Any]:
    """The file's list of samples (one per conversation), or a FormatError naming ``path``."""
    return _json_list(path, "path", "LoCoMo must be a JSON list of samples")


def _json_list(path: str | Path, field: str, shape: str) -> list[Any]:
    """A JSON file holding a list, or a FormatError naming ``field`` (unreadable, bad JSON, or
    not a list: ``shape`` says what it must be)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise FormatError(field, f"cannot read {path}: {e}") from None
    if not isinstance(data, list):
        raise FormatError(field, shape)
    return data


def _conversation(sample: Any, si: int) -> tuple[str, dict[str, Any]]:
    """``(conversation id, conversation dict)`` of sample number ``si``; the id falls back to
    ``"sample-<si>"`` when the sample has no ``sample_id``."""
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise FormatError("conversation", f"sample {si} has no conversation")
    return str(sample.get("sample_id") or f"sample-{si}"), sample["conversation"]


def _turn_rows(conv: dict[str, Any], cid: str, captions: bool) -> list[dict[str, Any]]:
    """One memory row per turn of conversation ``cid``, sessions in number order, turns in file
    order; a turn without a ``dia_id`` or without text is skipped."""
    # session numbers with turns ("session_3": [...]); "session_3_date_time" keys do not fullmatch
    sessions = sorted(
        int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)) and isinstance(conv[k], list)
    )
    dates = _session_dates(conv, sessions, cid)
    rows = []
    for n in sessions:
        day = f"{dates[n].day} {dates[n]:%B %Y}"  # "8 May 2023": no zero padding, as LoCoMo writes it
        for turn in conv[f"session_{n}"]:
            dia = _parse_evidence([turn.get("dia_id", "")])
            text = turn.get("text")
            if not dia or not isinstance(text, str) or not text.strip():
                continue  # a turn without id or text cannot be evidence nor a memory
            caption = turn.get("blip_caption") if captions else None
            extra = f" [shares {caption.strip()}]" if isinstance(caption, str) and caption.strip() else ""
            rows.append(
                {
                    "id": f"{cid}:{dia[0]}",
                    "conversation": cid,
                    "session": n,
                    "dia_id": dia[0],
                    "speaker": str(turn.get("speaker", "?")),
                    "content": f"[{day}] {turn.get('speaker', '?')}: {text.strip()}{extra}",
                    "created_at": dates[n],
                }
            )
    return rows


def _question_rows(
    sample: dict[str, Any], si: int, cid: str, turns: set[str], fixes: dict[str, list[str]]
) -> list[dict[str, Any]]:
    """One query row per question of sample ``si``: ``relevant`` is the audit's corrected evidence
    when ``fixes`` has the question, else its own, kept to the dia_ids in ``turns``."""
    rows = []
    for qi, qa in enumerate(sample.get("qa") or ()):
        audit_id = f"locomo_{si}_qa{qi}"  # the audit file's naming: sample index, question index
        evidence = _parse_evidence(qa.get("evidence"))
        audited = audit_id in fixes
        chosen = fixes[audit_id] if audited else evidence
        answer = qa.get("answer")
        rows.append(
            {
                "query_id": f"{cid}:q{qi}",
                "audit_id": audit_id,
                "conversation": cid,
                "question": str(qa.get("question", "")),
                "answer": None if answer is None else str(answer),  # 2022 -> "2022"
                "category": int(qa.get("category", 0)),
                "relevant": [f"{cid}:{d}" for d in chosen if d in turns],
                "evidence": evidence,
                "audited": audited,
            }
        )
    return rows
