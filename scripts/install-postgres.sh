#!/bin/sh
# Install the Debian PostgreSQL server binaries the shared-store tests start on loopback (each test session
# runs its own throwaway server: engine/store/postgres/local_server.py). Idempotent and non-interactive.
set -eu

if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
    echo "postgresql server binaries already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "apt-get not found: install the PostgreSQL server (initdb, pg_ctl) by hand" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "root or sudo is needed to install postgresql with apt-get" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# The server only: the Debian package's own cluster is not used (the tests run their own).
$SUDO apt-get install -y -qq --no-install-recommends postgresql
echo "installed: $(ls -d /usr/lib/postgresql/*/bin | tail -1)"
