#!/usr/bin/env bash
# Podman for test/k8s/images.test.ts, which builds both images (scripts/build-images.sh) and runs them as
# a pod would; without podman that test is skipped. Installed from Debian's packages (the only source this
# machine kind reaches): podman itself, runc (crun cannot set rlimits here, ../shared/NOTES.md), debootstrap
# (the base image is made from Debian's mirror when no registry answers, once per machine: build-images.sh
# keeps it under its public name) and catatonit (the pause process of `podman kube play`).
# Only as root with apt-get; anywhere else it says so in one line and the image test is skipped.
#   bash scripts/install-podman.sh        (scripts/test runs it before the suite)
set -uo pipefail
PODMAN_PACKAGES=()
command -v podman >/dev/null 2>&1 || PODMAN_PACKAGES+=(podman)
[ -x /usr/sbin/runc ] || command -v runc >/dev/null 2>&1 || PODMAN_PACKAGES+=(runc)
[ -x /usr/sbin/debootstrap ] || command -v debootstrap >/dev/null 2>&1 || PODMAN_PACKAGES+=(debootstrap)
command -v catatonit >/dev/null 2>&1 || [ -x /usr/libexec/podman/catatonit ] || PODMAN_PACKAGES+=(catatonit)
if [ "${#PODMAN_PACKAGES[@]}" -eq 0 ]; then
  :
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test: installing Debian's ${PODMAN_PACKAGES[*]} (test/k8s/images.test.ts builds and runs the images with them)" >&2
  apt-get update -qq </dev/null >&2 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${PODMAN_PACKAGES[@]}" </dev/null >&2 ||
    echo "test: could not install ${PODMAN_PACKAGES[*]}; test/k8s/images.test.ts is skipped (in part or whole)" >&2
else
  echo "test: ${PODMAN_PACKAGES[*]} missing and not installable here (needs root and apt-get); test/k8s/images.test.ts is skipped (in part or whole)" >&2
fi
unset PODMAN_PACKAGES
