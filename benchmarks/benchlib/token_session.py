"""What token_bench.py's figures share: the mock session, the run's sizes (PROFILES, by
--quick), and what the figures fill in (table rows, notes under the table, chart groups)."""
from __future__ import annotations

import re

from .chart import Group
from .mock import MockSession
from .report import us_or_ms

# (default, --quick)
PROFILES = {
    "fresh_runs": (20, 5),          # figure 1, per tool
    "offline_runs": (5, 2),         # figure 2, per tool
    "throughput_count": (20_000, 5_000),  # figure 3, requests per sidecar round / MSAL loop
    "rounds": (3, 1),               # figure 3, alternating rounds per tool
    "latency_count": (300, 50),     # figure 4, lock-step requests per tool and cache
    "big_runs": (5, 2),             # figure 5, fresh processes per tool
    "jansson_runs": (11, 5),        # figure 5
    "rss_count": (1_000_000, 100_000),  # figure 8
    "rss_time_limit": (120.0, 8.0),     # figure 8, seconds; stop sending when reached
    "rss_window": (10_000, 2_000),      # figure 8, most requests outstanding at once
}


def figure_key(label: str) -> tuple[int, str]:
    """Rows and chart groups in figure order: `4b. ...` → (4, '4b. ...')."""
    return int(re.match(r"\d+", label).group()), label


class TokenSession(MockSession):
    """The session plus what the figures fill in: table rows, notes, chart groups."""

    def __init__(self, binary: str, quick: bool = False, keep: bool = False, runs: int = 0,
                 rss_count: int = 0, accounts: int = 10_000):
        super().__init__(binary, keep=keep)
        self.p = {k: v[1 if quick else 0] for k, v in PROFILES.items()}
        if rss_count:
            self.p["rss_count"] = rss_count
        if runs:
            self.p["fresh_runs"] = runs
        self.accounts = accounts
        self.big_size = 0
        self.rows: list[tuple[str, str, str, str, str]] = []
        self.notes: list[str] = []
        self.groups: list[Group] = []
        self.fresh_sidecar_median = 0.0   # figure 1, for figure 5
        self.floor_median = 0.0           # figure 1b, the static Swift hello world
        self.msal_script_rss = 0          # figure 1, for figure 8

    def add(self, figure, sidecar, msal_, rat, network) -> None:
        """A table row: figure | auth-sidecar | MSAL for Python | ratio | network requests."""
        self.rows.append((figure, sidecar, msal_, rat, network))

    def plot(self, figure: str, sidecar: float | None, msal_: float | None,
             texts: list[str] | None = None, note: str = "") -> None:
        """A figure for the chart; without `texts`, the values are seconds."""
        if texts is None:
            texts = [None if v is None else us_or_ms(v) for v in (sidecar, msal_)]
        self.groups.append(Group(figure, [sidecar, msal_], texts, note))
