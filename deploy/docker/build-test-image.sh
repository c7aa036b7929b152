#!/usr/bin/env bash
# Build the product image on a machine that can reach Debian's apt mirror, PyPI and npm but no
# container registry (CI, the dev machines), for tests/container/test_image.py.
#
#   deploy/docker/build-test-image.sh [--target TARGET] [--tag TAG] [-- extra docker build args]
#   deploy/docker/build-test-image.sh --base-only      (only the stand-in base, tagged $BASE_TAG)
#
# No base image can be pulled here, so the Dockerfile's BASE_IMAGE is replaced by a stand-in
# built from nothing: Debian bookworm by `debootstrap --variant=minbase` from the mirror the
# host's apt already uses, with Debian's python3 (3.11), pip, venv and the host's locally added
# CA certificates (HTTPS to PyPI and npm may be re-signed by the network; node ignores the
# system store, hence NODE_EXTRA_CA_CERTS). It is tagged $BASE_TAG and reused while that tag
# exists. It is a test-only stand-in for python:3.11-slim-bookworm: never publish it.
#
# Needs root (debootstrap), a running docker engine, and Debian's docker client (engine 20.10's
# built-in BuildKit frontend; a newer standalone CLI without buildx may come first on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."

DOCKER="${DOCKER:-/usr/bin/docker}"
BASE_TAG="${BASE_TAG:-local/bookworm-python:3.11}"
ROOTFS_TAG="${ROOTFS_TAG:-local/bookworm:minbase}"
TARGET=""
TAG="veranda-dagster:container-test"
BASE_ONLY=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --target) TARGET="$2"; shift 2 ;;
    --tag) TAG="$2"; shift 2 ;;
    --base-only) BASE_ONLY=1; shift ;;
    --) shift; break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
export DOCKER_BUILDKIT=1

# The Debian mirror and sources file the host's apt uses (deb822 first, then one-line lists).
host_sources() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] && grep -qE '^Suites:.*\bbookworm\b' "$f" && grep -q '/debian/*$' "$f" && {
      echo "$f"; return 0; }
  done
  return 1
}
host_mirror() {
  local f
  if f="$(host_sources)"; then
    awk '/^URIs:/ {print $2; exit}' "$f"
    return 0
  fi
  awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null
}

image_exists() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

if ! image_exists "$BASE_TAG"; then
  work="$(mktemp -d /var/tmp/veranda-base.XXXXXX)"
  trap 'rm -rf "$work"' EXIT
  if ! image_exists "$ROOTFS_TAG"; then
    mirror="$(host_mirror)"
    [ -n "$mirror" ] || { echo "no bookworm mirror in the host's apt sources" >&2; exit 1; }
    echo "debootstrap bookworm from $mirror" >&2
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
      || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    if sources="$(host_sources)"; then   # security and updates too, as the host has them
      cp "$sources" "$work/rootfs/etc/apt/sources.list.d/debian.sources"
      : >"$work/rootfs/etc/apt/sources.list"
    fi
    rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
    tar -C "$work/rootfs" -c . | "$DOCKER" import --change 'CMD ["bash"]' - "$ROOTFS_TAG" >/dev/null
    rm -rf "$work/rootfs"
  fi
  mkdir -p "$work/ctx/ca"
  cp /usr/local/share/ca-certificates/*.crt "$work/ctx/ca/" 2>/dev/null || true
  cat >"$work/ctx/Dockerfile" <<EOF
FROM $ROOTFS_TAG
ENV LANG=C.UTF-8 PIP_BREAK_SYSTEM_PACKAGES=1 \\
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
COPY ca/ /usr/local/share/ca-certificates/
RUN apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
      python3 python3-pip python3-venv python-is-python3 ca-certificates \\
 && update-ca-certificates \\
 && rm -rf /var/lib/apt/lists/* \\
 && python --version
EOF
  "$DOCKER" build -q -t "$BASE_TAG" "$work/ctx" >/dev/null
fi

[ "$BASE_ONLY" = 1 ] && exit 0
args=(build -t "$TAG" --build-arg "BASE_IMAGE=$BASE_TAG")
[ -n "$TARGET" ] && args+=(--target "$TARGET")
"$DOCKER" "${args[@]}" "$@" .
