"""Run an evaluation: for each item, a temporary channel holding its documents (real DOCX files
through the materials pipeline), k researches on it with the configured LLM, then scores."""

from __future__ import annotations

import io
import re
import statistics
import uuid
from typing import Callable

from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from channels_app.materials import index_material, material_upload
from channels_app.models import Channel, Membership
from research.models import ResearchTask
from research.services import lifecycle, replay, runner
from agent.llm_factory import make_client

from .dataset import Document, Item
from .judge import Judge
from .scoring import score

EVAL_USER = "eval-runner"


class EvaluationError(Exception):
    pass


def docx_bytes(document: Document) -> bytes:
    import docx

    file = docx.Document()
    for paragraph in document.paragraphs:
        file.add_paragraph(paragraph)
    buffer = io.BytesIO()
    file.save(buffer)
    return buffer.getvalue()


def eval_user():
    # Inactive: it owns the temporary channels (so its quota is unlimited) but can never log in.
    user, _ = get_user_model().objects.get_or_create(username=EVAL_USER, defaults={"is_active": False})
    return user


def build_fixture(item: Item, owner) -> Channel:
    slug = f"eval-{re.sub(r'[^a-z0-9]+', '-', item.id.lower()).strip('-')[:40]}-{uuid.uuid4().hex[:6]}"
    channel = Channel.objects.create(slug=slug, name=f"Evaluation: {item.id}", owner=owner, deep_research_enabled=True)
    Membership.objects.create(user=owner, channel=channel, role=Membership.Role.TEACHER)
    for document in item.documents:
        name = document.name if document.name.lower().endswith(".docx") else f"{document.name}.docx"
        material, _ = material_upload(channel=channel, user=owner, uploaded_file=SimpleUploadedFile(name, docx_bytes(document)), enqueue=False)
        indexed = index_material(material.pk)
        if indexed is None or indexed.status != "ready":
            raise EvaluationError(f"{item.id}: document {name} was not indexed ({getattr(indexed, 'error', 'gone')})")
    return channel


def run_item(item: Item, *, k: int, judge: Judge, model: str | None = None, keep: bool = False) -> dict:
    owner = eval_user()
    channel = build_fixture(item, owner)
    try:
        runs: list[ResearchTask] = []
        for _ in range(k):
            task, _ = lifecycle.task_start(user=owner, channel=channel, question=item.question, queue=False)
            runner.execute_task(task.pk, model=model)
            task.refresh_from_db()
            runs.append(task)
        scores = [score(task, item, judge) if task.status == "completed" else {"task_uuid": str(task.task_uuid), "status": task.status,
                                                                                "error": task.error} for task in runs]
        reproduced = [replay.compare(runs[0], other)["reproduced"] for other in runs[1:]]
        return {"id": item.id, "language": item.language, "runs": scores,
                "reproducibility": round(sum(reproduced) / len(reproduced), 4) if reproduced else None,
                **{key: _mean([s.get(key) for s in scores]) for key in
                   ("citation_recall", "citation_precision", "expected_fact_recall", "conflict_disclosure")}}
    finally:
        if not keep:
            channel.delete()


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.fmean(values), 4) if values else None


def evaluate(items: list[Item], *, k: int = 1, model: str | None = None, keep: bool = False,
             progress: Callable[[str], None] = lambda line: None) -> dict:
    judge = Judge(make_client())
    results = []
    for number, item in enumerate(items, start=1):
        progress(f"[{number}/{len(items)}] {item.id}")
        results.append(run_item(item, k=k, judge=judge, model=model, keep=keep))
    summary = {key: _mean([r[key] for r in results]) for key in
               ("citation_recall", "citation_precision", "expected_fact_recall", "conflict_disclosure", "reproducibility")}
    summary["items"] = len(results)
    summary["completed_runs"] = sum(1 for r in results for run in r["runs"] if run["status"] == "completed")
    summary["runs"] = sum(len(r["runs"]) for r in results)
    summary["judge_calls"] = judge.calls
    return {"k": k, "model": model, "items": results, "summary": summary}
