"""TypeScript types generated from the served OpenAPI document by openapi-typescript (npm)
type-check a small program that checks in, and refuse a wrong body.

Needs node's `npx` (and the npm registry or a warm npm cache); without it the test skips
with the reason, and fails under AGENTLANES_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.support.server import ServerProcess
from tests.support.services import unavailable

pytestmark = pytest.mark.e2e

# Pinned: the generated names (`paths`, `components`) and the compiler's verdicts.
OPENAPI_TYPESCRIPT = "openapi-typescript@7.13.0"
TYPESCRIPT = "typescript@5.9.3"

PROGRAM = """\
import type { components, paths } from "./schema";

type Checkin = paths["/api/v1/checkin"]["post"];
type CheckinRequest = NonNullable<Checkin["requestBody"]>["content"]["application/json"];
type CheckinAnswer = Checkin["responses"][201]["content"]["application/json"];
type Presence = components["schemas"]["PresenceAnswer"];

export async function checkin(base: string, key: string): Promise<string> {
  const body: CheckinRequest = {
    agent_name: "ts-agent",
    declared_files: ["src/**"],
    meta: { tool: "typescript", nested: { n: [1, "two", null, true] } },
  };
  const r = await fetch(`${base}/api/v1/checkin`, {
    method: "POST",
    headers: { "X-API-Key": key, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = (await r.json()) as CheckinAnswer;
  const status: "active" = answer.status;
  return `${status} ${answer.session_token} until ${answer.expires_at}`;
}

export function names(presence: Presence): string[] {
  return presence.sessions.map((s) => s.agent_name);
}

// The types are not `any`: a wrong body is refused.
// @ts-expect-error agent_name is a string
export const wrong: CheckinRequest = { agent_name: 5 };
// @ts-expect-error declared_files is a list of strings
export const wrongFiles: CheckinRequest = { declared_files: "src/**" };
"""


def npx(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    found = shutil.which("npx")
    if found is None:
        unavailable("node's npx", "not on PATH (openapi-typescript and tsc run with it)")
    # The user's own HOME: npx keeps its package cache there.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLANES_")}
    return subprocess.run(
        [str(found), "-y", *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )


def test_generated_typescript_types_check_a_checkin_program(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    document = httpx.get(f"{agent_server.url}/schema/openapi.json", timeout=10)
    (tmp_path / "openapi.json").write_text(document.text)
    made = npx(OPENAPI_TYPESCRIPT, "openapi.json", "-o", "schema.d.ts", cwd=tmp_path)
    if made.returncode != 0 and "ENOTFOUND" in made.stderr + made.stdout:
        unavailable("the npm registry", made.stderr.strip()[-300:])
    assert made.returncode == 0, made.stdout + made.stderr
    schema = (tmp_path / "schema.d.ts").read_text()
    # Free-form values are any JSON value (JsonWithoutNul), not "an object of objects".
    assert "JsonWithoutNul: unknown;" in schema
    (tmp_path / "program.ts").write_text(PROGRAM)
    checked = npx(
        "-p",
        TYPESCRIPT,
        "tsc",
        "--noEmit",
        "--strict",
        "--target",
        "es2022",
        "--lib",
        "es2022,dom",
        "--module",
        "esnext",
        "--moduleResolution",
        "bundler",
        "program.ts",
        cwd=tmp_path,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
