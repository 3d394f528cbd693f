"""How a tool of :mod:`memkit.integrations.mcp` fails: an error result the model can read, which never
repeats a secret or personal data the model passed in an argument.

A model may put anything in an argument: a user's API key pasted as an id, a phone number as a key.
An error message that quoted it back (``NotFound: no memory with id 'sk-…'``) would carry it into
the model's context again, and into the server's log, where the SDK writes every failed call's
message. So each error message goes through :func:`withhold` before it leaves:

- an argument string the message repeats (as it is, or quoted) in which the guard finds a secret or
  PII (:func:`memkit.guard.scan`, with the store's own patterns) is replaced by
  ``[<argument> withheld: <codes>]``;
- what the guard still finds in the message (an argument repeated in another form) is replaced by
  ``[withheld]``;
- a write the guard refused says which rule, in which argument (``MG201 (API key) in key``), never
  the text (:func:`refusal`).

A tool name the server does not have is answered by :class:`QuietServer` with the names it has,
never the one the client sent (the SDK's ``Unknown tool: <name>`` repeated it, to the model and the
log: a model may put anything there too).

Arguments that fail the tool's schema are refused by the SDK before the tool runs; its message would
quote the value (``input_value='sk-…'``), so the tools' argument models hide inputs in their errors,
and an undeclared argument whose *name* holds a secret or PII is reported under a placeholder name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, model_validator

from ..errors import MemkitError, WriteRefused
from ..guard import is_rule_message, scan
from ..params import GuardParams
from ..store import MemoryStore

__all__ = ["HIDDEN_NAME", "QuietServer", "refusal", "tool", "withhold"]

HIDDEN_NAME = "[argument name withheld]"  # an undeclared argument whose name holds a secret or PII
_KINDS = ("secret", "pii")  # what an error never repeats (a never-remember topic is a subject, not data)


def _strings(value: Any) -> Iterator[str]:
    """The strings of an argument's value (tags are a list of them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _flagged(texts: list[str], params: GuardParams) -> dict[int, list[str]]:
    """Which ``texts`` hold a secret or PII by the guard's rules (and ``params``' own patterns) ->
    ``{index: [codes]}``."""
    found = scan(texts, params) if texts else None
    if found is None or found.height == 0:
        return {}
    out: dict[int, list[str]] = {}
    for row in found.filter(found["kind"].is_in(_KINDS)).iter_rows(named=True):
        out.setdefault(row["row"], []).append(row["code"])
    return {i: list(dict.fromkeys(codes)) for i, codes in out.items()}


def withhold(message: str, arguments: dict[str, Any], params: GuardParams) -> str:
    """``message`` without any secret or PII of ``arguments`` (the module docstring).

    >>> key = "sk-abcdefghijklmnopqrstuvwx"
    >>> withhold(f"NotFound: no memory with id {key!r}", {"id": key}, GuardParams())
    'NotFound: no memory with id [id withheld: MG201]'
    >>> withhold("NotFound: no memory with id 'no-such-id'", {"id": "no-such-id"}, GuardParams())
    "NotFound: no memory with id 'no-such-id'"
    """
    # each argument string the message repeats, with the forms it may take there (repr first: the
    # quoted form goes whole, quotes included)
    strings = [(name, s, (repr(s), s)) for name, value in arguments.items() for s in _strings(value) if s]
    shown = [(name, s, forms) for name, s, forms in strings if any(f in message for f in forms)]
    for i, codes in _flagged([s for _, s, _ in shown], params).items():
        name, _, forms = shown[i]
        for form in forms:
            message = message.replace(form, f"[{name} withheld: {', '.join(codes)}]")
    found = scan([message], params)
    spans = sorted(
        ((r["start"], r["end"]) for r in found.iter_rows(named=True) if r["kind"] in _KINDS), reverse=True
    )
    for start, end in spans:  # from the end, so the earlier spans keep their offsets
        message = message[:start] + "[withheld]" + message[end:]
    return message


def refusal(e: WriteRefused) -> str:
    """A refused write as the model reads it: the rules that refused it and the arguments they found
    something in, never the text.

    >>> import polars as pl
    >>> found = pl.DataFrame({"code": ["MG201"], "kind": ["secret"], "message": ["in key: API key"]})
    >>> refusal(WriteRefused("write refused by the guard: MG201", found))
    'write refused by the guard: MG201 (API key) in key'
    """
    findings = getattr(e, "findings", None)
    if findings is None or not hasattr(findings, "iter_rows") or findings.height == 0:
        return str(e)
    parts: dict[str, None] = {}
    for f in findings.iter_rows(named=True):
        if f["kind"] not in ("secret", "topic"):
            continue
        message = f["message"] or ""
        where, _, rule = message.partition(": ") if message.startswith("in ") else ("", "", message)
        rule = f" ({rule})" if rule and is_rule_message(message) else ""  # a rule's words, never the text
        parts[f"{f['code']}{rule} in {where[3:] or 'content'}"] = None
    return f"write refused by the guard: {'; '.join(parts)}" if parts else str(e)


def _arguments_model(model: type, store: MemoryStore) -> type:
    """The tool's argument model, strict: undeclared arguments refused (under a placeholder name when
    theirs holds a secret or PII), no type coercion, and no input value quoted in an error."""

    def hide_names(cls: type, data: Any) -> Any:
        """Rename undeclared arguments whose names the guard flags, before pydantic reports them."""
        if not isinstance(data, dict):
            return data
        fields = cls.model_fields  # type: ignore[attr-defined]
        declared = set(fields) | {f.alias for f in fields.values() if f.alias}
        extra = [k for k in data if isinstance(k, str) and k not in declared]
        bad = {extra[i] for i in _flagged(extra, store.guard)}
        return {(HIDDEN_NAME if k in bad else k): v for k, v in data.items()}

    # subtle: pydantic ignores arguments a model does not declare, so `namespace="user_88"` would be
    # dropped silently and the model would believe it wrote there; forbid them (the schema says so too).
    # And it coerces types by default: `dry_run: "no"` became False (a forget ran), `importance: true`
    # 1.0; strict types take only what the schema says (an int where a number is asked, as JSON does)
    config = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True, hide_input_in_errors=True)
    check = model_validator(mode="before")(classmethod(hide_names))
    return type(
        model.__name__, (model,), {"__module__": __name__, "model_config": config, "_hide_names": check}
    )


def tool(method: Callable[..., dict[str, Any]], hints: ToolAnnotations, store: MemoryStore) -> Tool:
    """One MCP tool from a method of the server's tools: memkit errors become tool errors (what failed,
    never a secret or PII of the arguments), and arguments the method does not declare are refused."""

    @functools.wraps(method)  # the SDK reads the signature and the docstring through the wrapper
    def call(**arguments: Any) -> dict[str, Any]:
        """The tool's body: run the method, turning memkit's refusals into an MCP tool error the
        model can read (the message names the field), never a crash of the server.
        """
        try:
            return method(**arguments)
        except MemkitError as e:  # an expected failure: the model reads why; nothing changed
            said = refusal(e) if isinstance(e, WriteRefused) else str(e)
            # (from None: the original, which may quote an argument, stays out of any traceback logged)
            raise ToolError(withhold(f"{type(e).__name__}: {said}", arguments, store.guard)) from None

    made = Tool.from_function(call, annotations=hints)
    strict = _arguments_model(made.fn_metadata.arg_model, store)
    metadata = made.fn_metadata.model_copy(update={"arg_model": strict})
    return made.model_copy(
        update={"fn_metadata": metadata, "parameters": strict.model_json_schema(by_alias=True)}
    )


class QuietServer(MCPServer):
    """The SDK's server, except that a call of a tool it does not have is answered with the names it
    has, never the name the client sent (the SDK's ``Unknown tool: <name>`` repeated it in the result
    and its log; a model may put a user's key or address there as in any argument)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Call the tool ``name``; an unknown one is an error result naming the server's tools."""
        names = [t.name for t in await self.list_tools()]
        if name not in names:  # an answer, not a raised ToolError: the SDK would log the name with it
            text = f"Unknown tool: the name given is not one of this server's tools ({', '.join(names)})"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        return await super().call_tool(name, arguments, context)
