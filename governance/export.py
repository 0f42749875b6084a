"""Export of one study's Deep Research data, as CSV and/or JSONL, under an approved request.

Who may export: the researcher who filed an export request (export_requests.py) that a platform
admin approved, while they are on the study with a signed responsibility agreement, the study is
active and inside its approval period. The export uses the approval up (a new export needs a new
approval) and covers only the request's tables and dates. Every attempt, done or refused, writes
an append-only ExportAudit row (who, when, request, filters, row counts, SHA-256 of each file).

What is exported, from the study's channels only — what the consent text (consent.py) names:

- rows written while the channel's consent was in force, in the date range;
- of learners who used Deep Research in that channel in the period (the consent covers those who
  use it): never the channel's teaching staff (owner, teachers, TAs, Super TAs) nor platform staff;
- for each learner, only from their first Deep Research in that channel on: that is when the
  notice (consent.CONSENT_SUMMARY) says their consent begins, so the ordinary chat they wrote
  before it is not exported, even inside the date range and the channel's consent period;
- nothing a student wrote while withdrawn (in that channel or everywhere; a re-join counts only
  from its date); no replay, ever;
- people, tasks and messages as pseudonyms (pseudonyms.py), free text redacted (redaction.py),
  CSV cells neutralised against formula injection.

Files (each in every requested format): tasks, steps, chat_logs, signals (one row per task,
research.services.learning_analytics, documented in the manifest's codebook). Rows are in a fixed order and carry no export time, so the same
data export to the same bytes (and the same hashes)."""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import BinaryIO

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from channels_app import access
from channels_app.models import Channel, ChatLog
from research.models import ResearchStep, ResearchTask
from research.services.learning_analytics import CODEBOOK as SIGNALS_CODEBOOK
from research.services.learning_analytics import task_signals, with_signal_annotations
from uedu_dr.errors import ServiceError

from . import consent, export_requests
from .models import ExportAudit, ExportRequest, Study, StudyPseudonymKey, StudyResearcher
from .pseudonyms import Pseudonymizer
from .redaction import Redactor

log = logging.getLogger(__name__)

FORMATS = {"csv": ("csv",), "jsonl": ("jsonl",), "both": ("csv", "jsonl")}
DATASETS = export_requests.DATASETS

TASK_COLUMNS = [
    "task",
    "person",
    "channel",
    "status",
    "trigger_mode",
    "language",
    "question",
    "sub_questions",
    "answer",
    "citations",
    "tokens_used",
    "cost_usd",
    "duration_seconds",
    "limit_hit",
    "stop_reason",
    "invalid_citations_removed",
    "created_at",
    "started_at",
    "finished_at",
]
STEP_COLUMNS = [
    "task",
    "index",
    "round",
    "phase",
    "tool_name",
    "args",
    "status",
    "result_preview",
    "error",
    "duration_ms",
    "tokens",
    "created_at",
]
CHAT_LOG_COLUMNS = [
    "message",
    "person",
    "channel",
    "kind",
    "type",
    "content",
    "in_reply_to",
    "task",
    "bloom_level",
    "bloom_confidence",
    "bloom_rationale",
    "created_at",
]
SIGNAL_COLUMNS = [
    "task",
    "person",
    "channel",
    "bloom_level",
    "bloom_confidence",
    "sub_questions",
    "sub_questions_researched",
    "plan_complexity",
    "reflection_rounds",
    "question_chars",
    "question_tokens",
    "question_sentences",
    "mean_sentence_tokens",
    "type_token_ratio",
    "language_complexity",
    "follow_ups",
    "follow_up_researches",
    "share_link_openings",
    "diffusion_mentions",
    "misuse_flagged",
    "disclaimer_acknowledged",
    "disclaimer_ack_seconds",
]
CODEBOOK = {
    "tasks": {
        "task": "pseudonym of the research task",
        "person": "pseudonym of the student",
        "question": "the question, redacted",
        "answer": "the answer, redacted",
        "status": "queued/running/completed/failed/cancelled",
    },
    "steps": {
        "task": "pseudonym of the task",
        "tool_name": "the tool called",
        "args": "its arguments, redacted",
        "result_preview": "start of its result, redacted",
    },
    "chat_logs": {
        "message": "pseudonym of the chat row",
        "kind": "request (the student) or response",
        "type": "chat or deep_research",
        "content": "the message, redacted",
        "task": "pseudonym of the research task the row belongs to",
    },
    "signals": SIGNALS_CODEBOOK,
}
COLUMNS = {
    "tasks": TASK_COLUMNS,
    "steps": STEP_COLUMNS,
    "chat_logs": CHAT_LOG_COLUMNS,
    "signals": SIGNAL_COLUMNS,
}


@dataclass
class ExportResult:
    audit: ExportAudit
    files: list[Path]
    row_counts: dict[str, int]
    manifest: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- who may export


def check_export_allowed(*, requester, study: Study, date_from: date | None, date_to: date | None) -> None:
    """Raise ServiceError (403 for governance refusals, 400 for bad dates) unless allowed."""
    today = timezone.localdate()
    signed = StudyResearcher.objects.filter(
        study=study, user=requester, agreement_signed_on__isnull=False, agreement_signed_on__lte=today
    ).exists()
    if not requester.is_active or not signed:
        raise ServiceError(
            "no_signed_agreement",
            _(
                "Only a researcher of this study who has signed the researcher's responsibility agreement may export its data."
            ),
            status=403,
        )
    if study.status != Study.Status.ACTIVE:
        raise ServiceError(
            "study_not_active", _("This study is not active; its data cannot be exported."), status=403
        )
    if not study.approved_from <= today <= study.approved_to:
        raise ServiceError(
            "approval_not_current",
            _("This study's approval period is not current; its data cannot be exported."),
            status=403,
        )
    if date_from is None or date_to is None or date_from > date_to:
        raise ServiceError(
            "bad_date_range", _("Give a date range whose start is not after its end."), status=400
        )
    if date_from < study.approved_from or date_to > study.approved_to:
        raise ServiceError(
            "outside_approval",
            _("The date range must lie inside the study's approval period (%(start)s to %(end)s).")
            % {"start": study.approved_from.isoformat(), "end": study.approved_to.isoformat()},
            status=403,
        )


def export_study(
    *, requester, export_request: ExportRequest, fmt: str = "both", out_dir: Path, destination: str = ""
) -> ExportResult:
    """Write the approved request's tables into out_dir (which must not already hold them), use
    the approval up, and audit it. A refusal is audited too."""
    study = export_request.study
    date_from, date_to = export_request.date_from, export_request.date_to
    if fmt not in FORMATS:
        raise ServiceError("bad_format", _("The format must be csv, jsonl or both."))
    out_dir = Path(out_dir)
    datasets = [d for d in DATASETS if d in set(export_request.tables)]
    names = [f"{dataset}.{ext}" for dataset in datasets for ext in FORMATS[fmt]]
    clashes = [n for n in names if (out_dir / n).exists()]
    if clashes:
        raise ServiceError(
            "files_exist",
            _("The output folder already holds %(files)s; choose an empty folder.")
            % {"files": ", ".join(clashes)},
        )
    try:
        check_export_allowed(requester=requester, study=study, date_from=date_from, date_to=date_to)
        export_requests.claim_approval(export_request, requester)
    except ServiceError as error:
        export_requests.audit(
            action=ExportAudit.Action.EXPORT,
            actor=requester,
            outcome=ExportAudit.Outcome.REFUSED,
            export_request=export_request,
            refusal=f"{error.code}: {error.message}"[:300],
            filters={"format": fmt},
            destination=destination[:500],
        )
        raise

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    try:
        with _snapshot():
            builder = _Builder(
                study, date_from, date_to, pinned_channel_ids=export_request.approved_channel_ids
            )
            row_counts = {}
            for dataset in datasets:
                paths = [out_dir / f"{dataset}.{ext}" for ext in FORMATS[fmt]]
                written.extend(paths)
                row_counts[dataset] = _write(paths, COLUMNS[dataset], builder.rows(dataset))
        hashes = {path.name: _sha256(path) for path in written}
        audit = export_requests.audit(
            action=ExportAudit.Action.EXPORT,
            actor=requester,
            outcome=ExportAudit.Outcome.COMPLETED,
            export_request=export_request,
            filters={
                "study": study.protocol_number,
                "from": date_from.isoformat(),
                "to": date_to.isoformat(),
                "tables": datasets,
                "format": fmt,
                "channels": builder.channel_slugs,
                "learners_only": True,
                "deep_research_users_only": True,
                "consent_in_force_only": True,
                "withdrawn_students_excluded": len(builder.withdrawn),
            },
            row_counts=row_counts,
            file_hashes=hashes,
            destination=destination[:500],
        )
    except BaseException:
        for path in written:  # nothing half-written (or unaudited) is left behind
            path.unlink(missing_ok=True)
        export_requests.release_approval(export_request)
        raise
    manifest = {
        "study": {"protocol_number": study.protocol_number, "title": study.title},
        "export_request": {
            "id": export_request.pk,
            "purpose": export_request.purpose,
            "approved_by_note": export_request.decision_note,
        },
        "date_range": {
            "from": date_from.isoformat(),
            "to": date_to.isoformat(),
            "time_zone": timezone.get_current_timezone_name(),
        },
        "audit_id": audit.pk,
        "files": {
            name: {"sha256": digest, "rows": row_counts[name.split(".")[0]]}
            for name, digest in hashes.items()
        },
        "consent_periods": builder.consent_periods,
        "codebook": {dataset: CODEBOOK.get(dataset, {}) for dataset in datasets},
        "notes": [
            "person, task and message columns are HMAC-SHA256 pseudonyms under this study's own key: stable across this study's exports, unlinkable to other studies",
            "free text is redacted: e-mail, phone, national id and student id patterns and the names of the platform's people are replaced by [EMAIL], [PHONE], [NATIONAL_ID], [STUDENT_ID], [PERSON]",
            "only learners who used Deep Research in the period, each from their first Deep Research in the channel on, only rows written while the channel's consent was in force; students who withdrew are absent (rows before a re-join stay absent)",
            "replays (evaluation re-runs) are never exported",
            "CSV cells that a spreadsheet would read as a formula (starting with =, +, -, @, tab or carriage return) are prefixed with an apostrophe; JSONL holds the exact text",
        ],
    }
    return ExportResult(audit=audit, files=written, row_counts=row_counts, manifest=manifest)


def write_zip(result: ExportResult) -> BinaryIO:
    """The export's files and its manifest as one zip, written to disk, never held in memory:
    an anonymous temporary file (already unlinked where the OS allows, so it vanishes when the
    handle closes, even after a crash), returned open and rewound for streaming."""
    handle = tempfile.TemporaryFile(prefix="uedu-export-", suffix=".zip")
    try:
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
            for file in result.files:
                archive.write(file, file.name)  # read from disk in chunks by zipfile
            archive.writestr("manifest.json", json.dumps(result.manifest, ensure_ascii=False, indent=2))
        handle.seek(0)
    except BaseException:
        handle.close()
        raise
    return handle


class _snapshot:
    """One consistent view of the database for every file (REPEATABLE READ, read-only) when the
    export runs in its own transaction; inside a caller's transaction it joins that one."""

    def __enter__(self):
        self._atomic = transaction.atomic()
        fresh = not connection.in_atomic_block
        self._atomic.__enter__()
        if fresh:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return self

    def __exit__(self, *exc):
        return self._atomic.__exit__(*exc)


class _Builder:
    def __init__(self, study: Study, date_from: date, date_to: date, pinned_channel_ids=None):
        self.channels = Channel.objects.filter(studies=study)
        if pinned_channel_ids is not None:
            # The channels approved, still on the study: neither an addition nor a removal since
            # the approval widens the export.
            self.channels = self.channels.filter(pk__in=pinned_channel_ids)
        channel_ids = list(self.channels.values_list("pk", flat=True))
        self.channel_slugs = sorted(self.channels.values_list("slug", flat=True))
        self.slug_of = dict(self.channels.values_list("pk", "slug"))
        self.consent_periods = consent.consent_periods(self.channels)
        self.pseudonyms = Pseudonymizer(StudyPseudonymKey.key_of(study))
        self.withdrawn = consent.withdrawn_user_ids(channel_ids)
        start = timezone.make_aware(datetime.combine(date_from, time.min))
        end = timezone.make_aware(datetime.combine(date_to + timedelta(days=1), time.min))
        self.window = Q(created_at__gte=start, created_at__lt=end)
        self.redactor = Redactor(self._known_identifiers())
        self.channel_ids = channel_ids

    @staticmethod
    def _known_identifiers() -> list[str]:
        """Usernames, e-mails and names of everyone on the platform: the channels' people, and
        the people outside them a student may name (a classmate of another course, a teacher).
        Names, not ids, so the list is as large as the user table (a few thousand)."""
        identifiers = []
        for username, email, first, last in get_user_model().objects.values_list(
            "username", "email", "first_name", "last_name"
        ):
            identifiers += [
                username,
                email,
                first,
                last,
                f"{first} {last}".strip(),
                f"{last} {first}".strip(),
                f"{last}{first}",
            ]
        return identifiers

    def _learners_rows(self, model):
        """The model's rows in the study's channels and date range, written while consent was in
        force, by learners (not the channel's teaching staff, not platform staff) who used Deep
        Research in the channel in the period (whom the consent text covers), from each one's
        first Deep Research there on (when the notice says consent begins), and by no student
        while withdrawn (rows before a re-join stay out)."""
        return model.objects.filter(self.learner_rows())

    def learner_rows(self) -> Q:
        """The rule of `_learners_rows` as one filter, for chat rows and research tasks alike: the
        signals that count other rows count only these (learning_analytics, `counted`)."""
        used_deep_research = ResearchTask.objects.filter(
            channel=OuterRef("channel"), user=OuterRef("user"), is_replay=False
        ).filter(self.window)
        return (
            Q(channel__in=self.channel_ids)
            & self.window
            & Q(consent.in_force_at())
            & Q(Exists(used_deep_research))
            & consent.from_first_research()
            & ~consent.withdrawn_at_writing()
            & ~access.teaching_staff_q()
            & ~Q(user__is_staff=True)
            & ~Q(user__is_superuser=True)
        )

    def tasks(self):
        return self._learners_rows(ResearchTask).filter(is_replay=False).order_by("created_at", "pk")

    def rows(self, dataset: str) -> Iterable[dict]:
        return getattr(self, f"_{dataset}_rows")()

    # ------------------------------------------------------------------ datasets

    def _tasks_rows(self):
        p, r = self.pseudonyms, self.redactor
        for task in self.tasks().iterator(chunk_size=500):
            plan = task.plan_json if isinstance(task.plan_json, dict) else {}
            yield {
                "task": p.task(task.task_uuid),
                "person": p.person(task.user_id),
                "channel": self.slug_of[task.channel_id],
                "status": task.status,
                "trigger_mode": task.trigger_mode,
                "language": task.language,
                "question": r.text(task.user_question),
                "sub_questions": r.data(
                    [s.get("question", "") for s in plan.get("sub_questions") or [] if isinstance(s, dict)]
                ),
                "answer": r.text(task.final_answer),
                "citations": r.data(task.citations_json),
                "tokens_used": task.tokens_used,
                "cost_usd": task.cost_usd,
                "duration_seconds": task.duration_seconds,
                "limit_hit": task.limit_hit,
                "stop_reason": task.stop_reason,
                "invalid_citations_removed": task.invalid_citations_removed,
                "created_at": task.created_at,
                "started_at": task.started_at,
                "finished_at": task.finished_at,
            }

    def _steps_rows(self):
        p, r = self.pseudonyms, self.redactor
        task_uuids = dict(self.tasks().values_list("pk", "task_uuid"))
        ids = list(task_uuids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for step in ResearchStep.objects.filter(task_id__in=chunk).order_by(
                "task__created_at", "task_id", "index"
            ):
                yield {
                    "task": p.task(task_uuids[step.task_id]),
                    "index": step.index,
                    "round": step.round,
                    "phase": step.phase,
                    "tool_name": step.tool_name,
                    "args": r.data(step.args),
                    "status": step.status,
                    "result_preview": r.text(step.result_preview),
                    "error": r.text(step.error),
                    "duration_ms": step.duration_ms,
                    "tokens": step.tokens,
                    "created_at": step.created_at,
                }

    def _chat_logs_rows(self):
        p, r = self.pseudonyms, self.redactor
        queryset = (
            self._learners_rows(ChatLog)
            .exclude(deep_research_task__is_replay=True)
            .select_related("deep_research_task")
            .order_by("created_at", "pk")
        )
        for row in queryset.iterator(chunk_size=1000):
            task = row.deep_research_task
            yield {
                "message": p.message(row.pk),
                "person": p.person(row.user_id),
                "channel": self.slug_of[row.channel_id],
                "kind": row.kind,
                "type": row.type,
                "content": r.text(row.content),
                "in_reply_to": p.message(row.in_reply_to_id),
                "task": p.task(task.task_uuid) if task else "",
                "bloom_level": row.bloom_level,
                "bloom_confidence": row.bloom_confidence,
                "bloom_rationale": r.text(row.bloom_rationale),
                "created_at": row.created_at,
            }

    def _signals_rows(self):
        p = self.pseudonyms
        for task in with_signal_annotations(self.tasks(), counted=self.learner_rows()).iterator(
            chunk_size=500
        ):
            yield {
                "task": p.task(task.task_uuid),
                "person": p.person(task.user_id),
                "channel": self.slug_of[task.channel_id],
                **task_signals(task),
            }


# --------------------------------------------------------------------------- files


def _plain(value):
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


# A spreadsheet reads a cell starting with one of these as a formula (=HYPERLINK(...), +cmd|...,
# @SUM, and tab/CR which some programs strip before looking): such a cell gets an apostrophe,
# which spreadsheets show as text and do not display.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value):
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _write(paths: list[Path], columns: list[str], rows: Iterable[dict]) -> int:
    """Write the rows to every path (by extension). CSV is UTF-8 with a byte-order mark, so
    spreadsheet programs open Chinese text correctly; JSONL is plain UTF-8, one object a line."""
    handles, writers = [], []
    try:
        for path in paths:
            if path.suffix == ".csv":
                handle = open(path, "w", encoding="utf-8-sig", newline="")
                writer = csv.writer(handle)
                writer.writerow(columns)
                writers.append(("csv", writer, handle))
            else:
                handle = open(path, "w", encoding="utf-8", newline="\n")
                writers.append(("jsonl", None, handle))
            handles.append(handle)
        count = 0
        for row in rows:
            count += 1
            for kind, writer, handle in writers:
                if kind == "csv":
                    writer.writerow([_csv_cell(row.get(c)) for c in columns])
                else:
                    handle.write(
                        json.dumps(
                            {c: _plain(row.get(c)) for c in columns}, ensure_ascii=False, sort_keys=False
                        )
                        + "\n"
                    )
        return count
    finally:
        for handle in handles:
            handle.close()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()
