"""Every event type is declared once (agent.engine.events.EVENTS), with what every surface shows
of it: its label (translated into Traditional Chinese in the catalogue), the progress card's
phase after it (or a handler in the card's reducer, static/js/progress.js) and its terminal line.
`missing_places` is the check; the tests run it on the real registry and show that a type
declared without what it needs is named, place by place, and that the page's ui strings and the
terminal read the declaration.

A new event type is therefore three files: its class in agent/engine/events.py, its emitter and
its translations in locale/zh_Hant/LC_MESSAGES/django.po."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from django.utils import translation

from agent.engine import events
from research.management.commands.deep_research import _summary
from research.ui_strings import js_strings

ROOT = Path(__file__).resolve().parents[2]


def in_reducer(js: str, type: str) -> bool:
    """A key of the reducer (`type: function`) or a quoted name (`["completed", …]`)."""
    return bool(re.search(rf'(?<![\w."]){type}\s*:|"{type}"', js))


def translated(message: str) -> bool:
    with translation.override("zh-hant"):
        return translation.gettext(message) != message


def missing_places(registry: dict[str, type[events.Event]]) -> dict[str, list[str]]:
    """For each event type, what it lacks; {} when every type has everything."""
    js = (ROOT / "static/js/progress.js").read_text(encoding="utf-8")
    with translation.override("en"):
        phases = js_strings()["phase"]
    missing: dict[str, list[str]] = {}
    for name, cls in registry.items():
        places = []
        if not translated(cls.label):
            places.append("locale/zh_Hant/LC_MESSAGES/django.po (the label's translation)")
        if cls.phase_text and not translated(cls.phase_text):
            places.append("locale/zh_Hant/LC_MESSAGES/django.po (the phase's translation)")
        if cls.phase and cls.phase not in phases and not cls.phase_text:
            places.append(
                f"agent/engine/events.py (phase {cls.phase!r} has no words: declare its phase_text)"
            )
        handled = in_reducer(js, name)
        if cls.stored and not cls.phase and not handled:
            places.append("agent/engine/events.py (the card's phase after it)")
        if cls.phase and handled:
            places.append(
                "static/js/progress.js (the reducer handles it, so its declared phase is never shown)"
            )
        if cls.stored and cls.summary is events.Event.summary:
            places.append("agent/engine/events.py (its terminal summary)")
        if places:
            missing[name] = places
    return missing


def test_every_event_type_has_its_places():
    assert missing_places(events.EVENTS) == {}


def test_an_event_type_declared_with_only_its_label_is_named_with_each_missing_place():
    @dataclasses.dataclass(frozen=True)
    class SourcesRanked(events.Event):
        type = "sources_ranked"
        label = events.gettext_noop("A label nobody translated")
        sources: int

    missing = missing_places({**events.EVENTS, SourcesRanked.type: SourcesRanked})
    assert missing == {
        "sources_ranked": [
            "locale/zh_Hant/LC_MESSAGES/django.po (the label's translation)",
            "agent/engine/events.py (the card's phase after it)",
            "agent/engine/events.py (its terminal summary)",
        ]
    }


def test_a_phase_without_words_and_a_phase_the_reducer_hides_are_named():
    @dataclasses.dataclass(frozen=True)
    class Ranked(events.Event):
        type = "sources_ranked"
        label = events.ClaimsExtracted.label
        phase = "ranking"
        summary = staticmethod(lambda data: "ranked")

    @dataclasses.dataclass(frozen=True)
    class Thinking(events.ActionThinking):
        phase = "comparing"

    missing = missing_places({Ranked.type: Ranked, Thinking.type: Thinking})
    assert missing == {
        "sources_ranked": ["agent/engine/events.py (phase 'ranking' has no words: declare its phase_text)"],
        "action_thinking": [
            "static/js/progress.js (the reducer handles it, so its declared phase is never shown)"
        ],
    }


def test_the_page_sends_each_declared_label_and_phase_in_the_readers_language():
    with translation.override("zh-hant"):
        strings = js_strings()
    assert strings["event"]["claims_extracted"] == "已從來源挑選段落"
    assert strings["event_phase"] == {
        "task_created": "queued",
        "claims_extracted": "comparing",
        "claims_verified": "interpreting",
        "verification_done": "finishing",
    }
    assert strings["phase"]["comparing"] == "正在讀取數字並比較各來源…"
    assert set(strings["event"]) == set(events.EVENTS)


def test_the_terminal_prints_the_declared_summary_and_cuts_an_undeclared_type_short():
    data = events.ClaimsVerified(
        claims=4, verified=4, failed=1, instruction_in_source=0, conflicts=2, unresolved=1
    ).data()
    assert _summary("claims_verified", data) == "4 facts, 2 conflicts (1 unresolved)"
    assert _summary(
        "status_change", {"from": "running", "to": "awaiting_plan_review", "deadline": "12:00"}
    ) == ("running → awaiting_plan_review (until 12:00)")
    assert _summary("an_older_type", {"text": "x" * 200}).endswith("…")


def test_a_type_without_a_label_or_declared_twice_fails_at_import():
    @dataclasses.dataclass(frozen=True)
    class Unnamed(events.Event):
        type = "unnamed"

    with pytest.raises(TypeError, match="has no label"):
        events._registry(Unnamed)
    with pytest.raises(TypeError, match="declared twice"):
        events._registry(events.Completed, events.Completed)


def test_payloads_keep_the_wire_format():
    """`data()` is what each emitter sent before the events were typed: optional fields left out
    when unset, `from_` sent as `from`, a required None kept."""
    assert events.StatusChange(from_="queued", to="running").data() == {"from": "queued", "to": "running"}
    assert events.Cancelled(response_log_id=None, stop_reason="cancelled").data() == {
        "response_log_id": None,
        "stop_reason": "cancelled",
    }
    assert events.Connected(last_seq=3).data() == {"last_seq": 3} and not events.Connected.stored
    with pytest.raises(TypeError):
        events.ActionThinking(round=1)  # a payload without its fields fails where it is built
    with pytest.raises(dataclasses.FrozenInstanceError):
        events.ActionThinking(round=1, purpose="evidence").round = 2
