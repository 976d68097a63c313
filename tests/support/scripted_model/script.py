"""What the scripted model says: a list of steps, taken by how far the conversation got.

A program's main request carries its conversation so far; the number of tool results in
it says which step comes next (a refused tool call is a tool result too, with the
refusal as its text). So retries of one request get the same answer, and a request with
no tools offered (a title, a summary, a classifier a program runs on the side) gets a
short text and does not move the script.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Step:
    """One model turn: a call of the program's own tool ``tool`` with ``args``, or (no
    tool) a final ``text`` that ends the program's turn."""

    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    @staticmethod
    def say(text: str) -> Step:
        return Step(text=text)


@dataclass
class Script:
    """Steps in order; past the end, ``final`` (a text). A step may also be a function of
    the request (``ModelRequest``) that returns the step, for answers that depend on what
    the program sent."""

    steps: Sequence[Step | Callable[[Any], Step]]
    final: str = "done."
    side_text: str = "ok"

    def step_for(self, request: Any, tool_results: int) -> Step:
        if tool_results < len(self.steps):
            step = self.steps[tool_results]
            return step(request) if callable(step) else step
        return Step.say(self.final)
