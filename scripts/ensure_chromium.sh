#!/usr/bin/env bash
# Make sure a headless Chromium and its WebDriver exist for the browser tests (tests/browser):
# install Debian's `chromium` and `chromium-driver` when running as root.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing chromium and chromium-driver (Debian packages, for the browser tests)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
    exit 0
fi
echo "chromium and chromedriver are not installed and this user cannot install them." >&2
echo "Install them (e.g. 'sudo apt-get install chromium chromium-driver'); the browser tests need them." >&2
exit 1
