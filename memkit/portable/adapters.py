"""Adapters: other frameworks' memory data in (and out), so memory follows the user, not the framework.

========================  ======================  ==================================================
source                    reader -> frame          what becomes a memory
========================  ======================  ==================================================
chat messages             :func:`chat_frame`       each message, through the admission rule
                                                   (:func:`memkit.commands.admit_many`): filler,
                                                   commands and system prompts are not stored
mem0 ``get_all()``        :func:`mem0_frame`       each result (``{"results": [...]}`` or a list):
                                                   a long-term fact; mem0's id, hash, metadata and
                                                   scope kept in ``value["mem0"]``; a user's memory
                                                   keyed as the agent keys the user's statement
                                                   (:mod:`~memkit.portable.mem0_keys`)
cognee COGX archive       ``cogx.read_cogx``       see :mod:`memkit.portable.cogx` (and
                                                   ``cogx.write_cogx`` for memkit -> COGX)
========================  ======================  ==================================================

Chat messages are OpenAI-style ``[{"role": ..., "content": ...}]``, which is also what LangChain's
``convert_to_openai_messages`` and LlamaIndex's ``ChatMessage`` dumps give; ``content`` may be a
list of parts (``{"type": "text", "text": ...}``) or LlamaIndex ``blocks``, and LangChain's
``type`` (``human``/``ai``) stands in for ``role``.

Readers are pure (data in, a polars frame with a ``namespace`` column out) and raise FormatError
naming the record. A frame may carry a boolean ``store`` column (the admission verdict), a
``reason`` and a ``record`` (what an error names the row by: ``messages[3]``, ``results[0]``,
``facts.jsonl line 2``); every other column it has is a Memory field (:mod:`~memkit.portable.records`).
:func:`import_file` reads a file's lines with :func:`~memkit.portable.lines.numbered` (JSONL splits
on ``\\n`` only) and names the file in every error about its content (``chat.jsonl: line 4: ...``).
:func:`add_frame` writes a frame with ``add_many`` (every namespace in one transaction) and returns
a report; :func:`import_file` is the CLI's entry point (``memkit import --from chat|mem0|cogx``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from ..commands import admit_many
from ..errors import FormatError, ValidationError, check_path
from ..schema import check_name, check_tags
from .cogx import read_cogx
from .lines import numbered
from .mem0_keys import mem0_keys
from .records import RESTORABLE, add_frame, record_names, records_frame, unencodable, utc_time
from .strictjson import fail, loads

__all__ = ["RESTORABLE", "add_frame", "chat_frame", "import_file", "mem0_frame"]

# other frameworks' role names -> OpenAI's (LangChain: human/ai, Cohere: chatbot, OpenAI's newer
# "developer" for system prompts and older "function" for tool results)
_ROLE_ALIASES = {
    "human": "user",
    "ai": "assistant",
    "developer": "system",
    "function": "tool",
    "chatbot": "assistant",
}
_SOURCE_OF_ROLE = {"user": "user", "assistant": "agent", "system": "system", "tool": "tool"}  # -> source


def _text_of(msg: Mapping[str, Any]) -> str | None:
    """The text of one chat message: ``content`` as a str or a list of text parts, or LlamaIndex blocks.

    Where the text sits differs by framework: ``content`` (OpenAI, LangChain dumps), ``data.content``
    (LangChain's serialized messages), ``blocks`` of ``block_type`` text (LlamaIndex). None: no text.

    >>> _text_of({"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url"}]})
    'hi'
    """
    content = msg.get(
        "content", msg.get("data", {}).get("content") if isinstance(msg.get("data"), dict) else None
    )
    if content is None and isinstance(msg.get("blocks"), list):
        content = [
            {"type": "text", "text": b.get("text")}
            for b in msg["blocks"]
            if isinstance(b, dict) and b.get("block_type") == "text"
        ]
    if isinstance(content, list):  # multi-part: keep the text parts, drop images and audio
        parts = [p.get("text") if isinstance(p, dict) else p for p in content]
        texts = [p for p in parts if isinstance(p, str)]
        return "\n".join(texts) if texts else None
    return content if isinstance(content, str) or content is None else _bad_content(content)


def _bad_content(content: Any) -> str:
    """Raise the error for message content that is neither text nor a list of parts (an expression,
    so that :func:`_text_of` can end in one conditional)."""
    raise ValidationError("content", f"must be a str or a list of text parts, got {type(content).__name__}")


def chat_frame(
    messages: Sequence[Mapping[str, Any]], *, namespace: str, where: Sequence[str] | None = None
) -> pl.DataFrame:
    """OpenAI-style chat messages -> one row per message: ``turn, role, namespace, content, store,
    layer, kind, importance, protected, key, source, tags, created_at, reason, record``.

    ``store`` is the admission rule's verdict; :func:`add_frame` writes only the rows where it is
    true. ``key`` is the admission key (``fact.residence``, ``preference.drink``: the user's own fact
    or preference), as :class:`~memkit.agent.MemoryAgent` keys a live turn; written with
    ``add_frame(..., conflict_policy="supersede")`` (as ``import_file`` does) a later statement of the
    key supersedes the earlier one, in conversation order. A message's ``created_at`` (ISO-8601 with
    offset), when present, is kept. ``where`` names each message in errors (``record``; default
    ``messages[i]``; a JSONL file's reader: ``line n``).

    >>> f = chat_frame([{"role": "user", "content": "我喜欢喝美式咖啡"}, {"role": "user", "content": "好的"},
    ...                 {"role": "system", "content": "You are helpful."}], namespace="u")
    >>> f.select("store", "kind", "source", "reason").rows()  # doctest: +NORMALIZE_WHITESPACE
    [(True, 'preference', 'user', 'stated preference'), (False, 'event', 'user', 'filler'),
     (False, 'instruction', 'system', 'system message')]
    """
    namespace = check_name("namespace", namespace)
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise FormatError(
            "messages", f"must be a list of {{'role', 'content'}} objects, got {type(messages).__name__}"
        )
    names = record_names(where, len(messages))  # (a str is not split into characters: ValidationError)
    roles, texts, stamps = [], [], []
    for msg, where in zip(messages, names, strict=True):  # validated per message; admission vectorized
        if not isinstance(msg, Mapping):
            raise FormatError(where, f"must be an object, got {type(msg).__name__}")
        role = msg.get("role", msg.get("type"))  # LangChain's dumps name it "type"
        role = _ROLE_ALIASES.get(role, role)
        if role is None and "messages" in msg:  # {"messages": [...]} (a request body): not a message
            raise FormatError(where, "holds 'messages', it is not one: give the list of messages itself"
                              " (a JSON list, or JSONL: one message a line)")  # fmt: skip
        if role not in _SOURCE_OF_ROLE:
            raise FormatError(f"{where}.role", f"must be one of user, assistant, system, tool; got {role!r}")
        try:
            text = _text_of(msg)
        except ValidationError as e:
            raise FormatError(f"{where}.content", str(e).split(": ", 1)[1]) from None
        if text and unencodable(text):  # what polars (and the store) cannot hold, named before a frame
            raise FormatError(f"{where}.content", "contains a lone surrogate (invalid Unicode)")
        roles.append(role)
        texts.append(text or "")  # a tool call without text is admitted as empty: not stored
        stamps.append(utc_time(f"{where}.created_at", msg.get("created_at")))
    admitted = admit_many(texts, roles)  # -> text, store, layer, kind, importance, protected, reason
    return (
        admitted.rename({"text": "content"})
        .with_columns(
            turn=pl.int_range(pl.len(), dtype=pl.Int64),  # the message's position in the conversation
            namespace=pl.lit(namespace),
            source=pl.col("role").replace_strict(_SOURCE_OF_ROLE, return_dtype=pl.String),
            tags=pl.concat_list(pl.lit("chat"), pl.lit("role:") + pl.col("role")),  # ["chat", "role:user"]
            created_at=pl.Series(stamps, dtype=pl.Datetime("us", "UTC")),  # null: the write's now
            record=pl.Series(names, dtype=pl.String),  # what an error names the message by
        )
        .select(
            "turn",
            "role",
            "namespace",
            "content",
            "store",  # the admission verdict: add_frame writes only these rows
            "layer",
            "kind",
            "importance",
            "protected",
            "key",  # the admission key: the user's own fact or preference on a known slot or topic
            "source",
            "tags",
            "created_at",
            "reason",  # why it is (not) stored: "stated preference", "filler", "system message", ...
            "record",
        )
    )


def mem0_frame(data: Any, *, namespace: str | None = None) -> pl.DataFrame:
    """mem0's ``get_all()`` result (``{"results": [...]}`` or a plain list) -> one row per memory.

    Namespace: ``namespace`` if given, else the record's ``user_id``, ``agent_id`` or ``run_id``.
    Each becomes a long-term ``fact`` (source ``import``) created at mem0's ``created_at``; mem0's
    categories become tags, an ``expiration_date`` the end of validity, and everything else mem0
    knows (id, hash, metadata, scope, updated_at) is kept in ``value["mem0"]``. ``key``: a record scoped
    to a user (``user_id``) is the user's own statement, keyed as the agent keys it, and a keyed preference
    is a ``preference`` (:func:`~memkit.portable.mem0_keys.mem0_keys`: "Lives in Boston" ->
    ``fact.residence``); :func:`import_file` writes it under ``"supersede"``, oldest ``created_at`` first.
    A record mem0 rewrote later (``updated_at`` after ``created_at``) is left unkeyed: its text was stated
    at ``updated_at``, which has no place among the key's versions (dated by ``created_at``).

    >>> mem0_frame({"results": [{"id": "m1", "memory": "Likes tea", "user_id": "alice",
    ...     "created_at": "2024-07-20T01:25:51-07:00"}]}).select("namespace", "content", "created_at").rows()
    [('alice', 'Likes tea', datetime.datetime(2024, 7, 20, 8, 25, 51, tzinfo=zoneinfo.ZoneInfo(key='UTC')))]
    """
    # get_all() answers {"results": [...]} (mem0's output format v1.1) or, in older versions, a list
    records = data.get("results", data.get("memories")) if isinstance(data, Mapping) else data
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
        raise FormatError("data", "must be get_all()'s {'results': [...]} or a list of memories")
    namespace = check_name("namespace", namespace, optional=True)  # the caller's: named as such
    rows, mine = [], []
    for i, r in enumerate(records):
        where = f"results[{i}]"
        if not isinstance(r, Mapping):
            raise FormatError(where, f"must be an object, got {type(r).__name__}")
        content = r.get("memory", r.get("data"))  # "memory" in get_all(); "data" is accepted too
        if not isinstance(content, str) or not content.strip():
            raise FormatError(f"{where}.memory", f"must be a non-empty str, got {content!r}")
        ns = namespace or r.get("user_id") or r.get("agent_id") or r.get("run_id")  # mem0's scopes
        if ns is None:
            raise FormatError(f"{where}.namespace", "no user_id, agent_id or run_id says whose it is: pass"
                              " namespace= (--namespace on the command line)")  # fmt: skip
        cats = r.get("categories") or []
        try:
            ns = check_name(f"{where}.namespace", ns)
            tags = list(check_tags([cats] if isinstance(cats, str) else cats))
        except ValidationError as e:  # check_tags names "tags": in mem0's words, the categories
            field = e.field if e.field.startswith(where) else f"{where}.categories"
            raise FormatError(field, str(e)[len(e.field) + 2 :]) from None
        until = r.get("expiration_date")
        if isinstance(until, str) and len(until) == 10:  # a date ("2025-12-31"): valid through that day (UTC)
            try:
                day = date.fromisoformat(until)
            except ValueError:
                raise FormatError(f"{where}.expiration_date", f"is not a date: {until!r}") from None
            # the day after, or the calendar's last instant for 9999-12-31 (mem0's usual "never")
            until = datetime.max.replace(tzinfo=UTC) if day == date.max else datetime.combine(
                day + timedelta(days=1), datetime.min.time(), UTC
            )  # fmt: skip
        keep = {  # everything mem0 knows that has no memkit field of its own travels in value["mem0"]
            k: v
            for k, v in r.items()
            if k not in ("memory", "data", "created_at", "categories") and v is not None
        }
        # the user's own statement: scoped to a user and to no agent (with an agent_id and assistant turns,
        # mem0 extracts the *assistant's* traits with its agent prompt, subjectless alike)
        # mem0 rewrites an updated memory's text and keeps its created_at: that text was stated at
        # updated_at, which memkit has no field for, so it is not ordered among the key's versions (unkeyed)
        mine.append(r.get("user_id") is not None and r.get("agent_id") is None and not _updated(r))
        rows.append(
            {
                "namespace": ns,
                "content": content,
                "kind": "fact",
                "layer": "long_term",
                "source": "import",
                "tags": tags,
                "created_at": utc_time(f"{where}.created_at", r.get("created_at")),
                "valid_until": utc_time(f"{where}.expiration_date", until),
                "value": {"mem0": keep},
            }
        )
    frame = records_frame(rows)
    if not rows:
        return frame
    key = mem0_keys(frame["content"], pl.Series(mine, dtype=pl.Boolean))  # the agent's key (mem0_keys)
    kind = pl.when(key.str.starts_with("preference.")).then(pl.lit("preference")).otherwise("kind")
    return frame.with_columns(key=key, kind=kind)


def _updated(record: Mapping[str, Any]) -> bool:
    """Whether mem0 rewrote ``record`` after it made it: an ``updated_at`` more than a second after its
    ``created_at`` (an unreadable one counts as rewritten: the record is then left unkeyed)."""
    if record.get("updated_at") is None:
        return False
    try:
        made = utc_time("created_at", record.get("created_at"))
        changed = utc_time("updated_at", record["updated_at"])
    except (FormatError, ValidationError):
        return True
    return made is None or changed is None or (changed - made).total_seconds() > 1.0


def import_file(
    store: Any,
    path: str | Path,
    source: str,
    *,
    namespace: str | None = None,
    requester: str | None = None,
    now: datetime | None = None,
    duplicates: str = "skip",
) -> pl.DataFrame:
    """Read ``path`` with the adapter for ``source`` (``chat``: a JSON list or JSONL of messages;
    ``mem0``: a get_all() JSON; ``cogx``: an archive directory) and add it -> :func:`add_frame`'s report.

    Chat messages need ``namespace`` (a conversation does not say whose it is); for mem0 and COGX it
    overrides the records' own user scope. A chat's keyed messages are written with
    ``conflict_policy="supersede"`` (:func:`add_frame`). Nothing is written unless the whole file is valid; an
    error about its content names the file and the record (``chat.jsonl: line 4.content: ...``). A
    record the store holds already is ``present``, not written again (``duplicates``: :func:`add_frame`).
    """
    if source not in ("chat", "mem0", "cogx"):
        raise ValidationError("source", f"must be chat, mem0 or cogx, got {source!r}")
    if source == "chat" and namespace is None:
        raise ValidationError("namespace", "is required for chat messages")
    check_name("namespace", namespace, optional=True)  # the caller's, not the file's: checked first
    p = check_path("path", path)
    if source != "cogx" and not p.is_file():
        raise FormatError("path", f"{str(path)!r} is not a file")
    try:  # every error from here on is about the file's content: it names the file
        if source == "cogx":
            frame = read_cogx(p, namespace=namespace)
        elif source == "mem0":
            frame = mem0_frame(loads(_decoded(p.read_bytes()), None), namespace=namespace)
        else:
            messages, where = _chat(p.read_bytes())
            frame = chat_frame(messages, namespace=namespace, where=where)
    except ValidationError as e:
        raise type(e)(f"{p.name}: {e.field}", str(e)[len(e.field) + 2 :]) from None
    if source == "mem0":  # (mem0_frame's rows are results[i]; it keeps only Memory fields, for add_many)
        frame = frame.with_columns(record=pl.format("results[{}]", pl.int_range(pl.len())))
    if "record" in frame.columns:  # add_frame's errors name the file too
        frame = frame.with_columns(record=pl.lit(f"{p.name}: ") + pl.col("record"))
    # a chat's and mem0's keys as the agent's: a later statement of a fact or preference supersedes the
    # earlier one (mem0's in created_at order: it lists its memories in no order of time)
    policy = "supersede" if source in ("chat", "mem0") else None
    return add_frame(store, frame, requester=requester, now=now, duplicates=duplicates,
                     conflict_policy=policy, time_order=source == "mem0")  # fmt: skip


def _decoded(data: bytes) -> str:
    """A whole file's bytes as text, or FormatError naming the line of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise fail(
            line, "line", f"is not valid UTF-8 (byte {e.start}: {data[e.start : e.start + 1]!r})"
        ) from None


def _chat(data: bytes) -> tuple[Any, list[str] | None]:
    """A chat file -> its messages and what errors name each by: a JSON list (``messages[i]``), JSONL
    (``line n``: one message a line, split on ``\\n`` only, blank lines skipped), or one JSON object
    over several lines (``the file``: :func:`chat_frame` says what is wrong with ``{"messages": ...}``)."""
    if data.lstrip()[:1] == b"[":
        return loads(_decoded(data), None), None
    messages, where = [], []
    try:
        for n, line, _ in numbered(data):
            if line.strip():
                messages.append(loads(line, n))
                where.append(f"line {n}")
    except FormatError:
        try:
            whole = loads(_decoded(data), None)
        except FormatError:
            whole = None
        if not isinstance(whole, dict):  # not one object printed over several lines: the line's error
            raise
        return [whole], ["the file"]
    return messages, where
