"""Old module paths keep working: ``memkit.adapters`` is :mod:`memkit.portable.adapters`, and so on.

memkit began as flat modules; they now live in subpackages by concept (see the README's "Files of
the package"). Public names are a contract, so every old path still imports, and it gives the *same*
module object as the new path (not a copy): ``import memkit.adapters``, ``from memkit.guard_rules
import RULES`` and ``mk.panels`` all work, lazily (``memkit.panel`` still loads ipywidgets only when
asked for). New code should import from the new paths.

How: :data:`MOVED` maps old paths to new ones, and :class:`MovedModules`, a finder on
``sys.meta_path``, answers an import of an old path with the module at the new one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

__all__ = ["MOVED", "MovedModules", "install"]

MOVED: dict[str, str] = {
    # guard/
    "memkit.guard_rules": "memkit.guard.rules",
    "memkit.guard_scan": "memkit.guard.scanner",
    "memkit.guard_read": "memkit.guard.lessons",
    "memkit.guard_fields": "memkit.guard.fields",
    # commands/
    "memkit.intents": "memkit.commands.patterns",
    # portable/
    "memkit.fields": "memkit.portable.fields",
    "memkit.rows": "memkit.portable.rows",
    "memkit.adapters": "memkit.portable.adapters",
    "memkit.cogx": "memkit.portable.cogx",
    "memkit.sample": "memkit.portable.sample",
    # agent/
    "memkit.llms": "memkit.agent.llms",
    "memkit.context": "memkit.agent.context",
    "memkit.actions": "memkit.agent.actions",
    "memkit.conversation": "memkit.agent.conversation",
    # evaluate/
    "memkit.metrics": "memkit.evaluate.metrics",
    "memkit.locomo": "memkit.evaluate.locomo",
    "memkit.scenarios": "memkit.evaluate.scenarios",
    # charts/
    "memkit.chart_style": "memkit.charts.style",
    "memkit.lifecycle_charts": "memkit.charts.lifecycle",
    "memkit.timeline_chart": "memkit.charts.timeline",
    # widgets/
    "memkit.panel": "memkit.widgets.panel",
    "memkit.panels": "memkit.widgets.explorers",
    "memkit.history_panels": "memkit.widgets.history",
    # embed/ and store/
    "memkit.embed_models": "memkit.embed.models",
    "memkit.index": "memkit.store.index",
}
"""Old module path -> new module path."""


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old path (a key of :data:`MOVED`) as the module at its new path."""

    def __init__(self) -> None:
        """An empty finder: the specs of the modules it has handed out fill in as they are imported."""
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec loaded by this finder for an old path (a key of :data:`MOVED`); None otherwise."""
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The module at the new path (imported if needed): one object under both names."""
        module = importlib.import_module(MOVED[spec.name])
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the module ran at its new path); restore its own spec."""
        # subtle: the import system stamps the old path's spec on the module it got from
        # create_module; give the module its own spec back (reload and pickling read it)
        module.__spec__ = self._specs[module.__name__]


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once; ``import memkit`` does it)."""
    if not any(isinstance(f, MovedModules) for f in sys.meta_path):
        sys.meta_path.append(MovedModules())
