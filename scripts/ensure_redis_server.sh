#!/usr/bin/env bash
# Make sure the redis-server binary exists: install Debian's package when running as root.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing redis-server (Debian package)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    exit 0
fi
echo "redis-server is not installed and this user cannot install it." >&2
echo "Install it (e.g. 'sudo apt-get install redis-server') or set REDIS_URL to a running Redis." >&2
exit 1
