#!/bin/bash
# Installs the real applications of the side-by-side comparison from Debian's packages, with their default
# configurations, and prepares what their own setup steps ask for (a database and a site config for
# WordPress, as Debian's /usr/share/doc/wordpress/examples/setup-mysql would write it; MediaWiki's command
# line installer). Idempotent: run it again and it only fills in what is missing. Needs root, apt, and a
# MariaDB/MySQL on 127.0.0.1:3306 reachable as root without a password (MYSQL_ROOT to change the user).
# Juice Shop is built from its source by juice-shop.sh, not here.
set -euo pipefail
MYSQL=(mysql -h 127.0.0.1 -P 3306 -u "${MYSQL_ROOT:-root}")
PKGS=(apache2 libapache2-mod-php php-mysql wordpress-theme-twentytwentythree wordpress-l10n php-intl php-mbstring php-xml nginx wordpress dokuwiki phpmyadmin mediawiki wapiti)

# phpMyAdmin asks whether to configure a database and a web server: neither (its defaults are used, and the
# comparison runs its own Apache instance).
debconf-set-selections <<'SEL'
phpmyadmin phpmyadmin/dbconfig-install boolean false
phpmyadmin phpmyadmin/reconfigure-webserver multiselect
SEL
missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# WordPress: the database and user setup-mysql creates, and its config file for the host 127.0.0.1.
WP_CONF=/etc/wordpress/config-127.0.0.1.php
if [ ! -f "$WP_CONF" ]; then
  pw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  key=$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  "${MYSQL[@]}" <<SQL
CREATE DATABASE IF NOT EXISTS wp_realapps;
CREATE USER IF NOT EXISTS 'wp_realapps'@'127.0.0.1' IDENTIFIED BY '$pw';
ALTER USER 'wp_realapps'@'127.0.0.1' IDENTIFIED BY '$pw';
GRANT SELECT,INSERT,UPDATE,DELETE,CREATE,DROP,ALTER ON wp_realapps.* TO 'wp_realapps'@'127.0.0.1';
FLUSH PRIVILEGES;
SQL
  (umask 0027; cat > "$WP_CONF" <<PHP
<?php
define('DB_NAME', 'wp_realapps');
define('DB_USER', 'wp_realapps');
define('DB_PASSWORD', '$pw');
define('DB_HOST', '127.0.0.1:3306');
define('SECRET_KEY', '$key');
define('WP_CONTENT_DIR', '/var/lib/wordpress/wp-content');
define('FS_METHOD', 'direct');
// apps.sh gives the site a port of its own each run: the site's address follows the request.
if (isset(\$_SERVER['HTTP_HOST'])) { define('WP_HOME', 'http://' . \$_SERVER['HTTP_HOST']); define('WP_SITEURL', WP_HOME); }
?>
PHP
  )
  chgrp www-data "$WP_CONF"
fi

# WordPress's installer (the site title, the first user, the "Hello world!" post), from the command line.
php "$(dirname "$0")/wp-install.php"

# MediaWiki: Debian ships it unconfigured (the web installer at /mediawiki/mw-config/); its command line
# installer does the same with a database of our own, then LocalSettings.php goes where Debian expects it.
if [ ! -f /etc/mediawiki/LocalSettings.php ]; then
  mwpw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  "${MYSQL[@]}" <<SQL
CREATE DATABASE IF NOT EXISTS mw_realapps;
CREATE USER IF NOT EXISTS 'mw_realapps'@'127.0.0.1' IDENTIFIED BY '$mwpw';
ALTER USER 'mw_realapps'@'127.0.0.1' IDENTIFIED BY '$mwpw';
GRANT ALL ON mw_realapps.* TO 'mw_realapps'@'127.0.0.1';
FLUSH PRIVILEGES;
SQL
  adminpw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  out=$(mktemp -d)
  php /usr/share/mediawiki/maintenance/install.php --dbtype mysql --dbserver 127.0.0.1:3306 --dbname mw_realapps \
    --dbuser mw_realapps --dbpass "$mwpw" --server http://127.0.0.1 --scriptpath /mediawiki \
    --confpath "$out" --pass "$adminpw-Aa1" 'RealApps Wiki' Admin
  # The wiki answers on whatever loopback port apps.sh gives it: the server name comes from each request.
  sed -i 's|^\$wgServer = .*|$wgServer = WebRequest::detectServer();|' "$out/LocalSettings.php"
  install -m 0644 "$out/LocalSettings.php" /etc/mediawiki/LocalSettings.php
  rm -rf "$out"
fi
echo "installed: ${PKGS[*]}"
