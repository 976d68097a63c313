#!/usr/bin/env bash
# Install Debian's wrk (the compiled HTTP load generator bench/api.py drives the server
# with) when it is missing (root with apt-get only); otherwise say how.
set -u
if command -v wrk >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's wrk for bench/api.py"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq wrk >/dev/null 2>&1 || echo "could not install wrk: apt-get install wrk"
else
  echo "wrk is missing: apt-get install wrk (as root)"
fi
exit 0
