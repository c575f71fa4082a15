"""benchlib.report: the figures as text and the Markdown tables the scripts print."""
from benchlib.report import add_counts, counts_delta, markdown_table, mib, ms, net, ratio, us_or_ms


def test_markdown_table_header_rule_and_rows():
    assert markdown_table(["measurement", "result"], [("cold start", "4.98 ms"), ("p90", "5.81 ms")]) == [
        "| measurement | result |",
        "|---|---|",
        "| cold start | 4.98 ms |",
        "| p90 | 5.81 ms |",
    ]


def test_markdown_table_without_header_empty_cells_and_pipes():
    assert markdown_table(None, [("`token` p90", "19.9 ms", "347 ms", ""), ("a|b", 3, "", "")]) == [
        "| `token` p90 | 19.9 ms | 347 ms | |",
        "| a\\|b | 3 | | |",
    ]


def test_durations():
    assert ms(0.00444) == "4.44 ms"
    assert ms(0.0704) == "70.4 ms"
    assert ms(1.855) == "1,855 ms"
    assert us_or_ms(0.000143) == "143 µs"
    assert us_or_ms(0.0187) == "18.7 ms"


def test_ratio_and_sizes():
    assert ratio(0.199, 0.00444) == "44.8x"
    assert ratio(1.19, 1) == "1.19x"
    assert ratio(804, 1) == "804x"
    assert ratio(None, 1) == "—" and ratio(1, 0) == "—"
    assert mib(13107) == "12.8 MiB"


def test_request_counts():
    before = {"openid-configuration": 1, "token": 2, "token:refresh_token": 2}
    after = {"openid-configuration": 2, "token": 4, "token:refresh_token": 4}
    delta = counts_delta(before, after)
    assert delta == {"openid-configuration": 1, "token": 2, "token:refresh_token": 2}
    assert net(delta) == "3 (openid-configuration 1, token:refresh_token 2)"
    assert net(delta, per=2) == "1.50/run (openid-configuration 0.50, token:refresh_token 1)"
    assert net({}) == "0"
    assert net(None) == "— (service down)"
    total = {"token": 1}
    add_counts(total, {"token": 2, "openid-configuration": 1})
    assert total == {"token": 3, "openid-configuration": 1}
