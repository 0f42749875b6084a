"""search_channel_materials: the channel's own course materials (lecture PDFs, notes, slides).

Thin: retrieval is materials.bilingual.search (materials.retrieval.hybrid_search, run in
each language of the channel's materials and fused). The channel comes from the ToolContext only;
the tool has no channel parameter, so neither the model nor a prompt can point it elsewhere. The
engine hands it the research's question in the materials' other languages (`translations`,
absent from the schema the model reads); without them the channel's glossary carries the query
over. The result's data lists every query that ran and, for each passage, which of them found it
at which rank: the research's steps keep it."""

from __future__ import annotations

from django.urls import reverse

from agent.engine.types import Source, ToolResult
from channels_app.models import Channel
from materials import bilingual
from materials.retrieval import snippet

from . import REGISTRY
from .registry import ToolContext


@REGISTRY.tool(tier="internal", search=True, exact_figures=False, bilingual=True)
def search_channel_materials(
    ctx: ToolContext, query: str, top_k: int = 6, *, translations: list[dict] | None = None
) -> ToolResult:
    """Search the course materials the teacher uploaded to this channel (PDF handouts, Word notes,
    PowerPoint slides) and return the most relevant passages with file name and page or slide
    number. Combines meaning-based and exact-term search, so include the key terms (Chinese or
    English) as they would appear in the materials.

    Args:
        query: what to look for, e.g. a concept, a term or a short question
        top_k: how many passages to return (1-10)
    """
    top_k = max(1, min(int(top_k), 10))
    slug = (
        ctx.channel_slug or Channel.objects.filter(pk=ctx.channel_id).values_list("slug", flat=True).first()
    )
    if slug is None:
        return ToolResult(error="this channel no longer exists")
    outcome = bilingual.search(
        ctx.channel_id, query, top_k, translations=translations, held=ctx.material_languages
    )
    queries = [q.as_dict() for q in outcome.queries]
    sources, data = [], []
    for found in outcome.found:
        passage = found.passage
        # Which of the queries found it, at which rank ("as_written", "model_translation", …).
        found_by = [{"query": i, "by": queries[i]["by"], "rank": r} for i, r in sorted(found.ranks.items())]
        url = (
            reverse("material_detail", kwargs={"slug": slug, "pk": passage.material_id}) + f"#p{passage.page}"
        )
        score = round(found.score, 4)
        # Around the terms of the query that found it best (a translation's, for a passage in
        # the other language).
        short = snippet(passage.text, queries[min(found.ranks, key=found.ranks.get)]["text"])
        sources.append(
            Source(
                title=f"{passage.file_name} {passage.unit_label} {passage.page}",
                snippet=short,
                text=passage.text,
                tier="internal",
                locator=passage.locator,
                url=url,
                meta={
                    "material_id": passage.material_id,
                    "page": passage.page,
                    "score": score,
                    "found_by": found_by,
                    # A page can hold several passages (chunks): each is a source of its own.
                    "passage": passage.chunk_id,
                },
            )
        )
        data.append(
            {
                "file": passage.file_name,
                "page": passage.page,
                "passage": passage.text,
                "score": score,
                "found_by": found_by,
            }
        )
    searched = {"queries": queries}
    if outcome.unreached:
        searched["unreached_languages"] = outcome.unreached
    if not data:
        return ToolResult(
            data={
                "passages": [],
                "note": "no passage in this channel's materials matches the query",
                **searched,
            }
        )
    return ToolResult(sources=sources, data={"passages": data, **searched})
