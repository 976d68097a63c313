#!/usr/bin/env bash
# A stand-in for the Dockerfile's base image (its FROM, python:…-slim-bookworm) made from
# Debian's own packages, for machines that can run Docker but cannot pull images: debootstrap
# bookworm into a folder with python3, pip and venv; Python as a venv in /usr/local (python,
# pip on PATH, as in the official image); this machine's CA bundle, so pip inside the build
# reaches its index through whatever TLS proxy this machine trusts. Imported with
# `docker import` and tagged as the FROM. Cached: nothing is done when the tag exists
# (`docker rmi <tag>` to rebuild). Needs root, debootstrap and a Docker daemon
# (scripts/ensure-docker.sh). Mirror: AGENTLANES_DEBIAN_MIRROR (default deb.debian.org).
set -eu
root_dir="$(cd "$(dirname "$0")/.." && pwd)"
tag="$(awk '/^FROM /{print $2; exit}' "$root_dir/Dockerfile")"
tag="${tag%%@*}"  # a pinned digest cannot be produced here: the tag alone
if docker image inspect "$tag" >/dev/null 2>&1; then exit 0; fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing (scripts/ensure-docker.sh)"; exit 1; }
mirror="${AGENTLANES_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
work="$(mktemp -d /var/tmp/agentlanes-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo "ensure-docker-base: debootstrap bookworm for $tag (a few minutes, once)"
debootstrap --variant=minbase --include=python3,python3-pip,python3-venv,ca-certificates \
  bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log"; exit 1; }
rootfs="$work/rootfs"
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/etc/pip.conf"
chroot "$rootfs" python3 -m venv /usr/local
chroot "$rootfs" /usr/local/bin/python -m pip --version
rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
tar -C "$rootfs" --numeric-owner -c . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["python3"]' \
  - "$tag" >/dev/null
echo "ensure-docker-base: $tag is a stand-in made from Debian bookworm's packages"
