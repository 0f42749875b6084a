"""Numbers in text, compared after unit normalisation.

A figure claim (NVIDIA · revenue · Q3 FY2025 = 35.1 USD billion) is checked against the numbers
its cited passage states, and a sentence or a table cell of the report against the figures of the
claims it cites. Scale words (thousand, million, billion, 萬, 億…) multiply; currency signs do not
change the magnitude; a percentage is compared as a percentage."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "千": 1e3,
    "萬": 1e4,
    "万": 1e4,
    "million": 1e6,
    "millions": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "百萬": 1e6,
    "百万": 1e6,
    "億": 1e8,
    "亿": 1e8,
    "billion": 1e9,
    "billions": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "十億": 1e9,
    "trillion": 1e12,
    "tn": 1e12,
    "兆": 1e12,
}
_SCALE_WORDS = sorted(SCALES, key=len, reverse=True)
# Not after a Latin letter, a digit or a point ("FY2025", "v2.1", "Q3" are not figures), but
# right after a CJK character ("營收351億美元" states 351 億).
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<num>[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    r"(?:\s*(?P<scale>" + "|".join(re.escape(w) for w in _SCALE_WORDS) + r")(?![a-z]))?"
    r"(?:\s*(?P<pct>%|percent|per cent|個百分點|个百分点))?",
    re.I,
)


def _plain(text: str) -> str:
    """Full-width digits, signs and percent marks as ASCII ("３５．１％" → "35.1%"); one character
    for one character where it matters, so positions stay comparable."""
    return unicodedata.normalize("NFKC", text or "")


@dataclass(frozen=True)
class Quantity:
    value: float  # normalised: scale applied
    percent: bool
    decimals: int  # digits after the point as written (the precision of the statement)
    scale: float

    @property
    def written(self) -> float:
        """The number as written, before its scale word (35.1 of "35.1 billion")."""
        return self.value / self.scale

    def matches(self, other: Quantity, *, exact: bool, bare: bool = True) -> bool:
        """Same magnitude. `exact`: equal at the precision this quantity was written with (35.1
        billion states 35,082 million rounded); otherwise within 1 % (paraphrase rounding).
        `bare`: a number written without a scale may stand for one written with it (a table cell
        under "Revenue (USD bn)"); a claim checked against its quote says False unless the quote
        names that scale itself (found_in, strict)."""
        if self.percent != other.percent:
            return False
        if exact:
            step = self.scale * 10 ** (-self.decimals)
            return math.isclose(round(other.value / step) * step, self.value, rel_tol=1e-9, abs_tol=1e-9)
        if math.isclose(self.value, other.value, rel_tol=0.01, abs_tol=1e-9):
            return True
        if not bare:
            return False
        # A bare number in a table whose header names the unit ("Revenue (USD bn)": 35.1) states
        # the same figure as "35.1 billion".
        bare = self if self.scale == 1.0 else other if other.scale == 1.0 else None
        return bare is not None and math.isclose(self.written, other.written, rel_tol=0.01, abs_tol=1e-9)


def quantities(text: str) -> list[Quantity]:
    out = []
    for match in _NUMBER.finditer(_plain(text)):
        raw = match.group("num").replace(",", "").replace("−", "-")
        scale = SCALES.get((match.group("scale") or "").lower(), 1.0)
        decimals = len(raw.split(".", 1)[1]) if "." in raw else 0
        out.append(Quantity(float(raw) * scale, bool(match.group("pct")), decimals, scale))
    return out


def of_claim(value: float | None, unit: str) -> Quantity | None:
    """The quantity a figure claim states through its value and unit fields ("USD billion", "%")."""
    if value is None:
        return None
    unit_l = (unit or "").lower()
    scale = next(
        (SCALES[w] for w in _SCALE_WORDS if re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", unit_l)), 1.0
    )
    text = repr(float(value)).rstrip("0").rstrip(".") if not float(value).is_integer() else str(int(value))
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return Quantity(float(value) * scale, "%" in unit_l or "percent" in unit_l, decimals, scale)


def found_in(quantity: Quantity, text: str, *, exact: bool, strict: bool = False) -> bool:
    """`strict` (a claim against its quote): the number must be there as a number with its
    scale: "3 billion" is not in "See Figure 3", but it is in "(USD billion) … 3" where the quote
    itself names the scale."""
    found = quantities(text)
    if not strict:
        return any(quantity.matches(q, exact=exact) for q in found)
    if any(quantity.matches(q, exact=exact, bare=False) for q in found):
        return True
    if quantity.scale == 1.0:
        return False
    named = scales_named(text)
    return quantity.scale in named and any(
        q.scale == 1.0
        and q.percent == quantity.percent
        and math.isclose(q.value, quantity.written, rel_tol=1e-9)
        for q in found
    )


_SCALE_WORD = re.compile(
    r"(?<![a-z])(" + "|".join(re.escape(w) for w in _SCALE_WORDS if len(w) > 1) + r")(?![a-z])", re.I
)


def scales_named(text: str) -> set[float]:
    """The scales a text names in words ("USD bn", "百萬元"), wherever they stand."""
    return {SCALES[m.group(1).lower()] for m in _SCALE_WORD.finditer(_plain(text))}


def stated_figures(text: str) -> list[Quantity]:
    """The figures a sentence or a cell states: years, quarter numbers and list ordinals are
    labels of a period, not figures, and are left out."""
    figures = []
    text = _plain(text)
    for match in _NUMBER.finditer(text):
        before = text[max(0, match.start() - 2) : match.start()].lower()
        raw = match.group("num").replace(",", "")
        if not match.group("scale") and not match.group("pct"):
            if (
                re.fullmatch(r"(19|20)\d\d", raw)
                or before.endswith(("q", "h", "fy"))
                or before[-1:] in ("q", "h")
            ):
                continue
        figures.extend(quantities(match.group(0)))
    return figures
