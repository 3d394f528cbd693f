"""Public evaluation data, fetched once and checked: ``fetch_locomo()`` and ``memkit data locomo``.

LoCoMo (Maharana et al., ACL 2024) is not part of the repository: its licence, CC BY-NC 4.0, allows
research use with attribution but no commercial use, so a user fetches it. :func:`fetch_locomo`

1. looks for it where the user put it: the ``path`` argument, else ``$MEMKIT_LOCOMO`` (a file, or a
   directory holding ``locomo10.json``), else the cache (``$XDG_CACHE_HOME/memkit``, by default
   ``~/.cache/memkit``; the path platformdirs gives on Linux, without the dependency);
2. otherwise downloads it from a URL pinned to one commit of snap-research/LoCoMo, so the bytes
   never change under a figure in the README;
3. checks the SHA-256 of whatever it found or fetched against :data:`LOCOMO_SHA256` — a file that
   differs (truncated, edited, another version) is refused, never silently used;
4. returns the absolute path of the checked file, which :func:`memkit.evaluate.load_locomo` reads.

Offline, the download fails with :class:`LocomoUnavailable`, whose message is the whole recipe: the
URL, where to put the file, and the variable to set. Nothing here runs at import time.

>>> LOCOMO.url.endswith("/data/locomo10.json"), LOCOMO.sha256[:8], LOCOMO.licence
(True, '79fa87e9', 'CC BY-NC 4.0')
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..errors import MemkitError, ValidationError, check_bool

__all__ = [
    "LOCOMO",
    "LOCOMO_SHA256",
    "LOCOMO_URL",
    "Dataset",
    "LocomoUnavailable",
    "cache_dir",
    "fetch_locomo",
]

# the commit of snap-research/LoCoMo whose data/locomo10.json the README's figures were measured on
_LOCOMO_COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
LOCOMO_URL = f"https://raw.githubusercontent.com/snap-research/LoCoMo/{_LOCOMO_COMMIT}/data/locomo10.json"
LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
_CHUNK = 1 << 20  # bytes read at a time while hashing or copying (the file is 2.8 MB)


@dataclass(frozen=True)
class Dataset:
    """A public file memkit evaluates on: where it comes from and what it must hash to.

    ``url`` is pinned to a commit; ``sha256`` is the hex digest of the exact bytes; ``licence`` and
    ``citation`` are printed whenever the file is fetched, because using it means accepting them.
    """

    name: str  # the file name in the cache and in a $MEMKIT_LOCOMO directory
    url: str  # pinned download URL
    sha256: str  # hex digest of the file
    size: int  # bytes, for the message and a sanity check
    licence: str  # the data's licence, as its authors state it
    citation: str  # who to cite


LOCOMO = Dataset(
    name="locomo10.json",
    url=LOCOMO_URL,
    sha256=LOCOMO_SHA256,
    size=2_805_274,
    licence="CC BY-NC 4.0",
    citation='Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024',
)


class LocomoUnavailable(MemkitError, FileNotFoundError):
    """LoCoMo is neither on disk nor downloadable here; the message says exactly what to do."""


def cache_dir() -> Path:
    """Where fetched data is kept: ``$XDG_CACHE_HOME/memkit``, else ``~/.cache/memkit``.

    >>> cache_dir().name
    'memkit'
    """
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "memkit"


def _sha256(path: Path) -> str:
    """The hex SHA-256 of a file, read in 1 MB chunks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _candidate(path: str | os.PathLike[str] | None) -> tuple[Path, str]:
    """Where to look first -> ``(file, how it was chosen)``: the argument, ``$MEMKIT_LOCOMO`` or the
    cache. A directory stands for the ``locomo10.json`` inside it."""
    if path is not None:
        p, why = Path(path), "the path argument"
    elif os.environ.get("MEMKIT_LOCOMO"):
        p, why = Path(os.environ["MEMKIT_LOCOMO"]), "$MEMKIT_LOCOMO"
    else:
        p, why = cache_dir(), "the cache"
    p = p.expanduser()
    return (p / LOCOMO.name if p.is_dir() or not p.suffix else p).resolve(), why


def _help(target: Path, reason: str) -> str:
    """The offline recipe: what failed, then the URL, where to put the file and how to point at it."""
    return (
        f"LoCoMo could not be fetched ({reason}). Download it yourself:\n"
        f"  {LOCOMO.url}\n"
        f"and save it as {target} (or anywhere, then set MEMKIT_LOCOMO to the file or its folder).\n"
        f"Its sha256 must be {LOCOMO.sha256}. Licence: {LOCOMO.licence} (research use with "
        f"attribution, no commercial use); cite {LOCOMO.citation}."
    )


def fetch_locomo(
    path: str | os.PathLike[str] | None = None,
    *,
    download: bool = True,
    url: str | None = None,
    opener: Callable[[str], IO[bytes]] | None = None,
    say: Callable[[str], None] | None = None,
) -> Path:
    """The checked LoCoMo file -> its absolute path; downloads it into place when it is missing.

    ``path``: a file or folder (default ``$MEMKIT_LOCOMO``, else :func:`cache_dir`). ``download=False``
    only looks. ``url`` and ``opener`` (``url -> binary file object``, default
    :func:`urllib.request.urlopen`) exist for mirrors and tests. ``say`` receives the progress and
    licence lines (the CLI prints them).

    Raises :class:`LocomoUnavailable` (a ``FileNotFoundError``) with the download recipe when the
    file is absent and cannot be fetched, and :class:`~memkit.errors.ValidationError` naming
    ``locomo10.json`` when a file is there but its SHA-256 differs (it is never overwritten).
    """
    say, download = say or (lambda _: None), check_bool("download", download)
    target, why = _candidate(path)
    if target.is_file():
        digest = _sha256(target)
        if digest != LOCOMO.sha256:
            raise ValidationError(
                LOCOMO.name,
                f"{target} (from {why}) has sha256 {digest[:12]}…, expected {LOCOMO.sha256[:12]}…",
            )
        return target
    if not download:
        raise LocomoUnavailable(_help(target, f"not found at {target}, from {why}; download=False"))
    source = url or LOCOMO.url
    say(f"downloading {source}\n  -> {target}")
    say(f"licence: {LOCOMO.licence}; cite {LOCOMO.citation}")
    got: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # subtle: download next to the target and rename only once the hash is right, so an
        # interrupted or wrong download never leaves a file the next call would trust
        with (
            (opener or urllib.request.urlopen)(source) as response,
            tempfile.NamedTemporaryFile(dir=target.parent, prefix=".locomo-", delete=False) as tmp,
        ):
            got = Path(tmp.name)
            shutil.copyfileobj(response, tmp, _CHUNK)
    except (OSError, urllib.error.URLError, ValueError) as e:  # offline, DNS, HTTP error, bad URL
        if got is not None:
            got.unlink(missing_ok=True)
        raise LocomoUnavailable(_help(target, f"{type(e).__name__}: {e}")) from None
    digest = _sha256(got)
    if digest != LOCOMO.sha256:
        got.unlink()
        raise LocomoUnavailable(_help(target, f"the download from {source} has sha256 {digest[:12]}…"))
    got.replace(target)
    say(f"ok: {target} (sha256 {LOCOMO.sha256[:8]}…{LOCOMO.sha256[-5:]})")
    return target
