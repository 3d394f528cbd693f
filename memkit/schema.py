"""The data model: enums, per-layer defaults, the :class:`Memory` record, the one list of its fields
(:data:`MEMORY_FIELDS`, read off the dataclass; every other list of fields is derived from it here)
and the field validators that every write and every file import share.

Validators turn user input into clean values or raise :class:`~memkit.errors.ValidationError` naming
the field; the store calls them *before* it writes anything, so a bad call changes nothing. The
database schema itself is the numbered migrations of :mod:`memkit.store.migrations`.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import polars as pl

from .errors import ValidationError
from .params import MIN_HOURS, check_number
from .text import is_blank

__all__ = [
    "ACCESS", "FINDING_KINDS", "Finding", "KINDS", "LAYERS", "LAYER_HALF_LIFE_HOURS", "Memory", "SOURCES",
    "STATUSES", "default_layer", "layer_expr",
]  # fmt: skip

# The allowed values of the enum columns (the search index codes each value as its position here).
LAYERS = ("short_term", "long_term", "episodic")  # which memory network (working, semantic, episodic)
KINDS = ("fact", "preference", "decision", "reference", "event", "instruction")  # what a memory is
SOURCES = ("user", "agent", "system", "tool", "import")  # where it came from
ACCESS = ("public", "protected", "private")  # who may read: anyone, the owner, the creator
STATUSES = ("active", "superseded", "conflict", "quarantined")  # lifecycle; only active is recalled
# The ``op`` of an audit event (table ``events``: what happened to which id, never the text): a write
# (add, import, merge; supersede, conflict, resolve change versions), a read (read, search: its query
# as a digest), an erasure (delete by a user, forget by the policy), the guard's (quarantine, approve,
# deny: a refused operation, lesson: a memory confirmed bad), export, and context (which memories an
# agent put into a prompt, memkit.agent provenance).
OPS = ("add", "read", "search", "supersede", "conflict", "resolve", "merge", "forget", "delete", "quarantine",
       "approve", "deny", "import", "export", "context", "lesson")  # fmt: skip

# Half-life defaults by layer (DESIGN.md): working memory fades in hours, episodes in a month,
# long-term facts in a quarter.
LAYER_HALF_LIFE_HOURS: dict[str, float] = {"short_term": 2.0, "episodic": 24.0 * 30, "long_term": 24.0 * 90}
ADMISSION_MIN_IMPORTANCE = 0.3  # below this a memory stays short_term (the admission gate)
DEFAULT_IMPORTANCE = 0.5  # a write that names no importance: above the admission threshold
MAX_CONTENT_CHARS = 100_000  # one memory's text; longer input is a document, not a memory
MAX_NAME_CHARS = 256  # namespaces, keys, owners, tags
COUNT_MAX = 2**31 - 1  # an INTEGER column's largest: access counts saturate there (reads, merges)


def default_layer(importance: float, kind: str) -> str:
    """The admission rule for a write that names no layer -> its layer: unimportant writes stay in
    working memory, events are episodes, the rest is long-term knowledge (every entry point uses it).

    >>> default_layer(0.2, "fact"), default_layer(0.8, "event"), default_layer(0.8, "fact")
    ('short_term', 'episodic', 'long_term')
    """
    if importance < ADMISSION_MIN_IMPORTANCE:
        return "short_term"
    return "episodic" if kind == "event" else "long_term"


def layer_expr(importance: pl.Expr, kind: pl.Expr) -> pl.Expr:
    """:func:`default_layer` as a polars expression (the same rule, for a whole frame of writes)."""
    return (
        pl.when(importance < ADMISSION_MIN_IMPORTANCE)
        .then(pl.lit("short_term"))
        .when(kind == "event")
        .then(pl.lit("episodic"))
        .otherwise(pl.lit("long_term"))
    )


FINDING_KINDS = ("pii", "secret", "topic", "injection")  # what the guard found (memkit.guard)
# a finding's default severity: a secret or a banned topic refuses the write, an injection quarantines
_SEVERITY_BY_KIND = {"pii": "info", "secret": "error", "topic": "error", "injection": "warning"}


@dataclass(frozen=True)
class Finding:
    """One thing the guard found in a text: ``code`` (``MG101`` …, or a custom detector's), ``kind``
    (pii → redacted, secret/topic → write refused, injection → quarantined), ``severity`` (default by
    kind; an injection ``warning`` weighs 1.0, an ``info`` 0.5), a message that never repeats the
    matched text, and the span ``[start, end)`` in the text (None when it is about the whole text).

    >>> Finding("MG301", "injection", "override instruction", start=0, end=27).severity
    'warning'
    """

    code: str  # the rule that fired: MG101 ... (memkit.guard.rules), or a custom detector's code
    kind: str  # one of FINDING_KINDS
    message: str = ""  # what was found, in words; never the matched text itself
    severity: str | None = None  # info | warning | error; None takes the kind's default
    start: int | None = None  # span [start, end) in characters, or None for the whole text
    end: int | None = None

    def __post_init__(self) -> None:
        """Validate every field (a finding may come from a file) and fill in the default severity."""
        if not isinstance(self.code, str) or not self.code.strip():
            raise ValidationError("finding.code", f"must be a non-empty str, got {self.code!r}")
        check_choice("finding.kind", self.kind, FINDING_KINDS)
        if self.severity is None:
            object.__setattr__(self, "severity", _SEVERITY_BY_KIND[self.kind])
        check_choice("finding.severity", self.severity, ("info", "warning", "error"))
        if not isinstance(self.message, str):
            raise ValidationError("finding.message", "must be a str")
        for name in ("start", "end"):  # bool is an int subclass: True is not a position
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise ValidationError(f"finding.{name}", f"must be None or an int >= 0, got {v!r}")
        if (self.start is None) != (self.end is None) or (self.start is not None and self.end <= self.start):
            raise ValidationError(
                "finding.end", f"span must be both None or start < end, got {self.start}, {self.end}"
            )


def _findings(value: Any) -> tuple[Finding, ...]:
    """Stored findings (JSON text, a list of dicts, or Findings) -> a tuple of :class:`Finding`.

    Tolerant, because it reads what is stored: an entry that is not a valid finding is left out
    rather than making a read fail (files are checked strictly on import, see :mod:`memkit.portable.fields`).
    """
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return ()
    if not isinstance(value, (list, tuple)):
        return ()
    out = []
    for f in value:
        if isinstance(f, Finding):
            out.append(f)
        elif isinstance(f, dict):
            try:
                out.append(Finding(**f))
            except (TypeError, ValidationError):
                continue
    return tuple(out)


@dataclass(frozen=True)
class Memory:
    """One stored memory (one version of a key). Timestamps are timezone-aware UTC datetimes.

    A field added here is a column added by a new migration (:mod:`memkit.store.migrations`)."""

    id: str  # short random id (16 hex characters)
    namespace: str  # the tenant: every read and write is filtered by it inside the store
    content: str  # the memory text, after redaction
    key: str | None = None  # optional slot such as "deploy.prod.url"; the versions of one key share it
    value: Any = None  # optional structured value (any JSON)
    layer: str = "long_term"  # one of LAYERS
    kind: str = "fact"  # one of KINDS
    importance: float = DEFAULT_IMPORTANCE  # base score in [0, 1]
    half_life_hours: float = LAYER_HALF_LIFE_HOURS["long_term"]  # decay speed, > 0
    source: str = "user"  # one of SOURCES
    owner: str | None = None  # the owning module or user (access "protected")
    created_by: str | None = None  # the writer (access "private"); only the operator may forge it
    access: str = "public"  # one of ACCESS
    tags: tuple[str, ...] = ()  # labels, without duplicates, in the order given
    status: str = "active"  # one of STATUSES
    protected: bool = False  # never forgotten automatically
    valid_from: datetime | None = None  # when it starts to hold in the world (None: always did)
    valid_until: datetime | None = None  # when it stops holding: the window is [from, until)
    created_at: datetime | None = None  # when it was learned (a write may date it in the past)
    updated_at: datetime | None = None  # the store's clock at the last status change
    last_access_at: datetime | None = None  # the last recall (recency decays from here)
    access_count: int = 0  # how often it was recalled
    version: int = 1  # its number among the versions of its key
    supersedes: str | None = None  # the id of the version (or merge survivor) it replaced
    merged_from: tuple[str, ...] = ()  # the ids a consolidation merged into it
    findings: tuple[Finding, ...] = ()  # what the write-time guard found (memkit.guard)

    def __post_init__(self) -> None:
        """Accept findings as stored (dicts or JSON text) and keep them as :class:`Finding`."""
        if not all(isinstance(f, Finding) for f in self.findings):  # dicts or JSON from a row
            object.__setattr__(self, "findings", _findings(self.findings))

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of every field: tags, merged_from and findings as lists (findings as dicts)."""
        d = asdict(self)
        d["tags"], d["merged_from"] = list(self.tags), list(self.merged_from)
        d["findings"] = list(d["findings"])  # asdict made each Finding a dict
        return d

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Memory:
        """Build from a store row (a dict of column values; extra columns such as ``content_hash``
        are ignored). List columns become tuples and ``value`` JSON text is parsed, so a Memory read
        back equals the one that was written."""
        names = cls.__dataclass_fields__
        kw = {k: v for k, v in row.items() if k in names}
        kw["tags"], kw["merged_from"] = tuple(kw.get("tags") or ()), tuple(kw.get("merged_from") or ())
        kw["findings"] = _findings(kw.get("findings"))
        if isinstance(kw.get("value"), str):
            kw["value"] = json.loads(kw["value"])
        return cls(**kw)


# --------------------------------------------------------------------------------------------------
# The one list of Memory fields, and the subsets derived from it (tests/test_schema_fields.py keeps
# every other module from typing a list of fields again).

MEMORY_FIELDS: tuple[str, ...] = tuple(Memory.__dataclass_fields__)
"""Memory's fields in declaration order: ``("id", "namespace", "content", "key", ..., "findings")``."""

MEMORY_COLUMNS = MEMORY_FIELDS + ("content_hash",)
"""The fields plus ``content_hash``: every ``memories`` column a frame or file carries but the embedding."""

TABLE_FIELDS = ("id", "namespace", "key", *(f for f in MEMORY_FIELDS[2:] if f != "key"))
"""The fields in the ``memories`` table's order, and so every frame's and row batch's. Only ``key``
moves: a table column may precede ``content``, a dataclass field with a default may not."""

SYSTEM_FIELDS = ("id", "namespace", "status", "updated_at", "version", "supersedes", "merged_from",
                 "findings")  # fmt: skip
"""Fields a write never takes from its records: the id (made by the store), the namespace (an argument
of the call), status and lineage (the version plan decides), updated_at (the store's clock), findings."""

WRITABLE_FIELDS = tuple(f for f in MEMORY_FIELDS if f not in SYSTEM_FIELDS)
"""What a caller may set on a write (``add`` keywords, ``add_many`` columns), in Memory's order."""

# --------------------------------------------------------------------------------------------------
# Field validators: input -> clean value, or ValidationError naming the field.


def check_text(name: str, value: Any, *, max_chars: int = MAX_CONTENT_CHARS) -> str:
    """Memory text: a ``str`` of valid Unicode (no lone surrogates, no NUL) with something visible."""
    if not isinstance(value, str):
        raise ValidationError(name, f"must be a str, got {type(value).__name__}")
    if is_blank(value):  # only spaces and invisible characters
        raise ValidationError(name, "must not be empty")
    if len(value) > max_chars:
        raise ValidationError(name, f"is {len(value)} characters; the limit is {max_chars}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(name, "contains a lone surrogate (invalid Unicode)") from None
    if "\x00" in value:
        raise ValidationError(name, "contains a NUL character")
    return value


def check_name(name: str, value: Any, *, optional: bool = False) -> str | None:
    """Namespaces, keys, owners, requesters, tags: short printable strings.

    Any printable text is allowed (quotes, SQL, Chinese): values are always bound as parameters.
    Control characters, surrounding whitespace and empty strings are rejected.
    """
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValidationError(name, f"must be a str, got {type(value).__name__}")
    if not value or value != value.strip():  # (no value is quoted back: a name may hold a key)
        raise ValidationError(name, f"must be non-empty without surrounding whitespace ({len(value)} chars)")
    if len(value) > MAX_NAME_CHARS:
        raise ValidationError(name, f"is longer than {MAX_NAME_CHARS} characters")
    if (bad := next((c for c in value if unicodedata.category(c) in ("Cc", "Cs", "Cf")), None)) is not None:
        raise ValidationError(name, f"contains a control or invisible character (U+{ord(bad):04X})")
    return value if type(value) is str else str(value)  # a numpy str_ is stored and compared as a str


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """One of ``choices``: ``check_choice("layer", "long_term", LAYERS)``."""
    choices = tuple(choices)
    # subtle: compared only once it is a str (or None): an array's == is elementwise and ambiguous
    if not isinstance(value, (str, type(None))) or value not in choices:
        raise ValidationError(name, f"must be one of {', '.join(choices)}; got {value!r}")
    return value


def check_time(name: str, value: Any, *, optional: bool = False) -> datetime | None:
    """An aware datetime (naive ones are ambiguous) -> the instant in UTC (polars compares no two zones;
    Python compares one ``tzinfo``'s datetimes by wall clock, wrong across a daylight-saving fold)."""
    if value is None and optional:
        return None
    if not isinstance(value, datetime):
        raise ValidationError(name, f"must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(name, "must be timezone-aware (e.g. datetime(..., tzinfo=timezone.utc))")
    try:  # the store keeps UTC: an instant that has no UTC date (datetime.max at -05:00) cannot be stored
        return value.astimezone(UTC)
    except OverflowError:
        raise ValidationError(name, f"{value.isoformat()} is out of range once converted to UTC") from None


def clock(now: Any) -> Callable[[], datetime]:
    """A clock from a ``now=`` argument: None is the wall clock, a callable is called (and checked)
    each time, a datetime is fixed. What long-lived objects (an agent, a LangGraph store) keep."""
    if now is None:
        return lambda: datetime.now(UTC)
    if callable(now):
        return lambda: check_time("now", now())  # type: ignore[return-value]
    fixed = check_time("now", now)
    return lambda: fixed  # type: ignore[return-value]


def check_tags(value: Any) -> tuple[str, ...]:
    """A list of tag names -> a tuple without duplicates, order kept."""
    if value is None:
        return ()
    zero_d = getattr(value, "ndim", None) == 0  # a numpy scalar array: iterable by type, not in fact
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable) or zero_d:
        raise ValidationError("tags", f"must be a list of str, got {type(value).__name__}")
    tags = [check_name("tags", t) for t in value]
    return tuple(dict.fromkeys(tags))


def check_value(value: Any) -> str | None:
    """A structured value -> its JSON text (strict: no NaN/Infinity)."""
    if value is None:
        return None
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as e:
        raise ValidationError("value", f"must be JSON-serializable without NaN/Infinity: {e}") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError("value", "contains a lone surrogate (invalid Unicode)") from None
    return text


def check_validity(valid_from: datetime | None, valid_until: datetime | None) -> None:
    """``valid_until`` must come strictly after ``valid_from`` (the window is [from, until))."""
    if valid_from is not None and valid_until is not None and valid_until <= valid_from:
        raise ValidationError("valid_until", f"must be after valid_from ({valid_until} <= {valid_from})")


def check_half_life(value: Any) -> float:
    """A finite half-life in hours, >= :data:`~memkit.params.MIN_HOURS` (3.6 ms)."""
    return check_number("half_life_hours", value, lo=MIN_HOURS)


def check_importance(value: Any) -> float:
    """An importance in [0, 1]."""
    return check_number("importance", value, lo=0.0, hi=1.0)


def check_count(name: str, value: Any) -> int:
    """A non-negative whole number fitting an INTEGER column (``3``, ``3.0``; not ``1.5``, NaN, bools)."""
    v = check_number(name, value, lo=0, hi=COUNT_MAX)
    if v != int(v):
        raise ValidationError(name, f"must be a whole number, got {v}")
    return int(v)
