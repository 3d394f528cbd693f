"""One list of Memory fields: :mod:`memkit.schema` holds it, every other list is derived from it.

Two kinds of checks keep it so:

- each derived list equals a slice or filter of ``schema.MEMORY_FIELDS`` (and the table order
  equals the order DuckDB really has, so ``TABLE_FIELDS`` cannot drift from the migrations);
- no module but ``schema.py`` types a run of five or more field names that follow one another in
  the list (a tuple, a list, call arguments, or comma-separated SQL text): that is the list typed
  again, and it would silently miss the next field. A mapping (a dict from field to validator or
  value) is not a list and is allowed; a hand-picked projection in another order is allowed too.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from datetime import UTC, datetime
from pathlib import Path

import memkit as mk
from memkit import schema
from memkit.portable import adapters, cogx, fields, records, rows
from memkit.store import vectors

PACKAGE = Path(mk.__file__).parent
RUN = 5  # this many list neighbours in a row is the list typed again


def test_memory_fields_are_the_dataclass_fields() -> None:
    assert schema.MEMORY_FIELDS == tuple(f.name for f in dataclasses.fields(schema.Memory))
    assert schema.MEMORY_COLUMNS == (*schema.MEMORY_FIELDS, "content_hash")


def test_table_fields_are_the_table_order() -> None:
    """``TABLE_FIELDS`` is the migrations' column order (content_hash and embedding aside)."""
    assert sorted(schema.TABLE_FIELDS) == sorted(schema.MEMORY_FIELDS)
    with mk.MemoryStore() as store:
        names = [c.name for c in store._memory_columns()]
    assert tuple(n for n in names if n != "content_hash") == schema.TABLE_FIELDS


def test_writable_fields_are_a_filter_of_the_list() -> None:
    assert schema.WRITABLE_FIELDS == tuple(f for f in schema.MEMORY_FIELDS if f not in schema.SYSTEM_FIELDS)
    assert set(schema.SYSTEM_FIELDS) < set(schema.MEMORY_FIELDS)
    assert rows.WRITABLE == schema.WRITABLE_FIELDS
    add_fields = set(inspect.signature(mk.MemoryStore.add).parameters) & set(schema.MEMORY_FIELDS)
    assert add_fields - {"namespace"} <= set(schema.WRITABLE_FIELDS)  # the namespace is the call's


def test_adapter_and_cogx_lists_are_filters_of_the_list() -> None:
    assert adapters.RESTORABLE is records.RESTORABLE
    assert records.RESTORABLE == tuple(f for f in schema.WRITABLE_FIELDS if f not in records.ADAPTER_FIELDS)
    assert set(records.ADAPTER_FIELDS) <= set(schema.WRITABLE_FIELDS)
    assert cogx._MEMKIT_META == tuple(f for f in schema.MEMORY_FIELDS if f not in cogx._IN_RECORD)


def test_store_columns_and_rows_follow_the_table_order() -> None:
    assert vectors.COLUMNS == ", ".join(schema.TABLE_FIELDS)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    built = rows.build_rows([{"content": "likes tea"}], "u", None, now)
    assert tuple(built) == schema.TABLE_FIELDS


def test_file_validators_cover_the_fields() -> None:
    """Every field has a validator of its own, except the timestamps, which their type checks."""
    own = set(fields._KNOWN)
    assert own <= set(schema.MEMORY_COLUMNS)
    missing = [f for f in schema.MEMORY_COLUMNS if f not in own]
    assert missing == ["valid_from", "valid_until", "created_at", "updated_at", "last_access_at"]


# ------------------------------------------------------------------------------------ no retyping
def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (module, class, function, attribute)."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for stmt in body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    out.add(id(stmt.value))
    return out


def _sequences(source: str) -> list[tuple[int, list[str]]]:
    """``(line, names)`` for every sequence of literal names in ``source``: the string elements of
    a tuple, list or set, a call's string arguments, and the comma-separated parts of other strings."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        items = None
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Call):
            items = node.args
        if items is not None:
            out.append((node.lineno, [e.value if _is_str(e) else "" for e in items]))
        elif _is_str(node) and id(node) not in skip and "," in node.value:
            out.append((node.lineno, [part.strip() for part in node.value.split(",")]))
    return out


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _longest_run(names: list[str]) -> int:
    """The longest stretch of ``names`` that are neighbours, in order, in one of schema's orders."""
    best = 0
    for order in (schema.MEMORY_COLUMNS, (*schema.TABLE_FIELDS, "content_hash")):
        pos = {f: i for i, f in enumerate(order)}
        run = 0
        for j, name in enumerate(names):
            if name not in pos:
                run = 0
            elif run and names[j - 1] in pos and pos[name] == pos[names[j - 1]] + 1:
                run += 1
            else:
                run = 1
            best = max(best, run)
    return best


def retyped(source: str) -> list[tuple[int, list[str]]]:
    """The sequences in ``source`` that type a run of :data:`RUN` or more fields of the list."""
    return [(line, names) for line, names in _sequences(source) if _longest_run(names) >= RUN]


def test_the_detector_sees_a_retyped_list() -> None:
    """Not vacuous: a tuple, call arguments and SQL text that retype a slice are all caught, and a
    mapping, a short run or a projection in another order are not."""
    assert retyped('X = ("id", "key", "value", "layer", "kind", "importance", "x")')
    assert retyped('f(1, "owner", "created_by", "access", "tags", "status")')
    assert retyped('Q = "SELECT 1 FROM t WHERE " + "id, namespace, key, content, value"')
    assert not retyped('D = {"key": 1, "value": 2, "layer": 3, "kind": 4, "importance": 5}')
    assert not retyped('X = ("key", "value", "layer", "kind")')
    assert not retyped('X = ("id", "namespace", "status", "version", "findings")')


def test_no_module_retypes_the_field_list() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "schema.py" and path.parent == PACKAGE:
            continue
        for line, names in retyped(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {', '.join(n for n in names if n)}")
    assert not found, "derive these from memkit.schema instead of typing the fields again:\n" + "\n".join(
        found
    )
