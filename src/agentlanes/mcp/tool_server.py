"""The SDK's ``MCPServer`` with tool descriptions as a model should read them.

A tool's description is its docstring, which the SDK sends as written: every line after
the first keeps the function's indentation. Here each one is cleaned as ``help()`` does
(``inspect.cleandoc``: the common indent removed, blank lines at either end dropped), for
every tool, whichever module adds it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer


class LanesMCPServer(MCPServer[Any]):
    def add_tool(
        self, fn: Callable[..., Any], *args: Any, description: str | None = None, **kwargs: Any
    ) -> None:
        text = description if description is not None else fn.__doc__
        cleaned = inspect.cleandoc(text) if text else None
        super().add_tool(fn, *args, description=cleaned, **kwargs)
