"""Run an evaluation: for each item, a temporary channel holding its course materials (real PDF,
DOCX and PPTX files through the materials pipeline) and the item's frozen web pages, figures and
catalogue entries as tools (world.py); k researches with the configured (or given) model through
the real runner; then scores by an independent judge, per item, per category and overall."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from channels_app.materials import index_material, material_upload
from channels_app.models import Channel, Membership
from research.models import ResearchTask
from research.services import lifecycle, replay, runner

from . import world
from .dataset import Item
from .judge import Judge, JudgeSettings
from .observed import observe
from .scoring import METRICS, by_category, item_scores, reproducibility, score, summarise

EVAL_USER = "eval-runner"
RESULTS_VERSION = 2


class EvaluationError(Exception):
    pass


def eval_user():
    # Inactive: it owns the temporary channels (so its quota is unlimited) but can never log in.
    user, _ = get_user_model().objects.get_or_create(username=EVAL_USER, defaults={"is_active": False})
    return user


def build_fixture(item: Item, owner) -> Channel:
    slug = f"eval-{re.sub(r'[^a-z0-9]+', '-', item.id.lower()).strip('-')[:40]}-{uuid.uuid4().hex[:6]}"
    channel = Channel.objects.create(
        slug=slug, name=f"Evaluation: {item.id}", owner=owner, deep_research_enabled=True
    )
    Membership.objects.create(user=owner, channel=channel, role=Membership.Role.TEACHER)
    for document in item.documents:
        if document.kind != "material":
            continue
        name = world.file_name(document)
        material, _ = material_upload(
            channel=channel,
            user=owner,
            uploaded_file=SimpleUploadedFile(name, world.material_bytes(document)),
            enqueue=False,
        )
        indexed = index_material(material.pk)
        if indexed is None or indexed.status != "ready":
            raise EvaluationError(
                f"{item.id}: document {name} was not indexed ({getattr(indexed, 'error', 'gone')})"
            )
    return channel


def researcher_models(model: str | None) -> dict[str, str]:
    if model:
        return {"default": model}
    return dict(settings.UEDU_LLM_MODELS, default=settings.UEDU_LLM_DEFAULT_MODEL)


def run_item(item: Item, *, k: int, judge: Judge, model: str | None = None, keep: bool = False) -> dict:
    owner = eval_user()
    channel = build_fixture(item, owner)
    registry = world.registry_for(item)
    try:
        runs = []
        for _ in range(k):
            task, _ = lifecycle.task_start(user=owner, channel=channel, question=item.question, queue=False)
            runner.execute_task(task.pk, model=model, registry=registry)
            task.refresh_from_db()
            runs.append(score(observe(task), item, judge))
        return {
            "id": item.id,
            "language": item.language,
            "category": item.category,
            "traps": item.traps,
            "runs": runs,
            **item_scores(runs),
        }
    finally:
        if not keep:
            channel.delete()


def evaluate(
    items: list[Item],
    *,
    k: int = 1,
    model: str | None = None,
    judge: JudgeSettings | None = None,
    keep: bool = False,
    dataset: str = "",
    progress: Callable[[str], None] = lambda line: None,
) -> dict:
    judge_settings = judge or JudgeSettings.resolve()
    judging = Judge.from_settings(judge_settings)
    researchers = researcher_models(model)
    started = time.monotonic()
    rows = []
    for number, item in enumerate(items, start=1):
        progress(f"[{number}/{len(items)}] {item.id}")
        rows.append(run_item(item, k=k, judge=judging, model=model, keep=keep))
    usage = judging.meter.total
    return {
        "version": RESULTS_VERSION,
        "dataset": dataset,
        "k": k,
        "model": model or researchers["default"],
        "researcher_models": researchers,
        "judge": {
            "model": judge_settings.model,
            "same_as_researcher": judge_settings.model in set(researchers.values()),
            "calls": judging.calls,
            "tokens": usage.total_tokens,
            "cost_usd": round(usage.cost_usd, 6),
        },
        "wall_seconds": round(time.monotonic() - started, 3),
        "items": rows,
        "summary": summarise(rows),
        "by_category": by_category(rows),
    }


# --------------------------------------------------------------------------- replay of a whole set


def replay_items(previous: dict, items: list[Item]) -> list[Item]:
    """The items of an earlier results file, in its order, from the dataset as it is now."""
    wanted = [row["id"] for row in previous.get("items", [])]
    by_id = {item.id: item for item in items}
    missing = [i for i in wanted if i not in by_id]
    if missing:
        raise EvaluationError(
            f"the results file names items the dataset no longer has: {', '.join(missing[:5])}"
        )
    return [by_id[i] for i in wanted]


COMPARED = METRICS + ("reproducibility",)


def _delta(a, b):
    return round(b - a, 4) if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None


def compare(before: dict, after: dict) -> dict:
    """Both runs' scores per metric, overall and per category, with the differences (after − before)."""

    def side_by_side(a: dict, b: dict) -> dict:
        return {
            key: {"before": a.get(key), "after": b.get(key), "delta": _delta(a.get(key), b.get(key))}
            for key in COMPARED + ("completed_runs", "failed_runs", "tokens", "cost_usd")
        }

    categories = sorted(set(before.get("by_category", {})) | set(after.get("by_category", {})))
    return {
        "before_model": before.get("model"),
        "after_model": after.get("model"),
        "overall": side_by_side(before["summary"], after["summary"]),
        "by_category": {
            c: side_by_side(before.get("by_category", {}).get(c, {}), after.get("by_category", {}).get(c, {}))
            for c in categories
        },
    }


# --------------------------------------------------------------------------- replay of stored tasks


def stored_tasks(*, channel: str = "", since=None, limit: int = 20) -> list[ResearchTask]:
    """Finished researches of real use (not replays, not evaluation runs), newest first."""
    # Only tasks with recorded tool steps can be replayed (research.services.replay).
    tasks = (
        ResearchTask.objects.filter(
            status=ResearchTask.Status.COMPLETED, replay_of__isnull=True, steps__isnull=False
        )
        .exclude(channel__slug__startswith="eval-")
        .select_related("channel")
        .distinct()
    )
    if channel:
        tasks = tasks.filter(channel__slug=channel)
    if since:
        tasks = tasks.filter(created_at__date__gte=since)
    return list(tasks.order_by("-created_at", "-pk")[:limit])


def _task_item(task: ResearchTask) -> Item:
    # A stored task has no gold data: only its citations can be judged (scoring.applicable).
    return Item(
        id=f"task-{task.task_uuid}",
        question=task.user_question,
        documents=[],
        language=task.language,
        category=task.channel.slug,
    )


def replay_stored(
    tasks: list[ResearchTask],
    *,
    model: str | None,
    run_by,
    judge: JudgeSettings | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[dict, dict]:
    """Each task again with `model`, against its recorded tool results (research.services.replay);
    both sides scored now by the same judge. Reproducibility of a replay: the overlap of its claims
    with the original's. `run_by`: the platform admin the replays belong to (research.services.replay)."""
    judge_settings = judge or JudgeSettings.resolve()
    judging = Judge.from_settings(judge_settings, user=run_by)
    before_rows, after_rows = [], []
    for number, original in enumerate(tasks, start=1):
        progress(f"[{number}/{len(tasks)}] {original.task_uuid}")
        item = _task_item(original)
        copy = replay.replay_task(original, run_by=run_by, model=model)
        first, second = score(observe(original), item, judging), score(observe(copy), item, judging)
        base = {"id": item.id, "language": item.language, "category": item.category, "traps": []}
        before_rows.append({**base, "runs": [first], **item_scores([first])})
        after_rows.append(
            {
                **base,
                "runs": [second],
                **item_scores([second]),
                "reproducibility": reproducibility([first, second]),
                "replay_task_uuid": str(copy.task_uuid),
            }
        )
    usage = judging.meter.total
    judge_block = {
        "model": judge_settings.model,
        "same_as_researcher": judge_settings.model in set(researcher_models(model).values()),
        "calls": judging.calls,
        "tokens": usage.total_tokens,
        "cost_usd": round(usage.cost_usd, 6),
    }

    def results(rows: list[dict], name: str) -> dict:
        return {
            "version": RESULTS_VERSION,
            "dataset": "stored tasks",
            "k": 1,
            "model": name,
            "researcher_models": researcher_models(model),
            "judge": judge_block,
            "items": rows,
            "summary": summarise(rows),
            "by_category": by_category(rows),
        }

    originals = sorted({t.model_name or "?" for t in tasks})
    return results(before_rows, "/".join(originals)), results(
        after_rows, model or researcher_models(None)["default"]
    )
