#!/usr/bin/env bash
# Makes the links through which package and container tools reach auth-sidecar (README
# "Package feeds and container registries"), each a link to PREFIX/bin/auth-sidecar answering by
# its name (Sources/SidecarCLI/MultiCallNames.swift):
#   PREFIX/bin/docker-credential-auth-sidecar          docker, podman, skopeo find it on PATH
#   PREFIX/share/auth-sidecar/keyring-shim/bin/keyring  pip/uv --keyring-provider subprocess; in a
#       directory of its own, as the az link is: first on PATH only where wanted (it answers
#       feeds only, not a real keyring's other services)
# A file there that is not our link is never replaced. install.sh and packages run it.
#
#   scripts/install-feed-links.sh PREFIX
set -euo pipefail
prefix="${1:?usage: install-feed-links.sh PREFIX}"
[ -x "$prefix/bin/auth-sidecar" ] || { echo "install-feed-links: $prefix/bin/auth-sidecar is not installed" >&2; exit 1; }
# link DIR NAME RELATIVE: DIR/NAME -> RELATIVE (relative, so it survives staging)
link() {
    install -d "$1"
    if [ -e "$1/$2" ] || [ -L "$1/$2" ]; then
        [ -L "$1/$2" ] && [ "$(readlink "$1/$2")" = "$3" ] && return 0
        echo "install-feed-links: $1/$2 exists and is not auth-sidecar's link; left as it is" >&2
        return 0
    fi
    ln -s "$3" "$1/$2"
}
link "$prefix/bin" docker-credential-auth-sidecar auth-sidecar
link "$prefix/share/auth-sidecar/keyring-shim/bin" keyring ../../../../bin/auth-sidecar
