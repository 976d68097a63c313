"""Objects in a request body are size-checked before they are walked (issue 40: a
150,000-key ``meta`` was copied and walked, seconds of event loop, before its size was
known)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agentlanes.api.coordination_schemas import AgentBody
from agentlanes.api.schemas import CheckinBody, json_size_over
from agentlanes.settings import LIMITS


class CountingDict(dict[str, Any]):
    """A dict that counts how many of its items were read."""

    read = 0

    def items(self) -> Any:
        for item in super().items():
            CountingDict.read += 1
            yield item


@pytest.mark.parametrize(
    ("model", "field", "bound"),
    [(CheckinBody, "meta", LIMITS.meta_bytes), (AgentBody, "config", LIMITS.agent_config_bytes)],
)
def test_a_huge_object_is_refused_after_reading_about_its_bound(
    model: Any, field: str, bound: int
) -> None:
    CountingDict.read = 0
    huge = CountingDict({f"k{i}": i for i in range(150_000)})
    with pytest.raises(ValidationError) as caught:
        model.model_validate({field: huge})
    assert f"at most {bound} bytes" in str(caught.value.errors()[0]["msg"])
    assert caught.value.errors()[0]["loc"] == (field,)
    assert CountingDict.read <= bound // 4, CountingDict.read


def test_the_size_bound_is_a_lower_bound_of_the_json() -> None:
    import json

    for value in (
        {"a": [1, 2, {"b": "c" * 100}], "d": None},
        ["x" * 50] * 30,
        {"deep": [[[["é" * 10]]]]},
        {},
    ):
        size = len(json.dumps(value))
        assert not json_size_over(value, size), value
        assert json_size_over(value, 1) or size <= 2
