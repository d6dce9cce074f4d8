#!/bin/sh
# Install the Debian Chromium used by the workbench's browser tests (Playwright drives it through
# `executable_path`; no browser is ever downloaded by Playwright). Idempotent and non-interactive.
set -eu

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "chromium already installed: $(chromium --version 2>/dev/null || echo unknown version)"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "apt-get not found: install Chromium (packages chromium and chromium-driver) by hand" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "root or sudo is needed to install chromium with apt-get" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver
echo "installed: $(chromium --version 2>/dev/null || echo chromium)"
