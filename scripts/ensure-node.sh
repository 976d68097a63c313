#!/usr/bin/env bash
# Install Debian's nodejs and npm when node or npx is missing (root with apt-get only), for
# the OpenCode plugin test (tests/e2e/test_every_agent.py), openapi-typescript and the MCP
# Inspector tests. Never a downloaded Node of its own.
set -u
if command -v node >/dev/null 2>&1 && command -v npx >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's nodejs and npm for the Node tests"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq nodejs npm >/dev/null 2>&1 || echo "could not install nodejs/npm; the Node tests will skip"
else
  echo "node/npx are missing and cannot be installed here; the Node tests will skip"
fi
exit 0
