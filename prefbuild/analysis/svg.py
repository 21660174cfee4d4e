"""Plots as inline SVG strings: the report must open offline, so no chart library is fetched.

Two shapes cover what the report shows: horizontal bars (counts or rates per category) and
histograms (lengths). Every plot is an ``<svg class="plot">`` with a ``<title>`` and one
``<rect class="bar">`` per bar carrying ``data-label``/``data-value``, so browsers, screen
readers and tests can all read the numbers back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

WIDTH = 560
BAR_HEIGHT = 22
LABEL_WIDTH = 190
PALETTE = ("#4c78a8", "#e45756", "#54a24b", "#f58518", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d")


def _fmt(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def bar_chart(
    items: Sequence[tuple[str, float]],
    title: str,
    *,
    plot_id: str,
    max_value: float | None = None,
    fmt: Callable[[float], str] = _fmt,
    color: str | None = None,
) -> str:
    """Horizontal bars, one per ``(label, value)``; ``max_value`` fixes the scale (e.g. 1.0 for rates).

    Categories get distinct colours unless one ``color`` is given (for rates of one quantity).
    """
    if not items:
        return _empty(title, plot_id)
    top = max_value if max_value is not None else max(value for _, value in items) or 1.0
    plot_width = WIDTH - LABEL_WIDTH - 60
    height = 34 + len(items) * (BAR_HEIGHT + 6)
    parts = [_open(title, plot_id, height)]
    for position, (label, value) in enumerate(items):
        y = 30 + position * (BAR_HEIGHT + 6)
        width = max(1.0, plot_width * (value / top)) if top else 1.0
        fill = color or PALETTE[position % len(PALETTE)]
        parts.append(
            f'<text x="{LABEL_WIDTH - 6}" y="{y + BAR_HEIGHT * 0.7:.1f}" text-anchor="end" class="label">'
            f"{escape(label)}</text>"
            f'<rect class="bar" x="{LABEL_WIDTH}" y="{y}" width="{width:.1f}" height="{BAR_HEIGHT}" fill="{fill}" '
            f'data-label="{escape(label, quote=True)}" data-value="{value}"><title>{escape(label)}: {fmt(value)}'
            f"</title></rect>"
            f'<text x="{LABEL_WIDTH + width + 4:.1f}" y="{y + BAR_HEIGHT * 0.7:.1f}" class="value">{fmt(value)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def histogram(values: Sequence[float], title: str, *, plot_id: str, bins: int = 12, unit: str = "") -> str:
    """Vertical bars counting ``values`` in equal-width bins between their min and max."""
    if not values:
        return _empty(title, plot_id)
    low, high = min(values), max(values)
    bins = max(1, min(bins, len(set(values))))
    span = (high - low) or 1.0
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, int((value - low) / span * bins))] += 1
    height, plot_height, left, bottom = 230, 160, 40, 200
    bar_width = (WIDTH - left - 10) / bins
    top = max(counts) or 1
    parts = [_open(title, plot_id, height)]
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{WIDTH - 10}" y2="{bottom}" stroke="#888"/>')
    for index, count in enumerate(counts):
        start = low + span * index / bins
        end = low + span * (index + 1) / bins
        bar_height = plot_height * count / top
        x = left + index * bar_width
        label = f"{_fmt(math.floor(start))}–{_fmt(math.ceil(end))}{unit}"
        parts.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{bottom - bar_height:.1f}" width="{max(bar_width - 2, 1):.1f}" '
            f'height="{bar_height:.1f}" fill="{PALETTE[0]}" data-label="{escape(label, quote=True)}" '
            f'data-value="{count}"><title>{escape(label)}: {count}</title></rect>'
        )
    parts.append(f'<text x="{left}" y="{bottom + 16}" class="label">{_fmt(low)}{escape(unit)}</text>')
    parts.append(
        f'<text x="{WIDTH - 10}" y="{bottom + 16}" text-anchor="end" class="label">{_fmt(high)}{escape(unit)}</text>'
    )
    parts.append(f'<text x="{left - 4}" y="{bottom - plot_height + 4}" text-anchor="end" class="label">{top}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _open(title: str, plot_id: str, height: int) -> str:
    return (
        f'<svg class="plot" id="{escape(plot_id, quote=True)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" role="img">'
        f"<title>{escape(title)}</title>"
        f'<text x="4" y="16" class="plot-title">{escape(title)}</text>'
    )


def _empty(title: str, plot_id: str) -> str:
    return _open(title, plot_id, 50) + '<text x="4" y="40" class="label">no data</text></svg>'
