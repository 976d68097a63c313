"""OpenAI Chat Completions (Cline: ``cline auth -p openai -b URL``, the only providers
whose base URL it lets a user set).

``POST {base}/chat/completions``, streamed as Server-Sent Events (``data: {chunk}`` …
``data: [DONE]``) when ``stream`` is true;
https://platform.openai.com/docs/api-reference/chat. A tool call is a ``function`` with
its arguments as a JSON string; a tool result is a ``role: "tool"`` message. ``GET
{base}/models`` lists one model, for a program that asks which there are.
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


def read(request: ModelRequest) -> None:
    body = request.body if isinstance(request.body, dict) else {}
    request.tools = [
        str((t.get("function") or {}).get("name") or t.get("name") or "")
        for t in body.get("tools") or []
        if isinstance(t, dict)
    ]
    texts: list[str] = []
    results: list[str] = []
    after_tool = False
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        said = texts_of(message.get("content"))
        texts.extend(said)
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                texts.append(str((call.get("function") or {}).get("arguments") or ""))
        if message.get("role") == "tool":
            results.append("\n".join(said))
        elif message.get("role") == "user" and results and after_tool:
            # What the program adds right after a call's result (Cline's hook context,
            # where a refusal's reason stands) belongs to that result.
            results[-1] += "\n" + "\n".join(said)
        after_tool = message.get("role") in ("tool", "user") and bool(results)
    request.tool_results = len(results)
    request.results = results
    request.text = "\n".join(texts)


def _message(step: Step) -> dict[str, Any]:
    if step.tool:
        call = {"id": f"call_{next(_ids):06d}", "type": "function",
                "function": {"name": step.tool, "arguments": json.dumps(step.args)}}  # fmt: skip
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": step.text}


def _chunks(response: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """The streamed form: the role, then the text or each call whole, then the finish
    reason and the usage, then ``[DONE]``."""
    head = {k: response[k] for k in ("id", "object", "created", "model")}
    head["object"] = "chat.completion.chunk"
    message = response["choices"][0]["message"]
    finish = response["choices"][0]["finish_reason"]

    def chunk(delta: dict[str, Any], reason: str | None = None) -> tuple[None, Any]:
        return None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

    out: list[tuple[str | None, Any]] = [chunk({"role": "assistant", "content": ""})]
    if message.get("content"):
        out.append(chunk({"content": message["content"]}))
    for index, call in enumerate(message.get("tool_calls") or []):
        out.append(chunk({"tool_calls": [{"index": index, **call}]}))
    out.append(chunk({}, finish))
    out.append((None, {**head, "choices": [], "usage": response["usage"]}))
    out.append((None, "[DONE]"))
    return out


class OpenAIChat:
    name = "openai_chat"

    def matches(self, method: str, path: str) -> bool:
        path = path.rstrip("/")
        return (method == "POST" and path.endswith("/chat/completions")) or (
            method == "GET" and path.endswith("/models")
        )

    def answer(self, request: ModelRequest, script: Script) -> Answer:
        if request.method == "GET":
            model = {"id": "gpt-scripted", "object": "model", "created": 0, "owned_by": "x"}
            return Answer(body={"object": "list", "data": [model]})
        read(request)
        body = request.body if isinstance(request.body, dict) else {}
        step = (
            script.step_for(request, request.tool_results)
            if request.tools
            else Step.say(script.side_text)
        )
        tokens = max(1, len(request.text) // 4)
        message = _message(step)
        response = {
            "id": f"chatcmpl-{next(_ids):06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or "gpt-scripted",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if step.tool else "stop"}],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 10,
                      "total_tokens": tokens + 10},
        }  # fmt: skip
        if body.get("stream"):
            return Answer(stream=sse(_chunks(response)))
        return Answer(body=response)


DIALECT = OpenAIChat()
