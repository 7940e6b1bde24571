#!/bin/bash
# Wapiti's Nikto and Wappalyzer databases. Debian's wapiti ships neither (the Nikto database's license
# forbids redistribution; Wappalyzer's is downloaded at run time), so its nikto and wapp modules do nothing
# without them. Wapiti 3.0.4 downloads them from
#   https://raw.githubusercontent.com/wapiti-scanner/nikto/master/program/databases/db_tests
#   https://raw.githubusercontent.com/wapiti-scanner/wappalyzer/master/src/technologies.json
# This puts them in the config directory the comparison passes with --store-config, from those two URLs
# or, where GitHub is not reachable, from local git copies of the two repositories (NIKTO_GIT, WAPPALYZER_GIT:
# their git directories).
set -euo pipefail
C=${WAPITI_CONFIG:-/var/lib/appaudit-realapps/wapiti-config}
mkdir -p "$C"
get() { # url gitdir path out
  if [ -n "$2" ] && [ -d "$2" ]; then git --git-dir="$2" show "HEAD:$3" >"$4"; else curl -fsSL -m 120 "$1" -o "$4"; fi
}
get https://raw.githubusercontent.com/wapiti-scanner/nikto/master/program/databases/db_tests "${NIKTO_GIT:-}" program/databases/db_tests "$C/nikto_db"
get https://raw.githubusercontent.com/wapiti-scanner/wappalyzer/master/src/technologies.json "${WAPPALYZER_GIT:-}" src/technologies.json "$C/apps.json"
ls -l "$C"
