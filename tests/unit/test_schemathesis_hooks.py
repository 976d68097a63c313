"""The fuzzing hooks' judgement of custom-format findings (tests/support/schemathesis_hooks.py):
schemathesis counts any value it draws for `glob-pattern` or `repo-path` in a negative case as
invalid; the hook keeps such a finding only when the pattern rules refuse a value."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.support import schemathesis_hooks as hooks

DOCUMENT = {
    "paths": {
        "/api/v1/checkout": {
            "post": {
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "oneOf": [
                                    {"$ref": "#/components/schemas/CheckoutBody"},
                                    {"type": "null"},
                                ]
                            }
                        }
                    }
                }
            }
        }
    },
    "components": {
        "schemas": {
            "CheckoutBody": {
                "type": "object",
                "properties": {
                    "files_touched": {
                        "type": "array",
                        "items": {"type": "string", "format": "repo-path"},
                    },
                    "patterns": {
                        "type": "array",
                        "items": {"type": "string", "format": "glob-pattern"},
                    },
                },
            }
        }
    },
}


@pytest.fixture(autouse=True)
def document(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hooks, "_DOCUMENT", [DOCUMENT])


def _finding(body: Any, pointers: list[str], keywords: tuple[str, ...] = ("format",)) -> bool:
    mutations = [SimpleNamespace(keywords=keywords, schema_pointer=p) for p in pointers]
    case = SimpleNamespace(
        operation=SimpleNamespace(path="/api/v1/checkout"),
        method="POST",
        body=body,
        meta=SimpleNamespace(phase=SimpleNamespace(data=SimpleNamespace(mutations=mutations))),
    )
    failure = SimpleNamespace(code="ST201")
    return hooks.drawn_format_values_may_be_valid(None, failure, case, None)


def test_a_finding_on_values_the_rules_accept_is_dropped() -> None:
    # The values of the finding a fuzzing run reported: valid file names all.
    body = {"files_touched": ["\U000feb6aDX\xa0\xb4", "\\\U00094ad4", "&"]}
    assert not _finding(body, ["/oneOf/0/properties/files_touched/items"])
    patterns = {"patterns": ["src/*.py", "{a,b}/**"]}
    assert not _finding(patterns, ["/oneOf/0/properties/patterns/items"])


def test_a_finding_on_a_value_the_rules_refuse_is_kept() -> None:
    for body, field in (
        ({"files_touched": ["ok.py", "/etc/passwd"]}, "files_touched"),
        ({"files_touched": ["a/../b"]}, "files_touched"),
        ({"patterns": ["*" * 40]}, "patterns"),
        ({"patterns": ["x" * 2000]}, "patterns"),
    ):
        assert _finding(body, [f"/oneOf/0/properties/{field}/items"]), body


def test_other_findings_are_kept() -> None:
    body = {"files_touched": ["&"]}
    pointer = "/oneOf/0/properties/files_touched/items"
    # Another keyword mutated too, or only another one.
    assert _finding(body, [pointer], keywords=("format", "maxLength"))
    assert _finding(body, [pointer], keywords=("maxLength",))
    # A pointer the document does not have: cannot be told, kept.
    assert _finding(body, ["/oneOf/0/properties/elsewhere/items"])
    # Another kind of failure.
    case = SimpleNamespace(meta=None)
    assert hooks.drawn_format_values_may_be_valid(None, SimpleNamespace(code="ST202"), case, None)
