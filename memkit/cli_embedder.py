"""``--embedder SPEC``: the embedder a command of the CLI opens its store with (:mod:`memkit.cli`,
:mod:`memkit.operate`).

A store file records the embedder that wrote its vectors; opened with another one it is *stale*:
readable, but not searchable or writable (:mod:`memkit.store.stale`). A command opens its store with,
in this order:

1. ``--embedder SPEC``, when given (always: it wins over everything below);
2. the ``embedder`` a ``--settings`` file records (``mk.save_settings(path, store.settings)`` writes
   a store's, unless it is the default hash embedder), as
   ``MemoryStore(path, settings=...)`` would (:mod:`memkit.settings`);
3. the embedder the file records, when memkit can build it from the recorded name without downloading
   anything (:func:`file_embedder`): the hash embedder of any dimension, the all-MiniLM-L6-v2 of
   ``memkit[minilm]`` when that extra is installed, a blend of such parts. A file another model wrote
   (``m2v-...``, ``st-<another model>``: its name holds no path) needs ``--embedder``, as the stale
   error says;
4. the hash embedder (a new file: nothing is recorded yet).

``memkit reembed`` is the exception: its ``--embedder`` is the embedder to migrate *to*; without it,
the one its ``--settings`` file names (``memkit reembed --db FILE --settings tuned.toml`` makes a
file fit the settings), else ``hash``, whatever the file records.

Settings naming another embedder than the one that wrote the file open it *stale*, with a warning
naming ``embedder``, the settings file and the file's embedder, and the two ways out (the store's:
:mod:`memkit.store.stale`): ``--embedder`` with the file's SPEC (read it as it is, the other
settings applied), or ``memkit reembed --settings FILE`` (migrate it to the settings' embedder).

The SPECs (``hash[:DIM]``, ``st[:MODEL]``, ``m2v:PATH``, blends ``W*SPEC,W*SPEC``) are
:mod:`memkit.embed.spec`'s.

A bad SPEC (or a model that does not load) is a :class:`~memkit.errors.ValidationError` naming
``--embedder``; a missing extra is :class:`~memkit.errors.MissingDependency` naming ``--embedder``
and the pip command. Either is raised before the database is opened, so nothing is created or written.
Reading what a file records opens it read-only, creating and changing nothing
(:func:`memkit.store.recorded.recorded_embedder`).

>>> embedder_from_spec("hash:64").name
'hash-v3-64-tw0.5'
>>> embedder_from_spec("0.75*hash:16,0.25*hash:8").name
'fused(0.75*hash-v3-16-tw0.5,0.25*hash-v3-8-tw0.5)'
>>> embedder_from_spec("bert")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
memkit.errors.ValidationError: --embedder: 'bert' is not hash[:DIM], st[:MODEL], m2v:PATH or a blend ...
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from .embed import Embedder, embedder_from_name
from .embed import embedder_from_spec as build
from .store import MemoryStore
from .store.recorded import recorded_embedder
from .store.settable import read_settings

__all__ = [
    "OPENS_STORE",
    "OPTION",
    "add_embedder_option",
    "add_embedder_options",
    "embedder_from_spec",
    "file_embedder",
    "open_store",
]

OPTION = "--embedder"


def add_embedder_option(p: argparse.ArgumentParser, default: str | None = None, say: str = "") -> None:
    """``--embedder SPEC`` on a command that opens a store (default None: the file's own, see the
    module docstring; ``say``: what the help names as the default instead)."""
    say = say or ("the one the file records, else hash" if default is None else default)
    p.add_argument(
        OPTION, default=default, metavar="SPEC",
        help=f"the embedder to open the file with (default: {say}): hash[:DIM], st[:MODEL], m2v:PATH,"
             " 0.7*st,0.3*hash",
    )  # fmt: skip


def embedder_from_spec(spec: str) -> Embedder:
    """``--embedder``'s value -> the embedder it names (module docstring); the model is loaded now
    (:func:`memkit.embed.embedder_from_spec`, its errors naming ``--embedder``)."""
    return build(spec, OPTION)


def file_embedder(path: str | os.PathLike[str]) -> Embedder | None:
    """The embedder the store at ``path`` records, when memkit can build it from the recorded name
    without downloading anything (:func:`memkit.embed.embedder_from_name`), else None: a new file, a
    model's file whose name holds no path, or one that cannot be read now (opening it says why)."""
    recorded = recorded_embedder(path)
    return None if recorded is None else embedder_from_name(*recorded)


OPENS_STORE = ("info", "export", "import", "analyze", "reembed", "mcp", "copy", "reidentify")
"""The commands that open a store, and so take ``--embedder``."""


def add_embedder_options(sub: argparse._SubParsersAction) -> None:
    """``--embedder`` on every command of ``sub`` that opens a store (:data:`OPENS_STORE`)."""
    for name in OPENS_STORE:  # reembed's: the embedder it migrates to (open_store's default=)
        add_embedder_option(
            sub.choices[name], say="the --settings file's, else hash" if name == "reembed" else ""
        )


def open_store(
    path: str, args: argparse.Namespace, default: str | None = None, **options: Any
) -> MemoryStore:
    """``MemoryStore(path, embedder=..., **options)`` with the embedder of the module docstring's order:
    ``--embedder``; else the ``settings=`` file's (the store builds it); else ``default``'s SPEC when
    given (``reembed``: hash), else the file's own; else hash. The embedder is built (its model
    loaded, or the error raised) before the database is opened."""
    settings = options.get("settings")
    if args.embedder is not None:
        embedder = embedder_from_spec(args.embedder)
    elif settings is not None and read_settings("settings", settings).embedder is not None:
        embedder = None  # MemoryStore(settings=) builds the settings' embedder (and warns if stale)
    else:
        embedder = embedder_from_spec(default) if default else file_embedder(path)
    return MemoryStore(path, embedder=embedder, **options)
