"""The log filter masks every kind of secret, wherever in a line it stands."""

from __future__ import annotations

import logging
import secrets
import sys

import pytest

from agentlanes.server.log_redaction import RedactSecrets, logging_config, redact

KEY = "alk_" + secrets.token_hex(32)
RT = "rt_" + secrets.token_hex(32)
TOKEN = secrets.token_hex(32)


@pytest.mark.parametrize(
    "line",
    [
        f'127.0.0.1:5 - "WebSocket /api/v1/events?token={RT}" [accepted]',
        f'127.0.0.1:5 - "WebSocket /api/v1/events?since=3&token={RT}&x=1" 403',
        f"< X-API-Key: {KEY}",
        f"< x-session-token: {TOKEN}",
        f"< Authorization: Bearer {TOKEN}",
        f"""< TEXT '{{"type": "attach", "session_token": "{TOKEN}"}}' [103 bytes]""",
        # websockets cuts long frames in the middle: neither half may survive.
        f"""< TEXT '{{"type":"attach","session_token":"{TOKEN[:20]}...{TOKEN[-10:]}"}}'""",
        f"headers={{'x-api-key': '{KEY}'}}",
        f"bare {KEY} and {RT} and {TOKEN}.",
    ],
)
def test_redact_masks_the_secret(line: str) -> None:
    out = redact(line)
    for secret in (KEY, RT, TOKEN, TOKEN[:20], TOKEN[-10:]):
        assert secret not in out
    assert "***" in out


def test_passwords_in_urls() -> None:
    line = "connecting to postgresql://app:s3cr3t-pw@db:5432/x and redis://:r3d1s-pw@cache:6379/0"
    out = redact(line)
    assert "s3cr3t-pw" not in out and "r3d1s-pw" not in out
    assert "postgresql://app:***@db:5432/x" in out and "redis://:***@cache:6379/0" in out
    assert redact("see https://example.com/a:b@c") == "see https://example.com/a:b@c"


def test_known_secrets_and_plain_text() -> None:
    assert redact("admin token is hunter2-admin", ["hunter2-admin"]) == "admin token is ***"
    plain = "timed out 3 session(s) of project 7; offset 12"
    assert redact(plain) == plain


def test_filter_redacts_arguments_and_tracebacks() -> None:
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "got %s", (KEY,), None)
    try:
        raise ValueError(f"bad token {TOKEN}")
    except ValueError:
        record.exc_info = sys.exc_info()
    assert RedactSecrets(["admin-secret-for-the-test-suite-2026-1"]).filter(record)
    text = logging.Formatter().format(record)
    assert KEY not in text and TOKEN not in text
    assert "got alk_***" in text and "ValueError: bad token ***" in text


def test_logging_config_routes_uvicorn_through_the_filter() -> None:
    config = logging_config("debug", known_secrets=["admin-secret-for-the-test-suite-2026-1"])
    assert config["handlers"]["stderr"]["filters"] == ["redact"]
    assert config["root"]["level"] == "DEBUG"
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        assert config["loggers"][name]["handlers"] == []
        assert config["loggers"][name]["propagate"] is True
    assert config["loggers"]["apscheduler"]["level"] == "WARNING"
    assert logging_config("trace")["root"]["level"] == "TRACE"


def _escape_all(text: str) -> str:
    return "".join(f"%{ord(c):02X}" for c in text)


@pytest.mark.parametrize(
    "query",
    [
        f"%74oken={_escape_all(RT)}",  # the finding: ?%74oken=<every character escaped>
        f"%54OKEN={_escape_all(RT)}",
        f"tok%65n={_escape_all(RT)}",
        f"%2574oken={_escape_all(_escape_all(RT))}",  # encoded twice
        f"since=3&%74oken={_escape_all(RT)}&x=%41",
        f"t={_escape_all(TOKEN)}",  # a session token under any name
        f"k={_escape_all(KEY)}",
        f"anything={RT[:3]}{_escape_all(RT[3:])}",
    ],
)
def test_percent_encoded_secrets_are_masked_whatever_the_key_spelling(query: str) -> None:
    line = f'127.0.0.1:5 - "WebSocket /api/v1/events?{query}" [accepted]'
    out = redact(line)
    assert "***" in out, out
    for secret in (KEY, RT, TOKEN):
        for spelling in (secret, _escape_all(secret), _escape_all(_escape_all(secret))):
            assert spelling not in out
        assert secret[-40:] not in out
    assert "[accepted]" in out


def test_escaped_text_without_a_secret_keeps_its_spelling() -> None:
    line = '"GET /api/v1/tasks?q=a%20b&since=3" 200'
    assert redact(line) == line
