"""SVG charts: label widths that count East Asian wide characters as one em, and every label
(by that estimate) inside the viewBox, in English and Chinese."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

import pytest

from gpuplan.report import charts
from gpuplan.report.charts import Series, text_width

SVG = "{http://www.w3.org/2000/svg}"
STEP_LABELS_ZH = ["计算：矩阵乘", "计算：注意力核心", "计算：访存受限算子", "计算：逐层开销"]


def test_a_wide_character_is_one_em_and_a_latin_one_about_six_tenths():
    assert text_width("计", 12) == pytest.approx(12)
    assert text_width("：", 10) == pytest.approx(10)  # fullwidth colon
    assert 0.5 * 12 <= text_width("a", 12) <= 0.65 * 12
    assert text_width("i", 12) < text_width("a", 12) < text_width("W", 12)


def test_chinese_is_wider_than_latin_of_the_same_length_and_widths_add():
    chinese, latin = "访存受限算子", "abcdef"
    assert len(chinese) == len(latin)
    assert text_width(chinese, 12) > 1.5 * text_width(latin, 12)
    assert text_width(chinese + latin, 12) == pytest.approx(
        text_width(chinese, 12) + text_width(latin, 12)
    )
    assert text_width("e\u0301", 12) == pytest.approx(text_width("e", 12))  # combining accent
    assert text_width("abc", 12, bold=True) > text_width("abc", 12)
    assert text_width("", 12) == 0


def _view_box(svg: str) -> tuple[float, float]:
    root = ElementTree.fromstring(svg)
    _, _, width, height = (float(part) for part in root.attrib["viewBox"].split())
    rect = root.find(f"{SVG}rect")
    assert rect is not None and float(rect.attrib["width"]) == width
    return width, height


def _label_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    """(text, left, right, top, bottom) of each label by :func:`text_width`, rotation kept."""
    boxes = []
    for element in ElementTree.fromstring(svg).iter(f"{SVG}text"):
        text = element.text or ""
        size = float(element.attrib["font-size"])
        bold = element.attrib.get("font-weight") == "600"
        width = text_width(text, size, bold)
        x, y = float(element.attrib["x"]), float(element.attrib["y"])
        start = {"start": 0.0, "middle": -width / 2, "end": -width}[element.attrib["text-anchor"]]
        if "rotate(-90" in element.attrib.get("transform", ""):
            boxes.append((text, x - size, x, y - start - width, y - start))
        else:
            boxes.append((text, x + start, x + start + width, y - size, y + 0.25 * size))
    return boxes


def _assert_inside(svg: str) -> None:
    width, height = _view_box(svg)
    for text, left, right, top, bottom in _label_boxes(svg):
        assert left >= 0 and right <= width, (text, left, right, width)
        assert top >= 0 and bottom <= height, (text, top, bottom, height)


def _zh_charts() -> dict[str, str]:
    return {
        "bars": charts.horizontal_bars(
            "单步耗时：每个优化器步 24.856 秒",
            list(zip(STEP_LABELS_ZH, [16.1, 1.58, 7.03, 0.14], strict=True)),
            "每步秒数",
            value_format=lambda value: f"{value:.3f} 秒",
        ),
        "stacked": charts.stacked_bar(
            "每卡显存：llama-3.1-8b，1 × rtx-4090-24gb",
            [("权重", 5.47), ("优化器状态（含 fp32 主权重）", 0.31), ("激活值", 9.01)],
            "每卡显存（GiB，2^30 字节）",
            limit=21.6,
            limit_label="可用 21.6 GiB",
        ),
        "scatter": charts.scatter(
            "费用与天数",
            [(0.1, 1000.0), (0.5, 20.0), (0.9, 25.0)],
            [(0.1, 1000.0), (0.5, 20.0)],
            "训练时间（天）",
            "总费用（CNY）",
            chosen=(0.5, 20.0),
            labels=("方案", "帕累托前沿", "所选"),
        ),
        "lines": charts.lines(
            "3 年自建与租用对比（CNY，累计）",
            [
                Series("自建", [(0, 4.8e6), (3, 9.8e6)]),
                Series("租用", [(0, 0), (3, 3.8e6)]),
            ],
            "年",
            "累计成本（CNY）",
            marker=(3, 9.8e6, "盈亏平衡点：第 3 年"),
        ),
    }


@pytest.mark.parametrize("kind", ["bars", "stacked", "scatter", "lines"])
def test_every_chinese_label_lies_inside_the_view_box(kind):
    _assert_inside(_zh_charts()[kind])


def test_the_left_margin_holds_the_widest_chinese_bar_label():
    """The step-time chart that clipped "计算：访存受限算子" to "算：访存受限算子"."""
    svg = _zh_charts()["bars"]
    boxes = {text: (left, right) for text, left, right, _, _ in _label_boxes(svg)}
    left, _ = boxes["计算：访存受限算子"]
    assert left >= charts.PAD - 0.01
    bars = list(ElementTree.fromstring(svg).iter(f"{SVG}rect"))[1:]  # after the background
    assert float(bars[0].attrib["x"]) >= text_width("计算：访存受限算子", 12)


def test_a_title_longer_than_the_chart_widens_the_view_box():
    title = "每卡显存：" + "非常长的模型名称" * 12
    svg = charts.horizontal_bars(title, [("甲", 1.0), ("乙", 2.0)], "秒")
    width, _ = _view_box(svg)
    assert width > charts.WIDTH
    assert width >= text_width(title, charts.TITLE_SIZE, bold=True) + 2 * charts.PAD
    _assert_inside(svg)


def test_long_legend_entries_fall_back_to_one_column():
    parts = [(f"第{index}部分：" + "很长的显存部分名称" * 4, float(index)) for index in range(1, 5)]
    svg = charts.stacked_bar("显存", parts, "GiB")
    _assert_inside(svg)
    legend_x = {
        round(float(element.attrib["x"]))
        for element in ElementTree.fromstring(svg).iter(f"{SVG}text")
        if (element.text or "").startswith("第")
    }
    assert len(legend_x) == 1


def test_a_legend_that_does_not_fit_beside_the_title_goes_below_it():
    short = charts.scatter("费用", [(1.0, 2.0)], [], "天", "元", labels=("方案", "前沿", "所选"))
    long_title = "费用与天数：" + "所有报价的方案" * 7
    long = charts.scatter(long_title, [(1.0, 2.0)], [], "天", "元", labels=("方案", "前沿", "所选"))

    def legend_y(svg: str) -> float:
        return next(
            float(element.attrib["y"])
            for element in ElementTree.fromstring(svg).iter(f"{SVG}text")
            if element.text == "方案"
        )

    assert legend_y(short) == 22 and legend_y(long) > 22
    for svg in (short, long):
        _assert_inside(svg)
        title, *rest = _label_boxes(svg)
        assert all(box[3] >= title[4] or box[1] >= title[2] for box in rest if box[0] == "方案")


def test_a_marker_label_at_the_right_edge_turns_to_the_left():
    svg = _zh_charts()["lines"]
    marker = next(
        element
        for element in ElementTree.fromstring(svg).iter(f"{SVG}text")
        if (element.text or "").startswith("盈亏")
    )
    assert marker.attrib["text-anchor"] == "end"


def test_english_charts_keep_the_default_width():
    svg = charts.horizontal_bars("Step time", [("compute: matmul", 1.0), ("idle", 0.5)], "s")
    assert _view_box(svg)[0] == charts.WIDTH
    _assert_inside(svg)
    assert not re.search(r'x="-', svg)
