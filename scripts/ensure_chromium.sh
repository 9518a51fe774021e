#!/usr/bin/env bash
# Make sure a headless Chromium, its WebDriver and a CJK font exist for the browser tests (tests/browser):
# install Debian's `chromium`, `chromium-driver` and `fonts-wqy-microhei` when running as root.
set -euo pipefail
have_font() { command -v fc-list >/dev/null 2>&1 && fc-list :lang=zh | grep -q .; }
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 && have_font; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing chromium, chromium-driver and a CJK font (Debian packages, for the browser tests)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver fonts-wqy-microhei >/dev/null
    exit 0
fi
echo "chromium, chromedriver or a CJK font is missing and this user cannot install them." >&2
echo "Install them (e.g. 'sudo apt-get install chromium chromium-driver fonts-wqy-microhei')." >&2
exit 1
