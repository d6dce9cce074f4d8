#!/bin/sh
# Install the Debian Chromium used by the workbench's browser tests (Playwright drives it through
# `executable_path`; no browser is ever downloaded by Playwright). Idempotent and non-interactive.
set -eu

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "chromium already installed: $(chromium --version 2>/dev/null || echo unknown version)"
    exit 0
fi

sh "$(dirname "$0")/apt-install.sh" Chromium chromium chromium-driver
echo "installed: $(chromium --version 2>/dev/null || echo chromium)"
