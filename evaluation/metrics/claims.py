"""The claim set of a run, as runs are compared on it (reproducibility).

A figure is its (entity, metric, period, value): two runs that report the same number in other
words agree, and two runs that word a sentence alike but differ in a figure do not. Values are
compared as numbers (3.215 and 3.2150 are one value). Other claims are their normalised text.
The task's verified claims are used when it stores them; otherwise (a Markdown-era task, a
hand-built observation) the body's units: a table cell is a figure of (row label, column), a
sentence its text."""

from __future__ import annotations

import re

from ..observed import Observation
from .gold import normalised

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def number(value) -> str:
    try:
        return f"{float(str(value).replace(',', '')):.6g}"
    except ValueError:
        return normalised(str(value))


def _key(*parts) -> str:
    return "|".join(parts)


def claim_keys(observation: Observation) -> list[str]:
    if not observation.completed:
        return []
    keys = []
    if observation.claim_records:
        for c in observation.claim_records:
            if c.get("kind") == "figure" and c.get("value") is not None:
                keys.append(
                    _key(
                        "figure",
                        normalised(c.get("entity", "")),
                        normalised(c.get("metric", "")),
                        normalised(c.get("period", "")),
                        number(c["value"]),
                    )
                )
            else:
                keys.append(_key("fact", normalised(c.get("text", ""))))
    else:
        for unit in observation.units:
            found = NUMBER.search(unit.text.rsplit(":", 1)[-1]) if unit.kind == "cell" else None
            if found:
                keys.append(
                    _key("figure", normalised(unit.label), normalised(unit.column), "", number(found[0]))
                )
            else:
                keys.append(_key("fact", normalised(unit.text)))
    return sorted(set(keys))


def states_value(expected: float, texts: list[str]) -> bool:
    """Does any text state this figure? A number counts when it equals the value at the value's
    own precision, read as is or in billions or millions ("USD 3,215,000,000" states 3.22), so a
    judge that lets a swapped figure through cannot give the fact: code narrows the judge."""
    places = len(f"{expected:.6g}".split(".", 1)[1]) if "." in f"{expected:.6g}" else 0
    tolerance = 0.5 * 10**-places + 1e-9
    for text in texts:
        for raw in NUMBER.findall(text):
            value = float(raw.replace(",", ""))
            if any(abs(value / scale - expected) <= tolerance for scale in (1, 1e9, 1e6)):
                return True
    return False
