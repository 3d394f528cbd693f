"""Tunable parameters as frozen dataclasses.

Every field has a documented default (the source articles' numbers) and is validated in
``__post_init__``, which :func:`dataclasses.replace` re-runs, so an invalid setting can never exist:

>>> import dataclasses
>>> w = Weights()
>>> dataclasses.replace(w, recency=0.2).recency
0.2
>>> Weights(similarity=float("nan"))
Traceback (most recent call last):
...
memkit.errors.ValidationError: Weights.similarity: must be a finite number, got nan

Field metadata carries a slider range (``metadata["range"]``: min, max, step), read by :func:`slider_ranges`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from .errors import ValidationError, check_bool

__all__ = ["DecayParams", "ForgetParams", "GuardParams", "KeywordParams", "MAX_WEIGHT", "MIN_HOURS",
           "NEVER_REMEMBER", "Weights", "check_number", "slider_ranges"]  # fmt: skip


def _knob(default: float, lo: float, hi: float, step: float, doc: str) -> Any:
    """A tunable float field: its default and the slider range the notebooks build for it."""
    return field(default=default, metadata={"range": (lo, hi, step), "doc": doc})


def check_number(
    name: str,
    value: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
) -> float:
    """Return ``value`` as a float, or raise ValidationError naming ``name``.

    Rejects bools, non-numbers, NaN and infinities, and values outside ``[lo, hi]``
    (``(lo, hi]`` with ``lo_open=True``).
    """
    # numbers.Real covers int, float and numpy scalars; bool is an int but never a valid number here
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(name, f"must be a number, got {type(value).__name__}")
    try:
        v = float(value)
    except OverflowError:  # an int past float's range (10**400): no finite number
        raise ValidationError(name, "must be a finite number, got an integer past float's range") from None
    if not math.isfinite(v):
        raise ValidationError(name, f"must be a finite number, got {v}")
    if lo is not None and (v <= lo if lo_open else v < lo):
        raise ValidationError(name, f"must be {'>' if lo_open else '>='} {lo}, got {v}")
    if hi is not None and v > hi:
        raise ValidationError(name, f"must be <= {hi}, got {v}")
    return v


# the largest weight (and BM25 k1): far above any useful value (the sliders stop at 1 and 3), far
# below where the score's float64 sums overflow (1e308 weights used to crash search's ranking)
MAX_WEIGHT = 1000.0
MIN_HOURS = 1e-6  # the shortest half-life and recency time scale (hours: 3.6 ms); 1e-320 overflowed decay


def _validate_fields(obj: Any, hi: float | None = None) -> None:
    """Check each field against its slider range's lower end (>= lo) and ``hi``."""
    for f in dataclasses.fields(obj):
        lo, _, _ = f.metadata["range"]
        v = check_number(f"{type(obj).__name__}.{f.name}", getattr(obj, f.name), lo=lo, hi=hi)
        object.__setattr__(obj, f.name, v)


@dataclass(frozen=True)
class Weights:
    """Weights of the hybrid score (DESIGN.md): ``score = similarity·cos + importance·imp +
    recency·rec + keyword·kw``. Each weight is in [0, 1000] (:data:`MAX_WEIGHT`) and at least one
    is positive. They need not sum to 1; :meth:`normalized` rescales them if you want scores in
    [0, 1]-ish units.

    The defaults are the best configuration tested on LoCoMo (chosen on conversations 1-5, checked
    on 6-10; ``benchmarks/locomo_defaults.py``): similarity 0.3 + keyword 0.7 with neighbour
    expansion 0.8 and newest-first near ties (0.1). Recency and importance did not help there (every
    turn has the same importance, and recency rewards what was asked about last); set them for your
    data. :meth:`articles` is the source articles' formula, which the scoring lessons teach.

    ``neighbour`` adds neighbour expansion: ``+ neighbour · (max(score of the memory written just
    before, just after) + neighbour2 · max(score of the memories two places before, after))`` in the
    same namespace (each step within a day; :func:`memkit.scoring.adjacent`), so a conversation turn
    near a strong hit rises with it. ``neighbour2`` is 0 by default: on LoCoMo's turns it gains 3-4
    R@5 points, but among facts written together it lifts a memory wedged between two hits above
    the better one (README, "Results on LoCoMo"). ``tie`` is not a weight but how the score
    ranks: hits within one step of ``tie`` of each other
    (counted down from the best hit) rank newest first (:mod:`memkit.ties`: a score on a step's edge
    is in the step it begins, at any scale), so a newer value wins a near tie; 0: plain score order.
    """

    similarity: float = _knob(0.3, 0.0, 1.0, 0.05, "weight of cosine similarity to the query")
    importance: float = _knob(0.0, 0.0, 1.0, 0.05, "weight of the stored importance in [0, 1]")
    recency: float = _knob(0.0, 0.0, 1.0, 0.05, "weight of exp(-hours since last access / scale)")
    keyword: float = _knob(0.7, 0.0, 1.0, 0.05, "weight of the per-query scaled BM25 score")
    neighbour: float = _knob(0.8, 0.0, 1.0, 0.05, "weight of the better score of the two adjacent memories")
    tie: float = _knob(0.1, 0.0, 0.2, 0.005, "near-tie step: hits this close in score rank newest first")
    neighbour2: float = _knob(0.0, 0.0, 1.0, 0.05, "share of the memories two places away (neighbour term)")

    def __post_init__(self) -> None:
        _validate_fields(self, hi=MAX_WEIGHT)
        check_number("Weights.tie", self.tie, hi=1.0)
        if self.total() <= 0:
            raise ValidationError("Weights", "at least one weight must be positive")

    @classmethod
    def articles(cls) -> Weights:
        """The source articles' formula, ``0.6·similarity + 0.3·importance + 0.1·recency`` (no keyword,
        no neighbours, plain score order): what the lessons on scoring teach.

        >>> Weights.articles().similarity, Weights.articles().keyword
        (0.6, 0.0)
        """
        return cls(similarity=0.6, importance=0.3, recency=0.1, keyword=0.0, neighbour=0.0, tie=0.0)

    def total(self) -> float:
        """Sum of the four weights."""
        return self.similarity + self.importance + self.recency + self.keyword

    def normalized(self) -> Weights:
        """The same proportions, summing to 1: ``Weights(1, 1, 0, 0).normalized().similarity == 0.5``."""
        t = self.total()
        return Weights(self.similarity / t, self.importance / t, self.recency / t, self.keyword / t,
                       self.neighbour, self.tie, self.neighbour2)  # fmt: skip


@dataclass(frozen=True)
class DecayParams:
    """How memories fade and are reinforced.

    - ``time_scale_hours``: recency = exp(-hours_since_last_access / time_scale_hours); 168 h = 7 days.
    - ``min_strength``: retrieval floor; a memory whose strength
      (importance · 0.5^(age / half_life)) is below it is not recalled. Default 0 (no floor): on
      LoCoMo, whose conversations span ten months, the articles' 0.1 hid 15% of the evidence and
      cost 6 points of recall@5; pass ``DecayParams(min_strength=0.1)`` for the articles' floor.
      Forgetting (``ForgetParams.min_strength``, 0.05) still drops weak memories for good.
    - ``reinforce_step``: importance added on each hit (capped at 1.0).
    """

    time_scale_hours: float = _knob(168.0, 1.0, 24.0 * 90, 1.0, "recency time scale (hours)")
    min_strength: float = _knob(0.0, 0.0, 1.0, 0.01, "retrieval floor on decayed strength")
    reinforce_step: float = _knob(0.005, 0.0, 0.1, 0.001, "importance added per retrieval hit")

    def __post_init__(self) -> None:
        _validate_fields(self)
        check_number("DecayParams.time_scale_hours", self.time_scale_hours, lo=MIN_HOURS)
        check_number("DecayParams.min_strength", self.min_strength, hi=1.0)
        check_number("DecayParams.reinforce_step", self.reinforce_step, hi=1.0)


@dataclass(frozen=True)
class KeywordParams:
    """Okapi BM25 constants of the keyword score: ``k1`` saturates term frequency, ``b`` normalizes
    by document length (0 = none, 1 = full); ``k1`` is at most 1000 (:data:`MAX_WEIGHT`). The
    defaults, 0.3 and 0.4, were chosen on LoCoMo conversations 1-5 and checked on 6-10
    (``benchmarks/locomo_defaults.py``): memories are short, so a repeated word should count little
    (the textbook 1.2-2.0 and 0.75 suit long documents)."""

    k1: float = _knob(0.3, 0.0, 3.0, 0.1, "term-frequency saturation")
    b: float = _knob(0.4, 0.0, 1.0, 0.05, "length normalization")

    def __post_init__(self) -> None:
        _validate_fields(self, hi=MAX_WEIGHT)
        check_number("KeywordParams.b", self.b, hi=1.0)


def slider_ranges(params: type) -> dict[str, tuple[float, float, float]]:
    """``{field: (min, max, step)}`` of a parameter dataclass, for building sliders.

    >>> slider_ranges(Weights)["similarity"]
    (0.0, 1.0, 0.05)
    """
    return {f.name: f.metadata["range"] for f in dataclasses.fields(params) if "range" in f.metadata}


@dataclass(frozen=True)
class ForgetParams:
    """A forgetting policy (see :mod:`memkit.forget`); ``drop_expired``: drop what ``valid_until`` ended.

    - ``capacity``: live memories kept per namespace; above it the lowest forget-cost go first (equal
      costs: the one that says least, then the oldest).
    - ``min_strength``: strength below which a memory is dropped as weak: 0.05, the articles' 0.1 one
      half-life later (on LoCoMo 0.1 erased 13% of the evidence: README, "Forgetting").
    - ``cost_importance`` / ``cost_access``: forget-cost = cost_importance · importance +
      access_count / cost_access (the articles' 2 · importance + access_count / 1.1).
    """

    capacity: float = _knob(500, 1, 100_000, 1, "live memories kept per namespace")
    min_strength: float = _knob(0.05, 0.0, 1.0, 0.01, "strength below which a memory is dropped")
    drop_expired: bool = field(default=True, metadata={"doc": "drop memories past valid_until"})
    cost_importance: float = _knob(2.0, 0.0, 10.0, 0.1, "forget-cost weight of importance")
    cost_access: float = _knob(1.1, 0.1, 100.0, 0.1, "forget-cost divisor of access_count")

    def __post_init__(self) -> None:
        for f in (f for f in dataclasses.fields(self) if "range" in f.metadata):
            lo, hi, _ = f.metadata["range"]
            v = check_number(f"ForgetParams.{f.name}", getattr(self, f.name), lo=lo, hi=hi)
            object.__setattr__(self, f.name, v)
        if self.capacity != int(self.capacity):
            raise ValidationError("ForgetParams.capacity", f"must be a whole number, got {self.capacity}")
        object.__setattr__(self, "capacity", int(self.capacity))
        check_bool("ForgetParams.drop_expired", self.drop_expired)


# The articles' "记忆观察名单": topics never remembered automatically (passwords, tokens, bank
# accounts). Opt in with GuardParams(never_remember=NEVER_REMEMBER): by default only secret *values*
# are refused, since a mere mention ("忘记密码了怎么办") is an ordinary thing to remember.
NEVER_REMEMBER = ("密码", "令牌", "银行账号", "password", "access token", "bank account number")
PII_TYPES = ("email", "phone", "id_number", "card", "ip", "account")
_SOURCES = ("user", "agent", "system", "tool", "import")  # memkit.schema.SOURCES (params sits below schema)
_NAME_CHARS = 256  # memkit.schema.MAX_NAME_CHARS, the longest requester name


def _str_tuple(name: str, value: Any) -> tuple[str, ...]:
    """A tuple or list of non-empty str of valid Unicode -> a tuple (else ValidationError naming ``name``:
    a bare str; a lone surrogate, which no settings file could save)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValidationError(name, f"must be a tuple of str, got {type(value).__name__}")
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise ValidationError(name, "must hold non-empty strings only")
    try:
        "".join(value).encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(name, "contains a lone surrogate (invalid Unicode)") from None
    return tuple(value)


def _requester_name(name: str, value: str) -> None:
    """ValidationError naming ``name`` unless a requester may be named ``value``: the rule of
    :func:`memkit.schema.check_name` (params sits below schema; a test keeps the two in step)."""
    if value != value.strip() or len(value) > _NAME_CHARS:  # (not quoted back: a name may hold a key)
        raise ValidationError(name, f"must be {_NAME_CHARS} characters at most, without surrounding spaces")
    if (bad := next((c for c in value if unicodedata.category(c) in ("Cc", "Cs", "Cf")), None)) is not None:
        raise ValidationError(name, f"contains a control or invisible character (U+{ord(bad):04X})")


@dataclass(frozen=True)
class GuardParams:
    """The write-time and read-time guard (see :mod:`memkit.guard`); ``enabled=False`` turns it off.

    - ``redact_pii`` / ``pii``: replace these PII types by typed placeholders (``[EMAIL]``, ...).
    - ``block_secrets``: refuse writes holding API keys, tokens, passwords, private keys, or a
      ``never_remember`` topic (plain phrases, case-insensitive; the articles' list is
      :data:`NEVER_REMEMBER`, off by default).
    - ``screen_injection``: quarantine a write whose injection findings weigh at least
      ``quarantine_score`` (a ``warning`` weighs 1.0, an ``info`` 0.5), or whose injection
      probability (the learned detector, :mod:`memkit.guard.learned`, with the rules' findings among
      its features) reaches ``injection_threshold`` — ``strict_threshold`` for memories whose
      ``source`` is in ``strict_sources`` (text a tool returned or a file brought in: an instruction
      hidden in an e-mail or a web page). ``learned`` is off by default (the rules alone): the model
      over-flags long documents and benign questions on sensitive topics (README, guard benchmark).
    - ``extra_secret_patterns`` / ``extra_injection_patterns``: your own regexes (no look-around:
      they run in polars too).
    - ``detectors``: callables ``text -> iterable of memkit.guard.Finding`` (e.g. an LLM judge), run
      on every text after the rules; ``judge``: ``(query, contents) -> list[bool]`` for the read-time
      consistency check.
    - ``min_encoded_chars``: shortest base64 run screened as an encoded payload.
    - ``lesson_similarity``: cosine at or above which a memory counts as a repeat of a lesson.
    - ``outlier_z`` / ``min_hits``: read-time consistency, a hit is an outlier when its robust
      z-score of agreement with the other hits is below ``-outlier_z`` (needs ``min_hits`` hits).
    - ``reviewers``: requesters allowed to ``approve`` quarantined memories besides the operator.

    >>> GuardParams(quarantine_score=0.2)
    Traceback (most recent call last):
    ...
    memkit.errors.ValidationError: GuardParams.quarantine_score: must be >= 0.5, got 0.2
    """

    enabled: bool = field(default=True, metadata={"doc": "run the guard at all"})
    redact_pii: bool = field(default=True, metadata={"doc": "redact PII with typed placeholders"})
    block_secrets: bool = field(default=True, metadata={"doc": "refuse writes that hold secrets"})
    screen_injection: bool = field(default=True, metadata={"doc": "quarantine suspected injections"})
    quarantine_score: float = _knob(1.0, 0.5, 5.0, 0.5, "injection weight that quarantines a write")
    learned: bool = field(default=False, metadata={"doc": "run the learned detector (opt-in)"})
    injection_threshold: float = _knob(0.5, 0.05, 0.99, 0.01, "injection probability that quarantines")
    strict_threshold: float = _knob(
        0.2, 0.05, 0.99, 0.01, "injection probability that quarantines a strict source's write"
    )
    strict_sources: tuple[str, ...] = field(
        default=("tool", "import"), metadata={"doc": "sources screened with strict_threshold"}
    )
    min_encoded_chars: float = _knob(40, 16, 400, 4, "shortest base64 run screened as a payload")
    lesson_similarity: float = _knob(0.9, 0.5, 1.0, 0.01, "cosine to a lesson that flags a memory")
    outlier_z: float = _knob(2.5, 0.5, 6.0, 0.1, "robust z below which a hit disagrees with the rest")
    min_hits: float = _knob(4, 3, 50, 1, "fewest hits for the consistency check")
    pii: tuple[str, ...] = field(default=PII_TYPES, metadata={"doc": "PII types to redact"})
    never_remember: tuple[str, ...] = field(default=(), metadata={"doc": "refused topics (NEVER_REMEMBER)"})
    extra_secret_patterns: tuple[str, ...] = field(default=(), metadata={"doc": "regexes refused"})
    extra_injection_patterns: tuple[str, ...] = field(default=(), metadata={"doc": "regexes quarantined"})
    reviewers: tuple[str, ...] = field(default=(), metadata={"doc": "who may approve"})
    detectors: tuple[Any, ...] = field(default=(), metadata={"doc": "text -> findings callables"})
    judge: Any = field(default=None, metadata={"doc": "(query, contents) -> list[bool] flags"})

    def __post_init__(self) -> None:
        import polars as pl

        for f in dataclasses.fields(self):
            v, name = getattr(self, f.name), f"GuardParams.{f.name}"
            if "range" in f.metadata:
                lo, hi, _ = f.metadata["range"]
                v = check_number(name, v, lo=lo, hi=hi)
                if f.name in ("min_encoded_chars", "min_hits"):
                    if v != int(v):
                        raise ValidationError(name, f"must be a whole number, got {v}")
                    v = int(v)
            elif f.type == "bool" and not isinstance(v, bool):
                if type(v).__name__ not in ("bool", "bool_"):  # numpy's bool is one too (np.True_)
                    raise ValidationError(name, f"must be a bool, got {type(v).__name__}")
                v = bool(v)
            elif f.type == "tuple[str, ...]":  # pii, strict_sources, never_remember, *_patterns, reviewers
                v = _str_tuple(name, v)
            object.__setattr__(self, f.name, v)
        for reviewer in self.reviewers:
            _requester_name("GuardParams.reviewers", reviewer)
        if bad := set(self.strict_sources) - set(_SOURCES):
            raise ValidationError(
                "GuardParams.strict_sources", f"unknown source {sorted(bad)[0]!r}; use {_SOURCES}"
            )
        if bad := set(self.pii) - set(PII_TYPES):
            raise ValidationError("GuardParams.pii", f"unknown type {sorted(bad)[0]!r}; use {PII_TYPES}")
        for f in ("extra_secret_patterns", "extra_injection_patterns"):
            for p in getattr(self, f):
                try:  # the same pattern runs in Python (spans) and in polars (batch pre-filter); ".*"
                    why = "matches the empty string (so every text)" if re.compile(p).search("") else None
                    pl.Series(["x"]).str.contains(p)  # would refuse every write, naming its namespace
                except (re.error, pl.exceptions.PolarsError) as e:
                    why = f"is not a usable regex: {e}"
                if why:
                    raise ValidationError(f"GuardParams.{f}", f"{p!r} {why}") from None
        if isinstance(self.detectors, (str, bytes)) or not isinstance(self.detectors, (list, tuple)):
            raise ValidationError("GuardParams.detectors", "must be a tuple of callables")
        object.__setattr__(self, "detectors", tuple(self.detectors))
        if not all(callable(d) for d in self.detectors):
            raise ValidationError("GuardParams.detectors", "must hold callables text -> findings")
        if self.judge is not None and not callable(self.judge):
            raise ValidationError("GuardParams.judge", "must be None or callable (query, contents) -> flags")
