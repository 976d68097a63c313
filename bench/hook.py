"""How long the pre-commit hook adds to `git commit`.

One command: `.venv/bin/python bench/hook.py [--runs N] [--files N] [--sessions N]`.

It starts a real server (SQLite in a temp dir), makes a project with 100 live sessions,
a git repository with 1,000 staged files (some of them claimed by other sessions, so the
hook has conflicts to print in warn mode), installs the hook with `lanes hook install`,
then times, alternating in the same run:

- `git commit --no-verify` (the baseline: git alone),
- `git commit` with the hook,
- the check alone (`python -S -m agentlanes.hooks.githook`, as the installed hook runs it);
- the Claude Code guard: one ``PreToolUse`` call of ``lanes guard`` (the command
  ``lanes init`` writes into ``.claude/settings.json``) for an ``Edit`` of a file the
  agent already claims, and for a ``Bash`` ``sed -i`` on it, with the session checked in
  by a ``SessionStart`` call first;
- the agent's news: one ``PreToolUse`` call for a ``Read`` (every tool's calls carry the
  news) with a message to the agent waiting, which the call puts in its context;
- every other agent's adapter (``lanes guard --agent NAME``, as ``lanes init --agent``
  writes it): one before-edit call each, fed that agent's documented event
  (tests/fixtures/agent_hooks/<agent>.json) for the same claimed file, the agent's
  session checked in by its own session-start event first (Windsurf has none: its
  first edit checks in);
- ``python -S -c pass``, the interpreter's own start, in the same run.

Each commit is undone with `git reset --soft HEAD~1`, so every run commits the same
1,000 staged files. Prints a Markdown table of wall-clock times.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.server import ServerProcess, bench_server

PY = sys.executable
ADMIN_TOKEN = "bench-admin-token-for-hook-timings-2026"
GUARD_TARGET_MS = 60  # median per PreToolUse call of `lanes guard`
AGENT_FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "agent_hooks"
ADAPTERS = ("codex", "cursor", "gemini", "copilot", "cline", "opencode", "windsurf")


def agent_events(agent: str, repo: Path, sid: str, claimed: str) -> dict[str, tuple[str, str]]:
    """step -> (event, JSON on stdin): the agent's documented events for ``claimed``."""
    spec = json.loads((AGENT_FIXTURES / f"{agent}.json").read_text())
    rel = os.path.relpath(claimed, repo)

    def fill(value: object) -> object:
        if isinstance(value, str):
            return (
                value.replace("$REPO", str(repo))
                .replace("$SID", sid)
                .replace("$FILE", claimed)
                .replace("$REL", rel)
            )
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    out = {}
    for step, e in spec["events"].items():
        payload = e["input"]
        if agent == "opencode":  # what the plugin sends to `lanes guard --agent opencode`
            payload = {
                "event": e["event"],
                "session_id": sid,
                "cwd": "$REPO",
                "tool": e["input"].get("tool"),
                "args": (e.get("output") or {}).get("args"),
            }
        out[step] = (e["event"], json.dumps(fill(payload)))
    return out


def adapter_command(lanes: str, agent: str, event: str) -> list[str]:
    return [lanes, "guard", "--agent", agent] + (["--event", event] if agent == "copilot" else [])


def start_server(workdir: Path) -> ServerProcess:
    """The server the hooks talk to (SQLite in ``workdir``)."""
    return bench_server(workdir, ADMIN_TOKEN).start(timeout=60)


def run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, input=stdin, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return elapsed * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="agentlanes-bench-hook-"))
    server = start_server(workdir)
    url = server.url
    try:
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        project = httpx.post(
            f"{url}/api/v1/projects",
            json={"name": f"bench-{secrets.token_hex(3)}", "heartbeat_ttl_seconds": 86_400},
            headers=admin,
        ).json()
        key = project["api_key"]
        sender = ""
        with httpx.Client(base_url=url, headers={"X-API-Key": key}) as http:
            # Other agents: most hold areas elsewhere; every tenth claims one module the
            # commit touches, so the hook has real conflicts to report.
            for i in range(args.sessions):
                files = [f"src/mod{i}/**"] if i % 10 == 0 else [f"elsewhere/{i}/**", f"lib{i}/*.py"]
                r = http.post(
                    "/api/v1/checkin", json={"agent_name": f"agent-{i}", "declared_files": files}
                )
                assert r.status_code == 201, r.text
                sender = sender or r.json()["session_token"]

        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "AGENTLANES_"))}
        home = workdir / "home"
        home.mkdir()
        env.update(
            HOME=str(home),
            GIT_CONFIG_NOSYSTEM="1",
            AGENTLANES_URL=url,
            AGENTLANES_API_KEY=key,
        )
        repo = workdir / "repo"
        repo.mkdir()
        for cmd in (
            ["git", "init", "-q", "-b", "main"],
            ["git", "config", "user.name", "Bench"],
            ["git", "config", "user.email", "bench@example.com"],
            ["git", "commit", "-q", "--allow-empty", "--no-verify", "-m", "root"],
        ):
            subprocess.run(cmd, cwd=repo, env=env, check=True)
        for n in range(args.files):
            target = repo / "src" / f"mod{n % 50}" / f"file{n}.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"x = {n}\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
        subprocess.run(
            [PY, "-m", "agentlanes", "checkin", "--agent", "committer", "--files", "src/**"],
            cwd=repo,
            env=env,
            check=True,
            capture_output=True,
        )
        # The committer names itself: the Claude Code session below keeps a second session
        # in this working tree, and the git hook must know whose commit it is.
        guard_env = dict(env)
        env["AGENTLANES_AGENT_NAME"] = "committer"
        subprocess.run([PY, "-m", "agentlanes", "hook", "install"], cwd=repo, env=env, check=True)
        staged = subprocess.run(
            ["git", "diff", "--cached", "--name-only"], cwd=repo, env=env, capture_output=True
        ).stdout.count(b"\n")

        import agentlanes

        # What the installed hook does: python -S, this package on PYTHONPATH.
        check_env = {**env, "PYTHONPATH": str(Path(agentlanes.__file__).resolve().parents[1])}
        bare: list[float] = []
        hooked: list[float] = []
        check: list[float] = []
        trip: list[float] = []
        floor: list[float] = []
        from agentlanes.client.config import load_config, read_session
        from agentlanes.hooks.http import call_many

        cfg = load_config(repo, env)
        token = read_session(cfg, env)["session_token"]  # type: ignore[index]
        paths = [
            p
            for p in subprocess.run(
                ["git", "diff", "--cached", "--name-only"],
                cwd=repo,
                env=env,
                capture_output=True,
                text=True,
            ).stdout.splitlines()
        ]
        requests = [
            ("GET", "/api/v1/project", None, None),
            ("POST", "/api/v1/conflicts/check", {"paths": paths}, token),
            ("POST", "/api/v1/heartbeat", {}, token),
        ]
        # The Claude Code guard, as .claude/settings.json runs it.
        guard = [str(Path(PY).parent / "lanes"), "guard"]
        claimed = str(repo / "src" / "mod1" / "file1.py")

        def hook_event(name: str, **fields: object) -> str:
            return json.dumps(
                {
                    "session_id": "bench-claude",
                    "transcript_path": str(workdir / "t.jsonl"),
                    "cwd": str(repo),
                    "hook_event_name": name,
                    **fields,
                }
            )

        edit = hook_event(
            "PreToolUse",
            tool_name="Edit",
            tool_input={"file_path": claimed, "old_string": "x", "new_string": "y"},
        )
        sed = hook_event(
            "PreToolUse", tool_name="Bash", tool_input={"command": "sed -i s/x/y/ " + claimed}
        )
        read = hook_event("PreToolUse", tool_name="Read", tool_input={"file_path": claimed})
        message = {"to": "claude-bench-claude", "body": "please rebase on main before you push"}
        news_http = httpx.Client(
            base_url=url, headers={"X-API-Key": key, "X-Session-Token": sender}
        )
        run(guard, repo, guard_env, hook_event("SessionStart", source="startup"))
        run(guard, repo, guard_env, edit)  # the first edit claims the file; later ones are checks
        guard_edit: list[float] = []
        guard_sed: list[float] = []
        guard_news: list[float] = []
        # Every other agent's adapter: checked in by its own start event, first edit claims.
        adapter_runs: dict[str, list[float]] = {a: [] for a in ADAPTERS}
        adapter_steps = {}
        for agent in ADAPTERS:
            steps = agent_events(agent, repo, f"bench-{agent}", claimed)
            adapter_steps[agent] = steps["edit"]
            event, stdin = steps["start"]
            run(adapter_command(guard[0], agent, event), repo, guard_env, stdin)
            event, stdin = steps["edit"]
            run(adapter_command(guard[0], agent, event), repo, guard_env, stdin)
        undo = ["git", "reset", "-q", "--soft", "HEAD~1"]
        for i in range(args.runs + 1):
            order = (
                [("bare", True), ("hooked", False)]
                if i % 2
                else [("hooked", False), ("bare", True)]
            )
            for name, no_verify in order:
                cmd = ["git", "commit", "-q", "-m", "bench"] + (
                    ["--no-verify"] if no_verify else []
                )
                elapsed = run(cmd, repo, env)
                subprocess.run(undo, cwd=repo, env=env, check=True)
                if i:  # the first round warms caches
                    (bare if name == "bare" else hooked).append(elapsed)
            elapsed = run([PY, "-S", "-m", "agentlanes.hooks.githook"], repo, check_env)
            if i:
                check.append(elapsed)
            elapsed = run([PY, "-S", "-c", "pass"], repo, check_env)
            if i:
                floor.append(elapsed)
            elapsed = run(guard, repo, guard_env, edit)
            if i:
                guard_edit.append(elapsed)
            elapsed = run(guard, repo, guard_env, sed)
            if i:
                guard_sed.append(elapsed)
            for agent, (event, stdin) in adapter_steps.items():
                elapsed = run(adapter_command(guard[0], agent, event), repo, guard_env, stdin)
                if i:
                    adapter_runs[agent].append(elapsed)
            news_http.post("/api/v1/messages", json=message).raise_for_status()
            elapsed = run(guard, repo, guard_env, read)  # puts the message in the context
            if i:
                guard_news.append(elapsed)
            start = time.perf_counter()
            call_many(cfg, requests)
            if i:
                trip.append((time.perf_counter() - start) * 1000)
        sample = subprocess.run(
            ["git", "commit", "-q", "-m", "bench"], cwd=repo, env=env, capture_output=True
        ).stderr.decode()
        run(guard, repo, guard_env, hook_event("SessionEnd", reason="other"))
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    def row(name: str, xs: list[float]) -> str:
        xs = sorted(xs)
        p90 = xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))]
        return f"| {name} | {statistics.median(xs):.0f} | {p90:.0f} | {xs[0]:.0f} |"

    print(
        f"\n{staged} staged files, {args.sessions} other live sessions, {args.runs} runs each "
        f"(load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs)\n"
    )
    print("| command | median ms | p90 ms | min ms |")
    print("| --- | ---: | ---: | ---: |")
    print(row("`git commit --no-verify` (baseline)", bare))
    print(row("`git commit` with the agentlanes hook", hooked))
    print(row("the check alone (`python -S -m agentlanes.hooks.githook`)", check))
    print(row("`python -S -c pass` (interpreter start: the floor)", floor))
    print(row("`lanes guard`: PreToolUse Edit of a claimed file", guard_edit))
    print(row("`lanes guard`: PreToolUse Bash `sed -i` on it", guard_sed))
    print(row("`lanes guard`: PreToolUse Read with a message to inject (news)", guard_news))
    for agent, xs in adapter_runs.items():
        event = adapter_steps[agent][0]
        print(row(f"`lanes guard --agent {agent}`: {event} edit of a claimed file", xs))
    print(row("its three requests alone, from a warm process (server time)", trip))
    added = statistics.median(hooked) - statistics.median(bare)
    print(f"\nthe hook adds {added:.0f} ms (median) to a commit")
    guard_median = statistics.median(guard_edit)
    verdict = "met" if guard_median <= GUARD_TARGET_MS else "NOT met"
    print(
        f"the guard takes {guard_median:.0f} ms (median) per PreToolUse call, "
        f"{guard_median / statistics.median(floor):.1f}x the interpreter's start "
        f"(target: at most {GUARD_TARGET_MS} ms: {verdict})"
    )
    news_median = statistics.median(guard_news)
    verdict = "met" if news_median <= GUARD_TARGET_MS else "NOT met"
    print(
        f"with news to inject it takes {news_median:.0f} ms (median), "
        f"{news_median / statistics.median(floor):.1f}x the interpreter's start "
        f"(target: at most {GUARD_TARGET_MS} ms: {verdict})"
    )
    slowest = max(adapter_runs, key=lambda a: statistics.median(adapter_runs[a]))
    worst = statistics.median(adapter_runs[slowest])
    verdict = "met" if worst <= GUARD_TARGET_MS else "NOT met"
    print(
        f"every other agent's adapter: the slowest median is {worst:.0f} ms ({slowest}), "
        f"{worst / statistics.median(floor):.1f}x the interpreter's start "
        f"(target: at most {GUARD_TARGET_MS} ms each: {verdict})"
    )
    print("\nwhat the committer saw (warn mode):")
    print("\n".join("    " + line for line in sample.splitlines()[:6]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
