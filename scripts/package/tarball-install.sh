#!/bin/sh
# Installs this unpacked auth-sidecar under a prefix (default ~/.local): bin/auth-sidecar, the
# man page, bash/zsh/fish completions, the protocol documents (share/doc/auth-sidecar), the
# agent's systemd user unit (share/systemd/user; systemctl --user finds it under ~/.local/share,
# /usr/local/share and /usr/share), the az shim (share/auth-sidecar/az-shim/bin/az) and the
# mock identity platform with bin/auth-sidecar-try (share/auth-sidecar/mock), the editor plugins,
# shell recipes and docs (share/auth-sidecar/{neovim,emacs,shell}, share/doc/auth-sidecar: `auth-sidecar where`).
#
#   ./install.sh [--prefix DIR]
set -eu
prefix="$HOME/.local"
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --prefix=*) prefix="${1#*=}"; shift ;;
        -h|--help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;   # the whole header
        *) echo "install: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
done
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$prefix"
cp -R "$here/bin" "$here/share" "$prefix/"
unit="$prefix/share/systemd/user/auth-sidecar-agent.service"
sed "s|^ExecStart=[^ ]*|ExecStart=$prefix/bin/auth-sidecar|" "$unit" >"$unit.tmp" && mv "$unit.tmp" "$unit"
echo "installed $prefix/bin/auth-sidecar, man page auth-sidecar(1), bash/zsh/fish completions, the agent's systemd user unit," \
    "the az shim in $prefix/share/auth-sidecar/az-shim/bin, the editor plugins (auth-sidecar where neovim|emacs); try it against the mock: eval \"\$(auth-sidecar-try)\"" >&2
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "add $prefix/bin to PATH (e.g. in ~/.profile: export PATH=\"$prefix/bin:\$PATH\")" >&2 ;;
esac
