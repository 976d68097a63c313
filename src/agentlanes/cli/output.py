"""What the agent-side commands share: --json, tables, and client errors as exit codes."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from agentlanes.cli.errors import (
    EXIT_CONFLICT,
    EXIT_NO_SESSION,
    EXIT_SERVER_ERROR,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CommandError,
)
from agentlanes.client.report import FOR_CERTAIN, certainty, edit_lines
from agentlanes.domain.words import clean


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print JSON on stdout (errors too) for agents"
    )


def emit_json(data: Any) -> None:
    print(json.dumps(data, separators=(",", ":")))


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], out: Any = None) -> None:
    """A plain aligned table (no colours: it goes into agents' logs as often as terminals).
    Every cell is cleaned (agentlanes.domain.words): the cells hold other agents' words,
    which must not reach a terminal as escapes nor break a row."""
    out = out or sys.stdout
    cells = [[str(h) for h in headers]] + [["" if c is None else clean(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip(), file=out)
        if n == 0:
            print("  ".join("-" * w for w in widths), file=out)


CONFLICT_HEADERS = ("AGENT", "AREA", "THEIR PATTERN", "YOURS", "EXAMPLE", "CERTAIN", "GRADE")


def conflict_rows(conflicts: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """One row per overlap: agent, their area, their pattern, mine, an example, certain."""
    rows: list[list[Any]] = []
    for c in conflicts:
        grade = c.get("grade") or "-"
        if c.get("overlapping_area"):
            rows.append(
                [c["agent_name"], c.get("declared_area"), "(same area)", "", "", FOR_CERTAIN, grade]
            )
        for f in c.get("overlapping_files") or []:
            rows.append(
                [
                    c["agent_name"],
                    c.get("declared_area"),
                    f["their_pattern"],
                    f["pattern"],
                    f["example"],
                    certainty(f),
                    grade,
                ]
            )
    return rows


def print_conflicts(conflicts: Sequence[dict[str, Any]], out: Any = None) -> None:
    table(CONFLICT_HEADERS, conflict_rows(conflicts), out)
    # Line-level claims (SPEC): how the overlap's edits are graded, one line per file.
    for c in conflicts:
        for line in edit_lines(c):
            print(f"  {line}", file=out)


def conflict_table(conflicts: Sequence[dict[str, Any]]) -> list[str]:
    """The conflicts table as lines (for a refusal on stderr)."""
    import io

    buf = io.StringIO()
    print_conflicts(conflicts, buf)
    return buf.getvalue().splitlines()


@contextlib.contextmanager
def client_errors() -> Iterator[None]:
    """Client exceptions become one-line CommandErrors with the documented exit codes."""
    from agentlanes.client.config import ConfigError
    from agentlanes.client.errors import (
        ApiError,
        ConfigurationError,
        NoSession,
        StreamClosed,
        Unreachable,
    )

    try:
        yield
    except ApiError as exc:
        payload = {"error": {"code": exc.code, "message": exc.message}, **exc.extra}
        details: list[str] = []
        if exc.status == 409:
            code = EXIT_CONFLICT
            # A refusal names who holds what, not just how many (the table --json carries).
            if exc.conflicts:
                details = ["refused because of:", *conflict_table(exc.conflicts)]
        elif exc.code in ("SESSION_NOT_FOUND", "SESSION_ENDED"):
            code = EXIT_NO_SESSION
        elif exc.status == 400:
            code = EXIT_USAGE
        else:
            code = EXIT_SERVER_ERROR
        raise CommandError(f"{exc.code}: {exc.message}", code, payload, details) from None
    except NoSession as exc:
        raise CommandError(str(exc), EXIT_NO_SESSION, _payload("NO_SESSION", exc)) from None
    except (ConfigurationError, ConfigError) as exc:
        raise CommandError(str(exc), EXIT_USAGE, _payload("CONFIGURATION", exc)) from None
    except Unreachable as exc:
        raise CommandError(str(exc), EXIT_UNREACHABLE, _payload("UNREACHABLE", exc)) from None
    except StreamClosed as exc:
        raise CommandError(str(exc), EXIT_SERVER_ERROR, _payload("STREAM_CLOSED", exc)) from None


def _payload(code: str, exc: Exception) -> dict[str, Any]:
    return {"error": {"code": code, "message": str(exc)}}
