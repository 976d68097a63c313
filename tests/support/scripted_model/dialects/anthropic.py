"""Anthropic Messages API (Claude Code: ``ANTHROPIC_BASE_URL``).

``POST /v1/messages`` (streamed as Server-Sent Events when ``stream`` is true) and
``POST /v1/messages/count_tokens``; https://docs.anthropic.com/en/api/messages.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from tests.support.scripted_model.script import Script, Step
from tests.support.scripted_model.server import Answer, ModelRequest, sse

_ids = itertools.count(1)


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_result":
            out.extend(_texts(block.get("content")))
        elif block.get("type") == "tool_use":
            out.append(json.dumps(block.get("input")))
    return out


def read(request: ModelRequest) -> None:
    body = request.body if isinstance(request.body, dict) else {}
    request.tools = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
    texts = _texts(body.get("system"))
    results: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        texts.extend(_texts(content))
        if isinstance(content, list):
            results += [
                "\n".join(_texts(b.get("content")))
                for b in content
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
    request.tool_results = len(results)
    request.results = results
    request.text = "\n".join(texts)


def _blocks(step: Step) -> list[dict[str, Any]]:
    if step.tool:
        return [
            {"type": "tool_use", "id": f"toolu_{next(_ids):06d}", "name": step.tool,
             "input": step.args}
        ]  # fmt: skip
    return [{"type": "text", "text": step.text}]


def _events(message: dict[str, Any]) -> list[tuple[str | None, Any]]:
    start = {**message, "content": [], "stop_reason": None}
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            head = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            head = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            ("content_block_start",
             {"type": "content_block_start", "index": index, "content_block": head}),
            ("content_block_delta",
             {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]  # fmt: skip
    events += [
        ("message_delta",
         {"type": "message_delta",
          "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
          "usage": {"output_tokens": 10}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events


class Anthropic:
    name = "anthropic"

    def matches(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith(("/v1/messages", "/count_tokens"))

    def answer(self, request: ModelRequest, script: Script) -> Answer:
        read(request)
        if request.path.rstrip("/").endswith("/count_tokens"):
            request.tools = []  # a count, not one of the agent's turns
            return Answer(body={"input_tokens": max(1, len(request.text) // 4)})
        body = request.body if isinstance(request.body, dict) else {}
        step = (
            script.step_for(request, request.tool_results)
            if request.tools
            else Step.say(script.side_text)
        )
        message = {
            "id": f"msg_{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or "claude-scripted",
            "content": _blocks(step),
            "stop_reason": "tool_use" if step.tool else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": max(1, len(request.text) // 4), "output_tokens": 10},
        }
        if body.get("stream"):
            return Answer(stream=sse(_events(message)))
        return Answer(body=message)


DIALECT = Anthropic()
