"""memkit where agents already live. Each integration is an optional extra, imported on demand:

- :mod:`memkit.integrations.langgraph` (``pip install memkit[langgraph]``): :class:`MemkitStore`, a
  LangGraph ``BaseStore`` over a :class:`~memkit.MemoryStore`;
- :mod:`memkit.integrations.mcp` (``pip install memkit[mcp]``): an MCP memory server
  (``memkit mcp --db FILE``).

Both go through the store's public API, so the guard, decay, versions, access rules and audit hold
exactly as they do for a direct call.
"""

__all__: list[str] = []  # nothing re-exported: each integration needs its extra, import it by name
