"""A parameters file: what was tuned in a notebook, saved, and loaded again by any store.

:class:`Settings` gathers the tunable parameters of a memory layer into one frozen value: the score
weights, decay, BM25 constants, guard, forgetting policy, merge threshold and conflict policy. Its
defaults are the library's defaults. :func:`save_settings` writes it as TOML (``.toml``) or JSON
(``.json``); :func:`load_settings` reads either back into the same value, floats bit for bit:

>>> import pathlib, tempfile
>>> tuned = Settings(weights=Weights(similarity=0.45, keyword=0.55), conflict_policy="supersede")
>>> with tempfile.TemporaryDirectory() as d:
...     save_settings(pathlib.Path(d) / "memkit.toml", tuned)
...     load_settings(pathlib.Path(d) / "memkit.toml") == tuned
True

The file is strict, because a typo must never be silently ignored: an unknown section or field is an
error naming it (``keyword.kl`` for ``k1``), a bad value is the parameter dataclass's own error renamed to
``section.field``, and a missing field takes its default (a file holding only ``[weights]`` is fine):

>>> Settings.from_dict({"keyword": {"kl": 1.2}})
Traceback (most recent call last):
...
memkit.errors.ValidationError: keyword.kl: unknown field; known: k1, b
>>> Settings.from_dict({"decay": {"min_strength": 2}})
Traceback (most recent call last):
...
memkit.errors.ValidationError: decay.min_strength: must be <= 1.0, got 2.0

The guard's ``detectors`` and ``judge`` are code, not settings: they are never written, and saving
a :class:`Settings` that holds some is refused (pass them in code where the store is opened). The
embedder is a setting by name: ``embedder`` holds its SPEC (``"hash"``, ``"st"``, ``"m2v:PATH"``, a blend
``"0.7*st,0.3*hash"``: :mod:`memkit.embed.spec`), checked when the file is read; the model is loaded
when a store opens with it. An error of :func:`load_settings` names the file too::

    embedder: 'bert' is not hash[:DIM], st[:MODEL], m2v:PATH or a blend W*SPEC,W*SPEC (settings file 'x.toml')
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .conflicts import POLICIES
from .consolidate import MergeParams
from .embed import check_spec
from .errors import FormatError, ValidationError, check_bool, check_output, check_path
from .outfile import write_file
from .params import DecayParams, ForgetParams, GuardParams, KeywordParams, Weights, slider_ranges
from .schema import check_choice

__all__ = ["FORMAT_VERSION", "Settings", "load_settings", "save_settings"]

FORMAT_VERSION = 1  # the file's ``memkit_settings`` key; a reader refuses a newer one
_VERSION_KEY = "memkit_settings"
# section name in the file -> parameter dataclass (the order the file lists them in)
_SECTIONS: dict[str, type] = {
    "weights": Weights,
    "decay": DecayParams,
    "keyword": KeywordParams,
    "guard": GuardParams,
    "forget": ForgetParams,
}
_CODE_FIELDS = ("detectors", "judge")  # GuardParams fields holding callables: set in code, never saved
_SUFFIXES = (".toml", ".json")


def _saved_fields(params: type) -> list[str]:
    """The fields of a parameter dataclass that a settings file holds (all but the callables)."""
    return [f.name for f in dataclasses.fields(params) if f.name not in _CODE_FIELDS]


def _message(error: ValidationError) -> str:
    """The message of ``error`` without its field name: ``"Weights.tie: must be ..." -> "must be ..."``."""
    return str(error).removeprefix(f"{error.field}: ")


def _in_section(error: ValidationError, section: str) -> ValidationError:
    """``Weights.keyword: must be ...`` -> ``weights.keyword: must be ...``: the file's names."""
    _, _, attr = error.field.partition(".")  # "Weights" alone for a rule over all the weights
    return ValidationError(f"{section}.{attr}" if attr else section, _message(error))


@dataclass(frozen=True)
class Settings:
    """The tunable parameters of a memory layer, as one value (the defaults are the library's).

    - ``weights``, ``decay``, ``keyword``, ``guard``, ``forget``: the parameter dataclasses of
      :mod:`memkit.params`, each validated by its own ``__post_init__``.
    - ``merge_threshold``: cosine at which :meth:`MemoryStore.consolidate` merges two memories
      (:class:`memkit.MergeParams`' default, 0.85; the same [0.5, 1] range).
    - ``merge_distinct_facts``: whether consolidation keeps memories whose fact tokens differ apart
      (:class:`memkit.MergeParams`' ``distinct_facts``, True); a file records it only when False.
    - ``conflict_policy``: what a keyed write with a different value does, one of
      :data:`memkit.conflicts.POLICIES` (``"flag"``, ``"supersede"``, ``"strict"``).
    - ``embedder``: the SPEC of the embedder a store opens with when given no ``embedder=``
      (:mod:`memkit.embed.spec`; kept in its canonical form), or None (default): not recorded, the
      store's default (the command line: the one the file records). ``store.settings`` reports the
      store's own when a SPEC can express it.

    >>> Settings().merge_threshold, Settings().conflict_policy, Settings(embedder="hash:384").embedder
    (0.85, 'flag', 'hash')
    >>> Settings(conflict_policy="overwrite")
    Traceback (most recent call last):
    ...
    memkit.errors.ValidationError: conflict_policy: must be one of flag, supersede, strict; got 'overwrite'
    """

    weights: Weights = field(default_factory=Weights, metadata={"doc": "hybrid score weights"})
    decay: DecayParams = field(default_factory=DecayParams, metadata={"doc": "decay and reinforcement"})
    keyword: KeywordParams = field(default_factory=KeywordParams, metadata={"doc": "BM25 constants"})
    guard: GuardParams = field(default_factory=GuardParams, metadata={"doc": "write/read-time guard"})
    forget: ForgetParams = field(default_factory=ForgetParams, metadata={"doc": "forgetting policy"})
    merge_threshold: float = field(
        default=MergeParams().threshold,
        metadata={"range": slider_ranges(MergeParams)["threshold"], "doc": "cosine to merge"},
    )
    merge_distinct_facts: bool = field(
        default=MergeParams().distinct_facts,
        metadata={"doc": "never merge memories whose fact tokens differ"},
    )
    conflict_policy: str = field(default="flag", metadata={"doc": "keyed-write conflict policy"})
    embedder: str | None = field(default=None, metadata={"doc": "the embedder's SPEC (None: not recorded)"})

    def __post_init__(self) -> None:
        for name, params in _SECTIONS.items():
            if not isinstance(getattr(self, name), params):
                got = type(getattr(self, name)).__name__
                raise ValidationError(name, f"must be a memkit.{params.__name__}, got {got}")
        try:  # one rule for the threshold: MergeParams' own validation
            threshold = MergeParams(threshold=self.merge_threshold).threshold
        except ValidationError as e:
            raise ValidationError("merge_threshold", _message(e)) from None
        object.__setattr__(self, "merge_threshold", threshold)
        if not isinstance(self.merge_distinct_facts, bool):
            got = type(self.merge_distinct_facts).__name__
            raise ValidationError("merge_distinct_facts", f"must be a bool, got {got}")
        check_choice("conflict_policy", self.conflict_policy, POLICIES)
        if self.embedder is not None:  # its form only: the model is loaded by the store that opens with it
            object.__setattr__(self, "embedder", check_spec("embedder", self.embedder))

    def to_dict(self) -> dict[str, Any]:
        """A plain JSON-able dict: the format version and the scalars first (``embedder`` when set),
        then one dict per section (tuples become lists). Refuses guard detectors or a judge (callables
        cannot be saved).

        >>> d = Settings().to_dict()
        >>> list(d)[:4], d["weights"]["keyword"], d["guard"]["strict_sources"]
        (['memkit_settings', 'merge_threshold', 'conflict_policy', 'weights'], 0.7, ['tool', 'import'])
        """
        for name, empty in zip(_CODE_FIELDS, ("()", "None"), strict=True):
            if getattr(self.guard, name):
                raise ValidationError(
                    f"guard.{name}",
                    "callables cannot be saved in a settings file; save dataclasses.replace(settings, "
                    f"guard=dataclasses.replace(settings.guard, {name}={empty})) and set them in code",
                )
        out: dict[str, Any] = {
            _VERSION_KEY: FORMAT_VERSION,
            "merge_threshold": self.merge_threshold,
            "conflict_policy": self.conflict_policy,
        }
        if not self.merge_distinct_facts:  # the default (True) is not written: older readers read the file
            out["merge_distinct_facts"] = False
        if self.embedder is not None:  # (TOML has no null: not recorded, not written)
            out["embedder"] = self.embedder
        for name, params in _SECTIONS.items():
            section = getattr(self, name)
            out[name] = {}
            for f in _saved_fields(params):
                v = getattr(section, f)
                out[name][f] = list(v) if isinstance(v, tuple) else v
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Settings:
        """The inverse of :meth:`to_dict`. Missing sections and fields take their defaults; unknown
        ones, a newer format version and bad values raise :class:`~memkit.errors.ValidationError`
        naming them (``section.field``)."""
        if not isinstance(data, dict):
            raise ValidationError("settings", f"must be a table of sections, got {type(data).__name__}")
        version = data.get(_VERSION_KEY, FORMAT_VERSION)  # a hand-written file may leave it out
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValidationError(_VERSION_KEY, f"must be a format version (an int >= 1), got {version!r}")
        if version > FORMAT_VERSION:
            raise ValidationError(
                _VERSION_KEY,
                f"the file is settings format {version}, this memkit reads format {FORMAT_VERSION} "
                "and older; upgrade memkit to load it",
            )
        scalars = ("merge_threshold", "merge_distinct_facts", "conflict_policy", "embedder")
        known = (_VERSION_KEY, *scalars, *_SECTIONS)
        for key in data:
            if key not in known:
                raise ValidationError(str(key), f"unknown section or field; known: {', '.join(known)}")
        kwargs: dict[str, Any] = {k: data[k] for k in scalars if k in data}
        for name, params in _SECTIONS.items():
            section = data.get(name, {})
            if not isinstance(section, dict):
                raise ValidationError(name, f"must be a table of fields, got {type(section).__name__}")
            fields = _saved_fields(params)
            for key in section:
                if key in _CODE_FIELDS:
                    raise ValidationError(f"{name}.{key}", "is code, not a setting: pass it in code")
                if key not in fields:
                    raise ValidationError(f"{name}.{key}", f"unknown field; known: {', '.join(fields)}")
            try:  # each dataclass validates its own values (types, ranges, regexes, ...)
                kwargs[name] = params(**section)
            except ValidationError as e:
                raise _in_section(e, name) from None
        return cls(**kwargs)


# -------------------------------------------------------------------------------------------- files
def _toml_value(v: Any) -> str:
    """One TOML value: ``True -> true``, ``0.1 -> 0.1`` (repr: exact round trip), ``"a" -> "a"``.

    A JSON string is a TOML basic string for every character but DEL, which TOML wants escaped
    (JSON's ``\\uXXXX`` escapes of the other control characters are valid TOML too).
    """
    if isinstance(v, bool):  # subtle: before int, since bool is an int
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)  # ints as ints; floats as the shortest repr that reads back bit-equal
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")  # to_dict only holds the types above


def _to_toml(data: dict[str, Any]) -> str:
    """Top-level keys first (TOML puts them before any table), then one ``[section]`` per dict."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for name, section in data.items():
        if isinstance(section, dict):
            lines += ["", f"[{name}]"] + [f"{k} = {_toml_value(v)}" for k, v in section.items()]
    return "\n".join(lines) + "\n"


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise ValidationError("path", f"must end in .toml or .json, got {str(path)!r}")
    return suffix


_BAD_PATH = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)
"""What a path the caller named can do wrong: a ValidationError on ``path``, not an OSError."""


def save_settings(path: str | os.PathLike[str], settings: Settings, *, force: bool = False) -> None:
    """Write ``settings`` to ``path``: TOML for ``.toml``, JSON for ``.json``.

    Atomic: the text goes to a temporary file in the same directory, which then replaces ``path``
    in one step (:func:`os.replace`), so a failed save leaves the old file, never half of a new one.
    A database file at ``path`` (a store named ``store.json``) is refused, not overwritten; a
    symbolic link's target is written, the link kept (:mod:`memkit.outfile`); a read-only file is
    refused, unless ``force``.
    """
    path = check_path("path", path)
    suffix = _suffix(path)
    check_bool("force", force)
    check_output("path", path)  # never over a database (a store named store.json) nor a folder
    if not isinstance(settings, Settings):
        raise ValidationError("settings", f"must be a memkit.Settings, got {type(settings).__name__}")
    data = settings.to_dict()
    text = _to_toml(data) if suffix == ".toml" else json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    write_file("path", path, lambda f: f.write(text), force=force)


class _Object(dict[str, Any]):
    """A JSON object as read, with the keys it held more than once (``twice``)."""

    twice: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> _Object:
    """``json.loads``' object hook: the object, its repeated keys noted (an inner object is read before
    its section is known, so :func:`_unique_keys` names them once the whole file is read)."""
    out = _Object()
    out.twice = []
    for k, v in pairs:
        if k in out:
            out.twice.append(k)
        out[k] = v
    return out


def _unique_keys(data: Any, prefix: str = "") -> None:
    """A JSON file whose keys are unique (TOML refuses a repeated key; so does this reader), else
    ValidationError naming the first repeated one with its section: ``weights.similarity``."""
    if isinstance(data, _Object):
        if data.twice:
            raise ValidationError(prefix + data.twice[0], "appears twice")
        for k, v in data.items():
            _unique_keys(v, f"{prefix}{k}.")
    elif isinstance(data, list):
        for v in data:
            _unique_keys(v, prefix)


def load_settings(path: str | os.PathLike[str]) -> Settings:
    """Read a settings file written by :func:`save_settings` (or by hand) -> :class:`Settings`.

    Raises :class:`~memkit.errors.FormatError` for text that is not TOML / JSON, and
    :class:`~memkit.errors.ValidationError` naming the section and field of an unknown or bad entry,
    and the file: ``weights.similarty: unknown field; known: ... (settings file 'tuned.toml')``.
    """
    path = check_path("path", path)
    suffix = _suffix(path)
    if path.exists() and not path.is_file():  # a folder, or a pipe that would wait for a writer
        raise ValidationError("path", f"{str(path)!r} is not a regular file")
    try:  # "utf-8-sig": a byte order mark at the start (Windows editors write one) is dropped
        text = path.read_text(encoding="utf-8-sig")
    except _BAD_PATH as e:
        raise ValidationError("path", f"cannot read {str(path)!r}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise FormatError("path", f"{str(path)!r} is not UTF-8 text: {e.reason}") from None
    try:  # a RecursionError: brackets nested thousands deep, which no settings file needs
        data = tomllib.loads(text) if suffix == ".toml" else json.loads(text, object_pairs_hook=_pairs)
        _unique_keys(data)
    except ValidationError as e:  # a repeated key: its field, and which file
        raise type(e)(e.field, f"{_message(e)} (settings file {str(path)!r})") from None
    except (ValueError, RecursionError) as e:  # the decoders' errors, an integer of over 4,300 digits
        why = "nested too deeply" if isinstance(e, RecursionError) else str(e).split("; use sys.")[0]
        raise FormatError("path", f"{str(path)!r} is not valid {suffix[1:].upper()}: {why}") from None
    try:
        return Settings.from_dict(data)
    except ValidationError as e:  # an entry of the file: its field, and which file
        raise type(e)(e.field, f"{_message(e)} (settings file {str(path)!r})") from None
