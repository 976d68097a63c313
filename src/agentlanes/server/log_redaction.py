"""The server's logging: one handler, and a filter that keeps every secret out of it.

Secrets reach log lines by routes we do not write ourselves: uvicorn logs each WebSocket
handshake with its query string (``"WebSocket /api/v1/events?token=rt_…" [accepted]``,
which ``access_log=False`` does not silence), and at debug level the websockets library
logs request headers (``X-API-Key``) and client frames (``attach`` carries a session
token). So the filter sits on the handler, where every record of every logger passes,
and rewrites the finished message (and any traceback) before it is written:

* values of ``token=`` in query strings, of the ``X-API-Key``, ``X-Session-Token`` and
  ``Authorization`` headers, and of ``session_token`` in JSON;
* anything shaped like one of our secrets: ``alk_`` + 64 hex (project keys), ``rt_`` +
  64 hex (browser tokens), 64 hex (session tokens);
* passwords in URLs (``postgresql://user:…@host``, ``redis://:…@host``);
* the configured admin token, verbatim.

Each rule applies to the line as written and, for any run of characters that carries
percent-escapes (``?%74oken=%72%74%5f…``), to that run decoded (twice encoded too): a
run that hides a secret is written decoded and masked, whatever the spelling of its key.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote_plus

MASK = "***"
TRACE_LEVEL = 5  # uvicorn's

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # ?token=… / &token=… (also session_token=, api_key=) up to the next separator.
    (
        re.compile(r"(?i)([?&](?:token|session_token|api_key|key)=)[^&\s\"'#]+"),
        rf"\g<1>{MASK}",
    ),
    # Header lines (websockets at debug level: "< X-API-Key: …"), header reprs.
    (
        re.compile(
            r"(?i)((?:x-api-key|x-session-token|authorization)['\"]?\s*[:,=]\s*['\"]?)"
            r"(?:bearer\s+)?[^\s'\",}]+"
        ),
        rf"\g<1>{MASK}",
    ),
    # JSON / repr fields: "session_token": "…", 'api_key': '…', "token":"…"
    (
        re.compile(
            r"(?i)([\"']?(?:session_token|api_key|token)[\"']?\s*:\s*[\"'])[^\"']*",
        ),
        rf"\g<1>{MASK}",
    ),
    # Passwords in URLs: postgresql://user:secret@host, redis://:secret@host.
    (re.compile(r"([a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s/]+@"), rf"\g<1>{MASK}@"),
    (re.compile(r"alk_[0-9a-f]{8,}"), f"alk_{MASK}"),
    (re.compile(r"rt_[0-9a-f]{8,}"), f"rt_{MASK}"),
    (re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])"), MASK),
]


# A run of characters with at least one percent-escape (a URL, a query string).
_ESCAPED_RUN = re.compile(r"[^\s\"'<>]*%[0-9A-Fa-f]{2}[^\s\"'<>]*")
# How many times a run is decoded at most (%2574 is %74 is t).
_DECODE_ROUNDS = 3


def _plain_redact(text: str, known: tuple[str, ...]) -> str:
    for secret in known:
        if secret:
            text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _redact_escaped(match: re.Match[str], known: tuple[str, ...]) -> str:
    raw = match.group(0)
    decoded = raw
    for _ in range(_DECODE_ROUNDS):
        once = unquote_plus(decoded)
        if once == decoded:
            break
        decoded = once
    masked = _plain_redact(decoded, known)
    # Only a run that hid a secret is rewritten; any other keeps its spelling.
    return masked if masked != decoded else raw


def redact(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with every secret we can recognise replaced by ``***``, also where it is
    percent-encoded (then the run that carried it is written decoded)."""
    secrets = tuple(known)
    if "%" in text:
        text = _ESCAPED_RUN.sub(lambda m: _redact_escaped(m, secrets), text)
    return _plain_redact(text, secrets)


class RedactSecrets(logging.Filter):
    """A handler filter: formats the record's message (and traceback) once, redacted."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        super().__init__()
        # Short values (an empty or one-letter admin token) would mask half the log.
        self.known = tuple(s for s in known if len(s) >= 8)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: log it as it is, still redacted
            message = f"{record.msg!r} {record.args!r}"
        record.msg = redact(message, self.known)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.known)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.known)
        return True


def logging_config(level: str, *, known_secrets: Iterable[str] = ()) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for the server and for uvicorn (``log_config=``):
    every logger, uvicorn's included, writes through one redacting handler on stderr."""
    name = level.upper()
    if name == "TRACE":  # uvicorn's level below DEBUG, registered here before uvicorn does
        logging.addLevelName(TRACE_LEVEL, "TRACE")
    numeric = logging.getLevelName(name)
    if not isinstance(numeric, int):
        numeric = logging.INFO
        name = "INFO"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"redact": {"()": RedactSecrets, "known": list(known_secrets)}},
        "formatters": {
            "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        },
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "plain",
                "filters": ["redact"],
            },
        },
        "root": {"level": name, "handlers": ["stderr"]},
        "loggers": {
            # uvicorn's loggers carry no handler of their own: they reach the root's.
            "uvicorn": {"level": name, "handlers": [], "propagate": True},
            "uvicorn.error": {"level": name, "handlers": [], "propagate": True},
            "uvicorn.access": {"level": name, "handlers": [], "propagate": True},
            # APScheduler reports every run of the one-second expiry job at INFO, and
            # Alembic narrates each migration check: warnings only, unless asked for less.
            "apscheduler": {"level": logging.getLevelName(max(logging.WARNING, numeric))},
            "alembic": {"level": logging.getLevelName(max(logging.WARNING, numeric))},
        },
    }
