#!/usr/bin/env bash
# Refresh the OpenAPI viewer's files shipped in the package (served at /schema/swagger)
# from the npm package swagger-ui-dist: `scripts/vendor-swagger-ui.sh [VERSION]`.
# Needs npm. Only the files the page loads are kept, with the package's licence files.
set -euo pipefail
version="${1:-5.35.0}"
dest="$(cd "$(dirname "$0")/.." && pwd)/src/agentlanes/dashboard/static/vendor/swagger-ui"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "swagger-ui-dist@${version}" >/dev/null && tar xzf swagger-ui-dist-*.tgz)
mkdir -p "$dest"
for f in swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css LICENSE NOTICE; do
  cp "$work/package/$f" "$dest/$f"
done
echo "swagger-ui-dist ${version}" > "$dest/VERSION"
echo "vendored swagger-ui-dist ${version} into $dest"
