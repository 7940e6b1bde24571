#!/usr/bin/env bash
# Installs what is missing: bun (from npm), the dependencies, and Debian's Chromium (as root with apt).
# Sourced by scripts/start and scripts/test; safe to run again.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUN_VERSION=1.4.5

find_bun() {
  if command -v bun >/dev/null 2>&1 && bun --version >/dev/null 2>&1; then command -v bun; return; fi
  for b in "$ROOT/.tools/node_modules/.bin/bun" "$ROOT/.tools/node_modules/@oven/bun-linux-x64/bin/bun" "$ROOT/.tools/node_modules/@oven/bun-linux-aarch64/bin/bun"; do
    if [ -x "$b" ] && "$b" --version >/dev/null 2>&1; then echo "$b"; return; fi
  done
}

BUN="$(find_bun || true)"
if [ -z "$BUN" ]; then
  echo "setup: installing bun $BUN_VERSION from npm" >&2
  command -v npm >/dev/null 2>&1 || { echo "setup: npm is needed to install bun" >&2; exit 1; }
  # Into the project (.tools/), so no global state is needed. bun's install script is approved in the
  # folder's own package.json; stdin is closed so npm never waits for an answer.
  mkdir -p "$ROOT/.tools"
  [ -f "$ROOT/.tools/package.json" ] || echo '{"private": true, "allowScripts": {"bun": true}}' > "$ROOT/.tools/package.json"
  npm install --prefix "$ROOT/.tools" --no-audit --no-fund "bun@$BUN_VERSION" </dev/null >&2
  BUN="$(find_bun || true)"
  [ -n "$BUN" ] || { echo "setup: bun did not install" >&2; exit 1; }
fi
export PATH="$(dirname "$BUN"):$PATH"

# SETUP_DEPENDENCIES=production (scripts/start, scripts/admin): only what the service runs on, 166 packages
# and 163 MB, against 713 and 635 MB with the test and bench tools (Lighthouse, fixtures, TypeScript...).
# scripts/test installs everything; a production install is completed when the tests are first run.
SETUP_DEPENDENCIES="${SETUP_DEPENDENCIES:-all}"
need_install() {
  [ ! -d "$ROOT/node_modules/@modelcontextprotocol/sdk" ] && return 0
  [ "$ROOT/bun.lock" -nt "$ROOT/node_modules" ] && return 0
  # @biomejs/biome is a dev dependency: without it, the install was a production one.
  [ "$SETUP_DEPENDENCIES" = all ] && [ ! -d "$ROOT/node_modules/@biomejs/biome" ] && return 0
  return 1
}
if need_install; then
  INSTALL_ARGS=(install --frozen-lockfile)
  [ "$SETUP_DEPENDENCIES" = production ] && INSTALL_ARGS+=(--production)
  echo "setup: installing dependencies ($SETUP_DEPENDENCIES)" >&2
  # The list of every package installed says nothing a user acts on: kept in a log, shown only on failure.
  INSTALL_LOG="$(mktemp)"
  if ! (cd "$ROOT" && "$BUN" "${INSTALL_ARGS[@]}" </dev/null >"$INSTALL_LOG" 2>&1); then
    cat "$INSTALL_LOG" >&2
    rm -f "$INSTALL_LOG"
    echo "setup: bun ${INSTALL_ARGS[*]} failed (above)" >&2
    exit 1
  fi
  echo "setup: $(grep -Eo '[0-9]+ packages? installed' "$INSTALL_LOG" | tail -1 || echo 'dependencies installed')" >&2
  rm -f "$INSTALL_LOG"
  touch "$ROOT/node_modules"
fi

# scripts/admin needs no browser (SETUP_WITHOUT_CHROMIUM=1). Scans run in the headless shell
# (chromium-headless-shell); the full browser (chromium) is the person's browser of the viewer's tests and
# the one the benches run Lighthouse in.
if [ -z "${SETUP_WITHOUT_CHROMIUM:-}" ] && [ -z "${CHROMIUM_PATH:-}" ] \
  && { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/lib/chromium/chromium-headless-shell ]; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium and chromium-headless-shell" >&2
    apt-get update -qq </dev/null >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-headless-shell </dev/null >&2
  elif [ -x /usr/bin/chromium ] || [ -x /usr/lib/chromium/chromium-headless-shell ]; then
    echo "setup: only one of Debian's chromium and chromium-headless-shell is installed; scans use the shell when it is there" >&2
  else
    echo "setup: no Chromium at /usr/bin/chromium or /usr/lib/chromium/chromium-headless-shell; install Debian's chromium and chromium-headless-shell packages or set CHROMIUM_PATH" >&2
    exit 1
  fi
fi
