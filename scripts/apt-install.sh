#!/bin/sh
# Install Debian packages non-interactively, as root or through sudo: what the install-*.sh scripts share.
#   sh scripts/apt-install.sh WHAT PACKAGE...   (WHAT names the thing in error messages)
set -eu
what=$1
shift

if ! command -v apt-get >/dev/null 2>&1; then
    echo "apt-get not found: install $what (packages: $*) by hand" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "root or sudo is needed to install $what with apt-get" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "$@"
