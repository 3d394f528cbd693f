"""MemoryStore: agent memories in DuckDB, searched through an in-memory numpy index.

The class is assembled from the parts of this package, each a mixin over
:class:`~memkit.store.core.StoreCore` that declares what it needs by inheriting it:

==================  ===========================================================================
part                what it does
==================  ===========================================================================
``core``            connection, transactions (``transaction()``), the declared state
``retry``           which failed transactions run again, and how often they did (``retries``)
``files``           open (lock, hardening, migrations, embedder check), ``compact``, ``close``
``compaction``      when a file is compacted: after erasures; a due file at open and close
``audit``           the one audit writer (events never hold memory text)
``vectors``         embedding cache, inserts, the derived numpy index
``reembed``         ``reembed``: every vector recomputed with another embedder
``gate``            the read gate: namespace, access, status, validity; reads by id
``guard``           the guard stage of every write (text, values, names)
``versions``        the version plan of keyed writes
``resolve``         ``resolve``: a key settled, its losers checked again inside the transaction
``pipeline``        the write pipeline: validate, guard, embed, version plan, commit, index
``write``           ``add``, ``add_many``
``review``          ``quarantine``, ``approve``, lessons
``read``            ``get``, ``read``, ``versions``, ``frame``, ``count``, ``audit``, ``reinforce``
``search``          ``search``
``merge``           ``merge_candidates``, ``consolidate`` (through the write pipeline)
``maintain``        ``delete``, ``forget`` (final erasure), ``analyze``
``portable``        ``export``, ``import_``
``settable``        the parameters that may be assigned (``store.guard = ...``), checked; those fixed at open
==================  ===========================================================================

>>> from datetime import datetime, timedelta, timezone
>>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
>>> with MemoryStore() as store:
...     m = store.add("用户住在杭州滨江区", namespace="user_87", key="user.address", now=now)
...     hits = store.search("住在哪里", namespace="user_87", k=3, now=now)
>>> hits["content"].to_list()
['用户住在杭州滨江区']
"""

from __future__ import annotations

import os
import threading

from ..consolidate import MergeParams
from ..embed import Embedder, HashEmbedder, spec_of
from ..errors import ValidationError, check_path
from ..params import DecayParams, ForgetParams, GuardParams, KeywordParams, Weights
from ..schema import check_choice
from ..settings import Settings
from . import int8_kernels
from .copy import CopyMixin
from .identities import IdentitiesMixin
from .maintain import MaintainMixin
from .portable import PortableMixin
from .postgres import is_url
from .quantized import INDEXES
from .reembed import ReembedMixin
from .resolve import ResolveMixin
from .retry import RetryMixin
from .review import ReviewMixin
from .rwlock import StoreLock
from .search import SearchMixin
from .settable import (
    Checked,
    Fixed,
    a_bool,
    a_path,
    a_policy,
    a_settings,
    a_threshold,
    an_embedder,
    an_instance,
    opening_embedder,
    warn_other_embedder,
    warn_unscreened,
)
from .stale import warn_stale_settings
from .write import WriteMixin

__all__ = ["MemoryStore"]

_DEFAULTS = (DecayParams(), KeywordParams(), GuardParams())
# the store's attribute -> the Settings field it takes (store.settings = ... sets them all)
_SETTINGS = {
    "weights": "weights",
    "decay": "decay",
    "keyword": "keyword",
    "guard": "guard",
    "forget_policy": "forget",
    "merge_threshold": "merge_threshold",
    "merge_distinct_facts": "merge_distinct_facts",
    "conflict_policy": "conflict_policy",
}


class MemoryStore(
    WriteMixin, ReviewMixin, SearchMixin, MaintainMixin, PortableMixin, CopyMixin, IdentitiesMixin,
    ReembedMixin, ResolveMixin, RetryMixin,
):  # fmt: skip
    """Agent memories in one DuckDB database (a file, or ``":memory:"``).

    Parameters
    ----------
    path : str
        Database file; ``":memory:"`` (default) keeps everything in RAM.
    embedder : Embedder, optional
        Defaults to the one ``settings`` names, else :class:`~memkit.embed.HashEmbedder` (offline,
        deterministic). A file remembers which embedder wrote it; opened with another (or an older
        version of the same), it is readable and exportable but not writable until :meth:`reembed`
        migrates it.
    conflict_policy : {"flag", "supersede", "strict"}
        What a keyed write with a different value does (see :mod:`memkit.conflicts`).
    decay : DecayParams
        Recency time scale, retrieval floor and reinforcement step.
    keyword : KeywordParams
        BM25 constants of the keyword score.
    read_only : bool
        Open an existing file read-only: reads and searches work (without reinforcement or audit
        events, which would be writes); every write raises MemkitError. DuckDB lets several
        read-only processes share a file, but not while a read-write process holds it
        (:class:`~memkit.errors.StoreLocked`).
    guard : GuardParams
        The write-time guard (:mod:`memkit.guard`): PII redacted, secrets refused
        (:class:`~memkit.errors.WriteRefused`), suspected injections quarantined until
        :meth:`approve`. ``GuardParams(enabled=False)`` turns it off.
    create : bool
        Create the file when it does not exist (default). ``create=False`` raises NotFound instead
        (the CLI never creates a database by accident).
    compact_on_erase : bool
        Rewrite the file after every erasure so that nothing erased survives in its free blocks
        (default), and at open and close when an erasure left the file due (a compaction that
        failed or never ran; a failure is a RuntimeWarning, the erasure stands). ``False`` defers it
        to :meth:`compact`: the file stays due, for you or the next store opened with the default
        (see :mod:`memkit.store.compaction`).
    index : {"exact", "int8", "hnsw"}
        The in-memory search index. ``"exact"`` (default) keeps the float32 embedding matrix;
        ``"int8"`` keeps int8 codes (0.26x the memory), scans them faster than the float32 floor
        and rescores its best candidates exactly from the stored float32 rows, so scores are the
        same (:mod:`memkit.store.quantized`; needs the extra ``memkit[int8]``, numba). ``"hnsw"``
        (PostgreSQL only) holds no vectors: pgvector's HNSW index gives the first pass's candidates,
        the shortlist is scored exactly from the table (:mod:`memkit.store.hnsw`).
    settings : Settings or path, optional
        Everything tuned in a notebook as one value (:class:`memkit.Settings`, or a ``.toml`` /
        ``.json`` file saved by :func:`memkit.save_settings`): the store's policy, decay, keyword
        and guard parameters, and the defaults of ``search`` (weights), ``consolidate`` (threshold)
        and ``forget`` (policy), and the embedder (its SPEC, :mod:`memkit.embed.spec`; its model is
        loaded now) unless ``embedder=`` is given: that one wins, with a UserWarning naming
        ``embedder`` when the settings name another. Settings naming another embedder than the one
        that wrote the file open it stale, with a UserWarning naming ``embedder`` and both fixes.
        Not together with ``conflict_policy``, ``decay``, ``keyword`` or ``guard``.
        ``store.settings`` returns them; assigning it sets them all (all or nothing) but the
        embedder, fixed at the open (another one: a UserWarning).

    ``path`` may also be a PostgreSQL URL (``postgresql://user@host/db``): the same store on a server
    that many processes share (:mod:`memkit.store.postgres`; the extra ``memkit[postgres]``).
    """

    # assignable after the open, each checked as the constructor checks it (memkit.store.settable)
    conflict_policy = Checked(a_policy)
    decay = Checked(an_instance(DecayParams))
    keyword = Checked(an_instance(KeywordParams))
    guard = Checked(an_instance(GuardParams))
    weights = Checked(an_instance(Weights))  # search's default weights
    forget_policy = Checked(an_instance(ForgetParams))  # forget's default policy
    merge_threshold = Checked(a_threshold)  # consolidate's default threshold
    merge_distinct_facts = Checked(a_bool)  # consolidate's default MergeParams.distinct_facts
    compact_on_erase = Checked(a_bool)
    # fixed at the open: assigning another value is refused, naming what to do instead (settable.Fixed)
    path = Fixed(a_path, "is fixed when the store opens: open another MemoryStore for another file")
    read_only = Fixed(
        a_bool, "is fixed when the store opens: close it and reopen it with read_only=True or False"
    )
    index = Fixed(
        lambda name, value: check_choice(name, value, INDEXES),
        "is fixed when the store opens, which builds the index: close it and reopen it with index=...",
    )
    embedder = Fixed(
        an_embedder,
        "the store was opened with {old.name}: another embedder's vectors would mix two spaces in one file;"
        " store.reembed(embedder) recomputes every vector with it (and records it)",
        same=lambda old, new: (old.name, old.dim) == (new.name, new.dim),  # the same model: harmless
    )

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        embedder: Embedder | None = None,
        conflict_policy: str = "flag",
        decay: DecayParams = DecayParams(),
        keyword: KeywordParams = KeywordParams(),
        read_only: bool = False,
        guard: GuardParams = GuardParams(),
        create: bool = True,
        compact_on_erase: bool = True,
        index: str = "exact",
        settings: Settings | str | os.PathLike[str] | None = None,
    ) -> None:
        """Check every argument (nothing is opened before they pass), then open the file: lock,
        hardening, migrations, the embedder check and the index (:mod:`memkit.store.files`)."""
        if isinstance(path, os.PathLike):  # a pathlib.Path names the file as its str does
            path = os.fspath(path)
        if not isinstance(path, str) or not path:
            raise ValidationError("path", f"must be a non-empty str or path, got {path!r}")
        if path != ":memory:" and not is_url(path):  # a file the file system can name (not a pipe: it waits)
            if (p := check_path("path", path)).exists() and not p.is_file():
                raise ValidationError("path", f"{path!r} exists and is not a regular file")
        for name, flag in (
            ("read_only", read_only),
            ("create", create),
            ("compact_on_erase", compact_on_erase),
        ):
            if not isinstance(flag, bool):
                raise ValidationError(name, f"must be a bool, got {type(flag).__name__}")
        if read_only and path == ":memory:":
            raise ValidationError("read_only", "must be False for ':memory:'")
        if settings is not None and (conflict_policy != "flag" or (decay, keyword, guard) != _DEFAULTS):
            raise ValidationError(
                "settings", "pass either settings= or conflict_policy=/decay=/keyword=/guard=, not both"
            )
        source = os.fspath(settings) if isinstance(settings, (str, os.PathLike)) else None
        given = embedder  # (the settings' embedder, when it is not given, must fit the file: below)
        embedder, settings = opening_embedder(embedder, settings)  # a file read, its embedder built
        self.path, self.read_only, self.compact_on_erase = path, read_only, compact_on_erase
        self.embedder = embedder if embedder is not None else HashEmbedder()  # checked as it is set
        self.conflict_policy = conflict_policy
        self.index = index  # which SearchIndex _load_index builds
        if self.index == "hnsw" and not is_url(path):
            raise ValidationError("index", "hnsw is pgvector's index: it needs a postgresql:// store")
        if self.index == "int8":  # its optional dependency, before any file is created or migrated
            int8_kernels.require_numba()
        self.decay, self.keyword, self.guard = decay, keyword, guard  # each checked as it is set
        self.weights, self.forget_policy, self.merge_threshold = (
            Weights(),
            ForgetParams(),
            MergeParams().threshold,
        )
        self.merge_distinct_facts = MergeParams().distinct_facts
        self._lock = StoreLock()  # searches rank under it shared, everything else exclusively
        self._retried, self._retry_lock = 0, threading.Lock()  # store.retries (memkit.store.retry)
        if settings is not None:
            self._set_parameters(settings)
            warn_unscreened(settings, source)  # a guard turned off out of sight of this code
        self._open(create=create)
        if self._stale is not None and given is None and settings is not None and settings.embedder:
            try:  # (a warning turned into an error, as tests do, must not leave the file held)
                warn_stale_settings(self.path, self._stale, settings.embedder, source)  # memkit.store.stale
            except BaseException:
                self.close()
                raise

    @property
    def settings(self) -> Settings:
        """The store's parameters as one :class:`~memkit.settings.Settings`: save them with
        :func:`memkit.save_settings`, open another store (DuckDB or PostgreSQL) with them. Its
        ``embedder`` is the store's embedder's SPEC, or None for the default one (``"hash"``: a default
        store's settings are ``Settings()``, and apply to a store of any embedder without a warning) or
        one no SPEC can express (your own)."""
        spec = spec_of(self.embedder)
        return Settings(weights=self.weights, decay=self.decay, keyword=self.keyword, guard=self.guard,
                        forget=self.forget_policy, merge_threshold=self.merge_threshold,
                        merge_distinct_facts=self.merge_distinct_facts, conflict_policy=self.conflict_policy,
                        embedder=None if spec == "hash" else spec)  # fmt: skip

    @settings.setter
    def settings(self, settings: Settings | str | os.PathLike[str]) -> None:
        """Every parameter of ``settings`` (a :class:`~memkit.settings.Settings` or a file that
        :func:`~memkit.load_settings` reads) at once: the store's parameters and the defaults of
        ``search``, ``consolidate`` and ``forget``, as a store opened with ``settings=`` has them. Each
        is checked as its own attribute is, all before any is set: a refusal changes nothing. The
        embedder was fixed at the open: settings naming another are a UserWarning naming ``embedder``."""
        source = os.fspath(settings) if isinstance(settings, (str, os.PathLike)) else None
        settings = a_settings("settings", settings)
        if settings.embedder is not None:
            warn_other_embedder(settings.embedder, self.embedder, "fixed at the open; reembed() changes it")
        warn_unscreened(settings, source)  # before any is set: a warning raised as an error changes nothing
        self._set_parameters(settings)

    def _set_parameters(self, settings: Settings) -> None:
        """Set the parameters of ``settings`` (checked): :attr:`settings`' setter, and the open."""
        values = {attr: getattr(settings, field) for attr, field in _SETTINGS.items()}
        for attr, value in values.items():  # every check first (a Settings is valid, but not unforgeable)
            getattr(type(self), attr).check(attr, value)
        with self._lock:  # a search never ranks with half of them
            for attr, value in values.items():
                setattr(self, attr, value)
