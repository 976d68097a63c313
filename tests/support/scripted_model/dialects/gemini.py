"""The Gemini API (Gemini CLI: ``GOOGLE_GEMINI_BASE_URL``).

``POST /v1beta/models/{model}:generateContent``, ``:streamGenerateContent?alt=sse`` (each
Server-Sent Event one ``GenerateContentResponse``) and ``:countTokens``;
https://ai.google.dev/api/generate-content. A conversation is ``contents`` (``role``
``user`` / ``model``, each with ``parts``: ``text``, ``functionCall``,
``functionResponse``), the tools ``tools[].functionDeclarations[]``, the system prompt
``systemInstruction``.

A side request that wants JSON (``generationConfig.responseMimeType`` is
``application/json``: Gemini CLI's next-speaker check, its model router) gets a JSON
text that lets the turn end as it would: the user speaks next.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.scripted_model.script import Script, Step
from tests.support.scripted_model.server import Answer, ModelRequest, sse


def _part_texts(part: Any) -> list[str]:
    if not isinstance(part, dict):
        return []
    if isinstance(part.get("text"), str):
        return [part["text"]]
    if isinstance(part.get("functionCall"), dict):
        return [json.dumps(part["functionCall"].get("args"))]
    if isinstance(part.get("functionResponse"), dict):
        return [_response_text(part["functionResponse"].get("response"))]
    return []


def _response_text(response: Any) -> str:
    """A function response's text: its ``output`` (or ``error``), else all of it."""
    if isinstance(response, dict):
        for key in ("output", "error", "llmContent"):
            if isinstance(response.get(key), str):
                return str(response[key])
    return json.dumps(response)


def read(request: ModelRequest) -> None:
    body = request.body if isinstance(request.body, dict) else {}
    request.tools = [
        str(d.get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
        for d in tool.get("functionDeclarations") or []
        if isinstance(d, dict)
    ]
    system = body.get("systemInstruction")
    texts: list[str] = []
    if isinstance(system, dict):
        texts += [t for p in system.get("parts") or [] for t in _part_texts(p)]
    elif isinstance(system, str):
        texts.append(system)
    results: list[str] = []
    for content in body.get("contents") or []:
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            texts += _part_texts(part)
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                results.append(_response_text(part["functionResponse"].get("response")))
    request.tool_results = len(results)
    request.results = results
    request.text = "\n".join(texts)


def _side_text(body: dict[str, Any], script: Script) -> str:
    config = body.get("generationConfig") or {}
    if isinstance(config, dict) and config.get("responseMimeType") == "application/json":
        return json.dumps(
            {"reasoning": "scripted", "next_speaker": "user", "model_choice": "flash"}
        )
    return script.side_text


def _response(step: Step, model: str, tokens: int) -> dict[str, Any]:
    part = (
        {"functionCall": {"name": step.tool, "args": step.args}}
        if step.tool
        else {"text": step.text}
    )
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [part]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": tokens,
            "candidatesTokenCount": 10,
            "totalTokenCount": tokens + 10,
        },
        "modelVersion": model,
    }


class Gemini:
    name = "gemini"

    def matches(self, method: str, path: str) -> bool:
        return method == "POST" and path.endswith(
            (":generateContent", ":streamGenerateContent", ":countTokens")
        )

    def answer(self, request: ModelRequest, script: Script) -> Answer:
        read(request)
        if request.path.endswith(":countTokens"):
            request.tools = []  # a count, not one of the agent's turns
            return Answer(body={"totalTokens": max(1, len(request.text) // 4)})
        body = request.body if isinstance(request.body, dict) else {}
        step = (
            script.step_for(request, request.tool_results)
            if request.tools
            else Step.say(_side_text(body, script))
        )
        model = request.path.rsplit("/", 1)[-1].split(":", 1)[0]
        response = _response(step, model, max(1, len(request.text) // 4))
        if request.path.endswith(":streamGenerateContent"):
            return Answer(stream=sse([(None, response)]))
        return Answer(body=response)


DIALECT = Gemini()
