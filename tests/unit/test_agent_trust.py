"""The trusted-folder files of Copilot CLI and Gemini CLI, read and written as the programs
keep them (Codex's hook trust is asked of Codex itself: tests/e2e/test_doctor.py)."""

from __future__ import annotations

import json
from pathlib import Path

from agentlanes.cli.agent_trust import copilot_trust, gemini_trust, trust_copilot, trust_gemini

# How Copilot CLI 1.0.102 writes ~/.copilot/config.json (a header of comments, then JSON).
COPILOT_CONFIG = """// User settings belong in settings.json.
// This file is managed automatically.
{
    "trustedFolders": [
        "/work/elsewhere"
    ],
    "firstLaunchAt": "2026-11-27T20:55:25.388Z"
}
"""


def test_copilot_trusts_a_folder_and_what_is_below_it(tmp_path: Path) -> None:
    home = tmp_path / "copilot"
    home.mkdir()
    (home / "config.json").write_text(COPILOT_CONFIG)
    env = {"COPILOT_HOME": str(home)}
    repo = tmp_path / "work" / "shop"
    repo.mkdir(parents=True)
    assert copilot_trust(repo, env).runs is False
    assert "Yes, and remember this folder" in copilot_trust(repo, env).fix
    assert copilot_trust(repo, {**env, "COPILOT_ALLOW_ALL": "true"}).runs is True

    assert trust_copilot(repo, env).runs is True
    text = (home / "config.json").read_text()
    assert text.startswith("// User settings belong in settings.json.\n// This file is managed")
    kept = json.loads(text.split("\n", 2)[2])
    assert kept["firstLaunchAt"] == "2026-11-27T20:55:25.388Z"
    assert kept["trustedFolders"] == ["/work/elsewhere", str(repo)]
    assert copilot_trust(repo / "sub", env).runs is True  # below a trusted folder
    assert trust_copilot(repo, env).runs is True
    assert json.loads((home / "config.json").read_text().split("\n", 2)[2]) == kept  # once


def test_copilot_with_no_config_yet(tmp_path: Path) -> None:
    env = {"COPILOT_HOME": str(tmp_path / "none")}
    assert copilot_trust(tmp_path, env).runs is False
    assert trust_copilot(tmp_path, env).runs is True


def test_copilot_config_that_is_not_json_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{not json")
    env = {"COPILOT_HOME": str(tmp_path)}
    answer = trust_copilot(tmp_path, env)
    assert answer.runs is None and "not changed" in answer.problem
    assert (tmp_path / "config.json").read_text() == "{not json"


def test_gemini_takes_the_most_specific_rule(tmp_path: Path) -> None:
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    folders = tmp_path / ".gemini" / "trustedFolders.json"
    repo = tmp_path / "code" / "shop"
    repo.mkdir(parents=True)
    assert gemini_trust(repo, env).runs is False
    folders.parent.mkdir()
    folders.write_text(json.dumps({str(tmp_path / "code"): "TRUST_FOLDER"}))
    assert gemini_trust(repo, env).runs is True
    folders.write_text(
        json.dumps({str(tmp_path / "code"): "TRUST_FOLDER", str(repo): "DO_NOT_TRUST"})
    )
    assert gemini_trust(repo, env).runs is False
    folders.write_text(json.dumps({str(repo / "x"): "TRUST_PARENT"}))  # its parent: repo
    assert gemini_trust(repo, env).runs is True
    folders.write_text("{}")
    assert trust_gemini(repo, env).runs is True
    assert json.loads(folders.read_text()) == {str(repo): "TRUST_FOLDER"}
