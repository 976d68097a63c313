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
from mcp_types import Icon, ToolAnnotations


class LanesMCPServer(MCPServer[Any]):
    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        **later: Any,  # parameters a later 2.x SDK adds, passed on as given
    ) -> None:
        text = description if description is not None else fn.__doc__
        cleaned = inspect.cleandoc(text) if text else None
        super().add_tool(
            fn,
            name=name,
            title=title,
            description=cleaned,
            annotations=annotations,
            icons=icons,
            meta=meta,
            structured_output=structured_output,
            **later,
        )
