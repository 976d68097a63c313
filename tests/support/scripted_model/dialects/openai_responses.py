"""OpenAI Responses API (Codex: a ``model_providers`` entry with ``wire_api =
"responses"``; Copilot CLI: ``COPILOT_PROVIDER_BASE_URL`` with
``COPILOT_PROVIDER_WIRE_API=responses``).

``POST {base}/responses``, streamed as Server-Sent Events when ``stream`` is true;
https://platform.openai.com/docs/api-reference/responses. A tool is a ``function``
(arguments: a JSON string) or a ``custom`` tool (Codex's freeform ``apply_patch``: the
input is the text itself); a step's ``args`` for a custom tool are ``{"input": text}``.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from tests.support.scripted_model.dialects import texts_of
from tests.support.scripted_model.script import Script, Step
from tests.support.scripted_model.server import Answer, ModelRequest, sse

_ids = itertools.count(1)
_RESULTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _item_texts(item: dict[str, Any]) -> list[str]:
    kind = item.get("type")
    if kind == "message" or (kind is None and "role" in item):
        return texts_of(item.get("content"))
    if kind in _RESULTS:
        return texts_of(item.get("output"))
    if kind == "function_call":
        return [str(item.get("arguments") or "")]
    if kind == "custom_tool_call":
        return [str(item.get("input") or "")]
    return []


def _tool_name(tool: Any) -> str:
    if not isinstance(tool, dict):
        return ""
    name = tool.get("name") or (tool.get("function") or {}).get("name")
    return str(name or tool.get("type") or "")


def read(request: ModelRequest) -> None:
    body = request.body if isinstance(request.body, dict) else {}
    request.tools = [n for n in (_tool_name(t) for t in body.get("tools") or []) if n]
    texts = texts_of(body.get("instructions"))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    results: list[str] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        texts.extend(_item_texts(item))
        if item.get("type") in _RESULTS:
            results.append("\n".join(_item_texts(item)))
    request.tool_results = len(results)
    request.results = results
    request.text = "\n".join(texts)


def _custom_tools(body: dict[str, Any]) -> set[str]:
    return {
        str(t.get("name"))
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("type") == "custom"
    }


def _output(step: Step, body: dict[str, Any]) -> dict[str, Any]:
    n = next(_ids)
    if step.tool and step.tool in _custom_tools(body):
        return {"type": "custom_tool_call", "id": f"ctc_{n:06d}", "call_id": f"call_{n:06d}",
                "name": step.tool, "input": str(step.args.get("input", "")),
                "status": "completed"}  # fmt: skip
    if step.tool:
        return {"type": "function_call", "id": f"fc_{n:06d}", "call_id": f"call_{n:06d}",
                "name": step.tool, "arguments": json.dumps(step.args),
                "status": "completed"}  # fmt: skip
    return {"type": "message", "id": f"msg_{n:06d}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": step.text, "annotations": []}]}  # fmt: skip


def _events(response: dict[str, Any]) -> list[tuple[str | None, Any]]:
    start = {**response, "status": "in_progress", "output": []}
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "response": start}),
        ("response.in_progress", {"type": "response.in_progress", "response": start}),
    ]
    for index, item in enumerate(response["output"]):
        events.append(("response.output_item.added",
                       {"type": "response.output_item.added", "output_index": index,
                        "item": {**item, "status": "in_progress"}}))  # fmt: skip
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(("response.output_text.delta",
                           {"type": "response.output_text.delta", "item_id": item["id"],
                            "output_index": index, "content_index": 0, "delta": text}))  # fmt: skip
            events.append(("response.output_text.done",
                           {"type": "response.output_text.done", "item_id": item["id"],
                            "output_index": index, "content_index": 0, "text": text}))  # fmt: skip
        elif item["type"] == "function_call":
            events.append(("response.function_call_arguments.done",
                           {"type": "response.function_call_arguments.done",
                            "item_id": item["id"], "output_index": index,
                            "arguments": item["arguments"]}))  # fmt: skip
        events.append(("response.output_item.done",
                       {"type": "response.output_item.done", "output_index": index,
                        "item": item}))  # fmt: skip
    events.append(("response.completed", {"type": "response.completed", "response": response}))
    return events


class OpenAIResponses:
    name = "openai_responses"

    def matches(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith("/responses")

    def answer(self, request: ModelRequest, script: Script) -> Answer:
        read(request)
        body = request.body if isinstance(request.body, dict) else {}
        step = (
            script.step_for(request, request.tool_results)
            if request.tools
            else Step.say(script.side_text)
        )
        tokens = max(1, len(request.text) // 4)
        response = {
            "id": f"resp_{next(_ids):06d}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": body.get("model") or "gpt-scripted",
            "output": [_output(step, body)],
            "usage": {"input_tokens": tokens, "output_tokens": 10, "total_tokens": tokens + 10,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}},
        }  # fmt: skip
        if body.get("stream"):
            return Answer(stream=sse(_events(response)))
        return Answer(body=response)


DIALECT = OpenAIResponses()
