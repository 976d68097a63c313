#!/usr/bin/env bash
# Install Debian's wrk (the compiled HTTP load generator bench/api.py drives the server
# with; tests/unit/test_bench_scripts.py runs it) when it is missing (root with apt-get
# only); otherwise say how. The test skips without it, or fails under
# AGENTLANES_REQUIRE_SERVICES=1.
set -u
if command -v wrk >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's wrk for bench/api.py and its test"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq wrk >/dev/null 2>&1 || echo "could not install wrk: apt-get install wrk"
else
  echo "wrk is missing: apt-get install wrk (as root)"
fi
exit 0
