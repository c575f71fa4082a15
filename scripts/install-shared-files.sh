#!/usr/bin/env bash
# Installs what every package ships beside the binary, where `auth-sidecar where NAME` finds it
# (Sources/SidecarCLI/Verbs/WhereCommand.swift):
#   PREFIX/share/auth-sidecar/neovim   the Neovim plugin (clients/neovim: lua/, plugin/, README.md)
#   PREFIX/share/auth-sidecar/emacs    the Emacs package (clients/emacs/auth-sidecar.el, README.md)
#   PREFIX/share/auth-sidecar/shell    the shell recipes (clients/shell/README.md)
#   PREFIX/share/doc/auth-sidecar      README.md and docs/*.md (protocol/ is install.sh's)
# and, where the editors look without configuration:
#   PREFIX/share/nvim/site/pack/auth-sidecar/opt/auth-sidecar -> the plugin (`:packadd auth-sidecar`
#       where PREFIX/share is in Neovim's packpath: ~/.local, /usr/local, /usr)
#   PREFIX/share/emacs/site-lisp/auth-sidecar.el -> the package ((require 'auth-sidecar) where that
#       directory is in load-path: /usr/local)
# The tests stay in the clone. Run by install.sh; scripts/package.sh takes the files from there.
#
#   scripts/install-shared-files.sh PREFIX
set -euo pipefail
prefix="${1:?usage: install-shared-files.sh PREFIX}"
cd "$(dirname "$0")/.."
share="$prefix/share/auth-sidecar"
docs="$prefix/share/doc/auth-sidecar"
for client in neovim emacs shell; do rm -rf "${share:?}/$client"; done
install -d "$share/neovim" "$share/emacs" "$share/shell" "$docs"
cp -R clients/neovim/lua clients/neovim/plugin clients/neovim/README.md "$share/neovim/"
cp clients/emacs/auth-sidecar.el clients/emacs/README.md "$share/emacs/"
cp clients/shell/README.md "$share/shell/"
cp README.md "$docs/README.md"
rm -rf "$docs/docs"
if compgen -G "docs/*.md" >/dev/null; then
    install -d "$docs/docs"
    cp docs/*.md "$docs/docs/"
fi
chmod -R u=rwX,go=rX "$share/neovim" "$share/emacs" "$share/shell" "$docs"
# link DIR NAME RELATIVE: DIR/NAME -> RELATIVE, unless something else is there
link() {
    install -d "$1"
    if [ -e "$1/$2" ] || [ -L "$1/$2" ]; then
        [ -L "$1/$2" ] && [ "$(readlink "$1/$2")" = "$3" ] && return 0
        echo "install-shared-files: $1/$2 exists and is not auth-sidecar's link; left as it is" >&2
        return 0
    fi
    ln -s "$3" "$1/$2"
}
link "$prefix/share/nvim/site/pack/auth-sidecar/opt" auth-sidecar ../../../../../auth-sidecar/neovim
link "$prefix/share/emacs/site-lisp" auth-sidecar.el ../../auth-sidecar/emacs/auth-sidecar.el
