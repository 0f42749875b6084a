"""Run an evaluation: for each item, a temporary channel holding its course materials (real PDF,
DOCX and PPTX files through the materials pipeline) and the item's frozen web pages, figures and
catalogue entries as tools (world.py); k researches with the configured (or given) model through
the real runner; then scores by an independent judge, per item, per category and overall."""

from __future__ import annotations

import json
import re
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from channels_app.materials import index_material, material_upload
from channels_app.models import Channel, Membership
from research.models import ResearchTask
from research.services import lifecycle, replay, runner

from . import statistics, world
from .dataset import Item
from .judge import Judge, JudgeBudgetExceeded, JudgeSettings
from .observed import observe
from .results import RESULTS_VERSION, ResultsFolder, now, observation_record, stored_observation
from .scoring import METRICS, by_category, failed, item_scores, reproducibility, score, summarise

EVAL_USER = "eval-runner"


class EvaluationError(Exception):
    pass


def eval_user():
    """The account the evaluation researches as: it owns the temporary channels (so its quota is
    the teacher's) and holds no usable password, so nobody can log in as it and the per-user share
    and start limits do not apply (channels_app.roles.is_service_account). It is active: an
    inactive account holds no permission at all."""
    user, _ = get_user_model().objects.get_or_create(username=EVAL_USER)
    if not user.is_active or user.has_usable_password():
        user.is_active = True
        user.set_unusable_password()
        user.save(update_fields=["is_active", "password"])
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


def judged_run(observation, item: Item, judge: Judge) -> dict:
    """The scores of one run with everything needed to check them: the answer, its units and
    sources, and every statement the judge was shown with its passages and verdict."""
    judge.record()
    scores = score(observation, item, judge)
    return {**scores, **observation_record(observation), "judged": judge.take_transcript()}


def _row(item: Item, runs: list[dict]) -> dict:
    return {
        "id": item.id,
        "language": item.language,
        "category": item.category,
        "traps": item.traps,
        "runs": runs,
        **item_scores(runs),
    }


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
            runs.append(judged_run(observe(task), item, judge))
        return _row(item, runs)
    finally:
        if not keep:
            channel.delete()


def error_row(item: Item, k: int, exc: BaseException) -> dict:
    """An item stopped by an unexpected error: recorded with its traceback and scored as k failed
    runs (no credit), so the run goes on and the error can never improve a mean."""
    message = f"{type(exc).__name__}: {exc}"[:500]
    record = {
        "task_uuid": "",
        "status": "error",
        "error": message,
        "tokens": 0,
        "cost_usd": 0.0,
        "duration_seconds": 0.0,
        "model": "",
        **failed(None, item),
        "outcome": "failed",
        "no_verdict": 0,
        "units": 0,
        "claims": [],
        "claim_keys": [],
        "polluting_sources": [],
        "obeyed": [],
    }
    return {
        **_row(item, [dict(record) for _ in range(k)]),
        "error": message,
        "traceback": traceback.format_exc()[-4000:],
    }


def _usage(judge: Judge) -> tuple[int, int, float]:
    return judge.calls, judge.meter.total.total_tokens, judge.meter.total.cost_usd


def evaluate(
    items: list[Item],
    *,
    folder: ResultsFolder,
    judge: Judge,
    k: int = 3,
    model: str | None = None,
    keep: bool = False,
    progress: Callable[[str], None] = lambda line: None,
) -> dict:
    """Run every item not yet finished in `folder` (all of them in a new folder), writing each
    item's file as soon as it is done, then the summary. An unexpected error stops one item,
    not the run; a spent judge budget or cap (JudgeBudgetExceeded) or an interruption stops the
    run, and --resume continues it."""
    done = folder.finished()
    started = time.monotonic()
    for index, item in enumerate(items, start=1):
        if item.id in done:
            progress(f"[{index}/{len(items)}] {item.id}: finished before, kept")
            continue
        progress(f"[{index}/{len(items)}] {item.id}")
        calls, tokens, cost = _usage(judge)
        begun = now()
        try:
            row = {**run_item(item, k=k, judge=judge, model=model, keep=keep), "status": "done"}
        except JudgeBudgetExceeded:
            raise
        except Exception as exc:  # noqa: BLE001 — recorded in the item's file; the run goes on
            row = {**error_row(item, k, exc), "status": "error"}
            progress(f"[{index}/{len(items)}] {item.id}: ERROR {row['error']}")
        after = _usage(judge)
        row["judge_usage"] = {
            "calls": after[0] - calls,
            "tokens": after[1] - tokens,
            "cost_usd": round(after[2] - cost, 6),
        }
        row["started_at"], row["finished_at"] = begun, now()
        folder.write_item(index, row)
    return finish(folder, items, wall_seconds=time.monotonic() - started)


def finish(folder: ResultsFolder, items: list[Item], *, wall_seconds: float = 0.0) -> dict:
    """The summary of a folder's items (in the dataset's order), written as summary.json."""
    stored = folder.items()
    rows = [stored[item.id] for item in items if item.id in stored]
    manifest = folder.manifest
    usage = [row.get("judge_usage", {}) for row in rows]
    judge_block = {
        **{key: manifest["judge"].get(key) for key in ("model", "same_as_researcher", "prompt_hash")},
        "calls": sum(u.get("calls", 0) for u in usage),
        "tokens": sum(u.get("tokens", 0) for u in usage),
        "cost_usd": round(sum(u.get("cost_usd", 0.0) for u in usage), 6),
        "check": {
            key: (manifest["judge"].get("check") or {}).get(key)
            for key in ("passed", "min_kappa", "by_language")
        },
    }
    results = {
        "version": RESULTS_VERSION,
        "folder": str(folder.path),
        "dataset": manifest["dataset"]["path"],
        "k": manifest["k"],
        "model": manifest["model"],
        "researcher_models": manifest["researcher_models"],
        "judge": judge_block,
        "flags": manifest["flags"],
        "wall_seconds": round(wall_seconds, 3),
        "errors": [
            {"id": row["id"], "error": row.get("error", "")} for row in rows if row.get("status") != "done"
        ],
        "items": rows,
        "summary": summarise(rows),
        "by_category": by_category(rows),
    }
    folder.write_summary(
        {key: value for key, value in results.items() if key != "items"}
        | {
            "items": [
                {
                    key: row.get(key)
                    for key in ("id", "language", "category", "status", "outcomes", "no_verdict", *COMPARED)
                }
                for row in rows
            ]
        }
    )
    folder.update_manifest(finished_at=now())
    return results


# --------------------------------------------------------------------------- replay of a whole set

COMPARED = METRICS + ("reproducibility",)


def refusals(previous: dict, current: dict) -> list[str]:
    """What differs between a stored run's manifest and this one, so that their verdicts cannot be
    compared (or a run continued): the dataset, the judge, the judge's prompt."""
    checks = [
        ("dataset sha256", previous["dataset"]["sha256"], current["dataset"]["sha256"]),
        ("judge model", previous["judge"]["model"], current["judge"]["model"]),
        ("judge server", previous["judge"]["base_url"], current["judge"]["base_url"]),
        ("judge prompt hash", previous["judge"]["prompt_hash"], current["judge"]["prompt_hash"]),
    ]
    return [f"{name}: {a} in the stored run, {b} now" for name, a, b in checks if a != b]


def rejudge(folder: ResultsFolder, items: list[Item], judge: Judge, progress=lambda line: None) -> list[dict]:
    """The stored answers of `folder`, judged again now by `judge` (so both sides of a comparison
    are judged by the same judge at the same time)."""
    stored = folder.items()
    rows = []
    for number, item in enumerate(items, start=1):
        progress(f"[{number}/{len(items)}] {item.id}: judging the stored answers again")
        runs = [judged_run(stored_observation(run), item, judge) for run in stored[item.id]["runs"]]
        for run, old in zip(runs, stored[item.id]["runs"]):
            if old.get("status") == "error":  # an item stopped by an error stays no credit
                run.update(status="error", error=old.get("error", ""))
        rows.append(_row(item, runs))
    return rows


def _delta(a, b):
    return round(b - a, 4) if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None


def compare(before: dict, after: dict, groups: dict[str, str] | None = None) -> dict:
    """Both runs' scores per metric, overall and per category, with the differences (after − before);
    per item the differences; and, when both sides are item rows, bootstrap intervals per metric
    (`groups`: item id -> linked group, statistics.linked_groups; each item alone when not given)."""

    def side_by_side(a: dict, b: dict) -> dict:
        return {
            key: {"before": a.get(key), "after": b.get(key), "delta": _delta(a.get(key), b.get(key))}
            for key in COMPARED + ("completed_runs", "failed_runs", "tokens", "cost_usd")
        }

    categories = sorted(set(before.get("by_category", {})) | set(after.get("by_category", {})))
    after_by_id = {row["id"]: row for row in after.get("items", [])}
    paired = [(row, after_by_id[row["id"]]) for row in before.get("items", []) if row["id"] in after_by_id]
    return {
        "before_model": before.get("model"),
        "after_model": after.get("model"),
        "overall": side_by_side(before["summary"], after["summary"]),
        "by_category": {
            c: side_by_side(before.get("by_category", {}).get(c, {}), after.get("by_category", {}).get(c, {}))
            for c in categories
        },
        "items": [
            {
                "id": a["id"],
                **{
                    key: {"before": a.get(key), "after": b.get(key), "delta": _delta(a.get(key), b.get(key))}
                    for key in COMPARED
                },
            }
            for a, b in paired
        ],
        "intervals": {
            key: statistics.bootstrap([a for a, _ in paired], [b for _, b in paired], key, groups=groups)
            for key in COMPARED
        },
        "bootstrap": {
            "resamples": statistics.RESAMPLES,
            "seed": statistics.SEED,
            "level": 0.95,
            "unit": "linked groups" if groups else "items",
            "groups": len({groups.get(a["id"], a["id"]) for a, _ in paired}) if groups else len(paired),
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


# --------------------------------------------------------------------------- the smoke subset

SMOKE_FILE = Path(__file__).resolve().parent / "datasets" / "smoke.json"
SMOKE_SIZE = 12


def smoke_items(items: list[Item], dataset: str) -> list[Item]:
    """The dataset's fixed smoke subset (datasets/smoke.json), in dataset order; for a dataset not
    listed there, 12 items taken in turn from each (category, language) group in dataset order."""
    listed = json.loads(SMOKE_FILE.read_text(encoding="utf-8")).get(Path(dataset).name)
    if listed:
        by_id = {item.id: item for item in items}
        missing = [i for i in listed if i not in by_id]
        if missing:
            raise EvaluationError(
                f"the smoke subset names items the dataset does not have: {', '.join(missing)}"
            )
        return [item for item in items if item.id in set(listed)]
    groups: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        groups.setdefault((item.category, item.language), []).append(item)
    chosen: list[Item] = []
    while len(chosen) < min(SMOKE_SIZE, len(items)):
        for group in groups.values():
            if group and len(chosen) < SMOKE_SIZE:
                chosen.append(group.pop(0))
    wanted = {item.id for item in chosen}
    return [item for item in items if item.id in wanted]
