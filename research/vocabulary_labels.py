"""The engine's vocabulary (agent/engine/vocabulary.py) as the pages word it: each term's English
label wrapped in gettext_lazy, so a code is worded in the reader's language wherever it is shown.
Every place that shows a code asks here; no page keeps a table of its own.

The labels are marked once, in the engine (`gettext_noop`); `makemessages` finds them there and
the catalogue translates them."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

from agent.engine import vocabulary as V


def label(vocabulary: V.Vocabulary, value: str) -> Promise | str:
    """The label of `value` in the active language; an undeclared value (an older row) as it is."""
    if value not in vocabulary:
        return value
    return gettext_lazy(vocabulary.label(value))  # the msgids are marked in the engine


def text(vocabulary: V.Vocabulary, value: str) -> str:
    return str(label(vocabulary, value))


def choices(vocabulary: V.Vocabulary) -> list[tuple[str, Promise]]:
    """Django choices: (value, translated label), in the vocabulary's order."""
    return [(term.value, gettext_lazy(term.label)) for term in vocabulary]


def order(vocabulary: V.Vocabulary, value: str) -> int:
    """A value's place in its table (an unknown one last): tiers listed highest first, etc."""
    values = vocabulary.values
    return values.index(value) if value in values else len(values)
