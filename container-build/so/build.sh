#!/usr/bin/env bash
# Builds the `so` image (container-build/so/Dockerfile) from this checkout:
#   container-build/so/build.sh [TAG]          # default so:local
# Environment: KUBECTL (default: kubectl on PATH), DOCKER (default docker; podman and buildah bud work too),
# BASE (the base image, default debian:bookworm-slim), SWIFT (passed to make).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tag=${1:-so:local}
kubectl_bin=${KUBECTL:-$(command -v kubectl || true)}
[ -n "$kubectl_bin" ] && [ -x "$kubectl_bin" ] || { echo "error: kubectl not found (hint: install it, or set KUBECTL=/path/to/kubectl)" >&2; exit 1; }
ctx=$(mktemp -d "${TMPDIR:-/tmp}/so-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
make -C "$repo" install DESTDIR="$ctx" PREFIX=/usr/local ${SWIFT:+SWIFT="$SWIFT"}
cp "$kubectl_bin" "$ctx/kubectl"
"${DOCKER:-docker}" build ${BASE:+--build-arg BASE="$BASE"} -f "$here/Dockerfile" -t "$tag" "$ctx"
echo "built $tag"
