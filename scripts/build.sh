#!/usr/bin/env bash
# The one release build: makes .build/release/auth-sidecar and prints its path. Every package
# (scripts/package.sh), install (scripts/install.sh), test suite and benchmark uses this binary.
#
# Lean: the Swift runtime, jansson and libstdc++ linked statically and the symbols stripped, so
# it needs only libc, libm and libgcc_s (libcurl is opened with dlopen on the first HTTP call)
# and runs where no Swift toolchain is installed. Still a position-independent executable
# linked against glibc: a -static-executable starts faster but crashed in glibc's dlopen, and a
# non-PIE one would give up address randomisation in a process that holds tokens
# (ARCHITECTURE.md, "Start-up cost"). `--version` names the commit (.build/build-stamp.h) and
# says `release-lean`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# The build checks the house: a warning, or an import of a module the target does not declare
# in Package.swift, fails the build (STRICT_BUILD_FLAGS, shared with scripts/test.sh).
STRICT_BUILD_FLAGS=(-Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error)
mkdir -p .build

# jansson and libstdc++ statically: a directory holding only their archives, searched before
# the system's (which hold the shared libraries too), so -ljansson and -lstdc++ take the .a.
static_libs="$PWD/.build/static-libs"
mkdir -p "$static_libs"
for archive in libjansson.a libstdc++.a; do
    found="$(clang -print-file-name="$archive")"
    [ -f "$found" ] || { echo "build: $archive not found (apt-get install libjansson-dev libstdc++-12-dev)" >&2; exit 1; }
    ln -sf "$found" "$static_libs/$archive"
done

# The commit, for --version (Sources/CBuildStamp): rewritten only when it changed, so an
# unchanged tree rebuilds nothing.
commit="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- 2>/dev/null; then commit="$commit+dirty"; fi
stamp=.build/build-stamp.h
line="#define AUTH_SIDECAR_COMMIT \"$commit\""
if [ "$(cat "$stamp" 2>/dev/null)" != "$line" ]; then
    # A stamp.c compiled before the header existed does not know it depends on it.
    [ -f "$stamp" ] || touch Sources/CBuildStamp/stamp.c
    echo "$line" >"$stamp"
fi

# Start-up (ARCHITECTURE.md, "Start-up cost"): -disable-concrete-type-metadata-mangled-name-accessors
# has the compiler call metadata accessors instead of demangling type names at run time (each
# first use of a generic type like Dictionary<RequestID, Int> scanned all ~4,700 protocol
# conformance records); lld, because gold cannot pack relative relocations (-z
# pack-relative-relocs: 53,000 of them in a 10 KB DT_RELR bitmap); --no-export-dynamic undoes
# swiftc's -export-dynamic (12,849 dynamic symbols the runtime's backtracer set-up walked at
# every start; 405 left). benchmarks/benchlib/floor.py builds the hello-world floor the same way.
#
# --disable-local-rpath: no RUNPATH $ORIGIN (SwiftPM's default for executables), which made the
# loader look for libm, libgcc_s and libc in 11 places beside the binary at every start, and
# dlopen look for libcurl there too; the lean binary needs nothing beside it.
#
# Page faults (about 40% of a fresh process's time): scripts/startup-order.txt lists the
# functions and .bss symbols a fresh process uses for a ping and a cached token, and lld puts
# them first (--symbol-ordering-file), so they share a few pages instead of faulting in pages
# all over the binary; every function in a section of its own (-function-sections, and
# -ffunction-sections for C) so ours can be ordered too, and unused C code is dropped.
# scripts/startup-order.py regenerates the list; AUTH_SIDECAR_KEEP_SYMBOLS=1 keeps the symbols
# it (and perf) needs, otherwise the same binary. -disable-llvm-merge-functions-pass: LLVM's
# function merging turned value witnesses and other small functions into unnamed thunks
# (`.L__unnamed_*` sections), which no ordering file can name: a fresh process faulted in
# about ten 64 KB windows of .text for them (the binary is 0.9% larger without merging).
# -disable-type-layout: by default the compiler copies and destroys a value of a large struct,
# or an optional of one (Authority?, CacheDocument?, Account?, ...), by fetching the type's
# metadata and calling its value witness; a fresh process then instantiated about 30
# Optional<T> metadata records (each a runtime call, an allocation and the enum's layout
# computed) on its way to a cached token. With it, those copies are inlined field by field:
# 21 fewer generic metadata requests, 86K fewer instructions, and a cached token in a fresh
# process 0.11-0.17 ms sooner (2026-11-26, benchmarks/README.md "figure 1 a fifth time").
# -internalize-at-link and -conditional-runtime-records: every module is linked into this one
# executable, so a public function nothing calls (swift-crypto's PEM writers, most of
# swift-argument-parser's help renderers...) may be dropped like an internal one, and a type's
# metadata and conformance records go with the type when nothing uses it: the binary is 1.5 MB
# smaller, 41 KB less .data.rel.ro for the loader to relocate and copy (10 pages), 12 fewer page
# faults and 24K fewer instructions for a fresh process's cached token.
# (The Swift driver does not rebuild a module when only an -Xfrontend flag changed: a .build
# made before -function-sections keeps its objects until their sources change.)
strip=(-Xlinker -s)
[ "${AUTH_SIDECAR_KEEP_SYMBOLS:-0}" = 1 ] && strip=()
# AUTH_SIDECAR_LINK_MAP=FILE: lld's map of input sections (scripts/startup-order.py reads it).
map=()
[ -n "${AUTH_SIDECAR_LINK_MAP:-}" ] && map=(-Xlinker "-Map=$AUTH_SIDECAR_LINK_MAP")
swift build -c release --product auth-sidecar "${STRICT_BUILD_FLAGS[@]}" \
    --static-swift-stdlib -Xswiftc -DAUTH_SIDECAR_LEAN_BUILD \
    -Xswiftc -L"$static_libs" "${strip[@]}" "${map[@]}" --disable-local-rpath \
    -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
    -Xswiftc -Xfrontend -Xswiftc -disable-llvm-merge-functions-pass -Xswiftc -Xfrontend -Xswiftc -disable-type-layout \
    -Xswiftc -Xfrontend -Xswiftc -internalize-at-link -Xswiftc -Xfrontend -Xswiftc -conditional-runtime-records \
    -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xcc -fdata-sections \
    -Xlinker --symbol-ordering-file="$PWD/scripts/startup-order.txt" -Xlinker --no-warn-symbol-ordering \
    -Xswiftc -use-ld=lld -Xlinker --no-export-dynamic -Xlinker -z -Xlinker pack-relative-relocs >&2
echo "$PWD/.build/release/auth-sidecar"
