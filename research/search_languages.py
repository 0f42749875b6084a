"""What the result page shows of a research's searches across languages (issue 48): the model's
translation of the question, kept in the plan (agent/engine/translation.py), and, per material
search, every query that ran and which passages each one found (channels_app.bilingual).

The translation is the AI's words, so the page marks its block `data-by="model"`; the queries
are shown as what was searched, never as facts."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from research.models import ResearchStep, ResearchTask

LANGUAGE_NAMES = {"en": _("English"), "zh": _("Chinese")}
# The html lang attribute of a text in each language (the pages' own codes).
LANG_ATTRIBUTES = {"en": "en", "zh": "zh-Hant"}
QUERY_LABELS = {
    "as_written": _("as written"),
    "model_translation": _("AI translation"),
    "question": _("the research question"),
    "glossary": _("the materials' own term pairs"),
}


def plan_translations(task: ResearchTask) -> dict:
    """{"status": "ok" | "failed" | "", "items": [{"text", "translation", "language", "lang"}]}."""
    stored = (task.plan_json or {}).get("translations") or {}
    if stored.get("by") != "model":
        return {"status": "", "items": []}
    items = [
        {
            "text": item.get("text", ""),
            "translation": item.get("translation", ""),
            "language": LANGUAGE_NAMES.get(item.get("language"), item.get("language", "")),
            "lang": LANG_ATTRIBUTES.get(item.get("language"), ""),
        }
        for item in stored.get("items") or []
        if isinstance(item, dict) and item.get("translation")
    ]
    return {"status": stored.get("status", ""), "items": items}


def step_queries(step: ResearchStep) -> list[dict]:
    """The queries of a material search that ran in more than one language, each with the
    passages it found: [{"label", "language", "lang", "text", "by_model", "found": [(title, rank)]}].
    Empty for any other step."""
    full = step.result_full if isinstance(step.result_full, dict) else {}
    data = full.get("data") if isinstance(full.get("data"), dict) else {}
    queries = data.get("queries") or []
    if len(queries) < 2:
        return []
    found: dict[int, list[tuple[str, int]]] = {}
    for source in full.get("sources") or []:
        for hit in (source.get("meta") or {}).get("found_by") or []:
            found.setdefault(hit.get("query"), []).append((source.get("title", ""), hit.get("rank")))
    return [
        {
            "label": QUERY_LABELS.get(query.get("by"), query.get("by", "")),
            "language": LANGUAGE_NAMES.get(query.get("language"), query.get("language", "")),
            "lang": LANG_ATTRIBUTES.get(query.get("language"), ""),
            "text": query.get("text", ""),
            "by_model": query.get("by") == "model_translation",
            "found": sorted(found.get(index, []), key=lambda hit: hit[1] or 0),
        }
        for index, query in enumerate(queries)
        if isinstance(query, dict)
    ]
