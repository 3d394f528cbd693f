"""The package's public names: __all__ in sync with what is exported, DESIGN.md's names, the error tree."""

from __future__ import annotations

import inspect
import types
from pathlib import Path

import pytest

import memkit as mk
from memkit._moved import MOVED

PACKAGE_DIR = Path(mk.__file__).parent
# DESIGN.md: "submodules are attributes of the package" (some may not be written yet)
DESIGN_SUBMODULES = ("decay", "scoring", "conflicts", "commands", "agent", "evaluate", "charts", "widgets")
DESIGN_NAMES = (
    "MemoryStore", "Memory", "Weights", "HashEmbedder", "MemkitError", "ValidationError", "AccessDenied",
    "NotFound", "ConflictError", "FormatError", "StoreLocked", "MissingDependency",
)  # fmt: skip


def _defined_in_memkit(obj: object) -> bool:
    return (inspect.isclass(obj) or inspect.isfunction(obj)) and (
        obj.__module__ == "memkit" or obj.__module__.startswith("memkit.")
    )


def test_every_name_in_all_exists() -> None:
    missing = [n for n in mk.__all__ if not hasattr(mk, n)]
    assert missing == []
    assert len(mk.__all__) == len(set(mk.__all__))


def test_all_equals_the_exported_classes_and_functions() -> None:
    exported = {n for n, v in vars(mk).items() if not n.startswith("_") and _defined_in_memkit(v)}
    listed = {
        n for n in mk.__all__ if not isinstance(getattr(mk, n), types.ModuleType) and not n.startswith("_")
    }
    assert listed == exported


def test_modules_in_all_are_memkit_submodules() -> None:
    for n in mk.__all__:
        v = getattr(mk, n)
        if isinstance(v, types.ModuleType):  # mk.adapters moved to memkit.portable.adapters: same object
            assert v.__name__ == MOVED.get(f"memkit.{n}", f"memkit.{n}")


@pytest.mark.parametrize("name", DESIGN_SUBMODULES)
def test_design_submodules_that_exist_are_exported(name: str) -> None:
    if not (PACKAGE_DIR / f"{name}.py").exists() and not (PACKAGE_DIR / name / "__init__.py").exists():
        pytest.skip(f"memkit/{name}.py is not written yet")
    assert name in mk.__all__
    assert isinstance(getattr(mk, name), types.ModuleType)


@pytest.mark.parametrize("name", DESIGN_NAMES)
def test_design_names_exist(name: str) -> None:
    assert name in mk.__all__
    assert inspect.isclass(getattr(mk, name))


def test_design_functions_exist() -> None:
    assert callable(mk.decay.strength) and callable(mk.decay.recency) and callable(mk.scoring.hybrid)
    assert callable(mk.conflicts.plan_keyed_write)
    assert mk.__version__ and isinstance(mk.__version__, str)


def test_public_names_are_documented() -> None:
    for n in mk.__all__:
        if not n.startswith("_"):
            assert (getattr(mk, n).__doc__ or "").strip(), f"memkit.{n} has no docstring"


def test_error_tree() -> None:
    for name in DESIGN_NAMES[5:]:
        assert issubclass(getattr(mk, name), mk.MemkitError)
    assert issubclass(mk.MemkitError, Exception)
    assert issubclass(mk.ValidationError, ValueError)
    assert issubclass(mk.FormatError, mk.ValidationError)
    assert issubclass(mk.AccessDenied, PermissionError)
    assert issubclass(mk.NotFound, KeyError)
    assert issubclass(mk.MissingDependency, ImportError)
    assert not issubclass(mk.ConflictError, ValueError)


def test_error_messages() -> None:
    e = mk.ValidationError("importance", "must be <= 1.0, got 2.0")
    assert e.field == "importance" and str(e) == "importance: must be <= 1.0, got 2.0"
    assert str(mk.NotFound("no memory with id 'x'")) == "no memory with id 'x'"  # not KeyError's repr
    with pytest.raises(KeyError):
        raise mk.NotFound("x")


def test_memory_is_frozen_and_round_trips() -> None:
    import dataclasses

    m = mk.Memory(id="a", namespace="u", content="c", tags=("t",), value={"x": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.content = "d"  # type: ignore[misc]
    d = m.to_dict()
    assert d["tags"] == ["t"] and d["merged_from"] == []
    assert mk.Memory.from_row({**d, "value": '{"x": 1}', "extra": 1}) == m
