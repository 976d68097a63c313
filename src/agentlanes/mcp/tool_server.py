"""The SDK's ``MCPServer`` with tool descriptions as a model should read them, listing
only the tools of the groups the agent has (``mcp/toolsets.py``).

A tool's description is its docstring, which the SDK sends as written: every line after
the first keeps the function's indentation. Here each one is cleaned as ``help()`` does
(``inspect.cleandoc``: the common indent removed, blank lines at either end dropped), for
every tool, whichever module adds it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import Icon, ListToolsResult, PaginatedRequestParams, ToolAnnotations

from agentlanes.mcp import toolsets


class LanesMCPServer(MCPServer[Any]):
    # The agent behind a request (``Lanes``: its ``tools`` are the groups it sees), set by
    # ``new_server``; None lists every tool.
    resolve: Callable[[Context], Any] | None = None

    async def _handle_list_tools(
        self, ctx: Any, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        groups: tuple[str, ...] = toolsets.DEFAULT
        if self.resolve is not None:
            try:
                lanes = await self.resolve(Context(request_context=ctx, mcp_server=self))
                groups = tuple(getattr(lanes, "tools", None) or toolsets.DEFAULT)
            except Exception:  # no session yet (HTTP): the default set
                groups = toolsets.DEFAULT
        tools = [lean(t) for t in await self.list_tools() if toolsets.shown(t.name, groups)]
        return ListToolsResult(tools=tools)

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


def lean(tool: Any) -> Any:
    """A tool's definition without what tells the model nothing and costs its context on
    every session: the schema titles made from the names ("Agent Name" for
    ``agent_name``), and the output schema of a tool that answers any object."""
    schema = dict(tool.input_schema or {})
    schema.pop("title", None)
    props = schema.get("properties")
    if isinstance(props, dict):
        schema["properties"] = {
            k: {f: v for f, v in p.items() if f != "title"} if isinstance(p, dict) else p
            for k, p in props.items()
        }
    out = tool.output_schema
    if isinstance(out, dict) and set(out) <= {"additionalProperties", "title", "type"}:
        out = None  # {"type": "object", "additionalProperties": true}: any answer
    return tool.model_copy(update={"input_schema": schema, "output_schema": out})
