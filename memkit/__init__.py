"""memkit: design, tune and teach the memory layer of LLM agents.

Memories live in DuckDB (:class:`MemoryStore`); decay and hybrid retrieval scores are computed
vectorized with numpy and polars (:mod:`memkit.decay`, :mod:`memkit.scoring`).

>>> import memkit as mk
>>> round(float(mk.decay.strength(0.8, 24.0, 90 * 24.0)), 4)
0.7939
"""

from __future__ import annotations

from . import access, analyze, conflicts, consolidate, decay, embed, forget, scoring, text
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
)
from .params import DecayParams, ForgetParams, KeywordParams, Weights
from .schema import Memory
from .store import MemoryStore

__version__ = "0.1.0"

__all__ = [
    "AccessDenied",
    "ConflictError",
    "DecayParams",
    "Embedder",
    "ForgetParams",
    "FormatError",
    "HashEmbedder",
    "KeywordParams",
    "MergeParams",
    "MemkitError",
    "Memory",
    "MemoryStore",
    "MissingDependency",
    "NotFound",
    "StoreLocked",
    "ValidationError",
    "Weights",
    "__version__",
    "access",
    "analyze",
    "conflicts",
    "consolidate",
    "decay",
    "embed",
    "forget",
    "scoring",
    "text",
]
