"""MCP tool descriptions read as a model should see them: no docstring indentation."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from agentlanes.mcp.server import new_server


async def _no_lanes(_: Any) -> Any:
    raise AssertionError("not called")


def _tools() -> list[Any]:
    return asyncio.run(new_server(_no_lanes).list_tools())


def test_tool_descriptions_are_dedented() -> None:
    tools = _tools()
    assert len(tools) >= 10
    for tool in tools:
        text = tool.description or ""
        assert text, tool.name
        assert text == inspect.cleandoc(text), tool.name
        lines = text.splitlines()
        assert not any(line[:1].isspace() for line in lines), (tool.name, text)
        # The paragraphs survive: a multi-paragraph docstring keeps its blank line.
    multi = [t for t in tools if "\n\n" in (t.description or "")]
    assert multi, "some tools have several paragraphs"


def test_argument_descriptions_have_no_indentation() -> None:
    for tool in _tools():
        for name, prop in tool.input_schema.get("properties", {}).items():
            text = prop.get("description", "")
            assert text, (tool.name, name)
            assert text == text.strip() and "\n " not in text, (tool.name, name, text)
