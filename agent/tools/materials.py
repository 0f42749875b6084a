"""search_channel_materials: the channel's own course materials (lecture PDFs, notes, slides).

Thin: retrieval is channels_app.retrieval.hybrid_search. The channel comes from the ToolContext
only; the tool has no channel parameter, so neither the model nor a prompt can point it elsewhere."""

from __future__ import annotations

from django.urls import reverse

from agent.engine.types import Source, ToolResult
from channels_app.models import Channel
from channels_app.retrieval import hybrid_search, snippet

from . import REGISTRY
from .registry import ToolContext


@REGISTRY.tool(tier="internal", search=True, exact_figures=False)
def search_channel_materials(ctx: ToolContext, query: str, top_k: int = 6) -> ToolResult:
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
    passages = hybrid_search(ctx.channel_id, query, top_k)
    sources, data = [], []
    for passage in passages:
        url = (
            reverse("material_detail", kwargs={"slug": slug, "pk": passage.material_id}) + f"#p{passage.page}"
        )
        score = round(passage.score, 4)
        short = snippet(passage.text, query)
        sources.append(
            Source(
                title=f"{passage.file_name} {passage.unit_label} {passage.page}",
                snippet=short,
                text=passage.text,
                tier="internal",
                locator=passage.locator,
                url=url,
                meta={"material_id": passage.material_id, "page": passage.page, "score": score},
            )
        )
        data.append(
            {"file": passage.file_name, "page": passage.page, "passage": passage.text, "score": score}
        )
    if not data:
        return ToolResult(
            data={"passages": [], "note": "no passage in this channel's materials matches the query"}
        )
    return ToolResult(sources=sources, data={"passages": data})
