#!/bin/bash
# OWASP Juice Shop built from its source, for apps.sh (which starts it when $JUICE_DIR/build/app.js exists).
#
#   JUICE_GIT=<git directory of github.com/juice-shop/juice-shop> bench/real-apps/juice-shop.sh
#
# The source is a git copy without a work tree (as the search tool's fetch brings it). The tag is v18.0.0
# (June 2025), the newest whose dependencies this machine's npm registry has: v19 and v20 ask for
# juicy-chat-bot ~0.9 and cypress ^15.16, not there. Files whose blobs the copy lacks (large images and a
# video) are left out. The frisby test dependency comes from GitHub (unreachable here) and only serves
# Juice Shop's own API tests, so it is dropped. npm install builds the server and the Angular front end
# (its postinstall): many CPU minutes and a few GB.
set -euo pipefail
G=${JUICE_GIT:?the git directory of juice-shop}
TAG=${JUICE_TAG:-v18.0.0}
D=${JUICE_DIR:-/tmp/realapps/juice}
rm -rf "$D" && mkdir -p "$D"
# The tree goes out through an index of its own with the missing files taken out (git archive reads every
# blob it lists, so it stops at the first missing one even when a pathspec excludes it).
export GIT_INDEX_FILE="$D.index"
rm -f "$GIT_INDEX_FILE"
git --git-dir="$G" read-tree "$TAG"
missing=()
while read -r blob path; do
  git --git-dir="$G" cat-file -e "$blob" 2>/dev/null || missing+=("$path")
done < <(git --git-dir="$G" ls-tree -r "$TAG" | awk '{print $3" "$4}')
echo "left out (no blob in the copy): ${missing[*]:-none}"
[ ${#missing[@]} -eq 0 ] || git --git-dir="$G" update-index --force-remove -- "${missing[@]}"
git --git-dir="$G" --work-tree="$D" checkout-index -a --prefix="$D/"
rm -f "$GIT_INDEX_FILE"
unset GIT_INDEX_FILE
sed -i '/"frisby": "github:bkimminich\/frisby",/d' "$D/package.json"
cd "$D"
export CYPRESS_INSTALL_BINARY=0 PUPPETEER_SKIP_DOWNLOAD=1 CHROMEDRIVER_SKIP_DOWNLOAD=true GECKODRIVER_SKIP_DOWNLOAD=true
# Juice Shop's postinstall (the front end's install and build, then the server's tsc, whose failure it hides
# behind `|| cd .`) runs here step by step, so a failing step stops the script; npm 11 runs no dependency's
# install script unless allowed, so the two native modules the server loads at start are rebuilt by name.
npm install --no-audit --no-fund --ignore-scripts
npm rebuild sqlite3 libxmljs2
(cd frontend && npm install --no-audit --no-fund --legacy-peer-deps && npm run build)
node_modules/.bin/tsc
# A folder whose only file was left out (the promo video) must still exist: the server copies the video's
# subtitles into it at start-up and stops when it cannot.
mkdir -p frontend/dist/frontend/assets/public/videos
test -f build/app.js && echo "built: $D/build/app.js"
