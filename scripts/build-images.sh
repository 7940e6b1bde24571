#!/usr/bin/env bash
# Builds the two images (appaudit-api, appaudit-crawler) with podman, or docker when podman is absent.
# Where no registry can be reached but Debian's mirror can (this machine kind), the base image
# debian:bookworm-slim is made first with debootstrap and tagged under its public name, so the Dockerfile
# builds unchanged (--pull=never). Prints each image's size.
#   scripts/build-images.sh [TAG]        (default: local)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TAG="${1:-local}"
BASE=docker.io/library/debian:bookworm-slim

# One build at a time on a machine (podman's images are the machine's): a second waits for the first, then
# finds every layer already built (scripts/test starts one in the background; the image test runs another).
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/appaudit-build-images.lock"
  flock 9
fi

if command -v podman >/dev/null 2>&1; then
  # crun cannot set rlimits here; runc with no default ulimits works (../shared/NOTES.md).
  export CONTAINERS_CONF="${CONTAINERS_CONF:-$ROOT/.tools/containers.conf}"
  if [ ! -f "$CONTAINERS_CONF" ]; then
    mkdir -p "$(dirname "$CONTAINERS_CONF")"
    printf '[containers]\ndefault_ulimits = []\n' > "$CONTAINERS_CONF"
  fi
  ENGINE=(podman --runtime runc)
  BUILD_FLAGS=(--network=host)
  if ! "${ENGINE[@]}" image exists "$BASE"; then
    if "${ENGINE[@]}" pull -q "$BASE" >/dev/null 2>&1; then :; else
      command -v debootstrap >/dev/null 2>&1 || { echo "build-images: no registry and no debootstrap to make $BASE" >&2; exit 1; }
      # The first mirror apt uses here (a "URIs:" line of a .sources file, or a "deb" line), not a comment.
      MIRROR="$(grep -h -m1 -oE '^(URIs:|deb)[[:space:]]+https?://[^ ]+/debian' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | grep -oE 'https?://[^ ]+' | head -1 || true)"
      ROOTFS="$(mktemp -d)"
      echo "build-images: making $BASE with debootstrap from ${MIRROR:-deb.debian.org}" >&2
      debootstrap --variant=minbase bookworm "$ROOTFS" "${MIRROR:-http://deb.debian.org/debian}" >/dev/null
      tar -C "$ROOTFS" -c . | "${ENGINE[@]}" import - localhost/debian-base:bookworm >/dev/null
      "${ENGINE[@]}" tag localhost/debian-base:bookworm "$BASE"
      rm -rf "$ROOTFS"
    fi
  fi
  BUILD_FLAGS+=(--pull=never)
elif command -v docker >/dev/null 2>&1; then
  ENGINE=(docker)
  BUILD_FLAGS=()
else
  echo "build-images: neither podman nor docker is installed" >&2
  exit 1
fi

# Behind an intercepting proxy (its CA among the host's local ones), npm and bun in the build need that CA.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  BUILD_FLAGS+=(--build-arg "EXTRA_CA_B64=$(cat /usr/local/share/ca-certificates/*.crt | base64 -w0)")
fi
for target in api crawler; do
  echo "build-images: building appaudit-$target:$TAG" >&2
  "${ENGINE[@]}" build "${BUILD_FLAGS[@]}" --target "$target" -t "localhost/appaudit-$target:$TAG" "$ROOT" >&2
done
for target in api crawler; do
  "${ENGINE[@]}" image inspect --format "appaudit-$target:$TAG {{.Size}}" "localhost/appaudit-$target:$TAG"
done
