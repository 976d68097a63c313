#!/usr/bin/env bash
# Docker for tests/e2e/test_image.py: install Debian's docker.io and debootstrap when missing
# (root with apt-get only) and start dockerd when `docker info` finds no daemon. The daemon
# runs without a bridge network (--bridge=none): the test builds and runs with
# --network host, so only loopback traffic. Then scripts/ensure-docker-base.sh makes the
# stand-in base image. Without Docker the test skips, or fails under
# AGENTLANES_REQUIRE_SERVICES=1.
set -u
say() { echo "ensure-docker: $*"; }
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  missing=""
  command -v dockerd >/dev/null 2>&1 || missing="$missing docker.io"
  command -v debootstrap >/dev/null 2>&1 || missing="$missing debootstrap"
  if [ -n "$missing" ]; then
    say "installing Debian's$missing for the image test"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null 2>&1 || true
    # shellcheck disable=SC2086
    apt-get install -y -qq $missing >/dev/null 2>&1 || say "could not install$missing"
  fi
fi
if ! command -v docker >/dev/null 2>&1; then
  say "docker is missing: apt-get install docker.io (as root); the image test will skip"
  exit 0
fi
if docker info >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v dockerd >/dev/null 2>&1; then
  say "no Docker daemon answers and this user cannot start one; the image test will skip"
  exit 0
fi
say "starting dockerd (log: /var/log/agentlanes-dockerd.log)"
nohup dockerd --bridge=none --iptables=false --ip6tables=false \
  >/var/log/agentlanes-dockerd.log 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then exit 0; fi
  sleep 0.5
done
say "dockerd did not come up; see /var/log/agentlanes-dockerd.log"
exit 0
