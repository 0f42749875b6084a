"""What the result page shows of a research's material searches across languages: per
search, every query that ran and which passages each one found (materials.bilingual).

A query the model wrote (the researcher's own query, the AI's translation of the question) is the
AI's words: the page marks it `data-by="model"` with its label. The question's translation as the
report shows it is the plan's (report_view.QueriesView). The queries are shown as what was
searched, never as facts."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from research.models import ResearchStep
from research.report_wording import LANG_ATTRIBUTES, LANGUAGE_NAMES

# The queries the model wrote: the researcher's query as it called the tool, and its translation.
BY_MODEL = {"as_written", "model_translation"}
QUERY_LABELS = {
    "as_written": _("as written"),
    "model_translation": _("AI translation"),
    "question": _("the research question"),
    "glossary": _("the materials' own term pairs"),
}


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
            "by_model": query.get("by") in BY_MODEL,
            "found": sorted(found.get(index, []), key=lambda hit: hit[1] or 0),
        }
        for index, query in enumerate(queries)
        if isinstance(query, dict)
    ]
