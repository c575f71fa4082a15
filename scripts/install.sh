#!/usr/bin/env bash
# Installs auth-sidecar for the current user (or under --prefix): the binary, the man page
# (generated from the same source as --help), bash, zsh and fish completions, and the protocol
# documents (share/doc/auth-sidecar/protocol, which --help names), and the `az` link in a
# directory of its own (share/auth-sidecar/az-shim/bin; scripts/install-az-shim.sh), the editor
# plugins, shell recipes and README/docs (scripts/install-shared-files.sh; `auth-sidecar where`).
#
#   scripts/install.sh [--prefix DIR]      # default: ~/.local
#   scripts/install.sh --binary PATH ...   # that binary (scripts/build.sh's) instead of building
set -euo pipefail
prefix="$HOME/.local"
binary=""
while (($#)); do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --prefix=*) prefix="${1#*=}"; shift ;;
        --binary) binary="${2:?--binary needs a file}"; shift 2 ;;
        --binary=*) binary="${1#*=}"; shift ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
done
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
case "$binary" in /*|"") ;; *) binary="$PWD/$binary" ;; esac
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

[ -n "$binary" ] || binary="$(scripts/build.sh)"
echo "install: building the man page generator (once; about a minute)..." >&2
swift build -c release --product generate-manual >/dev/null
generator="$(swift build -c release --show-bin-path)/generate-manual"

docs="$prefix/share/doc/auth-sidecar"
install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
    "$prefix/share/zsh/site-functions" "$prefix/share/fish/vendor_completions.d" "$docs"
install -m 755 "$binary" "$prefix/bin/auth-sidecar"
pages="$(mktemp -d)"
trap 'rm -rf "$pages"' EXIT
"$generator" "$binary" --output-directory "$pages" >/dev/null
# The generator leaves an empty line between the discussion's paragraphs (groff warns): .Pp.
# The generator leaves a generic EXIT STATUS: the page's own sections (the configuration keys, the
# real exit statuses) replace it, from scripts/man/sections.mdoc.
sed -e 's/^$/.Pp/' -e '/^\.Sh "EXIT STATUS"$/d' -e '/^\.Ex -std$/d' "$pages/auth-sidecar.1" >"$pages/auth-sidecar.1.fixed"
cat scripts/man/sections.mdoc >>"$pages/auth-sidecar.1.fixed"
install -m 644 "$pages/auth-sidecar.1.fixed" "$prefix/share/man/man1/auth-sidecar.1"
"$binary" --generate-completion-script bash >"$prefix/share/bash-completion/completions/auth-sidecar"
"$binary" --generate-completion-script zsh >"$prefix/share/zsh/site-functions/_auth-sidecar"
"$binary" --generate-completion-script fish >"$prefix/share/fish/vendor_completions.d/auth-sidecar.fish"
rm -rf "$docs/protocol"
cp -R protocol "$docs/protocol"
chmod -R u=rwX,go=rX "$docs/protocol"
scripts/install-az-shim.sh "$prefix"
scripts/install-feed-links.sh "$prefix"
scripts/install-shared-files.sh "$prefix"

echo "installed $prefix/bin/auth-sidecar, man page auth-sidecar(1), bash/zsh/fish completions, $docs," \
    "the editor plugins (auth-sidecar where neovim|emacs), the az link in $prefix/share/auth-sidecar/az-shim/bin (first on PATH only where you want it)" >&2
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "add $prefix/bin to PATH (e.g. in ~/.profile: export PATH=\"$prefix/bin:\$PATH\")" >&2 ;;
esac
