"""memkit: design, tune and teach the memory layer of LLM agents.

Memories live in DuckDB (:class:`MemoryStore`); decay and hybrid retrieval scores are computed
vectorized with numpy and polars (:mod:`memkit.decay`, :mod:`memkit.scoring`).

>>> import memkit as mk
>>> round(float(mk.decay.strength(0.8, 24.0, 90 * 24.0)), 4)
0.7939
"""

from __future__ import annotations

import importlib

from . import (
    _moved,
    access,
    agent,
    analyze,
    commands,
    conflicts,
    consolidate,
    decay,
    embed,
    evaluate,
    forget,
    guard,
    information,
    portable,
    schema,
    scoring,
    text,
    views,
)
from ._version import __version__
from .agent import MemoryAgent
from .consolidate import MergeParams
from .embed import Embedder, HashEmbedder
from .errors import (
    AccessDenied,
    ConflictError,
    ConnectionLost,
    FormatError,
    MemkitError,
    MissingDependency,
    NotFound,
    StoreLocked,
    ValidationError,
    WriteRefused,
)
from .params import DecayParams, ForgetParams, GuardParams, KeywordParams, Weights
from .portable import adapters, cogx  # mk.adapters, mk.cogx: where they always were
from .schema import Memory
from .settings import Settings, load_settings, save_settings
from .store import MemoryStore
from .store import migrations as _store_migrations

_moved.install()  # old module paths (memkit.adapters, memkit.panel, ...) import the moved modules

_LAZY = ("charts", "widgets")  # Altair and ipywidgets load on first use (seconds, not at import)

# ``memkit.schema.MIGRATIONS`` moved to the store (SQL is the store's); the package root, which sits
# above every layer, keeps the old name working without the schema importing the store
schema.MIGRATIONS = _store_migrations.MIGRATIONS  # type: ignore[attr-defined]
# likewise ``memkit.views.Reranker``: the re-ranker now lives with the evaluation code it shares
views.Reranker = evaluate.Reranker  # type: ignore[attr-defined]


def __getattr__(name: str) -> object:
    """Lazy submodules (``mk.charts``, ``mk.widgets``) and old module names (``mk.panels``)."""
    if name in _LAZY or f"{__name__}.{name}" in _moved.MOVED:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'memkit' has no attribute {name!r}")


__all__ = [
    "AccessDenied",
    "ConflictError",
    "ConnectionLost",
    "DecayParams",
    "Embedder",
    "ForgetParams",
    "FormatError",
    "GuardParams",
    "HashEmbedder",
    "KeywordParams",
    "MergeParams",
    "MemkitError",
    "Memory",
    "MemoryAgent",
    "MemoryStore",
    "MissingDependency",
    "NotFound",
    "Settings",
    "StoreLocked",
    "ValidationError",
    "Weights",
    "WriteRefused",
    "__version__",
    "access",
    "adapters",
    "agent",
    "analyze",
    "charts",
    "cogx",
    "commands",
    "conflicts",
    "consolidate",
    "decay",
    "embed",
    "evaluate",
    "forget",
    "guard",
    "information",
    "load_settings",
    "portable",
    "save_settings",
    "scoring",
    "text",
    "views",
    "widgets",
]
