#!/bin/sh
# Install the Debian PostgreSQL server binaries the shared-store tests start on loopback (each test session
# runs its own throwaway server: engine/store/postgres/local_server.py). Idempotent and non-interactive.
set -eu

if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
    echo "postgresql server binaries already installed"
    exit 0
fi

# The server only: the Debian package's own cluster is not used (the tests run their own).
sh "$(dirname "$0")/apt-install.sh" PostgreSQL postgresql
echo "installed: $(ls -d /usr/lib/postgresql/*/bin | tail -1)"
