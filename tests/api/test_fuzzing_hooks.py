"""The fuzzing hooks' judgement of "schema-violating request accepted" findings
(tests/support/schemathesis_hooks.py): schemathesis counts every `glob-pattern` or
`repo-path` value in a negative case as invalid; the hook checks the body again against the
served document with those formats checked by the pattern rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.support import schemathesis_hooks as hooks


@pytest.fixture(autouse=True)
def document(
    app_factory: Callable[..., TestClient[Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = app_factory(database_url=f"sqlite:///{tmp_path / 'a.db'}")
    monkeypatch.setattr(hooks, "_DOCUMENT", [client.get("/schema/openapi.json").json()])


def _kept(
    path: str, body: Any, locations: tuple[str, ...] = ("body",), code: str = "ST201"
) -> bool:
    mutations = [
        SimpleNamespace(parameter_location=SimpleNamespace(value=where)) for where in locations
    ]
    case = SimpleNamespace(
        operation=SimpleNamespace(path=path),
        method="POST",
        body=body,
        meta=SimpleNamespace(phase=SimpleNamespace(data=SimpleNamespace(mutations=mutations))),
    )
    failure = SimpleNamespace(code=code)
    return hooks.an_accepted_body_must_break_the_document(None, failure, case, None)


def test_bodies_the_rules_accept_are_not_findings() -> None:
    # The bodies of two findings of fuzzing runs: valid file names and patterns all (the
    # second was reported for a mutation of `patterns`, which it sent as null).
    assert not _kept("/api/v1/checkout", {"files_touched": ["\U000feb6aDX\xa0\xb4", "&"]})
    assert not _kept("/api/v1/conflicts/check", {"paths": ["x/Y", "51fW"], "patterns": None})
    assert not _kept("/api/v1/checkin", {"declared_files": ["src/*.py", "{a,b}/**", "docs/"]})


def test_bodies_that_break_the_document_stay_findings() -> None:
    for path, body in (
        ("/api/v1/checkout", {"files_touched": ["ok.py", "/etc/passwd"]}),
        ("/api/v1/checkout", {"files_touched": ["a/../b"]}),
        ("/api/v1/checkin", {"declared_files": ["*" * 40]}),
        ("/api/v1/checkin", {"declared_files": ["x" * 2000]}),
        ("/api/v1/checkin", {"declared_files": [""]}),
        ("/api/v1/checkin", {"agent_name": "a b"}),
        ("/api/v1/checkin", {"unknown": 1}),
        ("/api/v1/tasks", {"title": " "}),
    ):
        assert _kept(path, body), (path, body)


def test_other_findings_are_kept() -> None:
    fine = {"files_touched": ["ok.py"]}
    assert _kept("/api/v1/checkout", fine, locations=("body", "query"))
    assert _kept("/api/v1/checkout", fine, code="ST202")
    assert _kept("/api/v1/no-such-route", fine)


@pytest.mark.parametrize(
    ("edits", "kept"),
    [
        ([{"path": "a", "ranges": [[3, 1]]}], False),  # out of order: a 400 the schema cannot state
        ([{"path": "a", "ranges": [[10.0, 12.0]]}], True),
        ([{"path": "a", "ranges": True}], True),  # not a list: the server's 400, not a crash
        ([{"path": "a", "ranges": None}], True),
        ([7], True),
    ],
)
def test_the_edit_range_filter_reads_any_shape_the_fuzzer_sends(edits: Any, kept: bool) -> None:
    case = SimpleNamespace(body={"edits": edits})
    assert hooks.ranges_in_order(None, case) is kept
