"""Code shared by the benchmark scripts in benchmarks/ (see benchmarks/README.md).

harness   spawning, reaping and reading processes; percentiles; the machine line
report    formatting figures and Markdown tables
chart     the SVG chart of the side-by-side figures (PNG with matplotlib, when importable)
mock      the bundled mock identity platform, the sign-in, a sidecar and MSAL for Python
cachefile the cache file: synthetic accounts, expiring the access token
engine    bench.py's figures (cold start, pipelined throughput, lock-step round trips)
token_*   token_bench.py's figures, one module per group
"""
