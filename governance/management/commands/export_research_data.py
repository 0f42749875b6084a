"""Export one study's Deep Research data (see research/governance/export.py for the rules)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from governance import export
from governance.models import Study
from uedu_dr.errors import ServiceError


def _date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"not a date (YYYY-MM-DD): {value!r}") from None


class Command(BaseCommand):
    help = (
        "Export a study's tasks, steps, chat log and learning-analytics signals (pseudonymised, redacted) "
        "as CSV and/or JSONL into DIR, on behalf of a researcher of the study with a signed agreement. "
        "Every attempt is written to the export audit log."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="the study's IRB protocol number, e.g. 'NTU-REC 202507EM058'")
        parser.add_argument("--from", dest="date_from", required=True, type=_date, help="first day, YYYY-MM-DD (platform time)")
        parser.add_argument("--to", dest="date_to", required=True, type=_date, help="last day, YYYY-MM-DD (inclusive)")
        parser.add_argument("--out", required=True, type=Path, help="folder to write into (created if missing; files are never overwritten)")
        parser.add_argument("--format", default="both", choices=sorted(export.FORMATS), help="csv, jsonl or both (default)")
        parser.add_argument(
            "--researcher", required=True,
            help="username of the researcher the export is for: they must be on the study with a signed agreement, and the audit names them",
        )

    def handle(self, *args, study: str, date_from: date, date_to: date, out: Path, format: str, researcher: str, **options):
        try:
            study_obj = Study.objects.get(protocol_number=study)
        except Study.DoesNotExist:
            raise CommandError(f"no study with protocol number {study!r}") from None
        try:
            requester = get_user_model().objects.get(username=researcher)
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user {researcher!r}") from None
        if (out / "manifest.json").exists():
            raise CommandError(f"{out / 'manifest.json'} exists; choose an empty folder")
        try:
            result = export.export_study(
                requester=requester, study=study_obj, date_from=date_from, date_to=date_to, fmt=format,
                out_dir=out, destination=f"command: {out.resolve()}",
            )
        except ServiceError as error:
            raise CommandError(f"export refused ({error.code}): {error.message}") from None
        manifest = out / "manifest.json"
        manifest.write_text(json.dumps(result.manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        for name, entry in result.manifest["files"].items():
            self.stdout.write(f"{name}\t{entry['rows']} rows\tsha256 {entry['sha256']}")
        self.stdout.write(self.style.SUCCESS(f"Exported {study} {date_from}..{date_to} into {out} (audit #{result.audit.pk})."))
