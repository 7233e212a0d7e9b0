"""Inline SVG charts written in Python: no JavaScript, no fonts or files from the network.

Each function returns one ``<svg>`` element as text, with a title, labelled axes (units in the
label) and a legend where there is more than one series. All text is escaped.

Margins, legend columns and the viewBox are sized from :func:`text_width`, an estimate of each
label's rendered width that counts East Asian wide characters as one em, so a Chinese label
is never clipped: a chart grows wider than :data:`WIDTH` rather than cut a label.
"""

from __future__ import annotations

import math
import unicodedata
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
"""Width of a chart's viewBox unless its labels need more."""
PAD = 10
"""Space kept between any text and the chart's edge."""
TITLE_SIZE = 14
SWATCH = 18
"""A legend entry's colour square and the gap after it."""
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


EM_WIDTHS = (
    ("iIl.,:;'|!()[]{}`", 0.34),
    (" ", 0.32),
    ("mwMW@%", 0.9),
    ("ABCDEFGHJKLNOPQRSTUVXYZ&", 0.72),
    ('0123456789$€£¥#+-=<>~^_*/?"', 0.64),
)
"""Widths in em of Latin characters, generous for the sans-serif faces browsers pick for
``system-ui`` (DejaVu Sans is the widest of them); any other narrow character is 0.6 em."""
_EM_OF = {char: width for chars, width in EM_WIDTHS for char in chars}


def char_em(char: str) -> float:
    """Rendered width of one character in em: 1 for East Asian wide, fullwidth and ambiguous
    characters (``unicodedata.east_asian_width`` W, F or A: CJK ideographs, ``：``, ``×`` in a
    CJK face), 0 for combining marks, else the Latin table :data:`EM_WIDTHS` (default 0.6)."""
    if unicodedata.combining(char):
        return 0.0
    if unicodedata.east_asian_width(char) in ("W", "F", "A"):
        return 1.0
    return _EM_OF.get(char, 0.6)


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Estimated width in px of ``text`` at font ``size`` px: the sum of :func:`char_em`
    times the size, 6 % more when bold."""
    return sum(char_em(char) for char in text) * size * (1.06 if bold else 1.0)


def _title_width(title: str) -> float:
    return PAD + text_width(title, TITLE_SIZE, bold=True) + PAD


def _open(width: float, height: float, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="100%" role="img" aria-label="{escape(title)}" class="chart" style="{FONT}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
        _text(PAD, 22, title, TITLE_SIZE, font_weight="600"),
    ]


def _text(
    x: float, y: float, text: str, size: int = 12, anchor: str = "start", **extra: str
) -> str:
    attributes = "".join(f' {key.replace("_", "-")}="{value}"' for key, value in extra.items())
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"'
        f' fill="#222"{attributes}>{escape(text)}</text>'
    )


def _centred_x(x: float, text: str, size: int, low: float, high: float) -> float:
    """``x`` moved just enough that ``text`` centred on it lies within ``[low, high]``."""
    half = text_width(text, size) / 2
    return min(max(x, low + half), high - half)


@dataclass(frozen=True)
class _Legend:
    """Legend entries laid out in ``columns`` columns of ``column_width`` px, rows 18 px apart."""

    entries: Sequence[tuple[str, str]]
    columns: int
    column_width: float

    ROW = 18
    SIZE = 12

    @staticmethod
    def entry_width(label: str) -> float:
        return SWATCH + text_width(label, _Legend.SIZE) + 14

    @classmethod
    def fit(
        cls, entries: Sequence[tuple[str, str]], space: float, columns: int, spread: bool = False
    ) -> _Legend:
        """The most columns (up to ``columns``) whose entries fit in ``space`` px, one at
        least; each column as wide as the widest entry, or ``spread`` over the whole space."""
        widest = max((cls.entry_width(label) for label, _ in entries), default=0.0)
        fitting = max(1, min(columns, len(entries), int(space // max(widest, 1.0))))
        column_width = max(widest, space / fitting) if spread and fitting > 1 else widest
        return cls(entries, fitting, column_width)

    @property
    def width(self) -> float:
        return self.columns * self.column_width

    @property
    def rows(self) -> int:
        return math.ceil(len(self.entries) / self.columns)

    def draw(self, x: float, y: float) -> list[str]:
        """``y`` is the first row's text baseline."""
        parts = []
        for index, (label, color) in enumerate(self.entries):
            cx = x + (index % self.columns) * self.column_width
            cy = y + (index // self.columns) * self.ROW
            parts.append(
                f'<rect x="{cx:.1f}" y="{cy - 10:.1f}" width="12" height="12" fill="{color}"/>'
            )
            parts.append(_text(cx + SWATCH, cy, label, self.SIZE))
        return parts


def _tick_labels(ticks: Sequence[float]) -> list[str]:
    return [short_number(tick) for tick in ticks]


def stacked_bar(
    title: str,
    parts: Sequence[tuple[str, float]],
    axis_label: str,
    limit: float | None = None,
    limit_label: str = "",
    value_format: Callable[[float], str] = lambda value: f"{value:.1f}",
) -> str:
    """One horizontal bar split into ``parts`` (memory by part), with a dashed ``limit`` line
    (usable capacity) labelled above the bar, and a legend giving each part's value."""
    visible = [(label, value) for label, value in parts if value > 0]
    entries = [
        (f"{label}: {value_format(value)}", PALETTE[index % len(PALETTE)])
        for index, (label, value) in enumerate(visible)
    ]
    left = 30
    single = _Legend.fit(entries, 0, 1)
    width = max(
        WIDTH,
        _title_width(title),
        left + single.width + PAD,
        text_width(axis_label, 12) + 2 * PAD,
        text_width(limit_label, 11) + 2 * PAD,
    )
    legend = _Legend.fit(entries, width - left - PAD, 2, spread=True)
    right, top, bar_height = width - 30, 52, 40
    axis_y = top + bar_height + 8
    height = axis_y + 58 + legend.rows * _Legend.ROW
    total = sum(value for _, value in visible)
    ticks = nice_ticks(0, max(total, limit or 0) * 1.02)
    scale = (right - left) / (ticks[-1] or 1)
    svg = _open(width, height, title)
    x = float(left)
    for index, (_label, value) in enumerate(visible):
        bar = value * scale
        color = PALETTE[index % len(PALETTE)]
        svg.append(
            f'<rect x="{x:.1f}" y="{top}" width="{max(bar, 0.5):.1f}" height="{bar_height}" '
            f'fill="{color}"/>'
        )
        x += bar
    svg.append(f'<line x1="{left}" y1="{axis_y}" x2="{right:.1f}" y2="{axis_y}" stroke="#666"/>')
    for tick, label in zip(ticks, _tick_labels(ticks), strict=True):
        tx = left + tick * scale
        svg.append(
            f'<line x1="{tx:.1f}" y1="{axis_y}" x2="{tx:.1f}" y2="{axis_y + 4}" stroke="#666"/>'
        )
        svg.append(
            _text(_centred_x(tx, label, 11, PAD, width - PAD), axis_y + 17, label, 11, "middle")
        )
    svg.append(_text((left + right) / 2, axis_y + 34, axis_label, 12, "middle"))
    if limit is not None:
        lx = left + limit * scale
        svg.append(
            f'<line x1="{lx:.1f}" y1="{top - 8}" x2="{lx:.1f}" y2="{top + bar_height + 4}" '
            'stroke="#c00" stroke-width="2" stroke-dasharray="5,3"/>'
        )
        label_x = _centred_x(lx, limit_label, 11, PAD, width - PAD)
        svg.append(_text(label_x, top - 12, limit_label, 11, "middle", fill_opacity="1"))
    svg.extend(legend.draw(left, axis_y + 58))
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
    one bar (the chosen plan). The left margin is the widest label, the right the widest
    value, and the bars keep at least 280 px."""
    label_width = max((text_width(label, 12) for label, _ in items), default=0.0)
    values = [value_format(value) for _, value in items]
    ticks = nice_ticks(0, max((value for _, value in items), default=1.0) * 1.02)
    tick_labels = _tick_labels(ticks)
    value_width = max((text_width(text, 11) for text in values), default=0.0)
    left = max(60.0, PAD + label_width + 6)
    right_margin = max(value_width + 4 + PAD, text_width(tick_labels[-1], 11) / 2 + PAD)
    width = max(
        WIDTH,
        _title_width(title),
        left + 280 + right_margin,
        left + text_width(axis_label, 12) + PAD,
    )
    right, top, row = width - right_margin, 40, 24
    height = top + row * len(items) + 50
    scale = (right - left) / (ticks[-1] or 1)
    svg = _open(width, height, title)
    for index, ((label, value), shown) in enumerate(zip(items, values, strict=True)):
        y = top + index * row
        color = PALETTE[1] if index == highlight else PALETTE[0]
        svg.append(
            f'<rect x="{left:.1f}" y="{y + 4}" width="{max(value * scale, 0.5):.1f}" '
            f'height="{row - 8}" fill="{color}"/>'
        )
        svg.append(_text(left - 6, y + row / 2 + 4, label, 12, "end"))
        svg.append(_text(left + value * scale + 4, y + row / 2 + 4, shown, 11))
    axis_y = top + row * len(items) + 4
    svg.append(
        f'<line x1="{left:.1f}" y1="{axis_y}" x2="{right:.1f}" y2="{axis_y}" stroke="#666"/>'
    )
    for tick, label in zip(ticks, tick_labels, strict=True):
        tx = left + tick * scale
        svg.append(
            f'<line x1="{tx:.1f}" y1="{axis_y}" x2="{tx:.1f}" y2="{axis_y + 4}" stroke="#666"/>'
        )
        svg.append(_text(tx, axis_y + 17, label, 11, "middle"))
    axis_x = _centred_x((left + right) / 2, axis_label, 12, left, width - PAD)
    svg.append(_text(axis_x, axis_y + 36, axis_label, 12, "middle"))
    svg.append("</svg>")
    return "\n".join(svg)


class _Plot:
    """A rectangular plotting area with linear x and y axes, under the title and legend.

    The legend sits right of the title when both fit on one line, else on its own rows below
    it; the left margin holds the rotated y label and the widest y tick label; the chart is
    tall enough for the rotated y label and wide enough for the x label."""

    def __init__(
        self,
        xs: Sequence[float],
        ys: Sequence[float],
        title: str,
        labels: tuple[str, str],
        entries: Sequence[tuple[str, str]],
        columns: int,
    ) -> None:
        x_label, y_label = labels
        self.x_ticks = nice_ticks(min(xs, default=0.0), max(xs, default=1.0))
        self.y_ticks = nice_ticks(min(0.0, *ys) if ys else 0.0, max(ys, default=1.0))
        y_tick_width = max(text_width(short_number(tick), 11) for tick in self.y_ticks)
        self.left = max(80.0, PAD + 14 + 10 + y_tick_width + 6)
        x_tick_half = text_width(short_number(self.x_ticks[-1]), 11) / 2
        self.width = max(WIDTH, _title_width(title), self.left + text_width(x_label, 12) + PAD)
        self.right = self.width - max(20.0, x_tick_half + PAD)
        beside = self.width - _title_width(title) - 16
        legend = _Legend.fit(entries, beside, columns)
        if legend.width <= beside:
            self.legend, self.legend_x, self.legend_y = legend, self.width - legend.width, 22.0
        else:
            legend = _Legend.fit(entries, self.width - 2 * PAD, columns)
            self.legend, self.legend_x, self.legend_y = legend, float(PAD), 44.0
            self.width = max(self.width, legend.width + 2 * PAD)
        self.top = max(40.0, self.legend_y + (legend.rows - 1) * _Legend.ROW + 16)
        self.height = max(360.0, self.top + text_width(y_label, 12) + 80)
        self.bottom = self.height - 60

    def x(self, value: float) -> float:
        low, high = self.x_ticks[0], self.x_ticks[-1]
        return self.left + (value - low) / ((high - low) or 1) * (self.right - self.left)

    def y(self, value: float) -> float:
        low, high = self.y_ticks[0], self.y_ticks[-1]
        return self.bottom - (value - low) / ((high - low) or 1) * (self.bottom - self.top)

    def axes(self, x_label: str, y_label: str) -> list[str]:
        parts = [
            f'<line x1="{self.left:.1f}" y1="{self.bottom:.1f}" x2="{self.right:.1f}" y2="{self.bottom:.1f}" stroke="#666"/>',
            f'<line x1="{self.left:.1f}" y1="{self.top:.1f}" x2="{self.left:.1f}" y2="{self.bottom:.1f}" stroke="#666"/>',
        ]
        for tick in self.x_ticks:
            tx = self.x(tick)
            parts.append(
                f'<line x1="{tx:.1f}" y1="{self.bottom:.1f}" x2="{tx:.1f}" y2="{self.bottom + 4:.1f}" stroke="#666"/>'
            )
            parts.append(_text(tx, self.bottom + 17, short_number(tick), 11, "middle"))
        for tick in self.y_ticks:
            ty = self.y(tick)
            parts.append(
                f'<line x1="{self.left:.1f}" y1="{ty:.1f}" x2="{self.right:.1f}" y2="{ty:.1f}" stroke="#eee"/>'
            )
            parts.append(_text(self.left - 6, ty + 4, short_number(tick), 11, "end"))
        x_middle = _centred_x(
            (self.left + self.right) / 2, x_label, 12, self.left, self.width - PAD
        )
        parts.append(_text(x_middle, self.bottom + 38, x_label, 12, "middle"))
        middle = (self.top + self.bottom) / 2
        parts.append(
            _text(20, middle, y_label, 12, "middle", transform=f"rotate(-90 20 {middle:.1f})")
        )
        return parts

    def open(self, title: str) -> list[str]:
        """The chart's start: frame, title and legend."""
        return _open(self.width, self.height, title) + self.legend.draw(
            self.legend_x, self.legend_y
        )


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
    xs = [x for x, _ in points] or [0.0, 1.0]
    ys = [y for _, y in points] or [0.0, 1.0]
    entries = [(labels[0], PALETTE[0]), (labels[1], PALETTE[1]), (labels[2], PALETTE[3])]
    plot = _Plot(xs, ys, title, (x_label, y_label), entries, columns=3)
    svg = plot.open(title)
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
    svg.append("</svg>")
    return "\n".join(svg)


def lines(
    title: str,
    series: Sequence[Series],
    x_label: str,
    y_label: str,
    marker: tuple[float, float, str] | None = None,
) -> str:
    """Lines through each series' points and an optional labelled ``marker`` (break-even),
    its label on whichever side of the marker has room."""
    xs = [x for line in series for x, _ in line.points]
    ys = [y for line in series for _, y in line.points]
    entries = [(line.label, PALETTE[index % len(PALETTE)]) for index, line in enumerate(series)]
    plot = _Plot(xs, ys, title, (x_label, y_label), entries, columns=2)
    svg = plot.open(title)
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
        cx, cy = plot.x(mx), plot.y(my)
        svg.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="7" fill="none" '
            f'stroke="{PALETTE[3]}" stroke-width="2.5"/>'
        )
        fits_right = cx + 10 + text_width(label, 12) <= plot.width - PAD
        anchor = "start" if fits_right else "end"
        label_y = max(cy - 10, plot.top + 12)
        svg.append(
            _text(cx + 10 if fits_right else cx - 10, label_y, label, 12, anchor, fill_opacity="1")
        )
    svg.append("</svg>")
    return "\n".join(svg)
