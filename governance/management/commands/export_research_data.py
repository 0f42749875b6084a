"""Export one study's Deep Research data under an approved export request (governance/export.py)."""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from governance import export
from governance.models import ExportRequest
from uedu_dr.errors import ServiceError


class Command(BaseCommand):
    help = (
        "Export the tables and dates of an approved export request (pseudonymised, redacted) as CSV and/or "
        "JSONL into DIR, on behalf of the researcher who filed it. The approval is used up; every attempt is "
        "written to the audit log."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--request",
            dest="request_id",
            required=True,
            type=int,
            help="the approved export request's number",
        )
        parser.add_argument(
            "--out",
            required=True,
            type=Path,
            help="folder to write into (created if missing; files are never overwritten)",
        )
        parser.add_argument(
            "--format", default="both", choices=sorted(export.FORMATS), help="csv, jsonl or both (default)"
        )
        parser.add_argument(
            "--researcher",
            required=True,
            help="username of the researcher who filed the request: the audit names them",
        )

    def handle(self, *args, request_id: int, out: Path, format: str, researcher: str, **options):
        export_request = ExportRequest.objects.select_related("study").filter(pk=request_id).first()
        if export_request is None:
            raise CommandError(f"no export request #{request_id}")
        try:
            requester = get_user_model().objects.get(username=researcher)
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user {researcher!r}") from None
        if (out / "manifest.json").exists():
            raise CommandError(f"{out / 'manifest.json'} exists; choose an empty folder")
        try:
            result = export.export_study(
                requester=requester,
                export_request=export_request,
                fmt=format,
                out_dir=out,
                destination=f"command: {out.resolve()}",
            )
        except ServiceError as error:
            raise CommandError(f"export refused ({error.code}): {error.message}") from None
        manifest = out / "manifest.json"
        manifest.write_text(
            json.dumps(result.manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
        for name, entry in result.manifest["files"].items():
            self.stdout.write(f"{name}\t{entry['rows']} rows\tsha256 {entry['sha256']}")
        self.stdout.write(
            self.style.SUCCESS(
                f"Exported request #{request_id} ({export_request.study.protocol_number} {export_request.date_from}..{export_request.date_to}) "
                f"into {out} (audit #{result.audit.pk})."
            )
        )
