"""One module per model API; each defines ``DIALECT``, an object with
``matches(method, path) -> bool`` and ``answer(request, script) -> Answer``
(see ``tests.support.scripted_model.server``). The server finds them all here."""

from __future__ import annotations

from typing import Any


def texts_of(content: Any) -> list[str]:
    """The texts of an OpenAI message's ``content``: a string, or parts that are strings
    or ``{"text": ...}`` (Responses and Chat Completions alike)."""
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return out
