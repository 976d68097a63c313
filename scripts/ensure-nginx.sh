#!/usr/bin/env bash
# Install Debian's nginx when it is missing (root with apt-get only), for the tests that run
# three `agentlanes serve` processes behind deploy/nginx.conf (tests/e2e/test_nginx.py). The
# tests start their own nginx (own prefix and config in a temporary folder), never the
# system service. Without nginx they skip, or fail under AGENTLANES_REQUIRE_SERVICES=1.
set -u
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's nginx for the tests behind deploy/nginx.conf"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq nginx >/dev/null 2>&1 || echo "could not install nginx: apt-get install nginx"
else
  echo "nginx is missing: apt-get install nginx (as root); the nginx tests will skip"
fi
exit 0
