"""Where this server leans on Litestar's behaviour rather than its settings: each test says
what to re-check when it fails after a Litestar upgrade (checked against Litestar 2.25.0)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Annotated, Any

from litestar import Controller, Litestar, get, post
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.testing import TestClient
from pydantic import BaseModel

import agentlanes
from agentlanes.api.allow import OptionsAllow
from agentlanes.api.errors import EXCEPTION_HANDLERS
from agentlanes.api.openapi import _UNTYPED, _is_litestar_error
from agentlanes.api.query import QUERY_DECODERS, QueryInt

SOURCE = Path(agentlanes.__file__).parent


class Shared(Controller):
    path = "/things/{thing_id:int}"

    @get()
    async def show_thing(self, thing_id: FromPath[int]) -> list[int]:
        return [thing_id]

    @post()
    async def change_thing(self, thing_id: FromPath[int]) -> None:
        return None


def _options_allow(app: Litestar) -> set[str]:
    with TestClient(app) as client:
        r = client.options("/things/3")
    assert r.status_code == 204
    return set(r.headers["allow"].split(", "))


def test_litestar_still_names_only_the_first_method_in_its_options_answer() -> None:
    # api/allow.py exists for litestar-org/litestar#4169 (fixed in Litestar 3).
    allow = _options_allow(Litestar([Shared]))
    assert allow != {"GET", "OPTIONS", "POST"}, (
        "Litestar now answers OPTIONS with every method of a shared path (litestar#4169 "
        "fixed): remove api/allow.py and its OptionsAllow hook in api/app.py"
    )


def test_the_options_hook_finds_the_route_by_the_path_template_in_the_scope() -> None:
    allow = _options_allow(Litestar([Shared], before_send=[OptionsAllow()]))
    assert allow == {"GET", "OPTIONS", "POST"}, (
        "api/allow.py reads scope['path_template'] and Litestar.routes' path_format: "
        "re-check where this Litestar puts the matched route's path template"
    )


@get("/count", sync_to_thread=False)
def count(n: Annotated[QueryInt | None, QueryParameter()] = None) -> dict[str, Any]:
    return {"n": n}


def test_integer_query_parameters_are_read_by_our_decoder() -> None:
    app = Litestar(
        [count],
        exception_handlers=EXCEPTION_HANDLERS,
        type_decoders=QUERY_DECODERS,
    )
    recheck = (
        "api/query.py reads integer query parameters with Litestar's type_decoders (a "
        "custom type, QueryInt, an int) and counts on Litestar writing a subclass of int "
        "in answers: re-check how this Litestar decodes and encodes such a type"
    )
    with TestClient(app) as client:
        assert client.get("/count?n=%2B3").json() == {"n": 3}, recheck
        assert client.get("/count").json() == {"n": None}, recheck
        for raw in ("", "%205", "5.0", "1_0", "9" * 30):
            r = client.get(f"/count?n={raw}")
            assert r.status_code == 400, (raw, r.text, recheck)
            assert r.json()["field"] == "n" and r.json()["source"] == "query", (raw, recheck)
            assert r.json()["error"]["message"].startswith("n: "), (raw, recheck)


@get("/flag", sync_to_thread=False)
def flag(on: Annotated[bool | None, QueryParameter()] = None) -> dict[str, Any]:
    return {"on": on}


def test_litestars_bool_still_refuses_yes_so_flags_stay_text() -> None:
    # api/query.py's Flag is text read by bool_param, which takes yes/no as well.
    with TestClient(Litestar([flag], exception_handlers=EXCEPTION_HANDLERS)) as client:
        assert client.get("/flag?on=true").json() == {"on": True}
        r = client.get("/flag?on=yes")
    assert r.status_code == 400, (
        "Litestar's bool query parameter now takes yes: api/query.py's Flag could become "
        "a typed bool (re-check no, empty and padded values against bool_param)"
    )


class Note(BaseModel):
    text: str


@post("/notes", sync_to_thread=False)
def add_note(
    data: JSONBody[Note | None] = None,
    limit: Annotated[str | None, QueryParameter()] = None,
) -> None:
    return None


def test_the_document_shapes_the_finishing_step_recognises() -> None:
    # api/openapi.py finishes Litestar's document by recognising what Litestar writes.
    operation = Litestar([add_note]).openapi_schema.to_schema()["paths"]["/notes"]["post"]
    recheck = "api/openapi.py recognises this shape of Litestar's document: re-check {}"
    assert operation["parameters"][0]["schema"] == _UNTYPED, recheck.format(
        "_UNTYPED (a text query parameter, for _finish_parameters)"
    )
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert {"type": "null"} in body.get("oneOf", []), recheck.format(
        "_finish_body (a body that may be left out)"
    )
    assert _is_litestar_error(operation["responses"]["400"]), recheck.format(
        "_is_litestar_error (Litestar's own 400, replaced by ours)"
    )


def test_no_module_imports_a_private_litestar_module() -> None:
    private = []
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            private += [
                f"{path.relative_to(SOURCE)}: {name}"
                for name in names
                if name.startswith("litestar.") and any(p.startswith("_") for p in name.split("."))
            ]
    assert not private, (
        "Litestar's private modules change without notice: use a public mechanism, or keep "
        f"the use in one module with a test here that says what to re-check: {private}"
    )
