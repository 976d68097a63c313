"""Normalising a pattern or a concrete path (SPEC "File patterns"), and checking a
pattern against the limits; a pattern that passes compiles."""

from __future__ import annotations

import re

from . import segments as sg
from .braces import _expand
from .compiler import compile_pattern
from .errors import DEFAULT_LIMITS, EXPANSION_LENGTH_FACTOR, PatternError, PatternLimits

_MULTI_SLASH = re.compile(r"/{2,}")
_WILDCARD = re.compile(r"\\.|[*?\[]", re.DOTALL)


def _normalise_text(raw: str, kind: str, *, keep_slash: bool = False) -> str:
    if "\x00" in raw:
        raise PatternError(raw, f"{kind} contains a NUL byte")
    text = _MULTI_SLASH.sub("/", raw.strip())
    if text.startswith("/"):
        raise PatternError(raw, f"{kind} must be relative, not absolute")
    while text.startswith("./"):
        text = text[2:]
    # A pattern keeps its trailing '/': it claims a directory (SPEC). A concrete
    # path names a file, so its trailing '/' means nothing and goes.
    body = text.removesuffix("/")
    if not body:
        raise PatternError(raw, f"{kind} is empty")
    if not keep_slash:
        text = body
    for segment in body.split("/"):
        if segment == "..":
            raise PatternError(raw, f"{kind} has a '..' segment")
        if segment == ".":
            raise PatternError(raw, f"{kind} has a '.' segment")
    return text


def _has_empty_brace(text: str) -> bool:
    """Whether ``text`` holds ``{}`` outside a character class and unescaped."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":  # a class: ']' right after '[' or '[!' is a member
            j = i + 1
            if j < n and text[j] in "!^":
                j += 1
            if j < n and text[j] == "]":
                j += 1
            close = text.find("]", j)
            if close != -1:
                i = close + 1
                continue
        elif ch == "{" and text.startswith("{}", i):
            return True
        i += 1
    return False


def normalise_path(raw: str, limits: PatternLimits = DEFAULT_LIMITS) -> str:
    """Normalise a concrete file path (SPEC rules); raise PatternError if invalid.

    A path is literal: ``src/[x].py`` names a file called ``[x].py``.
    """
    # The limit counts the characters sent (as the API's maxLength does), before any work.
    if len(raw) > limits.max_length:
        raise PatternError(raw[:80] + "…", f"path longer than {limits.max_length} characters")
    return _normalise_text(raw, "path")


def normalise_pattern(raw: str, limits: PatternLimits = DEFAULT_LIMITS) -> str:
    """Normalise a file pattern (SPEC rules) and check it against the limits.

    A trailing ``/`` is kept: it marks a directory claim (``src/api/``).
    Refuses (PatternError): empty, absolute, a ``..`` or ``.`` segment, a NUL
    byte, too long, too many wildcards, a brace expansion that yields more than
    ``max_brace_alternatives`` alternatives (refused before expanding), or none (``{,}``,
    an empty group ``{}``), too many characters in all, or an absolute, ``..`` or
    ``.`` alternative, and anything wcmatch cannot compile.
    """
    # The limit counts the characters sent (as the API's maxLength does), before any work.
    if len(raw) > limits.max_length:
        raise PatternError(raw[:80] + "…", f"pattern longer than {limits.max_length} characters")
    text = _normalise_text(raw, "pattern", keep_slash=True)
    wildcards = sum(1 for m in _WILDCARD.finditer(text) if len(m.group()) == 1)
    if wildcards > limits.max_wildcards:
        raise PatternError(text, f"pattern has more than {limits.max_wildcards} wildcards")
    if _has_empty_brace(text):
        raise PatternError(text, "pattern has an empty brace group '{}' (it expands to nothing)")
    alternatives = _expand(text, limits.max_brace_alternatives)
    expanded = limits.max_length * EXPANSION_LENGTH_FACTOR
    if sum(len(alt) for alt in alternatives) > expanded:
        raise PatternError(text, f"brace expansion longer than {expanded} characters in all")
    for alt in alternatives:
        if alt.startswith("/"):
            raise PatternError(text, f"brace alternative {alt!r} is absolute")
        segments = alt.split("/")
        if ".." in segments:
            raise PatternError(text, f"brace alternative {alt!r} has a '..' segment")
        if "." in segments:
            raise PatternError(text, f"brace alternative {alt!r} has a '.' segment")
    try:
        compile_pattern(text)
    except sg.SegmentSyntaxError as exc:  # pragma: no cover - defensive
        raise PatternError(text, f"pattern cannot be compiled ({exc})") from exc
    return text
