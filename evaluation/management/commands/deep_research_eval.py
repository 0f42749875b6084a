"""python manage.py deep_research_eval [dataset.jsonl] [--k 3] [--model M] [--only ID ...] [--category C ...]
    [--smoke] [--out DIR] [--judge-model J --judge-base-url URL --judge-api-key KEY]
    [--allow-self-judge] [--min-kappa 0.6] [--preflight] [--estimate-only]
python manage.py deep_research_eval --judge-check [--judge-model J ...]
python manage.py deep_research_eval --resume DIR
python manage.py deep_research_eval --replay-from DIR --model M
python manage.py deep_research_eval --replay-tasks [--channel SLUG] [--since YYYY-MM-DD] [--limit N] --model M

docs/evaluation.md is the manual."""

from __future__ import annotations

import datetime
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agent.engine.llm import LLMError
from agent.llm_factory import llm_configured
from channels_app.roles import platform_admins_q
from evaluation import dataset as datasets
from evaluation import judge_check, preflight
from evaluation.judge import PROMPT_HASH, Judge, JudgeBudgetExceeded, JudgeSettings
from evaluation.results import (
    RESULTS_VERSION,
    ResultsError,
    ResultsFolder,
    file_sha256,
    git_commit,
    now,
    research_prompts_sha256,
)
from evaluation.run import (
    COMPARED,
    EvaluationError,
    compare,
    evaluate,
    refusals,
    rejudge,
    replay_stored,
    researcher_models,
    smoke_items,
    stored_tasks,
)
from evaluation.scoring import PRECISION_BESIDE_RECALL, by_category, summarise
from evaluation.statistics import linked_groups
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
    "coverage": "coverage",
    "readability": "readable",
    "reproducibility": "reprod.",
}
FULL_RUN_K = 3  # reproducibility needs several runs; --k 1 is for a quick look (--smoke)


def cell(value) -> str:
    return "–" if value is None else f"{value:.2f}"


def signed(value) -> str:
    return "–" if value is None else f"{value:+.2f}"


def interval(values) -> str:
    return "–" if not values else f"[{values[0]:+.2f}, {values[1]:+.2f}]"


class Command(BaseCommand):
    help = "Run the research on an evaluation dataset and score the answers with a measured, independent judge; resume or replay a results folder."

    def add_arguments(self, parser):
        parser.add_argument(
            "dataset",
            nargs="?",
            default=datasets.DEFAULT,
            help=f"a JSONL file, the name of one in evaluation/datasets/ (default {datasets.DEFAULT}), or 'failures'",
        )
        parser.add_argument(
            "--k", type=int, help=f"runs per item (default {FULL_RUN_K}; 1 with --smoke unless given)"
        )
        parser.add_argument("--model", help="use this model for every role of the research")
        parser.add_argument("--only", nargs="*", help="run only these item ids")
        parser.add_argument("--category", nargs="*", help="run only items of these categories")
        parser.add_argument(
            "--smoke",
            action="store_true",
            help="the dataset's fixed 12-item subset (datasets/smoke.json), k=1",
        )
        parser.add_argument(
            "--out",
            help="the folder under which this run's results folder is made (default UEDU_EVAL_RESULTS_DIR)",
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
            "--judge-check",
            action="store_true",
            help="only measure the judge against the labelled pairs (accuracy, Cohen's kappa) and stop",
        )
        parser.add_argument(
            "--labels",
            help=f"the labelled pairs the judge is measured on (default {judge_check.LABELS_FILE.name}; "
            "a set drawn from real output by python -m evaluation.labelling)",
        )
        parser.add_argument(
            "--labels-split",
            help="only the pairs of this split of --labels (held_out: the pairs no prompt was tuned on)",
        )
        parser.add_argument(
            "--min-kappa",
            type=float,
            help="the judge's least Cohen's kappa per language (default UEDU_EVAL_JUDGE_MIN_KAPPA = 0.6)",
        )
        parser.add_argument(
            "--allow-self-judge",
            action="store_true",
            help="let the researcher's own model judge (recorded in the results; its scores are not independent)",
        )
        parser.add_argument(
            "--preflight",
            action="store_true",
            help="first check the model, the judge, the embedding backend and the daily cap, and print the estimate",
        )
        parser.add_argument(
            "--estimate-only",
            action="store_true",
            help="print the estimated calls, tokens and cost, and stop",
        )
        parser.add_argument("--resume", help="a results folder of an interrupted run: finish its items")
        parser.add_argument(
            "--replay-from",
            help="a results folder: run its items again (with --model), judge both sides now, compare per item with intervals",
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

    # ------------------------------------------------------------------ the run

    def handle(self, *args, **o):
        if not llm_configured():
            raise CommandError(
                "No LLM is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server)."
            )
        judge = JudgeSettings.resolve(
            model=o["judge_model"], base_url=o["judge_base_url"], api_key=o["judge_api_key"]
        )
        min_kappa = o["min_kappa"] if o["min_kappa"] is not None else settings.UEDU_EVAL_JUDGE_MIN_KAPPA
        self.labels = (Path(o["labels"]) if o["labels"] else judge_check.LABELS_FILE, o["labels_split"])
        if o["judge_check"]:
            self._judge_check(Judge.from_settings(judge), min_kappa)
            return
        if o["replay_tasks"]:
            return self._replay_tasks(
                model=o["model"],
                judge=judge,
                channel=o["channel"],
                since=o["since"],
                limit=o["limit"],
                out=o["out"],
                run_by=o["run_by"],
                min_kappa=min_kappa,
                allow_self_judge=o["allow_self_judge"],
            )
        try:
            if o["resume"]:
                return self._resume(o, judge)
            return self._run(o, judge, min_kappa)
        except (EvaluationError, JudgeBudgetExceeded, ResultsError, preflight.PreflightError) as exc:
            raise CommandError(str(exc)) from None

    def _load(self, dataset) -> list:
        try:
            return datasets.load(dataset)
        except (OSError, datasets.DatasetError) as exc:
            raise CommandError(str(exc)) from None

    def _self_judge(self, judge: JudgeSettings, model: str | None, allowed: bool) -> bool:
        same = judge.model in set(researcher_models(model).values())
        if same and not allowed:
            raise CommandError(
                f"the judge ({judge.model}) is the researcher's own model: a model grading its own answers is "
                "lenient with itself. Set --judge-model (or UEDU_EVAL_JUDGE_MODEL), or pass --allow-self-judge "
                "to run anyway (recorded in the results)."
            )
        return same

    def _judge_check(self, judging: Judge, min_kappa: float) -> dict:
        try:
            path, split = getattr(self, "labels", (judge_check.LABELS_FILE, None))
            result = judge_check.run_check(judging, min_kappa=min_kappa, path=path, split=split)
        except (OSError, judge_check.LabelsError) as exc:
            raise CommandError(str(exc)) from None
        except JudgeBudgetExceeded as exc:
            raise CommandError(str(exc)) from None
        except LLMError as exc:
            raise CommandError(
                f"the judge ({judging.model}) did not answer the agreement check: {exc}"
            ) from None
        for line in judge_check.describe(result):
            self.stdout.write(line)
        if not result["passed"]:
            raise CommandError(
                f"the judge ({judging.model}) agrees too little with the labelled pairs: Cohen's kappa below "
                f"{min_kappa:.2f} in {', '.join(result['failing'])} (UEDU_EVAL_JUDGE_MIN_KAPPA / --min-kappa; "
                "docs/evaluation.md). Use a stronger judge."
            )
        return result

    def _select(self, o, items: list, dataset) -> list:
        if o["smoke"]:
            items = smoke_items(items, str(dataset))
        if o["only"]:
            items = [i for i in items if i.id in set(o["only"])]
        if o["category"]:
            items = [i for i in items if i.category in set(o["category"])]
        if not items:
            raise CommandError("no item matches --only / --category")
        return items

    def _manifest(self, *, dataset, items, k, model, judge, same, check, flags, replay_of=None) -> dict:
        path = (
            datasets.DATASETS / dataset
            if not Path(dataset).exists() and (datasets.DATASETS / dataset).exists()
            else Path(dataset)
        )
        return {
            "version": RESULTS_VERSION,
            "kind": "replay" if replay_of else "run",
            "dataset": {
                "path": str(dataset),
                "sha256": file_sha256(path) if path.is_file() else "",
                "items": [item.id for item in items],
            },
            "git_commit": git_commit(),
            "model": model or researcher_models(None)["default"],
            "model_override": model or "",
            "researcher_models": researcher_models(model),
            "research_prompts_sha256": research_prompts_sha256(),
            "judge": {
                "model": judge.model,
                "base_url": judge.base_url,
                "prompt_hash": PROMPT_HASH,
                "same_as_researcher": same,
                "check": check,
            },
            "k": k,
            "flags": flags,
            "replay_of": str(replay_of) if replay_of else None,
            "started_at": now(),
            "finished_at": None,
        }

    def _run(self, o, judge: JudgeSettings, min_kappa: float):
        dataset, model, k = o["dataset"], o["model"], o["k"]
        previous = None
        if o["replay_from"]:
            previous = ResultsFolder.open(o["replay_from"])
            stored = previous.manifest
            dataset = stored["dataset"]["path"]
            k = k or stored["k"]
        k = k or (1 if o["smoke"] else FULL_RUN_K)
        if k < 1:
            raise CommandError("--k must be at least 1")
        items = self._load(dataset)
        if previous is not None:
            by_id = {item.id: item for item in items}
            missing = [i for i in previous.manifest["dataset"]["items"] if i not in by_id]
            if missing:
                raise CommandError(
                    f"the results folder names items the dataset no longer has: {', '.join(missing[:5])}"
                )
            items = [by_id[i] for i in previous.manifest["dataset"]["items"]]
        else:
            items = self._select(o, items, dataset)
        same = self._self_judge(judge, model, o["allow_self_judge"])
        if same:
            self.stdout.write(
                self.style.WARNING(
                    f"WARNING: the judge ({judge.model}) is the researcher's own model (--allow-self-judge)."
                )
            )
        flags = {
            "allow_self_judge": bool(o["allow_self_judge"]),
            "min_kappa": min_kappa,
            "smoke": bool(o["smoke"]),
            "only": o["only"] or [],
            "category": o["category"] or [],
            "keep": bool(o["keep"]),
        }
        manifest = self._manifest(
            dataset=dataset,
            items=items,
            k=k,
            model=model,
            judge=judge,
            same=same,
            check=None,
            flags=flags,
            replay_of=previous.path if previous else None,
        )
        if previous is not None:
            differ = refusals(previous.manifest, manifest)
            if differ:
                raise CommandError(
                    "cannot compare with "
                    + str(previous.path)
                    + ": its verdicts were given under other conditions — "
                    + "; ".join(differ)
                )
        if o["preflight"] or o["estimate_only"]:
            cost = preflight.estimate(
                items=len(items),
                k=k,
                model=manifest["model"],
                judge_model=judge.model,
                labelled_pairs=len(judge_check.load_labels(*self.labels)),
            )
            for line in cost.lines:
                self.stdout.write(line)
            if o["estimate_only"]:
                return
            for line in preflight.check(model=model, judge=judge, cost=cost):
                self.stdout.write(line)
        judging = Judge.from_settings(judge)
        check = self._judge_check(judging, min_kappa)  # before any scoring: refused below the threshold
        manifest["judge"]["check"] = {key: value for key, value in check.items() if key != "disagreements"}
        folder = ResultsFolder.create(Path(o["out"] or settings.UEDU_EVAL_RESULTS_DIR), manifest)
        folder.write_file("judge_check.json", check)
        self.stdout.write(f"results folder: {folder.path}")
        results = evaluate(
            items,
            folder=folder,
            judge=judging,
            k=k,
            model=model,
            keep=o["keep"],
            progress=lambda line: self.stderr.write(line),
        )
        self._table(results)
        if previous is not None:
            self._replay_comparison(previous, folder, items, judging, results)
        self.stdout.write(f"results written to {folder.path}")

    def _replay_comparison(
        self, previous: ResultsFolder, folder: ResultsFolder, items, judging: Judge, results: dict
    ):
        before_rows = rejudge(previous, items, judging, progress=lambda line: self.stderr.write(line))
        before = {
            "model": previous.manifest["model"],
            "items": before_rows,
            "summary": summarise(before_rows),
            "by_category": by_category(before_rows),
        }
        comparison = compare(before, results, groups=linked_groups(items))
        summary = folder.summary or {}
        summary.update(
            replay_of=str(previous.path),
            before={key: before[key] for key in ("model", "summary", "by_category")},
            comparison=comparison,
        )
        folder.write_summary(summary)
        self._comparison(comparison)

    def _resume(self, o, judge: JudgeSettings):
        folder = ResultsFolder.open(o["resume"])
        stored = folder.manifest
        items = self._load(stored["dataset"]["path"])
        by_id = {item.id: item for item in items}
        missing = [i for i in stored["dataset"]["items"] if i not in by_id]
        if missing:
            raise CommandError(
                f"the results folder names items the dataset no longer has: {', '.join(missing[:5])}"
            )
        items = [by_id[i] for i in stored["dataset"]["items"]]
        model = stored.get("model_override") or None
        if o["model"] and o["model"] != (model or stored["model"]):
            raise CommandError(f"cannot resume {folder.path} with another model: it ran {stored['model']}")
        current = self._manifest(
            dataset=stored["dataset"]["path"],
            items=items,
            k=stored["k"],
            model=model,
            judge=judge,
            same=stored["judge"]["same_as_researcher"],
            check=None,
            flags=stored["flags"],
        )
        differ = refusals(stored, current)
        if stored.get("research_prompts_sha256") != current["research_prompts_sha256"]:
            differ.append("the researcher's prompts (agent/engine/prompts.py) changed")
        if differ:
            raise CommandError(f"cannot resume {folder.path}: " + "; ".join(differ))
        done = folder.finished()
        self.stdout.write(f"resuming {folder.path}: {len(done)} of {len(items)} items finished before")
        folder.update_manifest(resumed_at=[*stored.get("resumed_at", []), now()], finished_at=None)
        results = evaluate(
            items,
            folder=folder,
            judge=Judge.from_settings(judge),
            k=stored["k"],
            model=model,
            keep=bool(stored["flags"].get("keep")),
            progress=lambda line: self.stderr.write(line),
        )
        self._table(results)
        self.stdout.write(f"results written to {folder.path}")

    def _replay_tasks(
        self, *, model, judge, channel, since, limit, out, run_by, min_kappa, allow_self_judge
    ) -> None:
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
        # The same judge rules as a dataset run: independent unless allowed, measured before scoring.
        self._self_judge(judge, model, allow_self_judge)
        self._judge_check(Judge.from_settings(judge, user=admin), min_kappa)
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
        folder = ResultsFolder.create(
            Path(out or settings.UEDU_EVAL_RESULTS_DIR),
            {
                "version": RESULTS_VERSION,
                "kind": "replay-tasks",
                "tasks": after["replay_of"]["tasks"],
                "git_commit": git_commit(),
                "model": model,
                "judge": {"model": judge.model, "base_url": judge.base_url, "prompt_hash": PROMPT_HASH},
                "started_at": now(),
            },
        )
        folder.write_summary(after)
        self.stdout.write(f"results written to {folder.path}")

    def _row(self, name: str, values: dict) -> str:
        return f"{name[:27]:<28}" + "".join(f"{cell(values.get(key)):>12}" for key in LABELS)

    def _beside(self, name: str, values: dict) -> str:
        """Each recall metric printed with the precision that keeps it honest: copying every
        source raises recall and lowers claim precision."""
        return f"  {name}: " + "; ".join(
            f"{LABELS[recall]} {cell(values.get(recall))} / {LABELS[precision]} {cell(values.get(precision))}"
            for recall, precision in PRECISION_BESIDE_RECALL
        )

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
        for name, values in [("all items", summary), *results["by_category"].items()]:
            self.stdout.write(self._beside(name, values))
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
        if comparison.get("items"):
            self.stdout.write("")
            self.stdout.write("per item: Δ = after − before")
            header = f"{'item':<28}" + "".join(f"{label:>12}" for label in LABELS.values())
            self.stdout.write(header)
            self.stdout.write("-" * len(header))
            for row in comparison["items"]:
                self.stdout.write(
                    f"{row['id'][:27]:<28}" + "".join(f"{signed(row[key]['delta']):>12}" for key in LABELS)
                )
        if comparison.get("intervals"):
            boot = comparison["bootstrap"]
            self.stdout.write("")
            self.stdout.write(
                f"bootstrap 95% intervals ({boot['resamples']} resamples of {boot.get('groups', '?')} "
                f"{boot.get('unit', 'items')}, seed {boot['seed']}):"
            )
            self.stdout.write(f"{'metric':<14}{'items':>6}{'groups':>7}{'before':>22}{'after':>22}{'Δ':>22}")
            for key in COMPARED:
                v = comparison["intervals"][key]
                if not v["items"]:
                    self.stdout.write(f"{LABELS[key]:<14}{0:>6}{0:>7}{'–':>22}{'–':>22}{'–':>22}")
                    continue
                self.stdout.write(
                    f"{LABELS[key]:<14}{v['items']:>6}{v.get('groups', v['items']):>7}"
                    + "".join(
                        f"{cell(v[side]['mean']) + ' ' + interval(v[side]['ci95']):>22}"
                        for side in ("before", "after", "delta")
                    )
                )
