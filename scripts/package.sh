#!/usr/bin/env bash
# Writes the packages of the lean release binary (scripts/build.sh) to dist/:
#   auth_sidecar-V-py3-none-manylinux_X_Y_x86_64.whl  the binary + the Python client (pip install)
#   auth-sidecar_V_amd64.deb                          binary, man page, completions, protocol
#                                                     documents, the agent's systemd user unit
#   auth-sidecar-V.tgz                                npm package: the Node client + the binary
#   auth-sidecar-V-linux-x86_64.tar.gz                the install.sh layout + its own install.sh
#   SHA256SUMS
# V is LibraryInfo.version (Sources/AuthCore/LibraryInfo.swift), the one place it is written.
# The man page and completions come from scripts/install.sh, as for an install from source.
# Every package ships, beside its binary (PREFIX/bin/auth-sidecar), the editor plugins and shell
# recipes in PREFIX/share/auth-sidecar/{neovim,emacs,shell} and README.md, docs/ and protocol/ in
# PREFIX/share/doc/auth-sidecar (scripts/install-shared-files.sh), which `auth-sidecar where NAME`
# prints: the .deb with PREFIX /usr, the tarball its install prefix, the wheel its venv (the
# wheel's .data/data), npm node_modules/auth-sidecar.
# Each package also carries the mock identity platform and `auth-sidecar-try` (scripts/try.py),
# which starts it for trying auth-sidecar without a clone.
#
#   scripts/package.sh [--binary PATH] [--output DIR]   # default: build it; dist/
set -euo pipefail
binary=""
output=""
while (($#)); do
    case "$1" in
        --binary) binary="${2:?--binary needs a file}"; shift 2 ;;
        --output) output="${2:?--output needs a directory}"; shift 2 ;;
        -h|--help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;   # the whole header
        *) echo "package: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
done
case "$binary" in /*|"") ;; *) binary="$PWD/$binary" ;; esac
case "$output" in /*|"") ;; *) output="$PWD/$output" ;; esac
cd "$(dirname "$0")/.."
repo="$PWD"
output="${output:-$repo/dist}"
[ -n "$binary" ] || binary="$(scripts/build.sh)"
fail() { echo "package: $*" >&2; exit 1; }

version="$(sed -n 's/^ *public static let version = "\([^"]*\)".*/\1/p' Sources/AuthCore/LibraryInfo.swift)"
[ -n "$version" ] || fail "no version in Sources/AuthCore/LibraryInfo.swift"
"$binary" --version | grep -q "^auth-sidecar $version (.*release-lean build)$" ||
    fail "$binary is not the release-lean build of $version ($("$binary" --version)); run scripts/build.sh"
# The newest glibc symbol version the binary asks for: the manylinux tag it runs on.
glibc="$(objdump -T "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)"
[ -n "$glibc" ] || fail "no glibc symbol versions in $binary"
platform="manylinux_${glibc//./_}_x86_64"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stage="$work/stage"    # the prefix layout: bin/, share/man, share/*completions, share/doc
bash scripts/install.sh --prefix "$stage" --binary "$binary" 2>"$work/install.log" ||
    { cat "$work/install.log" >&2; fail "scripts/install.sh failed"; }
# The mock identity platform for trying it (`auth-sidecar-try`, scripts/try.py): in every
# package, under share/auth-sidecar/mock (the npm package's mock/, the wheel's auth_sidecar/mock).
mock="$work/mock"
mkdir -p "$mock"
install -m 755 scripts/try.py "$mock/try.py"
install -m 644 mock/scripted_browser.py "$mock/"
cp -R mock/mock_idp "$mock/mock_idp"
find "$mock" -name __pycache__ -prune -exec rm -rf {} +
chmod -R u=rwX,go=rX "$mock"
cp -R "$mock" "$stage/share/auth-sidecar/mock"
ln -s ../share/auth-sidecar/mock/try.py "$stage/bin/auth-sidecar-try"
unit="contrib/systemd/auth-sidecar-agent.service"
unit_for() { sed "s|^ExecStart=[^ ]*|ExecStart=$1|" "$unit"; }   # the unit with the binary's path
mkdir -p "$output"
rm -f "$output"/auth_sidecar-*.whl "$output"/auth-sidecar_*.deb "$output"/auth-sidecar-*.tgz \
    "$output"/auth-sidecar-*.tar.gz "$output/SHA256SUMS"

# The wheel.
python3 scripts/package/wheel.py "$binary" "$version" "$platform" "$output" "$mock" "$stage" >/dev/null

# The .deb: Debian's paths, Depends from dpkg-shlibdeps plus libcurl (opened with dlopen, so
# no tool sees it: libcurl.so.4, else libcurl-gnutls.so.4, as Sources/HTTP/CurlLibrary.swift).
deb="$work/deb"
doc="$deb/usr/share/doc/auth-sidecar"
install -d "$deb/DEBIAN" "$deb/usr/bin" "$deb/usr/share/man/man1" "$deb/usr/share/bash-completion/completions" \
    "$deb/usr/share/zsh/vendor-completions" "$deb/usr/share/fish/vendor_completions.d" "$deb/usr/lib/systemd/user" "$doc"
install -m 755 "$stage/bin/auth-sidecar" "$deb/usr/bin/auth-sidecar"
cp -P "$stage/bin/auth-sidecar-try" "$deb/usr/bin/"
cp -P "$stage/bin/docker-credential-auth-sidecar" "$deb/usr/bin/"  # scripts/install-feed-links.sh
gzip -9n <"$stage/share/man/man1/auth-sidecar.1" >"$deb/usr/share/man/man1/auth-sidecar.1.gz"
# bash-completion sources the file: no #! line (lintian's bash-completion-with-hashbang).
sed '1{/^#!/d}' "$stage/share/bash-completion/completions/auth-sidecar" >"$deb/usr/share/bash-completion/completions/auth-sidecar"
install -m 644 "$stage/share/zsh/site-functions/_auth-sidecar" "$deb/usr/share/zsh/vendor-completions/"
install -m 644 "$stage/share/fish/vendor_completions.d/auth-sidecar.fish" "$deb/usr/share/fish/vendor_completions.d/"
unit_for /usr/bin/auth-sidecar >"$deb/usr/lib/systemd/user/auth-sidecar-agent.service"
# The az link in a directory of its own (README "For tools that call az"), never /usr/bin/az.
cp -P -R "$stage/share/auth-sidecar" "$deb/usr/share/auth-sidecar"
cp -R "$stage/share/doc/auth-sidecar/protocol" "$doc/protocol"
# README.md and docs/ uncompressed, for `auth-sidecar where docs` and their relative links.
cp "$stage/share/doc/auth-sidecar/README.md" "$doc/"
[ ! -d "$stage/share/doc/auth-sidecar/docs" ] || cp -R "$stage/share/doc/auth-sidecar/docs" "$doc/docs"
# Neovim: `:packadd auth-sidecar` (/usr/share/nvim/site is in its packpath), a link to
# /usr/share/auth-sidecar/neovim. Emacs: Debian's site-start.d puts /usr/share/auth-sidecar/emacs
# in load-path, so (require 'auth-sidecar) needs no setup (Debian's Emacs has no
# /usr/share/emacs/site-lisp in load-path).
cp -P -R "$stage/share/nvim" "$deb/usr/share/nvim"
install -d "$deb/etc/emacs/site-start.d"
cat >"$deb/etc/emacs/site-start.d/50auth-sidecar.el" <<'ELISP'
;; auth-sidecar: (require 'auth-sidecar), then M-x auth-sidecar-sign-in (README.md there)
(let ((dir "/usr/share/auth-sidecar/emacs"))
  (when (file-directory-p dir) (add-to-list 'load-path dir)))
ELISP
chmod 644 "$deb/etc/emacs/site-start.d/50auth-sidecar.el"
echo /etc/emacs/site-start.d/50auth-sidecar.el >"$deb/DEBIAN/conffiles"
cat >"$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: auth-sidecar
Source: https://github.com/auth-sidecar/auth-sidecar

Files: *
Copyright: 2026 the auth-sidecar authors
License: MIT

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of this
 software and associated documentation files (the "Software"), to deal in the Software
 without restriction, including without limitation the rights to use, copy, modify, merge,
 publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
 to whom the Software is furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies or
 substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
 PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
 FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 DEALINGS IN THE SOFTWARE.
COPYRIGHT
printf 'auth-sidecar (%s) unstable; urgency=medium\n\n  * Release %s.\n\n -- auth-sidecar maintainers <auth-sidecar@users.noreply.github.com>  %s\n' \
    "$version" "$version" "$(date -R -d @0)" | gzip -9n >"$doc/changelog.gz"   # a native package
chmod -R u=rwX,go=rX "$deb/usr"
mkdir -p "$work/shlibs/debian"
touch "$work/shlibs/debian/control"
depends="$(cd "$work/shlibs" && dpkg-shlibdeps -O -e "$deb/usr/bin/auth-sidecar" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')"
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"
cat >"$deb/DEBIAN/control" <<CONTROL
Package: auth-sidecar
Version: $version
Architecture: amd64
Maintainer: auth-sidecar maintainers <auth-sidecar@users.noreply.github.com>
Installed-Size: $(du -sk "$deb/usr" | cut -f1)
Depends: $depends, libcurl4 | libcurl3-gnutls
Recommends: python3, python3-cryptography, libdbus-1-3
Section: utils
Priority: optional
Homepage: https://github.com/auth-sidecar/auth-sidecar
Description: Microsoft identity platform sign-in and tokens for any language
 auth-sidecar is one small process that speaks JSON-RPC 2.0 over stdin/stdout
 (or, as an agent, on a Unix socket): sign-in with the system browser or a
 device code, an MSAL-compatible token cache, silent renewal, sign-out and
 Microsoft Graph calls, plus shell verbs and credential helpers for git,
 kubectl and Azure SDKs.
CONTROL
(cd "$deb" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
dpkg-deb --root-owner-group -Zxz --build "$deb" "$output/auth-sidecar_${version}_amd64.deb" >/dev/null

# The npm package: the Node client, its own binary in bin/ (the client's first choice) and a
# `bin` entry; `npm pack` when npm is there, else the same layout by hand.
npm_root="$work/npm"
mkdir -p "$npm_root/bin"
cp clients/node/index.js clients/node/index.d.ts clients/node/README.md "$npm_root/"
cp -R "$mock" "$npm_root/mock"
# The plugins and docs as in every package (share/), and the keyring and az shims as scripts
# (an npm package holds no links); docker-credential-auth-sidecar is a `bin` entry (a link npm makes).
mkdir -p "$npm_root/share/auth-sidecar/keyring-shim/bin" "$npm_root/share/auth-sidecar/az-shim/bin" "$npm_root/share/doc"
cp -R "$stage/share/auth-sidecar/neovim" "$stage/share/auth-sidecar/emacs" "$stage/share/auth-sidecar/shell" \
    "$npm_root/share/auth-sidecar/"
cp -R "$stage/share/doc/auth-sidecar" "$npm_root/share/doc/auth-sidecar"
install -m 755 scripts/package/keyring "$npm_root/share/auth-sidecar/keyring-shim/bin/keyring"
install -m 755 scripts/package/az "$npm_root/share/auth-sidecar/az-shim/bin/az"
install -m 755 "$binary" "$npm_root/bin/auth-sidecar"
python3 - "$version" clients/node/package.json "$npm_root/package.json" <<'PY'
import json, sys
version, source, target = sys.argv[1:]
package = json.load(open(source))
package["version"] = version
package["description"] = ("auth-sidecar and its Node client: MSAL-style sign-in to the Microsoft identity platform "
                          "over JSON-RPC on stdio (carries the Linux x86-64 binary)")
package["bin"] = {"auth-sidecar": "bin/auth-sidecar", "auth-sidecar-try": "mock/try.py",
                  "docker-credential-auth-sidecar": "bin/auth-sidecar"}  # multi-call: by its name (#50)
package["files"] = sorted(set(package.get("files", [])) | {"bin/", "mock/", "share/"})
package["os"], package["cpu"] = ["linux"], ["x64"]
package.pop("scripts", None)  # run-tests is not shipped
json.dump(package, open(target, "w"), indent=2)
open(target, "a").write("\n")
PY
if command -v npm >/dev/null; then
    (cd "$npm_root" && npm pack --silent --pack-destination "$output" --no-update-notifier >/dev/null)
else
    mkdir -p "$work/npm-tar" && cp -R "$npm_root" "$work/npm-tar/package"
    tar -C "$work/npm-tar" --owner=0 --group=0 --numeric-owner --sort=name -czf "$output/auth-sidecar-$version.tgz" package
fi
[ -f "$output/auth-sidecar-$version.tgz" ] || fail "no npm package written"

# The tarball: the install.sh layout, the unit in share/systemd/user, its own install.sh.
top="auth-sidecar-$version-linux-x86_64"
mkdir -p "$work/tar"
cp -R "$stage" "$work/tar/$top"
mkdir -p "$work/tar/$top/share/systemd/user"
unit_for '%h/.local/bin/auth-sidecar' >"$work/tar/$top/share/systemd/user/auth-sidecar-agent.service"
install -m 755 scripts/package/tarball-install.sh "$work/tar/$top/install.sh"
tar -C "$work/tar" --owner=0 --group=0 --numeric-owner --sort=name -czf "$output/$top.tar.gz" "$top"

(cd "$output" && sha256sum auth_sidecar-"$version"-*.whl "auth-sidecar_${version}_amd64.deb" \
    "auth-sidecar-$version.tgz" "$top.tar.gz" >SHA256SUMS)
echo "package: wrote $(cd "$output" && echo auth_sidecar-*.whl *.deb *.tgz *.tar.gz SHA256SUMS) to $output" >&2
