"""`lanes init --agent NAME...`: each agent's config written, merged with what is there,
idempotent, dry-run; without --agent, claude plus the agents whose folder exists."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import httpx
import pytest
import yaml

import agentlanes.hooks
from tests.support.agents import isolated_env, lanes, lanes_json, make_repo

pytestmark = pytest.mark.e2e

URL = "http://agentlanes.internal:8787"
LANES = str(Path(sys.executable).parent / "lanes")
FAST = str(Path(agentlanes.hooks.__file__).resolve().parent / "fast.py")  # the fast path
HOOK_PROGRAM = [sys.executable, "-S", "-I", FAST, LANES]
ALL = ["codex", "cursor", "gemini", "copilot", "cline", "opencode", "windsurf", "aider"]
FILES = {
    "codex": ".codex/hooks.json",
    "cursor": ".cursor/hooks.json",
    "gemini": ".gemini/settings.json",
    "copilot": ".github/hooks/agentlanes.json",
    "cline": ".clinerules/hooks/PreToolUse",
    "opencode": ".opencode/plugins/agentlanes.js",
    "windsurf": ".windsurf/hooks.json",
    "aider": ".aider.conf.yml",
}


def snapshot(repo: Path) -> dict[str, str]:
    """Every file of the working tree (not .git), as text."""
    return {
        str(p.relative_to(repo)): p.read_text()
        for p in repo.rglob("*")
        if p.is_file() and p.relative_to(repo).parts[0] != ".git"
    }


def test_every_agent_written_merged_and_idempotent(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", URL, None)
    repo = make_repo(tmp_path / "repo", env)
    # What was there: a Cursor hook of the user's, Gemini settings, Aider options.
    (repo / ".cursor").mkdir()
    theirs = {
        "version": 1,
        "hooks": {
            "afterFileEdit": [{"command": "prettier --write"}],
            "preToolUse": [{"command": "./audit.sh"}],
        },
    }
    (repo / ".cursor/hooks.json").write_text(json.dumps(theirs))
    (repo / ".gemini").mkdir()
    (repo / ".gemini/settings.json").write_text(json.dumps({"theme": "Dracula"}))
    (repo / ".aider.conf.yml").write_text("model: sonnet\ngit-commit-verify: false\n")

    dry = lanes(repo, env, "init", "--agent", *ALL, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would create .codex/hooks.json" in dry.stdout
    assert "dry run: nothing written" in dry.stdout
    assert not (repo / ".codex").exists()

    first = lanes_json(repo, env, "init", "--agent", *ALL)
    assert first["agents"] == ["codex", "cursor", "gemini", "copilot", "cline", "opencode",
                               "windsurf", "aider"]  # fmt: skip
    written = {os.path.relpath(f["path"], repo) for f in first["files"]}
    assert set(FILES.values()) <= written
    assert ".claude/settings.json" not in written  # only the agents asked for

    guard = f"{' '.join(HOOK_PROGRAM)} guard --agent"
    codex = json.loads((repo / FILES["codex"]).read_text())["hooks"]
    assert codex["PreToolUse"][0]["matcher"] == "Bash|apply_patch"
    assert codex["PreToolUse"][0]["hooks"][0]["command"] == f"{guard} codex"
    cursor = json.loads((repo / FILES["cursor"]).read_text())
    assert cursor["version"] == 1
    assert cursor["hooks"]["afterFileEdit"] == theirs["hooks"]["afterFileEdit"]  # kept
    assert cursor["hooks"]["preToolUse"] == [
        {"command": "./audit.sh"},
        {"command": f"{guard} cursor"},
    ]
    assert cursor["hooks"]["beforeShellExecution"] == [{"command": f"{guard} cursor"}]
    gemini = json.loads((repo / FILES["gemini"]).read_text())
    assert gemini["theme"] == "Dracula"
    assert gemini["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == f"{guard} gemini"
    copilot = json.loads((repo / FILES["copilot"]).read_text())
    assert copilot["version"] == 1
    assert copilot["hooks"]["preToolUse"][0]["bash"] == f"{guard} copilot --event preToolUse"
    cline = repo / FILES["cline"]
    assert os.access(cline, os.X_OK) and f"exec {guard} cline" in cline.read_text()
    plugin = (repo / FILES["opencode"]).read_text()
    assert json.dumps(HOOK_PROGRAM) in plugin and '"tool.execute.before"' in plugin
    windsurf = json.loads((repo / FILES["windsurf"]).read_text())["hooks"]
    assert windsurf["pre_write_code"][0]["command"] == f"{guard} windsurf"
    aider = yaml.safe_load((repo / FILES["aider"]).read_text())
    assert aider == {"model": "sonnet", "git-commit-verify": True}

    # A second run changes nothing, byte for byte.
    before = snapshot(repo)
    again = lanes_json(repo, env, "init", "--agent", *ALL)
    assert not again["changed"]
    assert snapshot(repo) == before


def test_without_agent_claude_and_the_agents_whose_folder_exists(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", URL, None)
    repo = make_repo(tmp_path / "repo", env)
    (repo / ".codex").mkdir()
    (repo / ".windsurf").mkdir()
    done = lanes_json(repo, env, "init")
    assert done["agents"] == ["claude", "codex", "windsurf"]
    assert (repo / ".claude/settings.json").exists()
    assert (repo / ".codex/hooks.json").exists() and (repo / ".windsurf/hooks.json").exists()
    assert not (repo / ".cursor").exists() and not (repo / ".aider.conf.yml").exists()


def test_unknown_agent_and_a_foreign_cline_hook_are_refused(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", URL, None)
    repo = make_repo(tmp_path / "repo", env)
    bad = lanes(repo, env, "init", "--agent", "vim")
    assert bad.returncode == 2 and "--agent 'vim'" in bad.stderr
    (repo / ".clinerules/hooks").mkdir(parents=True)
    (repo / ".clinerules/hooks/PreToolUse").write_text("#!/bin/sh\necho '{}'\n")
    mine = lanes(repo, env, "init", "--agent", "cline")
    assert mine.returncode == 2 and "a Cline hook of your own" in mine.stderr
    assert (repo / ".clinerules/hooks/PreToolUse").read_text() == "#!/bin/sh\necho '{}'\n"


def test_what_init_writes_validates_against_schemastore(tmp_path: Path) -> None:
    """SchemaStore's codex-hooks and aider-0.82 schemas (SPEC: what `lanes init` writes
    validates against them); skipped where the schemas cannot be fetched."""
    import jsonschema

    schemas = {}
    for name in ("codex-hooks", "aider-0.82"):
        try:
            r = httpx.get(f"https://json.schemastore.org/{name}.json", timeout=5)
            r.raise_for_status()
        except httpx.HTTPError as exc:
            pytest.skip(f"SchemaStore not reachable ({exc})")
        schemas[name] = r.json()
    env = isolated_env(tmp_path / "home", URL, None)
    repo = make_repo(tmp_path / "repo", env)
    lanes_json(repo, env, "init", "--agent", "codex", "aider")
    jsonschema.validate(json.loads((repo / FILES["codex"]).read_text()), schemas["codex-hooks"])
    jsonschema.validate(yaml.safe_load((repo / FILES["aider"]).read_text()), schemas["aider-0.82"])


# The rules of SchemaStore's codex-hooks schema (https://json.schemastore.org/codex-hooks.json),
# restated here so the check also runs offline: a "hooks" object (nothing else at the top)
# of event -> non-empty list of groups, each with an optional string matcher and a
# non-empty "hooks" list of {"type": "command", "command": non-empty string, "timeout":
# integer >= 0}.
CODEX_HOOKS_RULES = {
    "type": "object",
    "required": ["hooks"],
    "additionalProperties": False,
    "properties": {
        "hooks": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["hooks"],
                    "properties": {
                        "matcher": {"type": "string"},
                        "hooks": {
                            "type": "array",
                            "minItems": 1,
                            "items": {
                                "type": "object",
                                "required": ["type", "command"],
                                "properties": {
                                    "type": {"const": "command"},
                                    "command": {"type": "string", "minLength": 1},
                                    "timeout": {"type": "integer", "minimum": 0},
                                },
                            },
                        },
                    },
                },
            },
        }
    },
}
# The events Codex 0.171.0 runs (its app server's HookEventName, `codex app-server
# generate-json-schema`), in the hooks file's spelling; SessionEnd is one of them.
CODEX_EVENTS = {
    "SessionStart",
    "SessionEnd",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "Stop",
}


def test_the_codex_and_aider_configs_follow_their_schemas_offline(tmp_path: Path) -> None:
    import jsonschema

    env = isolated_env(tmp_path / "home", URL, None)
    repo = make_repo(tmp_path / "repo", env)
    lanes_json(repo, env, "init", "--agent", "codex", "aider")
    codex = json.loads((repo / FILES["codex"]).read_text())
    jsonschema.validate(codex, CODEX_HOOKS_RULES)
    assert set(codex["hooks"]) <= CODEX_EVENTS  # only events Codex runs
    aider = yaml.safe_load((repo / FILES["aider"]).read_text())
    assert aider == {"git-commit-verify": True}  # aider-0.82: a boolean option
