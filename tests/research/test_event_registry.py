"""Every event type is declared once (agent.engine.events.EVENTS), and each one has its other
places: the README's "Events" list, the progress card's reducer (static/js/progress.js), a
label in research/ui_strings.py with its Traditional Chinese translation, and a line in the
terminal printer of `manage.py deep_research` (stored types only: the terminal reads stored
events). `missing_places` is the check; the tests run it on the real registry and show that a
type registered without its places is named, place by place."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from django.utils import translation

from agent.engine import events
from research.management.commands.deep_research import SUMMARIES
from research.ui_strings import js_strings

ROOT = Path(__file__).resolve().parents[2]


def readme_events_section(text: str) -> str | None:
    """The section whose heading contains "Events", down to the next heading of its level or
    above (None when there is none)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        heading = re.match(r"(#+)\s", line)
        if heading and "Events" in line:
            level = len(heading.group(1))
            body = []
            for following in lines[i + 1 :]:
                other = re.match(r"(#+)\s", following)
                if other and len(other.group(1)) <= level:
                    break
                body.append(following)
            return "\n".join(body)
    return None


def in_reducer(js: str, type: str) -> bool:
    """A key of the reducer (`type: function`) or a quoted name (`["completed", …]`)."""
    return bool(re.search(rf'(?<![\w."]){type}\s*:|"{type}"', js))


def missing_places(registry: dict[str, type[events.Event]], strings=js_strings) -> dict[str, list[str]]:
    """For each event type, the places that lack it; {} when every type is everywhere.
    `strings`: the texts the scripts get (research.ui_strings.js_strings)."""
    readme = readme_events_section((ROOT / "README.md").read_text(encoding="utf-8"))
    js = (ROOT / "static/js/progress.js").read_text(encoding="utf-8")
    with translation.override("en"):
        labels = strings()["event"]
    with translation.override("zh-hant"):
        translated = strings()["event"]
    missing: dict[str, list[str]] = {}
    for name, cls in registry.items():
        places = []
        if readme is None or f"`{name}`" not in readme:
            places.append("README.md (the list under the heading with 'Events')")
        if not in_reducer(js, name):
            places.append("static/js/progress.js (the reducer)")
        if name not in labels:
            places.append("research/ui_strings.py (js_strings()['event'])")
        elif translated[name] == labels[name]:
            places.append("locale/zh_Hant/LC_MESSAGES/django.po (the label's translation)")
        if cls.stored and name not in SUMMARIES:
            places.append("research/management/commands/deep_research.py (SUMMARIES)")
        if places:
            missing[name] = places
    return missing


def test_every_event_type_has_its_places():
    assert missing_places(events.EVENTS) == {}


def test_an_event_type_registered_without_its_places_is_named_with_each_missing_place():
    @dataclasses.dataclass(frozen=True)
    class SourcesRanked(events.Event):
        type = "sources_ranked"
        sources: int

    missing = missing_places({**events.EVENTS, SourcesRanked.type: SourcesRanked})
    assert list(missing) == ["sources_ranked"]
    places = " | ".join(missing["sources_ranked"])
    for place in ("README.md", "progress.js", "ui_strings.py", "deep_research.py"):
        assert place in places, place


def test_a_label_left_untranslated_is_named():
    """The translation is checked apart from the label: a label with no zh-Hant entry fails."""

    def strings_with_an_untranslated_label():
        strings = js_strings()
        strings["event"]["claims_verified"] = translation.gettext("A label nobody translated")
        return strings

    missing = missing_places(events.EVENTS, strings=strings_with_an_untranslated_label)
    assert missing == {"claims_verified": ["locale/zh_Hant/LC_MESSAGES/django.po (the label's translation)"]}


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


def test_a_type_declared_twice_fails_at_import():
    with pytest.raises(TypeError, match="declared twice"):
        events._registry(events.Completed, events.Completed)
