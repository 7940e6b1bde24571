<?php
// WordPress's own installer (wp_install, what wp-admin/install.php calls), run from the command line for the
// host 127.0.0.1 so that Debian's config-127.0.0.1.php is read. The site URL follows the request's host
// (WP_HOME/WP_SITEURL are not fixed), as it does behind any port apps.sh picks.
$_SERVER['HTTP_HOST'] = '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
define('WP_INSTALLING', true);
require '/usr/share/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
if (is_blog_installed()) { echo "WordPress already installed\n"; exit(0); }
$r = wp_install('RealApps Blog', 'realapps-admin', 'admin@example.invalid', true, '', wp_generate_password(24));
echo "WordPress installed, user id {$r['user_id']}\n";
