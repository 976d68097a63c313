"""Giving claims back (SPEC "Many agents, one working tree", "Release"): which of a
session's claims the paths a person or an agent names are, and the session file the hooks
read kept current. Shared by ``lanes release`` and the MCP tool ``release``."""

from __future__ import annotations

import os
from typing import Any


def spellings(given: str, root: str | None) -> set[str]:
    """The ways a given path may name a claim: as written (without ``./`` and a trailing
    ``/``), and relative to the repository root when given relative to here."""
    text = given.strip()
    while text.startswith("./"):
        text = text[2:]
    found = {text, text.rstrip("/")}
    if root is not None:
        rel = os.path.relpath(os.path.abspath(text), root).replace(os.sep, "/")
        if rel != ".." and not rel.startswith("../"):
            found.update({rel, rel.rstrip("/")})
    return found


def released(
    declared: list[str], given: list[str], root: str | None
) -> tuple[list[str], list[str]]:
    """(the claims left, the given paths that name none of them)."""
    names = {g: spellings(g, root) for g in given}

    def named(claim: str, g: str) -> bool:
        return claim in names[g] or claim.rstrip("/") in names[g]

    left = [p for p in declared if not any(named(p, g) for g in given)]
    unknown = [g for g in given if not any(named(p, g) for p in declared)]
    return left, unknown


def remember_claims(cfg: Any, session: dict[str, Any], now: list[str], before: list[str]) -> None:
    """The hooks read the claims from the session file: keep it current."""
    source = session.pop("source", None)
    if not source or source == "AGENTLANES_SESSION_TOKEN" or not session.get("agent_name"):
        return
    from agentlanes.client.config import save_session

    session["declared_files"] = now
    joined = session.get("edit_claims")
    if isinstance(joined, list):
        session["edit_claims"] = [p for p in joined if p in now]
    save_session(cfg, session)
