"""How long Claude Code's ``PostToolUse`` hook takes (the agent's news, and since line-level
claims the note of what the edit changed).

One command: `.venv/bin/python bench/post_tool_use.py [--runs N]`.

It starts a real server (SQLite in a temp dir), makes a project and a git repository,
checks a Claude Code session in with a ``SessionStart`` call of ``lanes guard`` (as
``lanes init`` writes it), then times, alternating in the same run, one ``PostToolUse``
call after an ``Edit`` of a tracked file (the line it changes differs each run) and one
after a ``Read`` (no file changed: the news only). Prints the medians and p90s in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.hook import ADMIN_TOKEN, PY, run, start_server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = start_server(work)
        url = server.url
        try:
            admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
            project = httpx.post(
                f"{url}/api/v1/projects", json={"name": "bench-edits"}, headers=admin, timeout=10
            ).json()
            repo = work / "repo"
            repo.mkdir()
            env = {
                **{k: v for k, v in os.environ.items() if not k.startswith("AGENTLANES_")},
                "HOME": str(work),
                "AGENTLANES_URL": url,
                "AGENTLANES_API_KEY": project["api_key"],
                "GIT_CONFIG_NOSYSTEM": "1",
            }
            for cmd in (
                ["git", "init", "-q", "-b", "main"],
                ["git", "config", "user.email", "b@example.com"],
                ["git", "config", "user.name", "b"],
            ):
                run(cmd, repo, env)
            target = repo / "src" / "app.py"
            target.parent.mkdir()
            target.write_text("".join(f"line {i}\n" for i in range(1000)))
            run(["git", "add", "."], repo, env)
            run(["git", "commit", "-q", "--no-verify", "-m", "base"], repo, env)
            guard = [PY, "-m", "agentlanes", "guard"]
            sid = "bench-post-tool-use"

            def event(name: str, **fields: object) -> str:
                return json.dumps(
                    {"session_id": sid, "cwd": str(repo), "hook_event_name": name, **fields}
                )

            run(guard, repo, env, event("SessionStart", source="startup"))
            edit, read = [], []
            for i in range(args.runs):
                lines = target.read_text().splitlines()
                lines[(i * 37) % 1000] = f"changed {i}"
                target.write_text("\n".join(lines) + "\n")
                edit.append(run(guard, repo, env, event(
                    "PostToolUse", tool_name="Edit",
                    tool_input={"file_path": str(target), "old_string": "x", "new_string": "y"},
                    tool_response={"success": True},
                )))  # fmt: skip
                read.append(run(guard, repo, env, event(
                    "PostToolUse", tool_name="Read", tool_input={"file_path": str(target)},
                    tool_response={"success": True},
                )))  # fmt: skip
                time.sleep(0.05)
            for name, xs in (("PostToolUse after Edit", edit), ("PostToolUse after Read", read)):
                xs.sort()
                p90 = xs[int(len(xs) * 0.9) - 1]
                print(f"{name}: median {statistics.median(xs):.1f} ms, p90 {p90:.1f} ms")
            run(guard, repo, env, event("SessionEnd", reason="other"))
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
