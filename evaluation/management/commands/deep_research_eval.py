"""python manage.py deep_research_eval <dataset.jsonl> [--k 2] [--out results.json] [--model M] [--only ID ...]"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import dataset as datasets
from evaluation.run import EvaluationError, evaluate
from agent.llm_factory import llm_configured

COLUMNS = [("citation_recall", "cit.recall"), ("citation_precision", "cit.prec"), ("expected_fact_recall", "fact.recall"),
           ("conflict_disclosure", "conflicts"), ("reproducibility", "reprod.")]


class Command(BaseCommand):
    help = "Run the research on an evaluation dataset with the configured LLM and score the answers."

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="a JSONL file, or the name of one in research/evaluation/datasets/")
        parser.add_argument("--k", type=int, default=1, help="runs per item (reproducibility needs k ≥ 2)")
        parser.add_argument("--model", help="use this model for every role of the research")
        parser.add_argument("--only", nargs="*", help="run only these item ids")
        parser.add_argument("--out", help="write the full results as JSON here")
        parser.add_argument("--keep", action="store_true", help="keep the temporary channels and tasks")

    def handle(self, *args, dataset, k, model, only, out, keep, **options):
        if not llm_configured():
            raise CommandError("No LLM is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server).")
        if k < 1:
            raise CommandError("--k must be at least 1")
        try:
            items = datasets.load(dataset)
        except (OSError, datasets.DatasetError) as exc:
            raise CommandError(str(exc)) from None
        if only:
            items = [i for i in items if i.id in set(only)]
            if not items:
                raise CommandError("no item matches --only")
        try:
            results = evaluate(items, k=k, model=model, keep=keep, progress=lambda line: self.stderr.write(line))
        except EvaluationError as exc:
            raise CommandError(str(exc)) from None
        self._table(results)
        if out:
            Path(out).write_text(json.dumps(results, ensure_ascii=False, indent=2, default=str))
            self.stdout.write(f"results written to {out}")

    def _table(self, results: dict) -> None:
        def cell(value) -> str:
            return "–" if value is None else f"{value:.2f}"

        header = f"{'item':<28}" + "".join(f"{label:>12}" for _, label in COLUMNS)
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for row in results["items"]:
            self.stdout.write(f"{row['id'][:27]:<28}" + "".join(f"{cell(row.get(key)):>12}" for key, _ in COLUMNS))
        self.stdout.write("-" * len(header))
        summary = results["summary"]
        self.stdout.write(f"{'mean':<28}" + "".join(f"{cell(summary.get(key)):>12}" for key, _ in COLUMNS))
        self.stdout.write(f"{summary['completed_runs']}/{summary['runs']} runs completed, {summary['judge_calls']} judge calls")
