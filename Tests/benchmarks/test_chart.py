"""benchlib.chart: the SVG chart of side-by-side figures, read back with xml.etree."""
import xml.etree.ElementTree as ET

import pytest

from benchlib import chart
from benchlib.chart import BAR_MAX, Group, render_svg, write_chart

NS = {"svg": "http://www.w3.org/2000/svg"}
SERIES = ["auth-sidecar", "MSAL for Python"]


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg.encode("utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def bars(root):
    return [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "bar"]


def texts(root, cls=None):
    return [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")
            if cls is None or t.get("class") == cls]


def test_well_formed_with_title_subtitle_legend_and_footnotes():
    root = parse(render_svg("The token path", SERIES, [Group("1. fresh process", [0.004, 0.2])],
                            subtitle="AMD EPYC, 2 CPUs", footnotes=["5 runs per tool"]))
    assert texts(root, "title") == ["The token path"]
    assert texts(root, "subtitle") == ["AMD EPYC, 2 CPUs"]
    assert texts(root, "legend") == SERIES
    assert texts(root, "footnote") == ["5 runs per tool"]
    assert root.find("svg:title", NS).text == "The token path"
    assert float(root.get("width")) >= chart.WIDTH and float(root.get("height")) > 0


def test_one_bar_per_value_in_series_order():
    groups = [Group("1. a", [1.0, 2.0]), Group("2. b", [3.0, 4.0]), Group("3. c", [5.0, 6.0])]
    root = parse(render_svg("t", SERIES, groups))
    found = bars(root)
    assert len(found) == 6
    assert [b.get("data-series") for b in found] == SERIES * 3
    assert texts(root, "group") == ["1. a", "2. b", "3. c"]
    assert texts(root, "series") == SERIES * 3


def test_labels_show_the_given_texts_and_the_note():
    g = Group("4b. silent latency", [0.000143, 0.0187], ["143 µs", "18.7 ms"], note="lower is better")
    root = parse(render_svg("t", SERIES, [g]))
    assert texts(root, "value") == ["143 µs", "18.7 ms"]
    assert texts(root, "group") == ["4b. silent latency (lower is better)"]
    tips = [b.find("svg:title", NS).text for b in bars(root)]
    assert tips == ["auth-sidecar: 143 µs", "MSAL for Python: 18.7 ms"]


def test_values_are_formatted_when_no_texts_are_given():
    root = parse(render_svg("t", SERIES, [Group("3. rate", [23696.4, 0.54])]))
    assert texts(root, "value") == ["23,696", "0.54"]


def test_bars_scale_with_the_largest_value_of_their_own_group():
    groups = [Group("1. ms", [5.0, 200.0]), Group("3. per second", [40000.0, 20000.0])]
    widths = [float(b.get("width")) for b in bars(parse(render_svg("t", SERIES, groups)))]
    assert widths[1] == pytest.approx(BAR_MAX)           # the largest of group 1
    assert widths[0] == pytest.approx(BAR_MAX * 5 / 200)
    assert widths[2] == pytest.approx(BAR_MAX)           # the largest of group 2
    assert widths[3] == pytest.approx(BAR_MAX / 2)
    doubled = [Group("1. ms", [10.0, 400.0])]
    assert [float(b.get("width")) for b in bars(parse(render_svg("t", SERIES, doubled)))] == \
        pytest.approx(widths[:2])


def test_text_is_escaped():
    nasty = 'a <b> & "c" \'d\' ]]> \x01'
    g = Group(nasty, [1.0, 2.0], [nasty, "<ok>"], note="x & y")
    svg = render_svg(nasty, ["<ours>", "peer & co"], [g], subtitle=nasty, footnotes=[nasty])
    root = parse(svg)                                      # no XML error
    clean = nasty.replace("\x01", "")
    assert texts(root, "title") == [clean]
    assert texts(root, "legend") == ["<ours>", "peer & co"]
    assert texts(root, "value") == [clean, "<ok>"]
    assert texts(root, "group") == [clean + " (x & y)"]
    assert root.get("aria-label") == clean
    assert "<b>" not in svg and "<ours>" not in svg


def test_zero_and_none_values():
    g = Group("6. refresh grants", [0, None], note="fewer is better")
    root = parse(render_svg("t", SERIES, [g]))
    found = bars(root)
    assert len(found) == 1                                 # None: no bar
    assert float(found[0].get("width")) == 0               # zero: a bar of no length
    assert texts(root, "value") == ["0", "not measured"]
    nan = Group("x", [float("nan"), 3.0])
    assert len(bars(parse(render_svg("t", SERIES, [nan])))) == 1


def test_all_zero_or_all_none_groups_do_not_divide_by_zero():
    groups = [Group("a", [0, 0]), Group("b", [None, None]), Group("c", [-1.0, 2.0])]
    root = parse(render_svg("t", SERIES, groups))
    widths = [float(b.get("width")) for b in bars(root)]
    assert widths == [0, 0, 0, BAR_MAX]                    # a negative value draws no length


def test_a_long_label_widens_the_chart():
    short = parse(render_svg("t", SERIES, [Group("a", [1.0, 2.0])]))
    long = parse(render_svg("t", SERIES, [Group("a", [1.0, 2.0], ["x" * 200, "y"])]))
    assert float(long.get("width")) > float(short.get("width")) + 500


def test_write_chart_writes_svg(tmp_path):
    path = write_chart(str(tmp_path / "c.svg"), "t", SERIES, [Group("a", [1.0, 2.0])])
    assert path == str(tmp_path / "c.svg")
    assert len(bars(ET.parse(path).getroot())) == 2


def test_write_chart_png_needs_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setattr(chart, "matplotlib_available", lambda: False)
    path = write_chart(str(tmp_path / "c.png"), "t", SERIES, [Group("a", [1.0, 2.0])])
    assert path == str(tmp_path / "c.svg")                 # SVG beside it instead
    assert not (tmp_path / "c.png").exists()
    ET.parse(path)


def test_write_chart_png_with_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    path = write_chart(str(tmp_path / "c.png"), "t", SERIES, [Group("a", [1.0, None]), Group("b", [0, 2.0])],
                       subtitle="s", footnotes=["f"])
    assert path == str(tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
