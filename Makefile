# The two commands: `make run` (serve on the embedded default: SQLite, in-process hub)
# and `make test` (ruff, mypy as configured in pyproject.toml, then the whole suite). Both
# create .venv and install what they need.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Two stamps: `make run` installs only what serving needs; the rest also the dev extras.
SERVE_STAMP := $(VENV)/.serve-stamp
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test lint format services browser wrk nginx docker node agents test-agents \
	agents-latest bench bench-api soak clean

$(SERVE_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	@touch $(SERVE_STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP) $(SERVE_STAMP)

run: $(SERVE_STAMP)
	$(VENV)/bin/agentlanes serve

test: $(STAMP) services browser wrk nginx docker node agents
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

format: $(STAMP)
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

# Start the local PostgreSQL and Redis if they are installed but down (no-op otherwise).
services:
	@bash scripts/ensure-services.sh

# Debian's chromium for the dashboard tests (never a downloaded browser).
browser:
	@bash scripts/ensure-chromium.sh

# Debian's nodejs and npm (node, npx) for the OpenCode plugin, openapi-typescript and
# MCP Inspector tests.
node:
	@bash scripts/ensure-node.sh

# The coding agents' own programs (Claude Code, Codex, Gemini CLI, Copilot CLI, OpenCode,
# Cline) at the versions pinned in tests/support/agent_programs/pins.json, installed from
# npm once into ~/.cache/agentlanes/agent-programs (kept between runs), for
# tests/e2e/test_real_agents.py; one that fails to install is skipped there, with why.
agents: $(STAMP) node
	-$(PY) -m tests.support.agent_programs.install

# The real programs' suite alone; its table goes to var/real-agents.md (docs/agents.md).
test-agents: $(STAMP) services agents
	$(PY) -m pytest -p no:cacheprovider tests/e2e/test_real_agents.py

# The same suite against the newest published versions (installed as it needs them, beside
# the pinned ones; var/real-agents-latest.md), then what changed against the pinned run
# (which runs first when there is none yet).
agents-latest: $(STAMP) services node
	@test -f var/real-agents.json || $(MAKE) test-agents || true
	-AGENTLANES_AGENT_VERSIONS=latest $(PY) -m pytest -p no:cacheprovider tests/e2e/test_real_agents.py
	$(PY) -m tests.support.agent_programs.table compare

# Debian's wrk, for bench/api.py and the test of what it makes wrk send.
wrk:
	@bash scripts/ensure-wrk.sh

# Debian's nginx, for the tests of three processes behind deploy/nginx.conf.
nginx:
	@bash scripts/ensure-nginx.sh

# Debian's docker.io and a running dockerd, and the Dockerfile's base made from Debian's
# packages (cached as the FROM tag), for the test that builds and runs the image.
docker:
	@bash scripts/ensure-docker.sh
	@bash scripts/ensure-docker-base.sh || echo "no stand-in base image; the image test will build it or skip"

bench: $(STAMP) bench-api
	$(PY) bench/conflicts.py
	$(PY) bench/fanout.py
	$(PY) bench/hook.py
	$(PY) bench/coordination.py

# The server under wrk beside bare Litestar, SQLite and PostgreSQL (about 5 minutes).
bench-api: $(STAMP) services wrk
	$(PY) bench/api.py

# Ten minutes of a churning swarm on PostgreSQL + Redis: does memory or latency creep?
soak: $(STAMP) services
	$(PY) bench/soak.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache
