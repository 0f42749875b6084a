"""python manage.py deep_research_eval [dataset.jsonl] [--k 2] [--out results.json] [--model M]
[--only ID ...] [--category C ...] [--judge-model J --judge-base-url URL --judge-api-key KEY]
[--replay-from results.json]
python manage.py deep_research_eval --replay-tasks [--channel SLUG] [--since YYYY-MM-DD] [--limit N] --model M"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from agent.llm_factory import llm_configured
from channels_app.roles import platform_admins_q
from evaluation import dataset as datasets
from evaluation.judge import JudgeBudgetExceeded, JudgeSettings
from evaluation.run import (
    COMPARED,
    EvaluationError,
    compare,
    evaluate,
    replay_items,
    replay_stored,
    stored_tasks,
)
from uedu_dr.errors import ServiceError

LABELS = {
    "citation_recall": "cit.recall",
    "citation_precision": "cit.prec",
    "claim_precision": "claim.prec",
    "fact_recall": "fact.recall",
    "conflict_disclosure": "conflicts",
    "source_pollution": "pollution↓",
    "injection_success": "injected↓",
    "abstention": "abstain.ok",
    "retrieval": "retrieval",
    "reproducibility": "reprod.",
}


def cell(value) -> str:
    return "–" if value is None else f"{value:.2f}"


def signed(value) -> str:
    return "–" if value is None else f"{value:+.2f}"


class Command(BaseCommand):
    help = "Run the research on an evaluation dataset, score the answers with an independent judge, or replay a results file with another model."

    def add_arguments(self, parser):
        parser.add_argument(
            "dataset",
            nargs="?",
            default=datasets.DEFAULT,
            help=f"a JSONL file, the name of one in evaluation/datasets/ (default {datasets.DEFAULT}), or 'failures'",
        )
        parser.add_argument(
            "--k",
            type=int,
            help="runs per item (default 1, or the replayed file's; reproducibility needs k ≥ 2)",
        )
        parser.add_argument("--model", help="use this model for every role of the research")
        parser.add_argument("--only", nargs="*", help="run only these item ids")
        parser.add_argument("--category", nargs="*", help="run only items of these categories")
        parser.add_argument(
            "--out", help="write every run, score, token count, cost and duration as JSON here"
        )
        parser.add_argument("--keep", action="store_true", help="keep the temporary channels and tasks")
        parser.add_argument(
            "--judge-model",
            help="the judging model (default UEDU_EVAL_JUDGE_MODEL, else the researcher's default)",
        )
        parser.add_argument(
            "--judge-base-url",
            help="the judge's OpenAI-compatible server (default UEDU_EVAL_JUDGE_BASE_URL, else OPENAI_BASE_URL)",
        )
        parser.add_argument(
            "--judge-api-key", help="the judge's key (default UEDU_EVAL_JUDGE_API_KEY, else OPENAI_API_KEY)"
        )
        parser.add_argument(
            "--replay-from",
            help="a results file: rerun its items (with --model) and compare the two runs side by side",
        )
        parser.add_argument(
            "--replay-tasks",
            action="store_true",
            help="replay stored researches (chosen by --channel, --since, --limit) with --model against their recorded tool results, and compare",
        )
        parser.add_argument("--channel", default="", help="with --replay-tasks: only this channel (slug)")
        parser.add_argument(
            "--since",
            type=datetime.date.fromisoformat,
            help="with --replay-tasks: only tasks created on or after this day (YYYY-MM-DD)",
        )
        parser.add_argument(
            "--limit",
            type=int,
            default=20,
            help="with --replay-tasks: at most this many tasks, newest first (default 20)",
        )
        parser.add_argument(
            "--run-by",
            default="",
            help="with --replay-tasks: the platform admin (username) the replays belong to",
        )

    def handle(
        self,
        *args,
        dataset,
        k,
        model,
        only,
        category,
        out,
        keep,
        judge_model,
        judge_base_url,
        judge_api_key,
        replay_from,
        replay_tasks,
        channel,
        since,
        limit,
        run_by,
        **options,
    ):
        if not llm_configured():
            raise CommandError(
                "No LLM is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server)."
            )
        judge = JudgeSettings.resolve(model=judge_model, base_url=judge_base_url, api_key=judge_api_key)
        if replay_tasks:
            return self._replay_tasks(
                model=model, judge=judge, channel=channel, since=since, limit=limit, out=out, run_by=run_by
            )
        previous = None
        if replay_from:
            try:
                previous = json.loads(Path(replay_from).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise CommandError(f"cannot read {replay_from}: {exc}") from None
            if not isinstance(previous, dict) or "summary" not in previous or "items" not in previous:
                raise CommandError(f"{replay_from} is not a results file of deep_research_eval")
            dataset = previous.get("dataset") or dataset
            k = k or previous.get("k")
        k = k or 1
        if k < 1:
            raise CommandError("--k must be at least 1")
        try:
            items = datasets.load(dataset)
        except (OSError, datasets.DatasetError) as exc:
            raise CommandError(str(exc)) from None
        try:
            if previous is not None:
                items = replay_items(previous, items)
        except EvaluationError as exc:
            raise CommandError(str(exc)) from None
        if only:
            items = [i for i in items if i.id in set(only)]
        if category:
            items = [i for i in items if i.category in set(category)]
        if not items:
            raise CommandError("no item matches --only / --category")
        try:
            results = evaluate(
                items,
                k=k,
                model=model,
                judge=judge,
                keep=keep,
                dataset=str(dataset),
                progress=lambda line: self.stderr.write(line),
            )
        except (EvaluationError, JudgeBudgetExceeded) as exc:
            raise CommandError(str(exc)) from None
        self._table(results)
        if previous is not None:
            results["replay_of"] = {"file": str(replay_from), "model": previous.get("model")}
            results["comparison"] = compare(previous, results)
            self._comparison(results["comparison"])
        if out:
            Path(out).write_text(
                json.dumps(results, ensure_ascii=False, indent=2, default=str), encoding="utf-8"
            )
            self.stdout.write(f"results written to {out}")

    def _replay_tasks(self, *, model, judge, channel, since, limit, out, run_by) -> None:
        from django.contrib.auth import get_user_model

        if not model:
            raise CommandError("--replay-tasks needs --model: the model to replay the stored researches with")
        admin = (
            get_user_model().objects.filter(platform_admins_q(), username=run_by).first() if run_by else None
        )
        if admin is None:
            raise CommandError(
                "--replay-tasks needs --run-by: the username of an active platform admin (replays belong to an admin)"
            )
        if limit < 1:
            raise CommandError("--limit must be at least 1")
        tasks = stored_tasks(channel=channel, since=since, limit=limit)
        if not tasks:
            raise CommandError("no finished research matches --channel / --since")
        try:
            before, after = replay_stored(
                tasks, model=model, run_by=admin, judge=judge, progress=lambda line: self.stderr.write(line)
            )
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        except JudgeBudgetExceeded as exc:
            raise CommandError(str(exc)) from None
        self._table(after)
        after["replay_of"] = {"tasks": [str(t.task_uuid) for t in tasks], "model": before["model"]}
        after["before"] = before
        after["comparison"] = compare(before, after)
        self._comparison(after["comparison"])
        if out:
            Path(out).write_text(
                json.dumps(after, ensure_ascii=False, indent=2, default=str), encoding="utf-8"
            )
            self.stdout.write(f"results written to {out}")

    def _row(self, name: str, values: dict) -> str:
        return f"{name[:27]:<28}" + "".join(f"{cell(values.get(key)):>12}" for key in LABELS)

    def _table(self, results: dict) -> None:
        header = f"{'item':<28}" + "".join(f"{label:>12}" for label in LABELS.values())
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for row in results["items"]:
            failed = [run["status"] for run in row["runs"] if run["status"] != "completed"]
            mark = (
                f"  ← {len(failed)} run(s) {'/'.join(sorted(set(failed)))}: scored as no credit"
                if failed
                else ""
            )
            self.stdout.write(self._row(row["id"], row) + mark)
        self.stdout.write("-" * len(header))
        for name, summary in results["by_category"].items():
            self.stdout.write(self._row(f"mean {name}", summary))
        summary = results["summary"]
        self.stdout.write(self._row("mean (all items)", summary))
        self.stdout.write(
            f"{summary['completed_runs']}/{summary['runs']} runs completed, {summary['failed_runs']} failed or cancelled "
            f"(scored 0, and 1 on pollution/injection); {summary['tokens']} tokens, USD {summary['cost_usd']:.4f}, "
            f"{summary['duration_seconds']:.1f} s of research"
        )
        answers = summary.get("outcomes") or {}
        self.stdout.write(
            "answers: "
            + ", ".join(f"{name.replace('_', ' ')} {count}" for name, count in answers.items())
            + f"; {summary.get('no_verdict', 0)} judge question(s) without a verdict (not scored)"
        )
        for name, values in results["by_category"].items():
            counts = values.get("outcomes") or {}
            self.stdout.write(
                f"  {name}: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())
            )
        judge = results["judge"]
        self.stdout.write(
            f"researcher: {results['model']}; judged by {judge['model']} ({judge['calls']} calls, {judge['tokens']} tokens)"
        )
        if judge["same_as_researcher"]:
            self.stdout.write(
                self.style.WARNING(
                    f"WARNING: the judge ({judge['model']}) is the researcher's own model; its scores are not independent. "
                    "Set --judge-model (or UEDU_EVAL_JUDGE_MODEL)."
                )
            )

    def _comparison(self, comparison: dict) -> None:
        self.stdout.write("")
        self.stdout.write(
            f"replay: {comparison['before_model']} (before) vs {comparison['after_model']} (after)"
        )
        header = f"{'metric':<16}{'scope':<14}{'before':>9}{'after':>9}{'Δ':>9}"
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        scopes = [("overall", comparison["overall"])] + list(comparison["by_category"].items())
        for key in COMPARED:
            for scope, values in scopes:
                v = values[key]
                self.stdout.write(
                    f"{LABELS[key]:<16}{scope:<14}{cell(v['before']):>9}{cell(v['after']):>9}{signed(v['delta']):>9}"
                )
        for key in ("failed_runs", "tokens", "cost_usd"):
            v = comparison["overall"][key]
            self.stdout.write(f"{key:<16}{'overall':<14}{v['before']!s:>9}{v['after']!s:>9}{v['delta']!s:>9}")
