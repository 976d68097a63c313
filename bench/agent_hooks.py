"""How long the hooks add to each tool call of the real agent programs.

One command: ``.venv/bin/python bench/agent_hooks.py [PROGRAM...] [--pairs 5]`` (default:
every program with a driver under tests/support/agent_programs/programs/ that is
installed: ``make agents``).

For each program it starts a real server (SQLite in a temp dir) and runs the same
scripted 8-step session (Read, Write, Bash, Edit, twice, of files nobody else claims, so
every call is allowed) against the scripted model (tests/support/scripted_model), in a
fresh copy of one repository: with the agentlanes config (``lanes init --agent NAME``
and the driver's ``prepare``), without it (``prepare`` only), and with it but the hooks'
fast path off (``AGENTLANES_FAST_HOOKS=0``: each hook runs the guard in its own
interpreter), in turn, ``--pairs`` times. From the model's side, a tool call's time is
the gap between the request that asked for it and the request that carried its result
(the program runs the tool and its hooks in between); the table gives per tool the
median of those gaps without and with the config and the difference: what the hooks add
to that call (and what they add with the fast path off). Also:

- start: from the program's launch to its first model request (SessionStart, and the
  prompt hooks), and end: from the model's last answer to the program's exit (Stop,
  SessionEnd);
- CPU: the CPU time of the program and every process it waited for (its hooks and
  what they ran: ``getrusage(RUSAGE_CHILDREN)`` around each run), with minus without,
  per session and per tool call; and of that, the hook processes' own: the total less
  the program's own CPU (``/proc/PID/stat``, read every 50 ms until it exits). The
  keepalive a session start leaves running detached is not in it, nor the server's.

The machine's load is printed beside the figures, with the time ``python -S -c pass``
takes then (about 12 ms on a quiet machine): measure on a quiet machine, or read the
figures against that pace.
"""

from __future__ import annotations

import argparse
import os
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.server import bench_server
from tests.support.agent_programs.base import AgentProgram, all_programs
from tests.support.agent_programs.install import installed_version, last_error, program_bin
from tests.support.agents import git, isolated_env, lanes, make_repo
from tests.support.scripted_model import ModelServer, Script, Step

ADMIN_TOKEN = "bench-admin-token-for-agent-hook-timings-2026"
TOOLS = ("Read", "Write", "Bash", "Edit")
# The third arm: the same config with the hooks' fast path off (each hook runs the guard
# in its own interpreter, as before the fast path).
UNSERVED = {"AGENTLANES_FAST_HOOKS": "0"}


def steps(p: AgentProgram, repo: Path) -> list[Step]:
    """The 8 tool calls: each tool twice, files nobody else claims."""
    out: list[Step] = []
    for n in (1, 2):
        out += [
            p.read(repo / "README"),
            p.write(repo / f"notes{n}.md", f"notes {n}\n"),
            p.shell(f"echo run {n} > out{n}.txt"),
            p.edit(repo / f"notes{n}.md", f"notes {n}", f"notes {n}, edited"),
        ]
    return out


@dataclass
class Sample:
    gaps: list[float]  # seconds per tool call, in TOOLS order, twice
    start: float
    end: float
    cpu: float  # seconds of CPU of the program and what it waited for
    children_cpu: float  # of that, the processes it waited for: its hooks and what they ran


@dataclass
class Runs:
    without: list[Sample] = field(default_factory=list)
    with_: list[Sample] = field(default_factory=list)
    unserved: list[Sample] = field(default_factory=list)  # AGENTLANES_FAST_HOOKS=0


def own_cpu(pid: int) -> float | None:
    """The CPU seconds a process has used itself, not its children's (``/proc/PID/stat``
    utime + stime), or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(
    p: AgentProgram,
    template: Path,
    work: Path,
    env: dict[str, str],
    bare: bool = False,
    extra: dict[str, str] | None = None,
) -> Sample:
    repo = work / f"repo-{secrets.token_hex(3)}"
    shutil.copytree(template, repo, symlinks=True)
    with ModelServer(Script(steps(p, repo))) as model:
        p.prepare(repo, model.url)
        if bare:  # a driver's prepare may run `lanes init` (Codex, Copilot CLI): undone
            git(repo, env, "clean", "-fdxq")
            git(repo, env, "checkout", "-q", "--", ".")
        full = {**env, **p.environment(model.url), **(extra or {})}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        launched = time.time()
        proc = p.start(repo, "Do the scripted steps.", full)
        own = 0.0
        while True:  # the program's own CPU, read until it exits (every 50 ms)
            own = own_cpu(proc.pid) or own
            try:
                _, err = proc.communicate(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                if time.time() - launched > 300:
                    proc.kill()
        exited = time.time()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        main = model.recorded.main()
    shutil.rmtree(repo, ignore_errors=True)
    at = {}
    for request in main:  # the first request after k tool results (retries come later)
        at.setdefault(request.tool_results, request.at)
    if proc.returncode != 0 or sorted(at) != list(range(9)):
        raise RuntimeError(
            f"{p.agent}: the scripted session did not run through (exit {proc.returncode}, "
            f"requests after {sorted(at)} tool results): {err[-800:]}"
        )
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return Sample(
        gaps=[at[k + 1] - at[k] for k in range(8)],
        start=at[0] - launched,
        end=exited - main[-1].at,
        cpu=cpu,
        children_cpu=max(0.0, cpu - own),
    )


def templates(p: AgentProgram, work: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """(the repository without the config, the same with ``lanes init --agent``)."""
    bare = make_repo(work / "template-without", env)
    (bare / "README").write_text("hello\n")
    configured = work / "template-with"
    shutil.copytree(bare, configured, symlinks=True)
    done = lanes(configured, env, "init", "--agent", p.agent)
    if done.returncode != 0:
        raise RuntimeError(f"lanes init --agent {p.agent}: {done.stderr}{done.stdout}")
    git(configured, env, "add", "-A")
    git(configured, env, "commit", "-q", "--no-verify", "-m", "agentlanes")
    return bare, configured


def bench(agent: str, url: str, work: Path, pairs: int) -> tuple[str, Runs] | None:
    binary = program_bin(agent)
    if binary is None:
        print(f"{agent}: skipped ({last_error.get(agent, 'not installed')})", file=sys.stderr)
        return None
    r = httpx.post(
        f"{url}/api/v1/projects",
        json={"name": f"hooks-{agent}-{secrets.token_hex(3)}"},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        timeout=30,
    )
    r.raise_for_status()
    home = work / agent / "home"
    env = isolated_env(home, url, r.json()["api_key"])
    p = all_programs()[agent](binary, home)
    bare, configured = templates(p, work / agent, env)
    runs = Runs()
    one_run(p, configured, work / agent, env)  # warm-up: first-start costs of either kind
    for _ in range(pairs):  # alternating, so a change in the machine's load hits all three
        runs.with_.append(one_run(p, configured, work / agent, env))
        runs.without.append(one_run(p, bare, work / agent, env, bare=True))
        runs.unserved.append(one_run(p, configured, work / agent, env, extra=UNSERVED))
    return f"{agent} {installed_version(agent, binary)}", runs


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def signed(seconds: float) -> str:
    return f"{seconds * 1000:+.0f}"


def interpreter_start(runs: int = 5) -> tuple[float, float]:
    """Median wall and CPU seconds of ``python -S -c pass``: the machine's pace now, for
    reading the figures beside others taken at another load (about 12 ms quiet)."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
        walls.append(time.monotonic() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def table(name: str, runs: Runs) -> str:
    def per_tool(samples: list[Sample], tool: int) -> float:
        return statistics.median(g for s in samples for g in (s.gaps[tool], s.gaps[tool + 4]))

    lines = [
        f"### {name} ({len(runs.with_)} pairs)",
        "",
        "| tool call | without (ms) | with agentlanes (ms) | added (ms) "
        "| added, fast path off (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    added, unserved = [], []
    for k, tool in enumerate(TOOLS):
        a, b = per_tool(runs.without, k), per_tool(runs.with_, k)
        c = per_tool(runs.unserved, k)
        added.append(b - a)
        unserved.append(c - a)
        lines.append(f"| {tool} | {ms(a)} | {ms(b)} | **{signed(b - a)}** | {signed(c - a)} |")
    for label, pick in (
        ("start (launch → first request)", lambda s: s.start),
        ("end (last answer → exit)", lambda s: s.end),
    ):
        a = statistics.median(pick(s) for s in runs.without)
        b = statistics.median(pick(s) for s in runs.with_)
        c = statistics.median(pick(s) for s in runs.unserved)
        lines.append(f"| {label} | {ms(a)} | {ms(b)} | {signed(b - a)} | {signed(c - a)} |")
    cpu_a = statistics.median(s.cpu for s in runs.without)
    cpu_b = statistics.median(s.cpu for s in runs.with_)
    hooks_a = statistics.median(s.children_cpu for s in runs.without)
    hooks_b = statistics.median(s.children_cpu for s in runs.with_)
    lines += [
        "",
        f"Added per allowed tool call: median of the four tools {signed(statistics.median(added))}"
        f" ms ({signed(statistics.median(unserved))} ms with AGENTLANES_FAST_HOOKS=0). CPU of "
        f"the program and its hooks per session: {ms(cpu_a)} ms without, "
        f"{ms(cpu_b)} ms with ({signed(cpu_b - cpu_a)} ms, {signed((cpu_b - cpu_a) / 8)} ms "
        "per tool call, start and end included); of which the processes it waited for (its "
        f"hooks, and what they ran): {ms(hooks_a)} ms without, {ms(hooks_b)} ms with "
        f"({signed(hooks_b - hooks_a)} ms).",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("programs", nargs="*", help="default: every installed one")
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    agents = args.programs or sorted(all_programs())
    unknown = set(agents) - set(all_programs())
    if unknown:
        parser.error(f"no driver for {', '.join(sorted(unknown))}")
    work = Path(tempfile.mkdtemp(prefix="agent-hooks-bench-"))
    server = bench_server(work, ADMIN_TOKEN, expiry_check_seconds=1)
    load_before = os.getloadavg()
    pace_before = interpreter_start()
    out = []
    try:
        server.start(timeout=120)
        for agent in agents:
            found = bench(agent, server.url, work, args.pairs)
            if found is not None:
                out.append(table(*found))
                print(out[-1] + "\n", flush=True)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    pace_after = interpreter_start()
    print(
        f"load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after; "
        f"{os.cpu_count()} CPUs; `python -S -c pass` {ms(pace_before[0])} ms wall / "
        f"{ms(pace_before[1])} ms CPU before, {ms(pace_after[0])} / {ms(pace_after[1])} after "
        f"(about 12 ms quiet); `.venv/bin/python bench/agent_hooks.py "
        f"{' '.join(args.programs)}{' ' if args.programs else ''}--pairs {args.pairs}`"
    )
    return 0 if out else 1


if __name__ == "__main__":
    sys.exit(main())
