"""The cross-language slice of dataset v3 as the retrieval test and bench search it: the items
whose every gold passage is in a language other than the question's, one course channel holding
every file of the slice and the demo course's three files (35 passages, in both languages),
recall@5 of the material search, and the engine's own translation call for a question
(agent/engine/translation.py) against a model server."""

from __future__ import annotations

import re

from django.core.files.uploadedfile import SimpleUploadedFile

from agent.engine import LLMClient, LLMConfig, NullSink, ResearchInput, UsageMeter
from agent.engine.state import RunContext
from agent.engine.translation import QueryTranslations
from agent.engine.types import Limits
from channels_app import demo_materials, materials
from channels_app.models import Channel
from evaluation import dataset as datasets
from evaluation import world
from materials import languages

V3 = datasets.DATASETS / "uedu_eval_v3.jsonl"


def cross_language_slice() -> list[tuple[datasets.Item, list[str]]]:
    """The v3 items whose every gold passage is in a language other than the question's, each
    with the gold paragraphs' texts. Found by script, not by a list: an item added to v3 joins
    the slice when it is one."""
    out = []
    for item in datasets.load(V3):
        asked = languages.main_language(item.question)
        golds = [
            item.document(ref.document).pages[ref.page].paragraphs[ref.paragraph]
            for fact in item.gold_facts
            for ref in fact.passages
            if ref.paragraph >= 0
        ]
        if golds and all(languages.main_language(text) not in ("", asked) for text in golds):
            out.append((item, golds))
    return out


def build_channel(owner, slug: str = "bilingual-slice") -> Channel:
    """One course channel with every file of the slice and the demo course's three files, indexed
    by the product's pipeline."""
    channel = Channel.objects.create(slug=slug, name="Bilingual slice", owner=owner)
    files: dict[str, bytes] = {}
    for item, _ in cross_language_slice():
        for document in item.documents:
            files.setdefault(world.file_name(document), world.material_bytes(document))
    files[demo_materials.PDF_NAME] = demo_materials.build_pdf()
    files[demo_materials.DOCX_NAME] = demo_materials.build_docx()
    files[demo_materials.PPTX_NAME] = demo_materials.build_pptx()
    for name, data in files.items():
        material, _ = materials.material_upload(
            channel=channel, user=owner, uploaded_file=SimpleUploadedFile(name, data), enqueue=False
        )
        indexed = materials.index_material(material.pk)
        if indexed is None or indexed.status != "ready":
            raise RuntimeError(f"{name} was not indexed: {getattr(indexed, 'error', 'gone')}")
    channel.refresh_from_db()
    return channel


def _flat(text: str) -> str:
    return re.sub(r"\s+", "", text)


def found_at_5(texts: list[str], golds: list[str]) -> bool:
    """A gold paragraph is among the first five passages (a passage holds it when it holds its
    first 30 characters, spaces aside: extraction re-wraps lines)."""
    return any(_flat(gold)[:30] in _flat(text) for text in texts[:5] for gold in golds)


def recall_at_5(results: list[list[str]], golds: list[list[str]]) -> float:
    return round(sum(found_at_5(texts, wanted) for texts, wanted in zip(results, golds)) / len(golds), 3)


def engine_translations(
    question: str,
    material_languages,
    base_url: str,
    question_language: str,
    *,
    model: str = "scripted",
    timeout: float = 10,
    recorder=None,
):
    """The engine's translation call for a research on `question` (no sub-questions), as a
    research makes it: (the run context, the QueryTranslations). Counted on the run's meter;
    `recorder` gets each exchange, as a research's transcript does."""
    client = LLMClient(
        LLMConfig(models={"default": model}, base_url=base_url, api_key="t", timeout=timeout),
        UsageMeter(),
        recorder=recorder,
    )
    run = RunContext(
        inp=ResearchInput(
            question=question, language=question_language, material_languages=tuple(material_languages)
        ),
        llm=client,
        sink=NullSink(),
        is_cancelled=lambda: False,
        limits=Limits(),
    )
    translations = QueryTranslations(run)
    translations.prepare()
    return run, translations
