"""The research-data export: who may run it, what the files hold (and never hold), the audit."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import zipfile
from datetime import date, timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, transaction
from django.utils import timezone, translation

from channels_app.models import ChatLog
from governance import consent, export, export_requests
from governance.models import (
    AppendOnlyError,
    ChannelConsent,
    ConsentWithdrawal,
    ExportAudit,
    ExportRequest,
    Study,
    StudyResearcher,
)
from research.models import ResearchEvent, ResearchStep, ResearchTask
from tests.support.factories import add_member, make_user

PROTOCOL = "NTU-REC 202507EM058"
DATASETS = ("tasks", "steps", "chat_logs", "signals")

# Identifiers planted in questions, answers, steps and chat content (see `study`).
PLANTED = [
    "s_alice@example.test",
    "alice.chen@ntu.edu.tw",
    "0912-345-678",
    "0987654321",
    "+886 2 2345 6789",
    "(02)3366-4888",
    "B09901001",
    "r12345678",
    "A123456789",
]
# Anything like an e-mail, a Taiwanese phone, a student id or a national id, anywhere in a file.
# Bounded by non-alphanumerics (and "_"), or they would find ids inside hex pseudonyms (p_3fa0912…).
_B, _E = rb"(?<![A-Za-z0-9_])", rb"(?![A-Za-z0-9])"
FORBIDDEN = [
    re.compile(rb"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z]{2,}"),
    re.compile(_B + rb"09\d{2}[\s-]?\d{3}[\s-]?\d{3}" + _E),
    re.compile(_B + rb"\+?886[\s-]?\d"),
    re.compile(rb"\(?0\d{1,2}\)?[\s-]?\d{3,4}-\d{4}"),
    re.compile(_B + rb"[A-Za-z]\d{8,9}" + _E),
]


def _at(moment, model, pk, field="created_at"):
    model.objects.filter(pk=pk).update(**{field: moment})


@pytest.fixture
def study(db, personas):
    """A study over course-a with a signed researcher; tasks and chat of two students (one of
    whom withdraws later in some tests) and of the teacher, with identifiers planted in the text."""
    p = personas
    now = timezone.now()
    # Consent has been in force since long before the data.
    ChannelConsent.objects.filter(channel=p.channel).update(started_at=now - timedelta(days=400))
    researcher = make_user("res_huang", staff=True)
    study = Study.objects.create(
        protocol_number=PROTOCOL,
        title="DR analytics",
        approved_from=date(2025, 8, 1),
        approved_to=timezone.localdate() + timedelta(days=365),
        status=Study.Status.ACTIVE,
    )
    study.channels.add(p.channel)
    StudyResearcher.objects.create(study=study, user=researcher, agreement_signed_on=date(2025, 9, 1))

    def research(user, question, answer, *, when):
        task = ResearchTask.objects.create(
            user=user,
            channel=p.channel,
            user_question=question,
            trigger_mode="forced",
            status="completed",
            final_answer=answer,
            plan_json={
                "complexity": "moderate",
                "sub_questions": [{"question": f"{question} 1"}, {"question": "sub 2"}],
            },
            citations_json=[
                {
                    "id": 1,
                    "title": "Bloom 1956",
                    "url": "https://example.org/b",
                    "snippet": "contact alice.chen@ntu.edu.tw",
                }
            ],
            finished_at=when + timedelta(minutes=3),
            shared_views=2,
            disclaimer_acknowledged_at=when + timedelta(minutes=4),
        )
        _at(when, ResearchTask, task.pk)
        request = ChatLog.objects.create(
            channel=p.channel,
            user=user,
            kind="request",
            type="deep_research",
            content=question,
            deep_research_task=task,
            bloom_level="analyze",
            bloom_confidence=0.8,
            bloom_rationale="compares",
        )
        response = ChatLog.objects.create(
            channel=p.channel,
            user=user,
            kind="response",
            type="deep_research",
            content=answer,
            deep_research_task=task,
            in_reply_to=request,
        )
        for row in (request, response):
            _at(when, ChatLog, row.pk)
        ResearchStep.objects.create(
            task=task,
            index=1,
            phase="action",
            tool_name="search_channel_materials",
            args={"query": question},
            result_preview=f"found {answer}",
        )
        ResearchEvent.objects.create(task=task, seq=1, type="reflection_done")
        # One later question refers to the answer's source [1], one does not.
        follow_up = ChatLog.objects.create(
            channel=p.channel, user=user, kind="request", content="那 [1] 說的 Bloom evaluate 呢？"
        )
        _at(when + timedelta(hours=2), ChatLog, follow_up.pk)
        unrelated = ChatLog.objects.create(
            channel=p.channel, user=user, kind="request", content="期中考範圍？"
        )
        _at(when + timedelta(hours=2, minutes=5), ChatLog, unrelated.pk)
        return task

    day = now - timedelta(days=10)
    alice = research(
        p.student,
        "我是 s_alice（學號 B09901001，身分證 A123456789），信箱 s_alice@example.test，手機 0912-345-678：比較學習分析與布魯姆分類法",
        "給 s_bob 與 r12345678 的回答：請撥 +886 2 2345 6789 或 (02)3366-4888 或 0987654321，或寫信 alice.chen@ntu.edu.tw [1]",
        when=day,
    )
    bob = research(
        p.other_student, "BOB-ONLY 量子糾纏與學習動機的關係？", "答案 [1]", when=day + timedelta(hours=1)
    )
    teacher = research(p.teacher, "TEACHER-ONLY 測試題目", "答案", when=day + timedelta(hours=3))
    old = research(p.student, "OLD-ONLY 一年前的問題", "舊答案", when=now - timedelta(days=300))
    p.__dict__.update(
        researcher=researcher,
        study_obj=study,
        alice=alice,
        bob=bob,
        teacher_task=teacher,
        old_task=old,
        day=day,
    )
    return p


def _approved_request(
    p, *, study=PROTOCOL, researcher=None, start=None, end=None, tables=DATASETS
) -> ExportRequest:
    """A request filed by the researcher and approved by the platform admin (the IRB delegate)."""
    request = export_requests.file_export_request(
        requester=researcher or p.researcher,
        study=Study.objects.get(protocol_number=study),
        purpose="Bloom levels by week",
        tables=list(tables),
        date_from=start or (p.day - timedelta(days=1)).date(),
        date_to=end or timezone.localdate(),
        consent_form_name="export-consent.pdf",
        consent_form=b"%PDF-1.4 signed export consent",
    )
    return export_requests.decide_export_request(
        export_request=request, decided_by=p.admin, approve=True, note="within the protocol"
    )


def _export(
    p,
    out: Path,
    *,
    study=PROTOCOL,
    researcher=None,
    start=None,
    end=None,
    fmt="both",
    request=None,
    tables=DATASETS,
):
    request = request or _approved_request(p, study=study, start=start, end=end, tables=tables)
    call_command(
        "export_research_data",
        "--request",
        str(request.pk),
        "--out",
        str(out),
        "--format",
        fmt,
        "--researcher",
        researcher or request.requested_by.username,
        stdout=io.StringIO(),
    )
    return out


def _csv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _assert_nothing_identifying(files: dict[str, bytes], personas, extra=()):
    usernames = [
        u.username
        for u in (personas.student, personas.other_student, personas.teacher, personas.ta, personas.super_ta)
    ]
    for name, data in files.items():
        for pattern in FORBIDDEN:
            assert not pattern.search(data), (name, pattern.pattern, pattern.search(data))
        for needle in [*PLANTED, *usernames, *extra]:
            assert needle.encode() not in data, (name, needle)


# --------------------------------------------------------------------------- the happy path


def test_a_signed_researcher_exports_pseudonymised_redacted_files(study, tmp_path):
    out = _export(study, tmp_path / "x")

    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"{d}.{ext}" for d in DATASETS for ext in ("csv", "jsonl")] + ["manifest.json"])
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    uuids = [str(t.task_uuid) for t in ResearchTask.objects.all()]
    _assert_nothing_identifying(files, study, extra=uuids)

    tasks = _csv(out / "tasks.csv")
    assert tasks == _jsonl_as_csv(_jsonl(out / "tasks.jsonl"))
    # The two students' tasks in the range: not the teacher's (not a learner), not last year's.
    questions = [t["question"] for t in tasks]
    assert len(tasks) == 2 and not any("TEACHER-ONLY" in q or "OLD-ONLY" in q for q in questions)
    alice = next(t for t in tasks if "比較學習分析" in t["question"])
    assert (
        "[STUDENT_ID]" in alice["question"]
        and "[NATIONAL_ID]" in alice["question"]
        and "[EMAIL]" in alice["question"]
    )
    assert "[PHONE]" in alice["question"] and "[PERSON]" in alice["question"]
    assert alice["answer"].count("[PHONE]") == 3 and "[PERSON]" in alice["answer"]
    assert alice["person"].startswith("p_") and alice["task"].startswith("t_")

    steps = _csv(out / "steps.csv")
    assert {s["task"] for s in steps} == {t["task"] for t in tasks}
    chat = _csv(out / "chat_logs.csv")
    assert len(chat) == 8 and {c["person"] for c in chat} == {t["person"] for t in tasks}
    replies = [c for c in chat if c["kind"] == "response"]
    assert all(r["in_reply_to"].startswith("m_") for r in replies)

    signals = {s["task"]: s for s in _csv(out / "signals.csv")}
    mine = signals[alice["task"]]
    assert (
        mine["bloom_level"] == "analyze" and mine["sub_questions"] == "2" and mine["reflection_rounds"] == "1"
    )
    assert (
        mine["follow_ups"] == "1"
        and mine["share_link_openings"] == "2"
        and mine["disclaimer_acknowledged"] == "True"
    )
    assert mine["misuse_flagged"] == "False" and mine["diffusion_mentions"] == "0"
    assert float(mine["language_complexity"]) > 0 and int(mine["question_chars"]) > 0
    # The codebook in the manifest documents every signal column.
    from governance.export import SIGNAL_COLUMNS

    codebook = json.loads((out / "manifest.json").read_text())["codebook"]
    assert set(codebook["signals"]) == set(SIGNAL_COLUMNS) - {"task", "person", "channel"}
    assert (
        "share link" in codebook["signals"]["share_link_openings"]
        and codebook["signals"]["diffusion_mentions"]
    )


def _jsonl_as_csv(rows):
    """The CSV holds the same values as the JSONL, as text."""

    def cell(v):
        if v is None:
            return ""
        if isinstance(v, (list, dict)):
            return json.dumps(v, ensure_ascii=False, sort_keys=True)
        return str(v)

    return [{k: cell(v) for k, v in row.items()} for row in rows]


def test_the_audit_row_records_who_what_and_the_files_hashes(study, tmp_path):
    out = _export(study, tmp_path / "x")

    audit = ExportAudit.objects.get(action="export", outcome="completed")
    assert (
        audit.requested_by == study.researcher
        and audit.study == study.study_obj
        and audit.export_request.status == "exported"
    )
    assert audit.filters["study"] == PROTOCOL and audit.filters["channels"] == ["course-a"]
    assert audit.row_counts == {"tasks": 2, "steps": 2, "chat_logs": 8, "signals": 2}
    assert set(audit.file_hashes) == {f"{d}.{e}" for d in DATASETS for e in ("csv", "jsonl")}
    for name, digest in audit.file_hashes.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    manifest = json.loads((out / "manifest.json").read_text())
    assert (
        manifest["audit_id"] == audit.pk
        and manifest["files"]["tasks.csv"]["sha256"] == audit.file_hashes["tasks.csv"]
    )


def test_pseudonyms_are_stable_within_a_study_and_differ_across_studies(study, tmp_path):
    other = Study.objects.create(
        protocol_number="NTU-REC 202601EM002",
        title="other",
        approved_from=date(2025, 8, 1),
        approved_to=timezone.localdate() + timedelta(days=30),
        status="active",
    )
    other.channels.add(study.channel)
    StudyResearcher.objects.create(study=other, user=study.researcher, agreement_signed_on=date(2025, 9, 1))

    first = _export(study, tmp_path / "1", fmt="csv")
    second = _export(study, tmp_path / "2", fmt="csv")
    third = _export(study, tmp_path / "3", study="NTU-REC 202601EM002", fmt="csv")

    people = lambda out: sorted({row["person"] for row in _csv(out / "tasks.csv")})  # noqa: E731
    assert people(first) == people(second) and len(people(first)) == 2
    assert not set(people(first)) & set(people(third))
    # Same data, same study: byte-identical files.
    assert (first / "tasks.csv").read_bytes() == (second / "tasks.csv").read_bytes()


def test_a_student_who_withdrew_is_absent_from_every_file(study, tmp_path):
    ConsentWithdrawal.objects.create(
        user=study.other_student, channel=study.channel, withdrawn_at=timezone.now()
    )
    out = _export(study, tmp_path / "x")

    for path in out.iterdir():
        assert "BOB-ONLY" not in path.read_text(encoding="utf-8-sig") and "量子糾纏" not in path.read_text(
            encoding="utf-8-sig"
        )
    tasks = _csv(out / "tasks.csv")
    assert len(tasks) == 1 and len({row["person"] for row in _csv(out / "chat_logs.csv")}) == 1
    assert (
        ExportAudit.objects.get(action="export", outcome="completed").filters["withdrawn_students_excluded"]
        == 1
    )


def test_a_global_withdrawal_counts_too(study, tmp_path):
    ConsentWithdrawal.objects.create(user=study.other_student, channel=None, withdrawn_at=timezone.now())
    out = _export(study, tmp_path / "x", fmt="jsonl")
    assert "BOB-ONLY" not in (out / "tasks.jsonl").read_text()


def test_rows_written_while_consent_was_not_in_force_are_left_out(study, tmp_path):
    # Deep Research was off (no consent) until after Bob's research.
    ChannelConsent.objects.filter(channel=study.channel).update(started_at=study.day + timedelta(minutes=30))
    out = _export(study, tmp_path / "x", fmt="csv")
    questions = " ".join(t["question"] for t in _csv(out / "tasks.csv"))
    assert "BOB-ONLY" in questions and "比較學習分析" not in questions


def test_the_export_omits_chat_before_the_students_first_research(study, tmp_path):
    """The notice says consent begins at a student's first Deep Research in the channel: Bob's
    ordinary chat from before it stays out, though it is inside the window and the channel's
    consent period; what he wrote after it is in."""
    early = ChatLog.objects.create(
        channel=study.channel, user=study.other_student, kind="request", content="BOB-EARLY 期中考幾點？"
    )
    _at(study.day + timedelta(minutes=30), ChatLog, early.pk)  # his research is at day + 1 h
    with translation.override("en"):  # the notice says so, in both languages
        assert "from your first Deep Research here on" in consent.consent_summary()
    with translation.override("zh-hant"):
        assert "自第一次在此使用深度研究起" in consent.consent_summary()
    out = _export(study, tmp_path / "x", fmt="csv")
    contents = [row["content"] for row in _csv(out / "chat_logs.csv")]
    assert not any("BOB-EARLY" in c for c in contents)
    assert any("BOB-ONLY" in c for c in contents)  # his research's own question
    assert any("期中考範圍" in c for c in contents)  # chat after a first research is covered
    # Alice's first research was 300 days ago, before the window: her chat in it is covered.
    persons = {row["person"] for row in _csv(out / "chat_logs.csv")}
    assert len(persons) == 2


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "change, code",
    [
        (
            lambda p: StudyResearcher.objects.filter(user=p.researcher).update(agreement_signed_on=None),
            "no_signed_agreement",
        ),
        (lambda p: Study.objects.filter(pk=p.study_obj.pk).update(status="draft"), "study_not_active"),
        (lambda p: Study.objects.filter(pk=p.study_obj.pk).update(status="closed"), "study_not_active"),
        (
            lambda p: Study.objects.filter(pk=p.study_obj.pk).update(
                approved_to=timezone.localdate() - timedelta(days=1)
            ),
            "approval_not_current",
        ),
    ],
)
def test_an_export_is_refused_and_audited(study, tmp_path, change, code):
    request = _approved_request(study)
    change(study)
    with pytest.raises(CommandError, match=code):
        _export(study, tmp_path / "x", request=request)
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").iterdir())
    refused = ExportAudit.objects.get(action="export")
    assert refused.outcome == "refused" and refused.refusal.startswith(code) and refused.file_hashes == {}


def test_a_request_outside_the_approval_period_cannot_be_filed(study):
    from uedu_dr.errors import ServiceError

    for start, end, code in [
        (date(2025, 7, 1), None, "outside_approval"),
        (None, study.study_obj.approved_to + timedelta(days=1), "outside_approval"),
        (timezone.localdate(), timezone.localdate() - timedelta(days=2), "bad_date_range"),
    ]:
        with pytest.raises(ServiceError) as refused:
            _approved_request(study, start=start, end=end)
        assert refused.value.code == code
    assert not ExportRequest.objects.exists() and not ExportAudit.objects.exists()


def test_someone_else_cannot_use_a_researchers_approval_even_a_platform_admin(study, tmp_path):
    request = _approved_request(study)
    with pytest.raises(CommandError, match="no_signed_agreement"):
        _export(study, tmp_path / "x", researcher=study.admin.username, request=request)
    assert ExportRequest.objects.get().status == "approved"  # not used up by the refusal


def test_existing_files_are_never_overwritten(study, tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "tasks.csv").write_text("keep me")
    with pytest.raises(CommandError, match="tasks.csv"):
        _export(study, tmp_path / "x")
    assert (tmp_path / "x" / "tasks.csv").read_text() == "keep me"


# --------------------------------------------------------------------------- the audit log is append-only


def test_the_audit_log_cannot_be_changed_or_deleted(study, tmp_path, client):
    _export(study, tmp_path / "x")
    audit = ExportAudit.objects.get(action="export")
    audit.destination = "elsewhere"
    with pytest.raises(AppendOnlyError):
        audit.save()
    with pytest.raises(AppendOnlyError):
        audit.delete()
    for attempt in (
        lambda: ExportAudit.objects.update(destination="x"),
        lambda: ExportAudit.objects.all().delete(),
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            attempt()
    client.force_login(study.admin)
    assert client.get(f"/admin/governance/exportaudit/{audit.pk}/change/").status_code == 200  # readable
    assert (
        client.post(f"/admin/governance/exportaudit/{audit.pk}/change/", {"destination": "x"}).status_code
        == 403
    )
    assert (
        client.post(f"/admin/governance/exportaudit/{audit.pk}/delete/", {"post": "yes"}).status_code == 403
    )
    assert client.get("/admin/governance/exportaudit/add/").status_code == 403
    assert ExportAudit.objects.get(action="export").destination.startswith("command:")


# --------------------------------------------------------------------------- from the admin


def test_a_researcher_exports_from_the_admin_and_gets_a_zip_that_passes_the_checks(study, client):
    request = _approved_request(study)
    client.force_login(study.researcher)
    url = f"/admin/governance/study/{study.study_obj.pk}/export/"
    response = client.post(url, {"export_request": request.pk, "format": "both"})

    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    files = {name: archive.read(name) for name in archive.namelist()}
    audit = ExportAudit.objects.get(action="export", outcome="completed")
    assert response["X-Export-Audit-Id"] == str(audit.pk) and audit.destination == "admin download"
    assert set(files) == set(audit.file_hashes) | {"manifest.json"}
    for name, digest in audit.file_hashes.items():
        assert hashlib.sha256(files[name]).hexdigest() == digest
    _assert_nothing_identifying(files, study, extra=[str(t.task_uuid) for t in ResearchTask.objects.all()])


def test_the_admin_streams_the_zip_from_disk_with_the_members_of_the_export(study, client, tmp_path):
    """The zip is written to a temporary file and streamed in blocks, never built in memory;
    its bytes are a valid zip holding the same files, byte for byte, as the export itself."""
    request = _approved_request(study)
    client.force_login(study.researcher)
    date_from = (study.day - timedelta(days=1)).date()
    response = client.post(
        f"/admin/governance/study/{study.study_obj.pk}/export/",
        {"export_request": request.pk, "format": "csv"},
    )

    assert response.status_code == 200 and response.streaming
    slug = re.sub("[^A-Za-z0-9]+", "-", study.study_obj.protocol_number).strip("-")
    assert response["Content-Disposition"] == (
        f'attachment; filename="uedu-{slug}-{date_from:%Y%m%d}-{timezone.localdate():%Y%m%d}-r{request.pk}.zip"'
    )
    blocks = list(response.streaming_content)
    body = b"".join(blocks)
    assert int(response["Content-Length"]) == len(body)
    archive = zipfile.ZipFile(io.BytesIO(body))
    assert archive.testzip() is None  # every member's CRC checks out

    again = export.export_study(
        requester=study.researcher, export_request=_approved_request(study), fmt="csv", out_dir=tmp_path
    )
    assert sorted(archive.namelist()) == sorted([p.name for p in again.files] + ["manifest.json"])
    for path in again.files:
        assert archive.read(path.name) == path.read_bytes()
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["audit_id"] == int(response["X-Export-Audit-Id"])


def test_write_zip_writes_to_a_temporary_file_and_cleans_up(study, tmp_path):
    result = export.export_study(
        requester=study.researcher, export_request=_approved_request(study), fmt="jsonl", out_dir=tmp_path
    )
    with export.write_zip(result) as handle:
        assert handle.tell() == 0 and not isinstance(handle, io.BytesIO)
        archive = zipfile.ZipFile(handle)
        assert sorted(archive.namelist()) == sorted([p.name for p in result.files] + ["manifest.json"])
        assert json.loads(archive.read("manifest.json")) == json.loads(
            json.dumps(result.manifest, ensure_ascii=False)
        )


def test_the_admin_refuses_a_researcher_without_a_signed_agreement(study, client):
    request = _approved_request(study)
    StudyResearcher.objects.filter(user=study.researcher).update(agreement_signed_on=None)
    client.force_login(study.researcher)
    url = f"/admin/governance/study/{study.study_obj.pk}/export/"
    response = client.post(url, {"export_request": request.pk, "format": "csv"})
    assert response.status_code == 403 and response["Content-Type"].startswith("text/html")
    assert "研究者責任書" in response.content.decode()  # the refusal, in the default language
    assert ExportAudit.objects.get(action="export").outcome == "refused"


def test_a_channel_added_to_the_study_after_the_approval_is_not_exported(study, tmp_path):
    """L8: the approval pins the study's channels; a later edit cannot widen the export."""
    from channels_app.models import Channel

    request = _approved_request(study)
    assert request.approved_channel_ids == [study.channel.pk]
    later = Channel.objects.get(slug="course-b")
    ChannelConsent.objects.update_or_create(
        channel=later, defaults={"framework": "X", "started_at": timezone.now() - timedelta(days=400)}
    )
    task = ResearchTask.objects.create(
        user=add_member(later, make_user("s_later")),
        channel=later,
        user_question="LATER-CHANNEL 問題",
        trigger_mode="forced",
        status="completed",
    )
    _at(study.day, ResearchTask, task.pk)
    study.study_obj.channels.add(later)
    out = _export(study, tmp_path / "x", fmt="csv", request=request)
    assert "LATER-CHANNEL" not in (out / "tasks.csv").read_text(encoding="utf-8-sig")
    assert "course-b" not in (out / "tasks.csv").read_text(encoding="utf-8-sig")


# --------------------------------------------------------------------------- signals under the export's rule


def _signals(study, out: Path, start, end) -> dict[str, dict]:
    """The exported signals by task: Alice's research under "alice", Bob's under "bob"."""
    _export(study, out, start=start, end=end, fmt="csv")
    names = {
        row["task"]: "alice" if "比較學習分析" in row["question"] else "bob"
        for row in _csv(out / "tasks.csv")
    }
    return {names[row["task"]]: row for row in _csv(out / "signals.csv")}


def test_a_withdrawn_student_staff_and_rows_outside_the_export_change_no_exported_signal(study, tmp_path):
    """The signals that count other rows (follow-ups, follow-up researches, diffusion) count only
    rows the export itself may hold: in its period, consent in force, by learners who used Deep
    Research, never staff, nothing written while withdrawn."""
    p = study
    start, end = (p.day - timedelta(days=1)).date(), (p.day + timedelta(days=1)).date()
    before = _signals(p, tmp_path / "before", start, end)
    assert set(before) == {"alice", "bob"}
    link = f"/deep_research/task/{p.alice.task_uuid}"
    after_answer = p.day + timedelta(hours=5)

    def wrote(user, content, *, when=after_answer):
        row = ChatLog.objects.create(channel=p.channel, user=user, kind="request", content=content)
        _at(when, ChatLog, row.pk)
        return row

    # A student who used Deep Research in the period, then withdrew, spreads the link.
    carol = add_member(p.channel, make_user("s_carol"))
    carols = ResearchTask.objects.create(
        user=carol, channel=p.channel, user_question="CAROL 問題", status="completed", finished_at=p.day
    )
    _at(p.day, ResearchTask, carols.pk)
    ConsentWithdrawal.objects.create(user=carol, channel=p.channel, withdrawn_at=timezone.now())
    wrote(carol, f"看這個 {link}")
    # The teacher, a TA, a platform admin and a student who never used Deep Research spread it too.
    for user in (p.teacher, p.ta, p.admin, add_member(p.channel, make_user("s_dave"))):
        wrote(user, f"大家看 {link}")
    # Bob mentions it after the export's period; Alice follows it up after the period, by a
    # question and by a research.
    wrote(p.other_student, f"Alice 的研究 {link}", when=timezone.now() - timedelta(hours=2))
    wrote(p.student, "[1] 那一段再解釋？", when=timezone.now() - timedelta(hours=1))
    later = ResearchTask.objects.create(
        user=p.student, channel=p.channel, user_question=f"延伸 {link}", status="completed"
    )
    _at(timezone.now() - timedelta(hours=1), ResearchTask, later.pk)

    assert _signals(p, tmp_path / "after", start, end) == before

    # The check is not blind: a learner the export covers, mentioning it within the period, counts.
    wrote(p.other_student, f"Alice 的研究 {link}", when=after_answer + timedelta(hours=3))
    counted = _signals(p, tmp_path / "counted", start, end)
    assert int(counted["alice"]["diffusion_mentions"]) == int(before["alice"]["diffusion_mentions"]) + 1
    assert {**counted["alice"], "diffusion_mentions": before["alice"]["diffusion_mentions"]} == before[
        "alice"
    ]
    assert counted["bob"] == before["bob"]
