#!/usr/bin/env bash
# Installs what building and testing need, only what is missing: the C libraries'
# development packages (libcurl, jansson), jq for the shell recipes, git and kubectl (the
# adapters' real clients), and the Python test packages (requirements-test.txt) in a virtual
# environment of the repository's own, .venv/ (PEP 668: Debian's python3 refuses a
# system-wide pip install; python3-venv comes from apt when venv lacks ensurepip).
# scripts/test.sh puts .venv/bin first on PATH. Safe to run again.
#
#   scripts/setup.sh               everything
#   scripts/setup.sh --build-only  only what building the binary needs (the demo, scripts/try.sh)
set -euo pipefail
build_only=no
[[ "${1:-}" == --build-only ]] && build_only=yes
cd "$(dirname "$0")/.."

export PATH="/opt/swift/usr/bin:$PATH"
command -v swift >/dev/null || { echo "setup: Swift 6 is needed (swift not on PATH)" >&2; exit 1; }

# install_missing: the Debian packages in ${missing[@]}, with apt-get.
install_missing() {
    ((${#missing[@]})) || return 0
    echo "setup: installing ${missing[*]}" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
}

missing=()
for pkg in libcurl4-openssl-dev libjansson-dev pkg-config; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
command -v jq >/dev/null || missing+=(jq)  # the README's snippets and the shell recipes
if [[ $build_only == yes ]]; then
    install_missing
    exit 0
fi
command -v curl >/dev/null || missing+=(curl)  # the README's verbs block (Tests/e2e_auth/test_readme.py)
command -v git >/dev/null || missing+=(git)
command -v keyctl >/dev/null || missing+=(keyutils)  # the kernel keyring tests (test_keystore.py)
# The Secret Service tests (test_secret_service.py, test_import.py): a headless GNOME Keyring on a
# private D-Bus session, secret-tool, libsecret itself (loaded with dlopen), and Debian's
# msal-extensions with its libsecret bindings (azure-identity's Secret Service item).
command -v dbus-daemon >/dev/null || missing+=(dbus)
command -v gnome-keyring-daemon >/dev/null || missing+=(gnome-keyring)
command -v secret-tool >/dev/null || missing+=(libsecret-tools)
for pkg in libsecret-1-0 python3-msal-extensions python3-gi gir1.2-secret-1; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# The identity broker tests (test_broker.py): a stand-in broker under dbus-run-session (from
# dbus, above), run by Debian's python3 with its D-Bus bindings; libdbus itself (loaded with dlopen).
# MSALRuntime (pymsalruntime, test_broker_msalruntime.py) loads WebKitGTK 4.1.
for pkg in libdbus-1-3 python3-dbus libwebkit2gtk-4.1-0; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
command -v kubectl >/dev/null || missing+=(kubernetes-client)  # Debian's kubectl
command -v skopeo >/dev/null || missing+=(skopeo)  # the Docker credential helper's real client (test_feeds.py)
# agent forwarding over a real OpenSSH (Tests/e2e_auth/test_forwarding.py)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh >/dev/null || missing+=(openssh-client)
# scripts/package.sh and its suite (Tests/packages): the .deb's Depends, the wheel's glibc tag, man.
command -v dpkg-shlibdeps >/dev/null || missing+=(dpkg-dev)
command -v objdump >/dev/null || missing+=(binutils)
command -v man >/dev/null || missing+=(man-db)
# the editor plugins and npm's global install from each package (Tests/packages/test_editors.py,
# test_package_commands.py; clients/run-editor-tests)
command -v nvim >/dev/null || missing+=(neovim)
command -v emacs >/dev/null || missing+=(emacs-nox)
command -v npm >/dev/null || missing+=(npm)
venv_works() { [ -x .venv/bin/python ] && .venv/bin/python -m pip --version >/dev/null 2>&1; }
# Debian splits venv's ensurepip into python3-venv.
venv_works || python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
install_missing

if ! venv_works; then
    echo "setup: creating the test virtual environment .venv/" >&2
    rm -rf .venv
    python3 -m venv .venv
fi
if ! .venv/bin/python -c "import pytest, jsonschema, cryptography, msal, requests, azure.identity, setuptools.command.bdist_wheel, keyring, twine" 2>/dev/null \
   || ! .venv/bin/python -c "import importlib.util as u; assert u.find_spec('pymsalruntime')" 2>/dev/null \
   || [ ! -x .venv/bin/uv ] \
   || [ "$(.venv/bin/python -c 'import msal; print(msal.__version__)' 2>/dev/null)" != "1.39.0" ]; then
    echo "setup: installing Python test packages into .venv/" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-test.txt
fi
# An older azure-identity beside the current one (which it would conflict with), imported by
# PYTHONPATH in the exec child of Tests/e2e_auth/test_feeds.py: 1.6.1 takes MSI_ENDPOINT and
# MSI_SECRET before IDENTITY_* and speaks App Service's api-version 2017-09-01.
legacy=.venv/legacy/azure-identity-1.6.1
if [ ! -f "$legacy/azure/identity/_version.py" ] || [ ! -f "$legacy/six.py" ]; then
    echo "setup: installing azure-identity 1.6.1 into $legacy/" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --target "$legacy" azure-identity==1.6.1 six==1.17.0
fi
