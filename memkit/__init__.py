"""memkit: design, tune and teach the memory layer of LLM agents.

Memories live in DuckDB (:class:`MemoryStore`); decay and hybrid retrieval scores are computed
vectorized with numpy and polars (:mod:`memkit.decay`, :mod:`memkit.scoring`).

>>> import memkit as mk
>>> round(float(mk.decay.strength(0.8, 24.0, 90 * 24.0)), 4)
0.7939
"""

from __future__ import annotations

from . import (
    access,
    adapters,
    agent,
    analyze,
    cogx,
    commands,
    conflicts,
    consolidate,
    decay,
    embed,
    evaluate,
    forget,
    guard,
    portable,
    scoring,
    text,
)
from .agent import MemoryAgent
from .consolidate import MergeParams
from .embed import Embedder, HashEmbedder
from .errors import (
    AccessDenied,
    ConflictError,
    FormatError,
    MemkitError,
    MissingDependency,
    NotFound,
    StoreLocked,
    ValidationError,
    WriteRefused,
)
from .params import DecayParams, ForgetParams, GuardParams, KeywordParams, Weights
from .schema import Memory
from .store import MemoryStore

__version__ = "0.1.0"

_LAZY = ("charts", "views", "widgets")  # Altair and ipywidgets load on first use (seconds, not at import)


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'memkit' has no attribute {name!r}")


__all__ = [
    "AccessDenied",
    "ConflictError",
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
    "portable",
    "scoring",
    "text",
    "views",
    "widgets",
]
