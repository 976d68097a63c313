"""``\\Z`` wherever a regular expression means the end (issue 40): Python's ``$`` also
matches before a trailing newline, so ``1-ab%0A`` passed for a news cursor."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentlanes
from agentlanes import tokens
from agentlanes.errors import InvalidInput
from agentlanes.services.news import parse_cursor

PACKAGE = Path(agentlanes.__file__).resolve().parent


def test_a_trailing_newline_is_no_cursor_nor_token() -> None:
    assert parse_cursor("12-ab") == (12, "ab")
    with pytest.raises(InvalidInput):
        parse_cursor("12-ab\n")
    assert tokens.is_session_token("a" * 64)
    assert not tokens.is_session_token("a" * 64 + "\n")


def test_no_compiled_pattern_ends_with_a_dollar() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "compile"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).endswith("$")
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not found, found
