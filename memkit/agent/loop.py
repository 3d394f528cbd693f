"""MemoryAgent: memory plugged into any agent loop through two hooks, recall before the LLM call
and write after it.

One :meth:`MemoryAgent.chat` turn:

1. a memory command (:func:`memkit.commands.parse`: remember / forget / delete_last / show) is
   carried out on the store (:func:`memkit.actions.execute`) and confirmed, without calling the LLM;
2. otherwise the message is the query of a ``store.search``; the hits go through the context builder
   (:func:`memkit.context.build_context`: duplicates, superseded and older values out, grouped by
   kind, within a character budget) and, with the recent-turn buffer, into the prompt;
3. ``llm(prompt)`` answers (any callable ``str -> str``); the ids that entered the prompt are logged
   as a ``context`` event, so "which memory did you base this on?" has an answer (:meth:`why`);
4. the admission rule (:func:`memkit.commands.admit`) decides what is written: filler nothing, ordinary
   turns short-term, known preferences and facts keyed (``fact.residence``): a changed one supersedes.

The recent-turn buffer keeps the last ``window`` exchanges, screened by the store's guard; a turn
leaves it once a memory it recalled or wrote is erased, by any path (:mod:`memkit.agent.recent`).
:meth:`end_session` consolidates the session's short-term memories into long-term ones (the
admission rule run again in one batch, the articles' "after the conversation, decide what to keep"),
then merges near-duplicates.

``ScriptedLLM`` and ``EchoLLM`` are deterministic stand-ins for a model, so demos and tests run
offline. Time is injectable: ``now=`` a datetime or a clock callable, per agent or per call.

>>> from datetime import datetime, timezone
>>> import memkit as mk
>>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
>>> agent = mk.MemoryAgent(mk.MemoryStore(), mk.agent.EchoLLM(), namespace="u1", requester="assistant", now=t)
>>> agent.chat("记住我对花生过敏").text
'好的，我记住了：我对花生过敏'
>>> print(agent.chat("我有什么过敏？").text)  # doctest: +ELLIPSIS
Facts:
- [...] 我对花生过敏
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from .. import errors as _errors
from ..commands import Admission, Command, admit, admit_many, parse
from ..errors import ValidationError
from ..params import Weights, check_number
from ..schema import check_name, check_text, check_time, clock
from ..store import MemoryStore
from ..store.settable import FromStore, an_instance
from .actions import add_keyed, confirm, execute
from .context import USED_SCHEMA, Context, build_context
from .recent import RecentTurns

__all__ = ["MemoryAgent", "Reply", "SessionEnd"]

# the guard's refusal (memkit.guard, when the store has one); an empty tuple catches nothing
_REFUSED: type[BaseException] | tuple[()] = getattr(_errors, "WriteRefused", ())

PROMPT_HEADER = "You are a helpful assistant with a long-term memory of this user."


@dataclass(frozen=True)
class Reply:
    """One :meth:`MemoryAgent.chat` turn: the answer, the prompt and context it came from, the
    command it carried out (if any), what that command touched, and the ids written."""

    text: str
    prompt: str
    context: Context
    command: Command | None = None
    affected: pl.DataFrame | None = None
    written: tuple[str, ...] = ()
    admission: Admission | None = None
    refused: bool = False  # the store's guard refused to write the message (it held a secret)

    @property
    def sources(self) -> pl.DataFrame:
        """The memories the answer was based on (``id, content, kind, key, score``), best first."""
        return self.context.used.filter("included").drop("included", "reason")


@dataclass(frozen=True)
class SessionEnd:
    """What :meth:`MemoryAgent.end_session` did: ``promoted`` (one row per short-term memory of the
    session: ``id, content, reason, promoted_to``) and the consolidation report (or None)."""

    promoted: pl.DataFrame
    consolidation: Any = None


def _int(name: str, value: Any, lo: int, hi: int) -> int:
    """An int in ``[lo, hi]`` for ``name`` (bools and other types rejected, naming the field)."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValidationError(name, f"must be an int in [{lo}, {hi}], got {value!r}")
    return value


@dataclass
class _Session:
    """The current session: its number and the short-term memories it wrote (what
    :meth:`MemoryAgent.end_session` decides about)."""

    ids: list[str] = field(default_factory=list)  # short-term memories written this session
    number: int = 1


class MemoryAgent(RecentTurns):
    """An agent loop with memory: ``chat(message) -> Reply`` (see the module docstring).

    ``store`` is a :class:`MemoryStore`; ``llm`` any callable ``str -> str``; every memory is read
    and written in ``namespace`` as ``requester``. ``k`` memories are recalled per turn with
    ``weights`` (default: ``store.weights`` as it is at each turn), kept within ``budget_chars`` of prompt;
    ``window`` recent exchanges are replayed; ``now`` is a datetime, a clock callable, or None (wall clock);
    ``forget_threshold`` is the search score the nearest memory needs to be named when a forget
    command's words name none (what is erased, the words decide: :mod:`memkit.agent.matching`).
    """

    weights = FromStore("weights", an_instance(Weights))  # given, or store.weights as it is at each turn

    def __init__(
        self,
        store: MemoryStore,
        llm: Callable[[str], str],
        namespace: str,
        requester: str,
        *,
        k: int = 5,
        weights: Weights | None = None,
        window: int = 10,
        budget_chars: int = 1500,
        now: datetime | Callable[[], datetime] | None = None,
        forget_threshold: float = 0.6,
    ) -> None:
        """Bind an LLM to a store and one user's namespace; every option is validated here, so a bad one
        fails before the first turn.
        """
        if not isinstance(store, MemoryStore):
            raise ValidationError("store", f"must be a memkit.MemoryStore, got {type(store).__name__}")
        if not callable(llm):
            raise ValidationError("llm", f"must be a callable str -> str, got {type(llm).__name__}")
        self.store, self.llm = store, llm
        self.namespace = check_name("namespace", namespace)
        store.check_names(namespace=self.namespace)  # the agent writes there: a secret is refused now
        self.requester = check_name("requester", requester)
        store.check_names(requester=self.requester)  # the store's rule for requesters (no secret)
        self.k = _int("k", k, 1, 100)
        self.weights = weights  # checked; None (or assigned later): follow the store's
        self.window = _int("window", window, 1, 1000)
        self.budget_chars = _int("budget_chars", budget_chars, 1, 1_000_000)
        self.clock = clock(now)
        self.forget_threshold = check_number("forget_threshold", forget_threshold, lo=0.0, hi=1.0)
        self.turns: deque[tuple[str, str]] = deque(maxlen=self.window)  # (user, assistant), guarded
        self._turn_ids: deque[frozenset[str]] = deque(maxlen=self.window)  # memories each turn touched
        self._session = _Session()
        self._lessons_seen: tuple[str, ...] = ()  # the lessons the buffered turns were screened with
        self._erasures_seen: int | None = None  # store.erasures at the buffer's last check (recent.py)
        self.last: Reply | None = None
        self._last_ids: frozenset[str] = frozenset()

    # ------------------------------------------------------------------ the loop
    def _time(self, now: datetime | None) -> datetime:
        """``now`` when a call passes one (checked), else the agent's clock."""
        return self.clock() if now is None else check_time("now", now)  # type: ignore[return-value]

    def prompt(self, message: str, context: Context) -> str:
        """The prompt for ``message``: header, memory section, recent turns, the message."""
        message = check_text("message", message)
        if not isinstance(context, Context):
            raise ValidationError("context", f"must be a memkit Context, got {type(context).__name__}")
        self._refresh_turns()  # erased memories' turns out, lessons applied (memkit.agent.recent)
        recent = "\n".join(f"User: {u}\nAssistant: {a}" for u, a in self.turns)
        parts = [PROMPT_HEADER, "## Memories\n" + (context.text or "(none)")]
        if recent:
            parts.append("## Recent conversation\n" + recent)
        parts.append("## User\n" + message)
        return "\n\n".join(parts)

    def chat(self, message: str, *, now: datetime | None = None) -> Reply:
        """One turn: command, or recall → prompt → ``llm`` → write (module docstring).

        All or nothing: the recalled memories are reinforced, the context logged and the turn's
        memories written in one transaction, after the LLM has answered with text. An LLM call that
        raises or returns something that is not text (:class:`~memkit.errors.ValidationError`
        ``llm``) leaves the memories and the turn buffer as they were, so the turn can be retried
        (the log keeps the recall's ``search`` event: the read took place).
        """
        message = check_text("message", message)
        t = self._time(now)
        command = parse(message)
        if command is not None:
            return self._command(message, command, t)
        self.store.check_writable()  # the turn is written: a read-only store fails before the LLM call
        hits = self.store.search(
            message, namespace=self.namespace, requester=self.requester, k=self.k, weights=self.weights,
            now=t, reinforce=False,
        )  # fmt: skip
        context = build_context(hits, budget_chars=self.budget_chars, query=message)
        prompt = self.prompt(message, context)
        answer = self._ask(prompt)
        dropped = context.used.filter(~pl.col("included")).select("id", "reason").to_dicts()
        admission, said = admit(message, role="user"), admit(answer, role="assistant")
        with self.store.transaction():  # reinforcement, provenance and writes: all or nothing
            self.store.reinforce(
                hits["id"].to_list(), namespace=self.namespace, requester=self.requester, now=t
            )
            self.store.log_context(
                context.ids, namespace=self.namespace, requester=self.requester, now=t, dropped=dropped
            )
            written, refused = self._write(message, admission, "user", t)
            if (
                said.layer == "long_term" and answer.strip()
            ):  # the agent's own commitments ("I'll remind you…")
                written += self._write(answer, said, "agent", t)[0]
        reply = Reply(answer, prompt, context, None, None, written, admission, refused=refused)
        self._remember_turn(message, reply, {*hits["id"].to_list(), *written})
        return reply

    def _ask(self, prompt: str) -> str:
        """The LLM's answer, or ValidationError (``llm``) when it is not usable text."""
        answer = self.llm(prompt)
        if not isinstance(answer, str):
            raise ValidationError("llm", f"must return a str, returned {type(answer).__name__}")
        try:
            return check_text("llm", answer)
        except ValidationError as e:
            raise ValidationError("llm", f"returned unusable text ({str(e).split(': ', 1)[1]})") from None

    def _command(self, message: str, command: Command, t: datetime) -> Reply:
        """A memory command, carried out without the LLM."""
        empty = Context("", pl.DataFrame(schema=USED_SCHEMA))
        try:
            affected = execute(
                command, self.store, namespace=self.namespace, requester=self.requester, now=t,
                threshold=self.forget_threshold, tags=(f"session:{self._session.number}",),
            )  # fmt: skip
        except _REFUSED:  # the guard refused to store it (a secret): say so, store nothing
            zh = any("\u4e00" <= c <= "\u9fff" for c in message)
            text = "这条内容含有敏感信息（如密码或密钥），我不会记住它。" if zh else (
                "That looks like a secret (a password or key); I will not remember it."
            )  # fmt: skip
            reply = Reply(text, "", empty, command, None, (), None, refused=True)
            self._remember_turn(message, reply, set())
            return reply
        written = tuple(affected.filter(pl.col("action") == "added")["id"])
        reply = Reply(confirm(command, affected), "", empty, command, affected, written)
        erased = set(affected.filter(pl.col("action") == "deleted")["id"])
        if command.op in ("forget", "delete_last"):  # what the user asked to forget leaves the buffer too
            self._forget_turns(erased)
        else:  # (a `show` reply quotes what it listed: erasing one of those takes the turn out too)
            self._remember_turn(message, reply, set(affected["id"]))
        self.last, self._last_ids = reply, frozenset(affected["id"]) - erased
        return reply

    def _write(self, text: str, a: Admission, source: str, t: datetime) -> tuple[tuple[str, ...], bool]:
        """A turn admitted for storage goes to short-term now (promoted by end_session); a preference (a
        fact) on a known topic (slot) is keyed and supersedes the old value at once. -> (ids, refused)"""
        if not a.store:
            return (), False
        try:
            m = add_keyed(self.store, text, a.key, namespace=self.namespace, requester=self.requester,
                          layer="short_term", kind=a.kind, importance=a.importance, source=source,
                          tags=[f"session:{self._session.number}"], now=t)  # fmt: skip
        except _REFUSED:  # the guard refused it (a secret): the answer stands, nothing is stored
            return (), True
        self._session.ids.append(m.id)
        return (m.id,), False

    # ------------------------------------------------------------------ provenance and sessions
    def why(self) -> pl.DataFrame:
        """The memories the last answer was based on (``id, content, kind, key, score``); empty
        before the first turn or after a command."""
        self._drop_erased()  # (an answer based on a memory erased since shows nothing)
        if self.last is None:
            return pl.DataFrame(schema=USED_SCHEMA).drop("included", "reason")
        return self.last.sources

    def end_session(self, *, now: datetime | None = None, consolidate: bool = True) -> SessionEnd:
        """Consolidate the session: its short-term memories that the admission rule sends to
        long-term (preferences, commitments, personal facts, entities) are written there (keyed
        preferences and facts supersede), then ``store.consolidate`` merges near-duplicates (unless
        ``consolidate=False``). The turn buffer is cleared and a new session begins."""
        t = self._time(now)
        if not isinstance(consolidate, bool):
            raise ValidationError("consolidate", f"must be a bool, got {type(consolidate).__name__}")
        frame = self.store.frame(self.namespace).filter(
            pl.col("id").is_in(pl.Series(self._session.ids, dtype=pl.String).implode())
            & (pl.col("status") == "active")
        )
        roles = frame["source"].replace_strict({"user": "user", "agent": "assistant"}, default="tool")
        decided = admit_many(frame["content"], roles.to_list())
        promote = pl.concat([frame.select("id", "source"), decided], how="horizontal")
        promoted_to: list[str | None] = []
        with self.store.transaction():  # the promotions and the merge: all or nothing
            for row in promote.iter_rows(named=True):  # a session's notable turns: a handful of writes
                if row["layer"] != "long_term":
                    promoted_to.append(None)
                    continue
                m = add_keyed(self.store, row["text"], row["key"], namespace=self.namespace,
                              requester=self.requester, layer="long_term", kind=row["kind"],
                              importance=row["importance"], source=row["source"], now=t)  # fmt: skip
                if m.key is None:  # moved, not copied (a keyed copy supersedes its original by itself)
                    self.store.delete(row["id"], namespace=self.namespace, requester=self.requester, now=t)
                promoted_to.append(m.id)
            merged = (  # as this agent's requester: it may merge only what it may modify
                self.store.consolidate(namespace=self.namespace, requester=self.requester, now=t)
                if consolidate
                else None
            )
        report = promote.select("id", content="text", reason="reason").with_columns(
            promoted_to=pl.Series(promoted_to, dtype=pl.String)
        )
        self.turns.clear()
        self._turn_ids.clear()
        self._session = _Session(number=self._session.number + 1)
        return SessionEnd(report, merged)
