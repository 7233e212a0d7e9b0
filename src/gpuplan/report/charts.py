"""Inline SVG charts written in Python: no JavaScript, no fonts or files from the network.

Each function returns one ``<svg>`` element as text, with a title, labelled axes (units in the
label) and a legend where there is more than one series. All text is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

PALETTE = (
    "#3b6ea8",
    "#e07b39",
    "#4c9a5b",
    "#c44e52",
    "#8172b2",
    "#937860",
    "#da8bc3",
    "#8c8c8c",
    "#ccb974",
    "#64b5cd",
    "#2f4b7c",
    "#a05195",
)
WIDTH = 720
FONT = "font-family:system-ui,-apple-system,'Segoe UI','Noto Sans CJK SC','PingFang SC',sans-serif"


@dataclass(frozen=True)
class Series:
    """One named line of points ``(x, y)``."""

    label: str
    points: Sequence[tuple[float, float]]


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering ``[low, high]``: steps of 1, 2 or 5 times a power of ten."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0, 1.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(
        factor * power for factor in (1, 2, 2.5, 5, 10) if factor * power >= raw - 1e-12 * raw
    )
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value < high + step * 0.999:
        ticks.append(round(value, 12))
        value += step
    return ticks


def short_number(value: float) -> str:
    """Axis labels: ``1.5k``, ``2M``, ``3.2B``; small numbers keep up to 3 significant digits."""
    magnitude = abs(value)
    for threshold, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if magnitude >= threshold:
            return f"{value / threshold:.3g}{suffix}"
    return f"{value:.3g}"


def _open(height: int, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" role="img" aria-label="{escape(title)}" class="chart" style="{FONT}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>',
    ]


def _text(
    x: float, y: float, text: str, size: int = 12, anchor: str = "start", **extra: str
) -> str:
    attributes = "".join(f' {key.replace("_", "-")}="{value}"' for key, value in extra.items())
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"'
        f' fill="#222"{attributes}>{escape(text)}</text>'
    )


def _legend(entries: Sequence[tuple[str, str]], x: float, y: float, columns: int = 2) -> list[str]:
    parts = []
    column_width = (WIDTH - x - 20) / columns
    for index, (label, color) in enumerate(entries):
        cx = x + (index % columns) * column_width
        cy = y + (index // columns) * 18
        parts.append(
            f'<rect x="{cx:.1f}" y="{cy - 10:.1f}" width="12" height="12" fill="{color}"/>'
        )
        parts.append(_text(cx + 18, cy, label, 12))
    return parts


def stacked_bar(
    title: str,
    parts: Sequence[tuple[str, float]],
    axis_label: str,
    limit: float | None = None,
    limit_label: str = "",
    value_format: Callable[[float], str] = lambda value: f"{value:.1f}",
) -> str:
    """One horizontal bar split into ``parts`` (memory by part), with a dashed ``limit`` line
    (usable capacity) and a legend giving each part's value."""
    visible = [(label, value) for label, value in parts if value > 0]
    rows = math.ceil(len(visible) / 2)
    height = 150 + rows * 18
    left, right, top, bar_height = 30, WIDTH - 30, 40, 40
    total = sum(value for _, value in visible)
    ticks = nice_ticks(0, max(total, limit or 0) * 1.02)
    scale = (right - left) / (ticks[-1] or 1)
    svg = _open(height, title)
    svg.append(_text(left, 22, title, 14, font_weight="600"))
    x = float(left)
    for index, (_label, value) in enumerate(visible):
        width = value * scale
        color = PALETTE[index % len(PALETTE)]
        svg.append(
            f'<rect x="{x:.1f}" y="{top}" width="{max(width, 0.5):.1f}" height="{bar_height}" '
            f'fill="{color}"/>'
        )
        x += width
    axis_y = top + bar_height + 8
    svg.append(f'<line x1="{left}" y1="{axis_y}" x2="{right}" y2="{axis_y}" stroke="#666"/>')
    for tick in ticks:
        tx = left + tick * scale
        svg.append(
            f'<line x1="{tx:.1f}" y1="{axis_y}" x2="{tx:.1f}" y2="{axis_y + 4}" stroke="#666"/>'
        )
        svg.append(_text(tx, axis_y + 17, short_number(tick), 11, "middle"))
    svg.append(_text((left + right) / 2, axis_y + 34, axis_label, 12, "middle"))
    if limit is not None:
        lx = left + limit * scale
        svg.append(
            f'<line x1="{lx:.1f}" y1="{top - 8}" x2="{lx:.1f}" y2="{top + bar_height + 4}" '
            'stroke="#c00" stroke-width="2" stroke-dasharray="5,3"/>'
        )
        svg.append(_text(lx, top - 11, limit_label, 11, "middle", fill_opacity="1"))
    svg.extend(
        _legend(
            [
                (f"{label}: {value_format(value)}", PALETTE[index % len(PALETTE)])
                for index, (label, value) in enumerate(visible)
            ],
            left,
            axis_y + 58,
        )
    )
    svg.append("</svg>")
    return "\n".join(svg)


def horizontal_bars(
    title: str,
    items: Sequence[tuple[str, float]],
    axis_label: str,
    value_format: Callable[[float], str] = lambda value: f"{value:.3g}",
    highlight: int | None = None,
) -> str:
    """One bar per item, labelled on the left and valued on the right; ``highlight`` colours
    one bar (the chosen plan)."""
    label_width = min(300, 40 + 7 * max((len(label) for label, _ in items), default=10))
    left, right, top, row = label_width, WIDTH - 90, 40, 24
    height = top + row * len(items) + 50
    ticks = nice_ticks(0, max((value for _, value in items), default=1.0) * 1.02)
    scale = (right - left) / (ticks[-1] or 1)
    svg = _open(height, title)
    svg.append(_text(10, 22, title, 14, font_weight="600"))
    for index, (label, value) in enumerate(items):
        y = top + index * row
        color = PALETTE[1] if index == highlight else PALETTE[0]
        svg.append(
            f'<rect x="{left}" y="{y + 4}" width="{max(value * scale, 0.5):.1f}" '
            f'height="{row - 8}" fill="{color}"/>'
        )
        svg.append(_text(left - 6, y + row / 2 + 4, label, 12, "end"))
        svg.append(_text(left + value * scale + 4, y + row / 2 + 4, value_format(value), 11))
    axis_y = top + row * len(items) + 4
    svg.append(f'<line x1="{left}" y1="{axis_y}" x2="{right}" y2="{axis_y}" stroke="#666"/>')
    for tick in ticks:
        tx = left + tick * scale
        svg.append(
            f'<line x1="{tx:.1f}" y1="{axis_y}" x2="{tx:.1f}" y2="{axis_y + 4}" stroke="#666"/>'
        )
        svg.append(_text(tx, axis_y + 17, short_number(tick), 11, "middle"))
    svg.append(_text((left + right) / 2, axis_y + 36, axis_label, 12, "middle"))
    svg.append("</svg>")
    return "\n".join(svg)


class _Plot:
    """A rectangular plotting area with linear x and y axes."""

    def __init__(self, xs: Sequence[float], ys: Sequence[float], height: int) -> None:
        self.left, self.right, self.top, self.bottom = 80, WIDTH - 20, 40, height - 60
        self.x_ticks = nice_ticks(min(xs, default=0.0), max(xs, default=1.0))
        self.y_ticks = nice_ticks(min(0.0, *ys) if ys else 0.0, max(ys, default=1.0))

    def x(self, value: float) -> float:
        low, high = self.x_ticks[0], self.x_ticks[-1]
        return self.left + (value - low) / ((high - low) or 1) * (self.right - self.left)

    def y(self, value: float) -> float:
        low, high = self.y_ticks[0], self.y_ticks[-1]
        return self.bottom - (value - low) / ((high - low) or 1) * (self.bottom - self.top)

    def axes(self, x_label: str, y_label: str) -> list[str]:
        parts = [
            f'<line x1="{self.left}" y1="{self.bottom}" x2="{self.right}" y2="{self.bottom}" stroke="#666"/>',
            f'<line x1="{self.left}" y1="{self.top}" x2="{self.left}" y2="{self.bottom}" stroke="#666"/>',
        ]
        for tick in self.x_ticks:
            tx = self.x(tick)
            parts.append(
                f'<line x1="{tx:.1f}" y1="{self.bottom}" x2="{tx:.1f}" y2="{self.bottom + 4}" stroke="#666"/>'
            )
            parts.append(_text(tx, self.bottom + 17, short_number(tick), 11, "middle"))
        for tick in self.y_ticks:
            ty = self.y(tick)
            parts.append(
                f'<line x1="{self.left}" y1="{ty:.1f}" x2="{self.right}" y2="{ty:.1f}" stroke="#eee"/>'
            )
            parts.append(_text(self.left - 6, ty + 4, short_number(tick), 11, "end"))
        parts.append(_text((self.left + self.right) / 2, self.bottom + 38, x_label, 12, "middle"))
        middle = (self.top + self.bottom) / 2
        parts.append(
            _text(16, middle, y_label, 12, "middle", transform=f"rotate(-90 16 {middle:.1f})")
        )
        return parts


def scatter(
    title: str,
    points: Sequence[tuple[float, float]],
    front: Sequence[tuple[float, float]],
    x_label: str,
    y_label: str,
    chosen: tuple[float, float] | None = None,
    labels: tuple[str, str, str] = ("plans", "Pareto front", "chosen"),
) -> str:
    """Every plan as a dot, the Pareto front as a step line through its plans, the chosen plan
    ringed."""
    height = 360
    xs = [x for x, _ in points] or [0.0, 1.0]
    ys = [y for _, y in points] or [0.0, 1.0]
    plot = _Plot(xs, ys, height)
    svg = _open(height, title)
    svg.append(_text(10, 22, title, 14, font_weight="600"))
    svg.extend(plot.axes(x_label, y_label))
    for x, y in points:
        svg.append(
            f'<circle cx="{plot.x(x):.1f}" cy="{plot.y(y):.1f}" r="4" fill="{PALETTE[0]}" '
            'fill-opacity="0.55"/>'
        )
    ordered = sorted(front)
    if ordered:
        path = " ".join(
            f"{'M' if index == 0 else 'L'}{plot.x(x):.1f},{plot.y(y):.1f}"
            for index, (x, y) in enumerate(ordered)
        )
        svg.append(f'<path d="{path}" fill="none" stroke="{PALETTE[1]}" stroke-width="2"/>')
        for x, y in ordered:
            svg.append(
                f'<circle cx="{plot.x(x):.1f}" cy="{plot.y(y):.1f}" r="4.5" fill="{PALETTE[1]}"/>'
            )
    if chosen is not None:
        svg.append(
            f'<circle cx="{plot.x(chosen[0]):.1f}" cy="{plot.y(chosen[1]):.1f}" r="9" '
            f'fill="none" stroke="{PALETTE[3]}" stroke-width="2.5"/>'
        )
    svg.extend(
        _legend(
            [(labels[0], PALETTE[0]), (labels[1], PALETTE[1]), (labels[2], PALETTE[3])],
            WIDTH - 360,
            22,
            columns=3,
        )
    )
    svg.append("</svg>")
    return "\n".join(svg)


def lines(
    title: str,
    series: Sequence[Series],
    x_label: str,
    y_label: str,
    marker: tuple[float, float, str] | None = None,
) -> str:
    """Lines through each series' points and an optional labelled ``marker`` (break-even)."""
    height = 360
    xs = [x for line in series for x, _ in line.points]
    ys = [y for line in series for _, y in line.points]
    plot = _Plot(xs, ys, height)
    svg = _open(height, title)
    svg.append(_text(10, 22, title, 14, font_weight="600"))
    svg.extend(plot.axes(x_label, y_label))
    for index, line in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        path = " ".join(
            f"{'M' if number == 0 else 'L'}{plot.x(x):.1f},{plot.y(y):.1f}"
            for number, (x, y) in enumerate(line.points)
        )
        svg.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2.5"/>')
        for x, y in line.points:
            svg.append(f'<circle cx="{plot.x(x):.1f}" cy="{plot.y(y):.1f}" r="3" fill="{color}"/>')
    if marker is not None:
        mx, my, label = marker
        svg.append(
            f'<circle cx="{plot.x(mx):.1f}" cy="{plot.y(my):.1f}" r="7" fill="none" '
            f'stroke="{PALETTE[3]}" stroke-width="2.5"/>'
        )
        svg.append(_text(plot.x(mx) + 10, plot.y(my) - 10, label, 12, fill_opacity="1"))
    svg.extend(
        _legend(
            [(line.label, PALETTE[index % len(PALETTE)]) for index, line in enumerate(series)],
            WIDTH - 300,
            22,
        )
    )
    svg.append("</svg>")
    return "\n".join(svg)
