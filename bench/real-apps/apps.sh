#!/bin/bash
# Starts and stops the real applications on loopback: one Apache instance of our own (not the system
# service) with Debian's default modules and settings and one virtual host per application, each on its own
# port and with the application's own Debian config, and one nginx instance in front of each application in
# the careful configuration (bench/real-apps/nginx-hardened.conf.in). Juice Shop runs under node when it has
# been built (juice-shop.sh). Apache's and nginx's ports are held for them until they listen (hold-ports.ts:
# sockets with SO_REUSEPORT, which they bind beside and no other process can take); Juice Shop, which cannot
# bind beside one, gets a port at random in a high range and is started again on another when it does not get
# it. The URLs go to $REALAPPS_DIR/state.json.
#
#   bench/real-apps/apps.sh start | stop | status
#   (state.json: {"wordpress": {"default": "http://127.0.0.1:P/", "hardened": "http://127.0.0.1:Q/"}, ...})
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${REALAPPS_DIR:-/tmp/appaudit-realapps}
JUICE=${JUICE_DIR:-/tmp/realapps/juice}
# REALAPPS_APPS="wordpress dokuwiki" starts only those; REALAPPS_NO_NGINX=1 leaves the careful configuration out.
read -r -a APPS <<<"${REALAPPS_APPS:-wordpress dokuwiki phpmyadmin mediawiki juiceshop}"
declare -A PATHS=([wordpress]=/ [dokuwiki]=/dokuwiki/ [phpmyadmin]=/phpmyadmin/ [mediawiki]=/mediawiki/ [juiceshop]=/)

rand_port() { echo $((20000 + RANDOM % 40000)); }
listening() { ss -ltnH "sport = :$1" | grep -q "127.0.0.1:$1"; }
listening_by() { ss -ltnpH "sport = :$1" | grep -q "\"$2\""; } # port program: that program listens on it
BUN=${BUN:-bun}

# Holds n ports (HELD_PORTS) until release_ports; HOLD_PID is the holder.
hold_ports() {
  local f="$DIR/held-ports" i
  rm -f "$f"
  "$BUN" "$HERE/hold-ports.ts" "$1" >"$f" 2>>"$DIR/hold-ports.log" &
  HOLD_PID=$!
  for i in $(seq 1 100); do grep -q $'\n' "$f" 2>/dev/null && break; sleep 0.1; done
  read -r -a HELD_PORTS <"$f" || true
  [ ${#HELD_PORTS[@]} -eq "$1" ] || { echo "the servers' ports could not be held: $DIR/hold-ports.log" >&2; release_ports; return 1; }
}
release_ports() { [ -n "${HOLD_PID:-}" ] && { kill "$HOLD_PID" 2>/dev/null; wait "$HOLD_PID" 2>/dev/null; }; HOLD_PID=; }

# Waits (bounded) until program listens on every port given; 0 when it does.
until_listening() { # program port...
  local program=$1 i p ok
  shift
  for i in $(seq 1 100); do
    ok=1
    for p in "$@"; do listening_by "$p" "$program" || ok=0; done
    [ $ok = 1 ] && return 0
    sleep 0.1
  done
  return 1
}

# Runs a daemon's start command for the held ports (HELD_PORTS): 0 once the program listens on every one of
# them and has written its pid file (both start, then fork a daemon that writes it), the holds then dropped;
# otherwise the holds are dropped, the daemon is stopped and the log named.
on_held_ports() { # program pidfile log command...
  local program=$1 pidfile=$2 log=$3
  shift 3
  "$@" 2>>"$log"
  if until_listening "$program" "${HELD_PORTS[@]}" && pid_file "$pidfile"; then
    release_ports
    return 0
  fi
  release_ports
  pid_file "$pidfile" && kill "$(cat "$pidfile")" 2>/dev/null
  echo "$program did not start: $log" >&2
  return 1
}

# Waits (bounded) until a pid file is written; 0 when it is.
pid_file() {
  local i
  for i in $(seq 1 100); do
    [ -s "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
installed() {
  case $1 in
    wordpress) [ -f /etc/wordpress/config-127.0.0.1.php ] ;;
    dokuwiki) [ -f /etc/dokuwiki/apache.conf ] ;;
    phpmyadmin) [ -f /etc/phpmyadmin/apache.conf ] ;;
    juiceshop) return 1 ;; # not an Apache application: start_juice
    mediawiki) [ -f /etc/mediawiki/LocalSettings.php ] && [ -f /etc/apache2/conf-available/mediawiki.conf ] ;;
  esac
}

vhost() { # app port
  local app=$1 port=$2
  echo "Listen 127.0.0.1:$port"
  echo "<VirtualHost 127.0.0.1:$port>"
  case $app in
    wordpress)
      # Debian's recommended virtual host (/usr/share/doc/wordpress/examples/apache.conf): the whole host is
      # WordPress, "Options All"; wp-content from /var/lib/wordpress as its "defined virtual host" variant does.
      cat <<VH
  DocumentRoot /usr/share/wordpress
  Options All
  Alias /wp-content /var/lib/wordpress/wp-content
  <Directory /usr/share/wordpress>
    Options All
    AllowOverride Limit Options FileInfo
    Require all granted
  </Directory>
  <Directory /var/lib/wordpress/wp-content>
    Options All
    Require all granted
  </Directory>
VH
      ;;
    dokuwiki) echo "  DocumentRoot /var/www/html"; echo "  Include /etc/dokuwiki/apache.conf" ;;
    phpmyadmin) echo "  DocumentRoot /var/www/html"; echo "  Include /etc/phpmyadmin/apache.conf" ;;
    mediawiki) echo "  DocumentRoot /var/www/html"; echo "  Include /etc/apache2/conf-available/mediawiki.conf" ;;
  esac
  echo "</VirtualHost>"
}

apache_conf() { # "app:port ..."
  cat <<CONF
# Debian's /etc/apache2/apache2.conf, with paths of our own instance.
ServerRoot /etc/apache2
# SO_REUSEPORT, to bind beside the ports' holds (hold-ports.ts); one listener bucket on any machine.
ListenCoresBucketsRatio 1024
ServerName 127.0.0.1
PidFile $DIR/apache.pid
DefaultRuntimeDir $DIR
Mutex file:$DIR default
Define APACHE_LOG_DIR $DIR
Define APACHE_RUN_DIR $DIR
Timeout 300
KeepAlive On
MaxKeepAliveRequests 100
KeepAliveTimeout 5
User www-data
Group www-data
HostnameLookups Off
ErrorLog $DIR/apache-error.log
LogLevel warn
IncludeOptional /etc/apache2/mods-enabled/*.load
IncludeOptional /etc/apache2/mods-enabled/*.conf
# WordPress's README.Debian asks for these two.
<IfModule !rewrite_module>
LoadModule rewrite_module /usr/lib/apache2/modules/mod_rewrite.so
</IfModule>
<IfModule !vhost_alias_module>
LoadModule vhost_alias_module /usr/lib/apache2/modules/mod_vhost_alias.so
</IfModule>
<Directory />
	Options FollowSymLinks
	AllowOverride None
	Require all denied
</Directory>
<Directory /usr/share>
	AllowOverride None
	Require all granted
</Directory>
<Directory /var/www/>
	Options Indexes FollowSymLinks
	AllowOverride None
	Require all granted
</Directory>
AccessFileName .htaccess
<FilesMatch "^\.ht">
	Require all denied
</FilesMatch>
LogFormat "%h %l %u %t \"%r\" %>s %O \"%{Referer}i\" \"%{User-Agent}i\"" combined
CustomLog $DIR/apache-access.log combined
# The apache2 package's own conf-enabled files (not those applications drop there).
Include /etc/apache2/conf-available/charset.conf
Include /etc/apache2/conf-available/localized-error-pages.conf
Include /etc/apache2/conf-available/security.conf
Include /etc/apache2/conf-available/serve-cgi-bin.conf
CONF
  for ap in "$@"; do vhost "${ap%%:*}" "${ap##*:}"; done
}

nginx_conf() { # "app:port:upstream ..."
  cat <<CONF
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/nginx-error.log;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types;
  access_log $DIR/nginx-access.log;
  client_body_temp_path $DIR/nginx-body;
  proxy_temp_path $DIR/nginx-proxy;
  fastcgi_temp_path $DIR/nginx-fcgi;
  uwsgi_temp_path $DIR/nginx-uwsgi;
  scgi_temp_path $DIR/nginx-scgi;
CONF
  local t app port up
  for t in "$@"; do
    IFS=: read -r app port up <<<"$t"
    sed -e "s|@PORT@|$port|g" -e "s|@UPSTREAM@|$up|g" -e "s|@APP@|$app|g" "$HERE/nginx-hardened.conf.in"
    [ -f "$HERE/nginx-$app.conf.in" ] && sed -e "s|@UPSTREAM@|$up|g" "$HERE/nginx-$app.conf.in"
    echo "  }"
  done
  echo "}"
}

start_apache() {
  local apps=() specs=() i
  for app in "${APPS[@]}"; do installed "$app" && apps+=("$app"); done
  [ ${#apps[@]} -eq 0 ] && { APACHE_SPECS=(); return 0; } # none selected or installed
  hold_ports ${#apps[@]} || return 1
  for i in "${!apps[@]}"; do specs+=("${apps[$i]}:${HELD_PORTS[$i]}"); done
  apache_conf "${specs[@]}" >"$DIR/apache.conf"
  on_held_ports apache2 "$DIR/apache.pid" "$DIR/apache-start.log" apache2 -f "$DIR/apache.conf" -k start || return 1
  APACHE_SPECS=("${specs[@]}")
}

start_juice() {
  [ -f "$JUICE/build/app.js" ] && [[ " ${APPS[*]} " == *" juiceshop "* ]] || return 0
  local tries port
  for tries in 1 2 3 4 5; do
    port=$(rand_port)
    (cd "$JUICE" && PORT=$port NODE_ENV=production setsid node --require "$HERE/loopback.cjs" build/app.js >"$DIR/juice.log" 2>&1 & echo $! >"$DIR/juice.pid")
    local i
    for i in $(seq 1 90); do
      if listening "$port"; then
        # setsid may fork: keep the pid of the process that listens, for stop.
        ss -ltnpH "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2 >"$DIR/juice.pid"
        JUICE_PORT=$port
        return 0
      fi
      sleep 2
    done
    kill "$(cat "$DIR/juice.pid")" 2>/dev/null
  done
  echo "juice shop did not start: $DIR/juice.log" >&2
}

start_nginx() { # specs "app:upstreamport"
  local specs=() s i=0
  hold_ports $# || return 1
  for s in "$@"; do specs+=("${s%%:*}:${HELD_PORTS[$i]}:127.0.0.1:${s##*:}"); i=$((i + 1)); done
  nginx_conf "${specs[@]}" >"$DIR/nginx.conf"
  on_held_ports nginx "$DIR/nginx.pid" "$DIR/nginx-start.log" nginx -c "$DIR/nginx.conf" -p "$DIR" || return 1
  NGINX_SPECS=("${specs[@]}")
}

start() {
  mkdir -p "$DIR"
  APACHE_SPECS=() NGINX_SPECS=() JUICE_PORT=
  start_apache || return 1
  start_juice
  local backends=("${APACHE_SPECS[@]+"${APACHE_SPECS[@]}"}")
  [ -n "$JUICE_PORT" ] && backends+=("juiceshop:$JUICE_PORT")
  [ ${#backends[@]} -eq 0 ] && { echo "no application installed or selected (bench/real-apps/install.sh, juice-shop.sh)" >&2; return 1; }
  if [ -z "${REALAPPS_NO_NGINX:-}" ]; then start_nginx "${backends[@]}" || return 1; fi
  {
    echo '{'
    local first=1 s app
    for s in "${backends[@]}"; do
      app=${s%%:*}
      local hp=0 n
      for n in "${NGINX_SPECS[@]+"${NGINX_SPECS[@]}"}"; do [ "${n%%:*}" = "$app" ] && { IFS=: read -r _ hp _ <<<"$n"; }; done
      [ $first = 1 ] || echo ','
      first=0
      printf '  "%s": {"default": "http://127.0.0.1:%s%s", "hardened": "http://127.0.0.1:%s%s"}' \
        "$app" "${s##*:}" "${PATHS[$app]}" "$hp" "${PATHS[$app]}"
    done
    echo
    echo '}'
  } >"$DIR/state.json"
  cat "$DIR/state.json"
}

stop() {
  local pids=() f i
  for f in nginx.pid apache.pid; do [ -s "$DIR/$f" ] && pids+=("$(cat "$DIR/$f")"); done
  [ -s "$DIR/nginx.pid" ] && kill "$(cat "$DIR/nginx.pid")" 2>/dev/null
  [ -s "$DIR/apache.pid" ] && apache2 -f "$DIR/apache.conf" -k stop 2>/dev/null
  # Both stop in the background: wait (bounded) until their master processes are gone.
  for i in $(seq 1 30); do
    local alive=0
    for f in "${pids[@]+"${pids[@]}"}"; do kill -0 "$f" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 1
  done
  [ -s "$DIR/juice.pid" ] && kill "$(cat "$DIR/juice.pid")" 2>/dev/null
  rm -f "$DIR/state.json" "$DIR/juice.pid"
  return 0
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  status) cat "$DIR/state.json" 2>/dev/null || { echo "not running" >&2; exit 1; } ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
