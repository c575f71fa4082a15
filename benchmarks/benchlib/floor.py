"""The floor of a fresh process: a static Swift hello world, built as `scripts/build.sh` builds
the sidecar (optimized, the Swift runtime linked statically, stripped, position-independent), in
the benchmark's temp dir. It reads one line and answers one line, so it is timed exactly as a
fresh sidecar is (spawn with pipes, the line written right after, its answer read): what any
Swift program costs to start on this machine, measured in the same run as the sidecar."""
from __future__ import annotations

import os
import shutil
import subprocess
import time

from .harness import LineReader

HELLO_SWIFT = 'if readLine() != nil { print("{}") }\n'


def swiftc() -> str | None:
    return shutil.which("swiftc") or next(
        (p for p in ["/opt/swift/usr/bin/swiftc"] if os.access(p, os.X_OK)), None)


def build_hello(tmp: str) -> str:
    """The hello world's path; raises RuntimeError (the reason) when it cannot be built."""
    compiler = swiftc()
    if not compiler:
        raise RuntimeError("no swiftc on PATH or in /opt/swift/usr/bin")
    src = os.path.join(tmp, "hello.swift")
    exe = os.path.join(tmp, "hello-static")
    with open(src, "w") as f:
        f.write(HELLO_SWIFT)
    # scripts/build.sh: -c release (-O, whole module), --static-swift-stdlib, libstdc++ taken
    # from a directory holding only its archive (so linked statically), -Xlinker -s
    static_libs = os.path.join(tmp, "static-libs")
    os.makedirs(static_libs, exist_ok=True)
    clang = os.path.join(os.path.dirname(compiler), "clang")
    found = subprocess.run([clang if os.access(clang, os.X_OK) else "clang",
                            "-print-file-name=libstdc++.a"], capture_output=True, text=True).stdout.strip()
    if not os.path.isfile(found):
        raise RuntimeError("libstdc++.a not found (apt-get install libstdc++-12-dev)")
    os.symlink(found, os.path.join(static_libs, "libstdc++.a"))
    # and its start-up flags: metadata from direct accessors, functions in sections of their
    # own, lld with packed relative relocations, no exported dynamic symbols (the same gains any
    # Swift program could have). Not the sidecar's symbol ordering file (scripts/startup-order.txt
    # lists the sidecar's start-up path; a hello world's own list took it from 131 to 120 page
    # faults, about 0.02 ms, on 2026-11-26).
    r = subprocess.run([compiler, "-O", "-wmo", "-static-stdlib", "-L", static_libs, "-Xlinker", "-s",
                        "-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors",
                        "-Xfrontend", "-disable-llvm-merge-functions-pass",
                        "-Xfrontend", "-disable-type-layout",
                        "-Xfrontend", "-internalize-at-link", "-Xfrontend", "-conditional-runtime-records",
                        "-Xfrontend", "-function-sections",
                        "-use-ld=lld", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z",
                        "-Xlinker", "pack-relative-relocs", "-o", exe, src],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("swiftc failed: " + r.stderr.strip()[:200])
    return exe


def hello_fresh(exe: str, env: dict | None = None, stderr=subprocess.DEVNULL) -> float:
    """Seconds from spawning the hello world (a line written right after) to reading its line,
    timed as `MockSession.sidecar_fresh` times a sidecar: the same environment and stderr
    (`env`, `stderr`: the session's), the same reader (`LineReader`), the clock stopped as the
    line is read."""
    t0 = time.perf_counter()
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=stderr, env=env, bufsize=0)
    try:
        p.stdin.write(b"{}\n")
        line = LineReader(p.stdout.fileno()).line(time.monotonic() + 60)
        t1 = time.perf_counter()
    finally:
        p.stdin.close()
        p.wait(30)
        p.stdout.close()
    if not line.startswith(b"{}"):
        raise RuntimeError(f"the hello world answered {line!r}")
    return t1 - t0
