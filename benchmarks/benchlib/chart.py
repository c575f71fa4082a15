"""A chart of side-by-side figures: one group of horizontal bars per figure, one bar per
series (auth-sidecar and its peer), each group scaled to its own largest value (the figures
have different units), the values written beside the bars.

SVG with the standard library only; PNG through matplotlib when the path ends in .png and
matplotlib can be imported (otherwise the SVG is written beside it).

    groups = [Group("1. fresh process → cached token", [0.0044, 0.199], ["4.44 ms", "199 ms"],
                    note="lower is better")]
    write_chart("token_bench.svg", "auth-sidecar vs MSAL for Python", ["auth-sidecar", "MSAL"],
                groups, subtitle=machine_line)
"""
from __future__ import annotations

import importlib.util
import math
import os
import re
from dataclasses import dataclass, field
from typing import Optional, Sequence
from xml.sax.saxutils import escape, quoteattr

COLOURS = ["#2563eb", "#ea580c", "#16a34a", "#9333ea", "#64748b"]
WIDTH = 960
PAD = 16
SERIES_W = 150          # the series names, left of the bars
BAR_MAX = 520           # the longest bar of a group
BAR_H = 18
BAR_GAP = 4
LABEL_H = 22            # a group's label, above its bars
GROUP_GAP = 12
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass
class Group:
    """One figure: a value per series (None: not measured), the text shown beside each bar
    (default: the value, formatted) and a note after the label (e.g. "lower is better")."""
    label: str
    values: Sequence[Optional[float]]
    texts: Optional[Sequence[Optional[str]]] = None
    note: str = ""
    scale: float = field(init=False, default=0.0)

    def __post_init__(self):
        self.values = [None if v is None or (isinstance(v, float) and math.isnan(v)) else v
                       for v in self.values]
        self.scale = max([v for v in self.values if v is not None and v > 0], default=0.0)

    def text(self, i: int) -> str:
        t = self.texts[i] if self.texts is not None and i < len(self.texts) else None
        if t is not None:
            return t
        v = self.values[i] if i < len(self.values) else None
        return "not measured" if v is None else format_value(v)

    def width(self, i: int, longest: float) -> Optional[float]:
        """The bar's length for series i (0 for zero or less; None: no bar)."""
        v = self.values[i] if i < len(self.values) else None
        if v is None:
            return None
        return longest * v / self.scale if self.scale and v > 0 else 0.0


def format_value(v: float) -> str:
    a = abs(v)
    return f"{v:,.0f}" if a >= 100 or v == int(v) else f"{v:.1f}" if a >= 10 else f"{v:.2f}"


def _text(s: str) -> str:
    return escape(_NOT_XML.sub("", s))


def _attr(s: str) -> str:
    return quoteattr(_NOT_XML.sub("", s))


def render_svg(title: str, series: Sequence[str], groups: Sequence[Group], subtitle: str = "",
               footnotes: Sequence[str] = ()) -> str:
    """The chart as an SVG document (a string)."""
    out: list[str] = []
    right = [WIDTH - PAD]          # the right edge of the widest text, estimated
    y = PAD + 18
    out.append(f'<text x="{PAD}" y="{y}" font-size="18" font-weight="bold" class="title">'
               f'{_text(title)}</text>')
    right.append(PAD + 11.5 * len(title))
    if subtitle:
        y += 20
        out.append(f'<text x="{PAD}" y="{y}" font-size="12" fill="#475569" class="subtitle">'
                   f'{_text(subtitle)}</text>')
        right.append(PAD + 7.2 * len(subtitle))
    y += 22                                                  # the legend
    x = PAD
    for i, name in enumerate(series):
        out.append(f'<rect x="{x}" y="{y - 11}" width="12" height="12" '
                   f'fill="{COLOURS[i % len(COLOURS)]}" class="legend"/>')
        out.append(f'<text x="{x + 18}" y="{y}" font-size="13" class="legend">{_text(name)}</text>')
        x += 18 + 8 * len(name) + 24
    y += 10
    for g in groups:
        y += LABEL_H
        label = g.label + (f" ({g.note})" if g.note else "")
        out.append(f'<text x="{PAD}" y="{y - 6}" font-size="13" font-weight="bold" '
                   f'class="group">{_text(label)}</text>')
        right.append(PAD + 8.6 * len(label))
        for i, name in enumerate(series):
            colour = COLOURS[i % len(COLOURS)]
            mid = y + BAR_H / 2 + 4
            out.append(f'<text x="{PAD + SERIES_W - 8}" y="{mid:.1f}" font-size="12" '
                       f'text-anchor="end" fill="#334155" class="series">{_text(name)}</text>')
            w = g.width(i, BAR_MAX)
            x0 = PAD + SERIES_W
            if w is not None:
                out.append(f'<rect x="{x0}" y="{y}" width="{w:.1f}" height="{BAR_H}" '
                           f'fill="{colour}" class="bar" data-series={_attr(name)}>'
                           f'<title>{_text(name + ": " + g.text(i))}</title></rect>')
            tx = x0 + (w or 0) + 6
            right.append(tx + 7.2 * len(g.text(i)))
            grey = "" if w is not None else ' fill="#64748b"'
            out.append(f'<text x="{tx:.1f}" y="{mid:.1f}" font-size="12" class="value"{grey}>'
                       f'{_text(g.text(i))}</text>')
            y += BAR_H + BAR_GAP
        y += GROUP_GAP
    for note in footnotes:
        right.append(PAD + 6.6 * len(note))
        y += 16
        out.append(f'<text x="{PAD}" y="{y}" font-size="11" fill="#475569" class="footnote">'
                   f'{_text(note)}</text>')
    height = y + PAD
    width = math.ceil(max(right) + PAD)
    head = (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0f}" '
            f'viewBox="0 0 {width} {height:.0f}" role="img" aria-label={_attr(title)} {FONT}>\n'
            f'<title>{_text(title)}</title>\n'
            f'<rect width="100%" height="100%" fill="white"/>\n')
    return head + "\n".join(out) + "\n</svg>\n"


def matplotlib_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def render_png(path: str, title: str, series: Sequence[str], groups: Sequence[Group],
               subtitle: str = "", footnotes: Sequence[str] = ()) -> None:
    """The same chart through matplotlib (which must be importable)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = len(groups) * (len(series) + 1)
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.28 * rows + 0.2 * len(footnotes)))
    pos = 0.0
    ticks, names = [], []
    for g in groups:
        ax.text(0, pos - 0.1, g.label + (f" ({g.note})" if g.note else ""), fontsize=9,
                fontweight="bold", va="bottom")
        pos += 0.9
        for i, name in enumerate(series):
            w = g.width(i, 1.0)
            if w is not None:
                ax.barh(pos, w, height=0.8, color=COLOURS[i % len(COLOURS)])
            ax.text((w or 0) + 0.01, pos, g.text(i), va="center", fontsize=8)
            ticks.append(pos)
            names.append(name)
            pos += 1
        pos += 0.4
    ax.set_yticks(ticks, names, fontsize=8)
    ax.set_ylim(pos, -0.6)
    ax.set_xlim(0, 1.45)
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    fig.suptitle(title + ("\n" + subtitle if subtitle else ""), fontsize=10, x=0.01, ha="left")
    if footnotes:
        fig.text(0.01, 0.005, "\n".join(footnotes), fontsize=7, va="bottom")
    fig.tight_layout(rect=(0, 0.02 * len(footnotes), 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_chart(path: str, title: str, series: Sequence[str], groups: Sequence[Group],
                subtitle: str = "", footnotes: Sequence[str] = ()) -> str:
    """Write the chart to `path` (PNG when it ends in .png and matplotlib is importable, else
    SVG, with .svg in place of .png) and return the path written."""
    if path.lower().endswith(".png"):
        if matplotlib_available():
            render_png(path, title, series, groups, subtitle, footnotes)
            return path
        path = path[:-4] + ".svg"
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(render_svg(title, series, groups, subtitle, footnotes))
    os.replace(tmp, path)
    return path
