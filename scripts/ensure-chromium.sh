#!/usr/bin/env bash
# Install Debian's chromium when it is missing (root with apt-get only). Never downloads
# a browser of its own: Playwright drives /usr/bin/chromium.
set -u
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the dashboard tests"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq chromium >/dev/null 2>&1 || echo "could not install chromium; browser tests will skip"
else
  echo "chromium is missing and cannot be installed here; browser tests will skip"
fi
exit 0
