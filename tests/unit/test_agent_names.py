"""One agent-name rule (issue 29; SPEC: 1-64 of A-Z a-z 0-9 . _ -): the server's check, the
client's, the name a hook makes up and the OpenAPI pattern all agree."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlanes.client.config import ConfigError, check_agent_name
from agentlanes.domain.names import NAME_CHARS, is_agent_name
from agentlanes.errors import InvalidInput
from agentlanes.hooks.agent_name import agent_for
from agentlanes.services import validation


def server_accepts(value: str) -> bool:
    try:
        validation.check_agent_name(value)
    except InvalidInput:
        return False
    return True


def client_accepts(value: str) -> bool:
    try:
        check_agent_name(value)
    except ConfigError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=70)
    | st.from_regex(r"[A-Za-z0-9._\-]{1,70}", fullmatch=True)
)
def test_the_server_the_client_and_the_schema_agree(value: str) -> None:
    schema = re.fullmatch(f"[{NAME_CHARS}]{{1,64}}", value) is not None
    assert server_accepts(value) == is_agent_name(value) == schema
    # The client refuses "." and ".." besides: a name is a file name there.
    assert client_accepts(value) == (schema and value not in (".", ".."))
    assert (validation.AGENT_NAME_RE.match(value) is not None) == schema


@pytest.mark.parametrize("sid", ["sé-ñ", "a/b c", "x" * 100, "٣٤"])
def test_a_name_a_hook_makes_up_is_one_the_server_accepts(sid: str) -> None:
    name = agent_for({"session_id": sid}, env={})
    assert name is not None and name.startswith("claude-")
    assert server_accepts(name) and client_accepts(name)
