"""The scripted model server answers each model API as the programs call it: the script's
step by the tool results in the conversation, retries alike, side requests aside, and
every request recorded with its tool results' text (tests/support/scripted_model)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.support.scripted_model import ModelServer, Script, Step

SCRIPT = Script([Step("read_file", {"file_path": "/r/a.py"}), Step("write_file", {"x": 1})])


def gemini_body(results: list[str], tools: bool = True) -> dict[str, Any]:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "go"}]}]
    for text in results:
        response = {"name": "read_file", "response": {"output": text}}
        contents += [
            {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": response}]},
        ]
    body: dict[str, Any] = {"contents": contents, "systemInstruction": {"parts": [{"text": "sys"}]}}
    if tools:
        body["tools"] = [{"functionDeclarations": [{"name": "read_file"}, {"name": "write_file"}]}]
    return body


def sse_data(text: str) -> list[Any]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def test_gemini_streamed_answers_follow_the_conversation() -> None:
    with ModelServer(SCRIPT) as model:
        url = f"{model.url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        first = sse_data(httpx.post(url, json=gemini_body([])).text)
        call = first[0]["candidates"][0]["content"]["parts"][0]["functionCall"]
        assert call == {"name": "read_file", "args": {"file_path": "/r/a.py"}}
        again = sse_data(httpx.post(url, json=gemini_body([])).text)  # a retry: the same
        assert again[0]["candidates"][0]["content"]["parts"][0]["functionCall"] == call
        second = sse_data(httpx.post(url, json=gemini_body(["agentlanes: refused"])).text)
        assert second[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == (
            "write_file"
        )
        done = sse_data(httpx.post(url, json=gemini_body(["a", "b"])).text)
        assert done[0]["candidates"][0]["content"]["parts"][0] == {"text": "done."}
        last = model.recorded.last_main()
        assert last is not None and last.results == ["a", "b"] and last.tool_results == 2
        assert model.recorded.main()[2].newest_result() == "agentlanes: refused"
        assert "sys" in last.text


def test_gemini_side_requests_and_token_counts() -> None:
    with ModelServer(SCRIPT) as model:
        base = f"{model.url}/v1beta/models/gemini-2.5-flash"
        side = gemini_body([], tools=False)
        side["generationConfig"] = {"responseMimeType": "application/json"}
        answer = httpx.post(f"{base}:generateContent", json=side).json()
        text = answer["candidates"][0]["content"]["parts"][0]["text"]
        assert json.loads(text)["next_speaker"] == "user"  # the turn ends as it would
        counted = httpx.post(f"{base}:countTokens", json=gemini_body(["abcd" * 10])).json()
        assert counted["totalTokens"] > 0
        assert model.recorded.main() == []  # neither moved the script


def test_anthropic_tool_results_are_recorded() -> None:
    script = Script([Step("Read", {"file_path": "/r/a.py"})])
    with ModelServer(script) as model:
        body = {
            "model": "claude",
            "tools": [{"name": "Read"}],
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant",
                 "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1",
                     "content": [{"type": "text", "text": "agentlanes: refused"}]},
                    {"type": "text", "text": "a note beside it"}]},
            ],
        }  # fmt: skip
        answer = httpx.post(f"{model.url}/v1/messages", json=body).json()
        assert answer["content"] == [{"type": "text", "text": "done."}]
        last = model.recorded.last_main()
        assert last is not None and last.results == ["agentlanes: refused"]
        assert "a note beside it" in last.text
