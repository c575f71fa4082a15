#!/usr/bin/env bash
# Makes PREFIX/share/auth-sidecar/az-shim/bin/az, a link to PREFIX/bin/auth-sidecar: started as
# `az`, it answers `az account get-access-token` and `az account show` (README "For tools that
# call az"). The directory holds nothing else; users put it first on PATH only where they want
# it. A file there that is not our link (a real Azure CLI) is never replaced. install.sh and
# packages run it.
#
#   scripts/install-az-shim.sh PREFIX
set -euo pipefail
prefix="${1:?usage: install-az-shim.sh PREFIX}"
target="$prefix/bin/auth-sidecar"
dir="$prefix/share/auth-sidecar/az-shim/bin"
link="$dir/az"
# Relative, so the link survives staging (scripts/package.sh installs into a staging tree).
relative="../../../../bin/auth-sidecar"
[ -x "$target" ] || { echo "install-az-shim: $target is not installed" >&2; exit 1; }
install -d "$dir"
if [ -e "$link" ] || [ -L "$link" ]; then
    if [ -L "$link" ] && { [ "$(readlink "$link")" = "$relative" ] || [ "$(readlink "$link")" = "$target" ]; }; then
        exit 0
    fi
    echo "install-az-shim: $link exists and is not auth-sidecar's link; left as it is" >&2
    exit 0
fi
ln -s "$relative" "$link"
