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

if [ ! -d "$ROOT/node_modules/@modelcontextprotocol/sdk" ] || [ "$ROOT/bun.lock" -nt "$ROOT/node_modules" ]; then
  echo "setup: installing dependencies" >&2
  (cd "$ROOT" && "$BUN" install --frozen-lockfile </dev/null >&2)
  touch "$ROOT/node_modules"
fi

# scripts/admin needs no browser (SETUP_WITHOUT_CHROMIUM=1).
if [ -z "${SETUP_WITHOUT_CHROMIUM:-}" ] && [ -z "${CHROMIUM_PATH:-}" ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium" >&2
    apt-get update -qq </dev/null >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium </dev/null >&2
  else
    echo "setup: no Chromium at /usr/bin/chromium; install the chromium package or set CHROMIUM_PATH" >&2
    exit 1
  fi
fi
