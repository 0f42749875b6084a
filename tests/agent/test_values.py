"""Values code reads from spans (agent/engine/values.py): numbers with their scale, CJK numerals
and number words, percent against percentage points, currencies, years and the year a value is
for, ranges, and everything that is not a value; comparing and computing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.engine.values import ParsedValue, compute, computed_unit, parse, same_quantity, scan


def read(text: str) -> list[tuple]:
    values = parse(text)
    for v in values:
        assert text[v.start : v.end] == v.text
    return [(v.kind, v.value, v.unit, v.text) for v in values]


def one(text: str) -> ParsedValue:
    values = parse(text)
    assert len(values) == 1, values
    return values[0]


# --------------------------------------------------------------------------- numbers and scales


@pytest.mark.parametrize(
    "text, value, shown",
    [
        ("enrolled 35,082 students", 35082, "35,082"),
        ("a mean of 61.5 points", 61.5, "61.5"),
        ("3.5 million learners", 3_500_000, "3.5 million"),
        ("270M parameters", 270_000_000, "270M"),
        ("1.2 bn rows", 1_200_000_000, "1.2 bn"),
        ("5k downloads", 5000, "5k"),
        ("以前有３５．１萬人", 351_000, "３５．１萬"),
        ("招收十萬名學生", 100_000, "十萬"),
        ("共兩千三百人", 2300, "兩千三百"),
        ("補助一萬五千人次", 15000, "一萬五千"),
        ("平均三點五小時", 3.5, "三點五"),
        ("共有三個訊號", 3, "三"),
        ("兩所大學", 2, "兩"),
        ("每週三次", 3, "三"),
        ("學生有 10萬 名", 100_000, "10萬"),
        ("總數 3億5千萬 筆", 350_000_000, "3億5千萬"),
        ("three signals", 3, "three"),
        ("twenty-one students", 21, "twenty-one"),
        ("a hundred thousand students", 100_000, "a hundred thousand"),
        ("one million two hundred thousand rows", 1_200_000, "one million two hundred thousand"),
        ("Two of us tried it", 2, "Two"),
        ("a loss of -4 million", -4_000_000, "-4 million"),
    ],
)
def test_numbers_are_read_with_their_scale(text, value, shown):
    v = one(text)
    assert (v.kind, v.value, v.text) == ("number", value, shown)


def test_the_precision_and_scale_as_written_are_kept():
    v = one("revenue of 35.08 billion")
    assert (v.value, v.scale, v.decimals, v.written) == (35_080_000_000, 1e9, 2, 35.08)


# --------------------------------------------------------------------------- percent, points


@pytest.mark.parametrize(
    "text, kind, value, shown",
    [
        ("retained 62 percent", "percent", 62, "62 percent"),
        ("retained 62 per cent", "percent", 62, "62 per cent"),
        ("grew 3.5%", "percent", 3.5, "3.5%"),
        ("成長３．５％", "percent", 3.5, "３．５％"),
        ("ten percent left", "percent", 10, "ten percent"),
        ("百分之三十的學生", "percent", 30, "百分之三十"),
        ("百分之 35.5 的學生", "percent", 35.5, "百分之 35.5"),
        ("百分之百", "percent", 100, "百分之百"),
        ("其中三成來自外縣市", "percent", 30, "三成"),
        ("回收率低於五成時", "percent", 50, "五成"),
        ("fell 3 percentage points", "percentage_points", 3, "3 percentage points"),
        ("fell 3 pp", "percentage_points", 3, "3 pp"),
        ("下降 3 個百分點", "percentage_points", 3, "3 個百分點"),
        ("下降三個百分點", "percentage_points", 3, "三個百分點"),
        ("up 25 bps", "percentage_points", 0.25, "25 bps"),
    ],
)
def test_percent_and_percentage_points_are_different_kinds(text, kind, value, shown):
    v = one(text)
    assert (v.kind, v.value, v.text) == (kind, pytest.approx(value), shown)
    assert v.unit == ("%" if kind == "percent" else "pp")


def test_growth_words_are_not_tenths():
    assert read("三成長了") == []
    assert read("成長率與成績") == []
    assert read("成長三倍") == [("number", 3, "", "三")]


# --------------------------------------------------------------------------- currencies


@pytest.mark.parametrize(
    "text, value, unit, shown",
    [
        ("USD 35,082,000,000", 35_082_000_000, "USD", "USD 35,082,000,000"),
        ("$5m", 5_000_000, "USD", "$5m"),
        ("US$1.2bn", 1_200_000_000, "USD", "US$1.2bn"),
        ("NT$1,200", 1200, "TWD", "NT$1,200"),
        ("新台幣3億5千萬元", 350_000_000, "TWD", "新台幣3億5千萬元"),
        ("新臺幣 500 元", 500, "TWD", "新臺幣 500 元"),
        ("營收351億美元", 35_100_000_000, "USD", "351億美元"),
        ("營收約 450 億美元", 45_000_000_000, "USD", "450 億美元"),
        ("淨利為 9,300 萬美元", 93_000_000, "USD", "9,300 萬美元"),
        ("每份問卷成本為 48 元。", 48, "TWD", "48 元"),
        ("每份问卷成本为 48 元。", 48, "CNY", "48 元"),
        ("€30", 30, "EUR", "€30"),
        ("30 euros", 30, "EUR", "30 euros"),
        ("£4", 4, "GBP", "£4"),
        ("¥500", 500, "JPY", "¥500"),
        ("RMB100", 100, "CNY", "RMB100"),
        ("人民幣50元", 50, "CNY", "人民幣50元"),
        ("450 dollars", 450, "USD", "450 dollars"),
        ("USD -0.21 billion", -210_000_000, "USD", "USD -0.21 billion"),
        ("一萬五千元", 15000, "TWD", "一萬五千元"),
    ],
)
def test_currencies_become_iso_codes(text, value, unit, shown):
    v = one(text)
    assert (v.kind, v.value, v.unit, v.text) == ("currency", pytest.approx(value), unit, shown)


# --------------------------------------------------------------------------- years


@pytest.mark.parametrize(
    "text, years",
    [
        ("in 2011", [2011]),
        ("(Anderson and Krathwohl, 2001)", [2001]),
        ("二〇一一年", [2011]),
        ("一九五六年原版", [1956]),
        ("2011年", [2011]),
        ("FY2025", [2025]),
        ("Revenue for FY2025Q3", [2025]),
        ("FY25", [2025]),
        ("the 2023–24 academic year", [2023, 2024]),
        ("2010-2015", [2010, 2015]),
        ("民國112年", [2023]),
        ("民國一百年", [2011]),
        ("112學年度", [2023]),
        ("July 2024", [2024]),
        ("In two thousand and eleven", [2011]),
        ("2025 財年第一季", [2025]),
    ],
)
def test_years_are_read_when_the_text_says_they_are_years(text, years):
    assert [(v.kind, v.value) for v in parse(text)] == [("year", y) for y in years]


def test_a_count_that_looks_like_a_year_stays_a_count():
    assert read("2000 students attended") == [("number", 2000, "", "2000")]
    assert read("a total of 2000 students") == [("number", 2000, "", "2000")]
    assert read("In 2011 students protested") == [("year", 2011, "", "2011")]
    assert read("2,011 students") == [("number", 2011, "", "2,011")]


def test_each_value_is_given_the_nearest_year_and_a_dates_year_only_when_no_other():
    values = parse("In 2019 the course had 120 students; in 2023 it had 150 and 3 tutors.")
    assert [(v.value, v.year) for v in values if v.kind == "number"] == [(120, 2019), (150, 2023), (3, 2023)]
    sec = parse(
        "ACME DEVICES INC (ACME), Revenue for FY2025Q3 (2024-07-29 to 2024-10-27): USD 35,082,000,000 (≈ USD 35.08 billion)."
    )
    assert [(v.kind, v.value, v.year) for v in sec] == [
        ("year", 2025, None),
        ("currency", 35_082_000_000, 2025),
        ("currency", 35_080_000_000, 2025),
    ]
    assert one("filed 2024-11-20: 3 pages").year == 2024
    assert [v.year for v in parse("On 5 March 2021 the fee was USD 40.")] == [2021]
    assert [v.year for v in parse("二〇一一年，該校有十萬名學生。")] == [None, 2011]


# --------------------------------------------------------------------------- ranges


@pytest.mark.parametrize(
    "text, expected",
    [
        ("3–5 %", [("percent", 3, "%"), ("percent", 5, "%")]),
        ("between 3 and 5 percent", [("percent", 3, "%"), ("percent", 5, "%")]),
        ("3 to 5 million", [("number", 3e6, ""), ("number", 5e6, "")]),
        ("$3–5 billion", [("currency", 3e9, "USD"), ("currency", 5e9, "USD")]),
        ("3至5%", [("percent", 3, "%"), ("percent", 5, "%")]),
        ("USD 2.00 billion to USD 2.08 billion", [("currency", 2e9, "USD"), ("currency", 2.08e9, "USD")]),
    ],
)
def test_a_range_gives_two_values_with_the_unit_either_side_states(text, expected):
    assert [(v.kind, pytest.approx(v.value), v.unit) for v in parse(text)] == [
        (k, pytest.approx(x), u) for k, x, u in expected
    ]


# --------------------------------------------------------------------------- not values


@pytest.mark.parametrize(
    "text",
    [
        "filed 2024-11-20",
        "on March 3",
        "29/07/2024",
        "2011年3月5日",
        "at 10:30",
        "the 3rd edition, the 21st century",
        "第三章、第3名、第一",
        "1. First item\n(2) second\n 3) third",
        "see section 3.2.1",
        "Week 3, Table 2, p. 4, Q3, Form 10-Q, Grades 7-9, year 2",
        "EDS101, COVID-19, v2, 5G, 3D, 10x",
        "Call +886 2 2345 6789 or 555-123-4567",
        "accession 0001234567-24-000030",
        "ISBN 978-3-16-148410-0",
        "doi 10.1234/abc.5",
        "https://x.com/2024/5 and ops@uedu.example",
        "as shown [3] and [4, 5]",
        "agent 007",
        "the 1990s and 90年代",
        "1/2 of them, 三分之一",
        "一個學生、一般、十分重要、千萬不要、萬一、三月、星期三、週三上課、三國時代",
        "one of them, half of them, two-thirds of them",
        "nineteen ninety-nine",
        "a three-year study",
        "¹ Data note",
    ],
)
def test_dates_ordinals_labels_and_identifiers_are_not_values(text):
    assert read(text) == []


def test_every_number_written_is_still_seen_loosely_for_the_novelty_check():
    loose = sorted(n for n, _, _ in scan("Week 5, the third edition, 第三章").loose)
    assert loose == [3, 3, 5]


# --------------------------------------------------------------------------- comparing, computing


def test_same_quantity_compares_kind_unit_and_amount():
    assert same_quantity(one("USD 35,082,000,000"), one("USD 35.08 billion"))
    assert same_quantity(one("十萬名"), one("100,000 students"))
    assert same_quantity(one("ten percent"), one("10%"))
    assert same_quantity(one("百分之三十"), one("三成"))
    assert not same_quantity(one("3 percentage points"), one("3%"))
    assert not same_quantity(one("NT$5"), one("$5"))
    assert not same_quantity(one("3.5%"), one("3.6%"))
    assert same_quantity(one("3.5%"), one("3.6%"), tolerance=0.05)
    assert same_quantity(one("in 2011"), one("二〇一一年"))


def test_compute_differences_ratios_and_growth_only_where_they_mean_something():
    q2, q3 = one("USD 30,040,000,000"), one("USD 35,082,000,000")
    assert compute("difference", q2, q3) == pytest.approx(5_042_000_000)
    assert compute("ratio", q2, q3) == pytest.approx(35_082 / 30_040)
    assert compute("growth", q2, q3) == pytest.approx((35_082 - 30_040) / 30_040 * 100)
    assert computed_unit("growth", q2) == "%" and computed_unit("ratio", q2) == ""
    assert computed_unit("difference", q2) == "USD"
    a, b = one("retained 41 percent"), one("retained 62 percent")
    assert compute("difference", a, b) == 21 and computed_unit("difference", a) == "pp"
    assert compute("growth", a, b) is None  # growth of a percentage misleads
    assert compute("difference", one("NT$5"), one("$5")) is None
    assert compute("difference", one("3%"), one("3 percentage points")) is None
    assert compute("difference", one("in 2011"), one("in 2015")) is None
    assert compute("growth", one("USD 0"), q3) is None and compute("ratio", one("USD 0"), q3) is None
    assert compute("growth", one("USD -0.21 billion"), q3) is None
    with pytest.raises(ValueError):
        compute("sum", q2, q3)


# --------------------------------------------------------------------------- properties


def to_cjk(n: int) -> str:
    """n (0 < n < 10**8) in CJK numerals, the way a Chinese text writes it."""
    digits = "零一二三四五六七八九"

    def below_10000(m: int, leading: bool) -> str:
        out, zero = "", False
        for unit, size in (("千", 1000), ("百", 100), ("十", 10), ("", 1)):
            d = m // size % 10
            if d:
                if zero and out:
                    out += "零"
                out += ("" if (unit == "十" and d == 1 and not out and leading) else digits[d]) + unit
                zero = False
            elif out:
                zero = True
        return out

    high, low = divmod(n, 10000)
    if not high:
        return below_10000(low, True)
    text = below_10000(high, True) + "萬"
    if low:
        text += ("零" if low < 1000 else "") + below_10000(low, False)
    return text


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=2, max_value=99_999_999))
def test_any_cjk_numeral_reads_as_its_number(n):
    text = to_cjk(n)
    assert [(v.kind, v.value) for v in parse(f"共有{text}名學生")] == [("number", n)], text


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=10**12), st.sampled_from(["students", "%", " percent", " USD"]))
def test_any_grouped_number_reads_as_its_value(n, unit):
    text = f"about {n:,}{unit} in all"
    kind = {"students": "number", "%": "percent", " percent": "percent", " USD": "currency"}[unit]
    if unit == "students":
        text = f"about {n:,} students in all"
    assert [(v.kind, v.value) for v in parse(text)] == [(kind, n)]


_PIECES = st.sampled_from(
    [
        "3.5 million ", "十萬名", "二〇一一年", "三成", "百分之三十", "3 個百分點", "US$5m ", "NT$1,200 ",
        "in 2011 ", "FY2025 ", "2023–24 ", "民國112年", "twenty-one ", "a hundred thousand ", "ten percent ",
        "3–5 % ", "2024-07-29 ", "Week 3 ", "第三", "1. ", "555-123-4567 ", "[3] ", " ", "，", "and ", "一",
        "兩", "千", "萬", "億", "元", "%", "-", "$", ".", ",", "0", "7", "year ", "students ",
    ]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_every_value_is_its_slice_and_parsing_is_deterministic(text):
    values = parse(text)
    assert values == parse(text)
    for v in values:
        assert text[v.start : v.end] == v.text and v.text
        assert v.kind in ("number", "percent", "percentage_points", "currency", "year")
        assert (v.year is None) if v.kind == "year" else (v.year is None or 1900 <= v.year <= 2100)
    assert all(a.end <= b.start for a, b in zip(values, values[1:]))
