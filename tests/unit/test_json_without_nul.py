"""The document's JsonWithoutNul admits exactly the JSON values without a NUL in any
string or key, by both regex dialects (Python's jsonschema, ECMA-262's jsonschema-rs), in
the shape generators accept (no `type`, no `anyOf`: tests/e2e/test_generated_client.py)."""

from __future__ import annotations

from typing import Any

import jsonschema
import jsonschema_rs
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlanes.api.openapi import JSON_WITHOUT_NUL

ROOT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "components": {"schemas": {"JsonWithoutNul": JSON_WITHOUT_NUL}},
    "$ref": "#/components/schemas/JsonWithoutNul",
}
PYTHON = jsonschema.Draft202012Validator(ROOT)
ECMA = jsonschema_rs.validator_for(ROOT)

TEXT = st.text(alphabet=st.sampled_from(["a", "\x00", "é", "\n", " ", "\x01"]), max_size=4)
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)


def holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(holds_nul(v) for v in value)
    if isinstance(value, dict):
        return any(holds_nul(k) or holds_nul(v) for k, v in value.items())
    return False


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_any_json_value_without_nul_and_only_those(value: Any) -> None:
    allowed = not holds_nul(value)
    assert PYTHON.is_valid(value) == allowed, value
    assert ECMA.is_valid(value) == allowed, value


def test_the_shape_has_no_union_and_no_type() -> None:
    """What openapi-python-client 0.29 cannot parse: a union that refers to itself."""
    assert not {"anyOf", "oneOf", "allOf", "type"} & set(JSON_WITHOUT_NUL)
