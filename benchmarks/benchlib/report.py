"""Figures as text: durations, ratios, sizes, the mock's request counts, Markdown tables."""
from __future__ import annotations


def ms(seconds: float) -> str:
    v = seconds * 1e3
    return f"{v:,.0f} ms" if v >= 100 else f"{v:.1f} ms" if v >= 10 else f"{v:.2f} ms"


def us_or_ms(seconds: float) -> str:
    return ms(seconds) if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def ratio(x: float | None, y: float | None) -> str:
    if not x or not y:
        return "—"
    r = x / y
    return f"{r:,.0f}x" if r >= 100 else f"{r:.1f}x" if r >= 10 else f"{r:.2f}x"


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f} MiB"


def counts_delta(before: dict, after: dict) -> dict:
    """The mock's request counts that changed from `before` to `after`, by how much."""
    return {k: after.get(k, 0) - before.get(k, 0) for k in after
            if after.get(k, 0) != before.get(k, 0)}


def add_counts(total: dict, delta: dict) -> None:
    for k, v in delta.items():
        total[k] = total.get(k, 0) + v


def net(delta: dict | None, per: int = 1) -> str:
    """`3 (openid-configuration 1, token:refresh_token 2)`: total requests (keys without ':'),
    broken down by endpoint, using the finer `token:grant` keys where present."""
    if delta is None:
        return "— (service down)"
    total = sum(v for k, v in delta.items() if ":" not in k)
    parts = []
    for k in sorted(delta):
        if ":" in k:
            parts.append((k, delta[k]))
        elif not any(s.startswith(k + ":") for s in delta):
            parts.append((k, delta[k]))

    def num(v):
        v = v / per
        return f"{v:g}" if v == int(v) else f"{v:.2f}"
    detail = ", ".join(f"{k} {num(v)}" for k, v in parts)
    return f"{num(total)}{'/run' if per > 1 else ''}" + (f" ({detail})" if detail else "")


def markdown_table(header: list[str] | None, rows: list) -> list[str]:
    """The lines of a Markdown table: the header and its rule (when `header` is given), then
    one line per row (an empty cell is `| |`). A `|` inside a cell is escaped."""
    def line(cells) -> str:
        return "|" + "|".join(f" {c} ".replace("|", "\\|") if c != "" else " " for c in cells) + "|"
    lines = [line(header), "|" + "---|" * len(header)] if header else []
    return lines + [line(row) for row in rows]
