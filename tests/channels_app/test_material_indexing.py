"""Uploading and indexing channel materials: real files, real parsers, real pgvector rows."""

from __future__ import annotations

import io
import multiprocessing
import threading
import zipfile

import pytest
from django.core.files.storage import default_storage
from django.template.defaultfilters import filesizeformat
from django.utils import translation

from channels_app import materials
from channels_app.models import Material, MaterialChunk
from materials import extraction
from tests.support.documents import docx_bytes, pdf_bytes, pptx_bytes, upload
from tests.support.factories import make_channel
from tests.support.slow_parse import take
from tests.support.stack import wait_for
from uedu_dr import jobs
from uedu_dr.bounded_process import run_bounded

pytestmark = pytest.mark.django_db

LA_PAGE = "Learning analytics measures data about learners to improve learning.\n學習分析蒐集學生資料。幫助教師改善教學！"
IRB_PAGE = "An Institutional Review Board reviews research with student data.\n研究倫理審查委員會負責審查。"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def chunk_rows(material):
    return list(MaterialChunk.objects.filter(material=material).order_by("ordinal"))


def test_it_indexes_a_pdf_with_page_numbers(personas, index_file):
    material = index_file(personas.channel, personas.teacher, "week1.pdf", pdf_bytes([LA_PAGE, IRB_PAGE]))

    assert material.status == Material.Status.READY, material.error
    assert (material.kind, material.unit_count, material.embedding_model) == (
        "pdf",
        2,
        "sentence-transformers/all-MiniLM-L6-v2",
    )
    rows = chunk_rows(material)
    assert material.chunk_count == len(rows) >= 2
    by_page = {row.page: row.text for row in rows}
    assert "學習分析蒐集學生資料。" in by_page[1] and "Institutional Review Board" in by_page[2]
    assert {row.channel_id for row in rows} == {personas.channel.pk}  # denormalised for cheap filtering
    assert {(row.embedding_dim, len(row.embedding)) for row in rows} == {(384, 384)}
    assert "學習 習分 分析" in rows[0].search_text  # CJK bigrams for full-text search


def test_it_numbers_docx_sections_by_heading(personas, index_file):
    data = docx_bytes(
        [
            ("", ["Course notes for EDS101."]),
            ("Bloom", ["記憶、理解、應用。"]),
            ("IRB", ["Consent forms matter."]),
        ]
    )

    material = index_file(personas.channel, personas.teacher, "notes.docx", data)

    assert material.status == Material.Status.READY, material.error
    pages = {row.page: row.text for row in chunk_rows(material)}
    assert pages == {
        1: "Course notes for EDS101.",
        2: "Bloom\n記憶、理解、應用。",
        3: "IRB\nConsent forms matter.",
    }
    assert material.locator(2) == "notes.docx § 2"


def test_it_numbers_pptx_slides_and_reads_speaker_notes(personas, index_file):
    data = pptx_bytes(
        [
            ("RAG", ["Retrieve passages", "Then generate"], ""),
            ("評估", ["Recall@10"], "中文關鍵詞要另外測試。"),
        ]
    )

    material = index_file(personas.channel, personas.teacher, "slides.pptx", data)

    assert material.status == Material.Status.READY, material.error
    pages = {row.page: row.text for row in chunk_rows(material)}
    assert pages[1] == "RAG\nRetrieve passages\nThen generate"
    assert "中文關鍵詞要另外測試。" in pages[2]
    assert material.locator(2) == "slides.pptx slide 2"


def test_reuploading_the_same_file_returns_the_existing_material(personas, index_file):
    data = pdf_bytes([LA_PAGE])
    first = index_file(personas.channel, personas.teacher, "week1.pdf", data)
    chunks_before = list(MaterialChunk.objects.values_list("pk", flat=True))

    again, created = materials.material_upload(
        channel=personas.channel, user=personas.teacher, uploaded_file=upload("renamed-copy.pdf", data)
    )

    assert created is False and again.pk == first.pk and again.original_name == "week1.pdf"
    assert Material.objects.count() == 1
    assert list(MaterialChunk.objects.values_list("pk", flat=True)) == chunks_before


def test_the_same_file_in_another_channel_is_a_separate_material(personas, index_file):
    data = pdf_bytes([LA_PAGE])
    index_file(personas.channel, personas.teacher, "week1.pdf", data)
    other = index_file(make_channel(personas.other_teacher), personas.other_teacher, "week1.pdf", data)
    assert other.status == Material.Status.READY and Material.objects.count() == 2


def test_deleting_a_material_deletes_its_chunks_and_file(
    personas, index_file, django_capture_on_commit_callbacks
):
    material = index_file(personas.channel, personas.teacher, "week1.pdf", pdf_bytes([LA_PAGE, IRB_PAGE]))
    keep = index_file(personas.channel, personas.teacher, "other.pdf", pdf_bytes([IRB_PAGE]))
    stored = material.file.name
    assert default_storage.exists(stored) and MaterialChunk.objects.filter(material=material).exists()

    with django_capture_on_commit_callbacks(execute=True):
        materials.material_delete(material)

    assert not MaterialChunk.objects.filter(material_id=material.pk).exists()
    assert not default_storage.exists(stored)
    assert MaterialChunk.objects.filter(material=keep).count() == keep.chunk_count > 0


# --------------------------------------------------------------------------- files that cannot be indexed


def corrupt_pdf() -> bytes:
    good = pdf_bytes([LA_PAGE])
    return good[:200] + b"\x00garbage" * 50  # header intact, body and xref destroyed


def broken_docx() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:  # looks like a DOCX, but no content types, bad XML
        archive.writestr("word/document.xml", b"<w:document><unclosed")
    return buffer.getvalue()


@pytest.mark.parametrize(
    "name, data, code, words",
    [
        ("broken.pdf", corrupt_pdf(), "corrupt", "damaged"),
        ("locked.pdf", pdf_bytes([LA_PAGE], user_password="s3cret"), "encrypted", "password"),
        ("scan.pdf", pdf_bytes([""]), "empty", "No text"),
        ("blank.docx", docx_bytes([("", [])]), "empty", "No text"),
        ("broken.docx", broken_docx(), "corrupt", "damaged"),
    ],
)
def test_an_unreadable_file_fails_with_a_clear_error_and_no_chunks(
    personas, index_file, name, data, code, words
):
    material = index_file(personas.channel, personas.teacher, name, data)

    assert material.status == Material.Status.FAILED
    assert material.error_code == code
    assert words in material.error
    assert MaterialChunk.objects.filter(material=material).count() == 0 and material.chunk_count == 0


@pytest.mark.parametrize(
    "name, data, code, words",
    [
        ("empty.pdf", b"", "empty", "empty"),
        ("notes.txt", b"plain text notes", "wrong_type", "Only PDF, DOCX and PPTX"),
        ("fake.pdf", docx_bytes([("", ["hello"])]), "wrong_type", "not a PDF"),
        ("fake.docx", pdf_bytes([LA_PAGE]), "wrong_type", "not a DOCX"),
        ("slides.docx", pptx_bytes([("x", ["y"], "")]), "wrong_type", "it is a PPTX"),
        (
            "old.doc.docx",
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600,
            "wrong_type",
            "old Office format",
        ),
        (
            "locked.docx",
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + "EncryptionInfo".encode("utf-16-le") + b"\x00" * 64,
            "encrypted",
            "password",
        ),
    ],
)
def test_a_refused_upload_is_recorded_without_its_bytes_and_never_queued(
    personas, django_capture_on_commit_callbacks, name, data, code, words
):
    with django_capture_on_commit_callbacks() as queued:
        material, created = materials.material_upload(
            channel=personas.channel, user=personas.teacher, uploaded_file=upload(name, data)
        )

    assert created and material.status == Material.Status.FAILED
    assert material.error_code == code and words in material.error
    assert not material.file and queued == []
    assert Material.objects.get(pk=material.pk).error == material.error


def test_a_file_over_the_size_limit_is_refused(personas, settings, django_capture_on_commit_callbacks):
    settings.UEDU_MATERIALS_MAX_UPLOAD_BYTES = 2_000
    data = pdf_bytes([LA_PAGE, IRB_PAGE])
    assert len(data) > 2_000

    with django_capture_on_commit_callbacks() as queued:
        material, _ = materials.material_upload(
            channel=personas.channel, user=personas.teacher, uploaded_file=upload("big.pdf", data)
        )

    assert material.status == Material.Status.FAILED and material.error_code == "too_large"
    assert material.error == f"The file is {filesizeformat(len(data))}; the limit is {filesizeformat(2_000)}."
    assert not material.file and queued == [] and material.size_bytes == len(data)


def test_a_zip_bomb_is_refused(personas, monkeypatch):
    monkeypatch.setattr(extraction, "MAX_UNZIPPED_BYTES", 1024 * 1024)  # the real cap is 512 MB
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"<w/>")
        archive.writestr("padding.bin", b"\x00" * (2 * 1024 * 1024))
    material, _ = materials.material_upload(
        channel=personas.channel, user=personas.teacher, uploaded_file=upload("bomb.docx", buffer.getvalue())
    )
    assert material.status == Material.Status.FAILED and material.error_code == "corrupt"


def test_a_pdf_with_only_an_owner_password_is_indexed(personas, index_file):
    # Print/copy restrictions without an open password: every viewer opens it, so its text is readable.
    data = pdf_bytes([LA_PAGE], user_password="")
    material = index_file(personas.channel, personas.teacher, "restricted.pdf", data)
    assert material.status == Material.Status.READY, material.error


def test_embedding_failure_leaves_no_half_index(personas, index_file, fake_embeddings):
    fake_embeddings.fail_with = 400

    material = index_file(personas.channel, personas.teacher, "week1.pdf", pdf_bytes([LA_PAGE, IRB_PAGE]))

    assert material.status == Material.Status.FAILED and material.error_code == "embedding"
    assert "Embedding failed" in material.error and "told to fail" in material.error
    assert MaterialChunk.objects.count() == 0


def test_a_failed_reindex_removes_the_old_chunks(
    personas, index_file, fake_embeddings, celery_eager, django_capture_on_commit_callbacks
):
    material = index_file(personas.channel, personas.teacher, "week1.pdf", pdf_bytes([LA_PAGE]))
    assert material.status == Material.Status.READY and MaterialChunk.objects.count() > 0
    fake_embeddings.fail_with = 400

    with django_capture_on_commit_callbacks(execute=True):
        assert materials.material_reindex(material)

    material.refresh_from_db()
    assert material.status == Material.Status.FAILED and MaterialChunk.objects.count() == 0


def test_reindex_replaces_chunks_after_a_transient_failure(
    personas, index_file, fake_embeddings, django_capture_on_commit_callbacks
):
    fake_embeddings.fail_with = 400
    material = index_file(personas.channel, personas.teacher, "week1.pdf", pdf_bytes([LA_PAGE, IRB_PAGE]))
    assert material.status == Material.Status.FAILED
    fake_embeddings.fail_with = None

    with django_capture_on_commit_callbacks(execute=True):
        assert materials.material_reindex(material)

    material.refresh_from_db()
    assert material.status == Material.Status.READY and material.error == "" and material.error_code == ""
    assert MaterialChunk.objects.filter(material=material).count() == material.chunk_count > 0


def test_a_refused_upload_cannot_be_reindexed(personas):
    material, _ = materials.material_upload(
        channel=personas.channel, user=personas.teacher, uploaded_file=upload("x.txt", b"x")
    )
    assert materials.material_reindex(material) is False
    assert Material.objects.get(pk=material.pk).status == Material.Status.FAILED


def test_the_job_tolerates_a_material_deleted_before_it_ran(personas, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as queued:
        material, _ = materials.material_upload(
            channel=personas.channel,
            user=personas.teacher,
            uploaded_file=upload("a.pdf", pdf_bytes([LA_PAGE])),
        )
    material_id = material.pk
    material.delete()

    from channels_app.tasks import index_material_task

    assert len(queued) == 1
    index_material_task(material_id)  # no exception, nothing written
    assert MaterialChunk.objects.count() == 0


def test_the_job_does_nothing_for_a_material_that_is_already_indexed(personas, index_file):
    material = index_file(personas.channel, personas.teacher, "week1.pdf", pdf_bytes([LA_PAGE]))
    chunks = list(MaterialChunk.objects.values_list("pk", flat=True))
    assert materials.index_material(material.pk) is None
    assert list(MaterialChunk.objects.values_list("pk", flat=True)) == chunks


def test_a_file_that_yields_too_many_chunks_is_refused(personas, index_file, settings):
    settings.UEDU_MATERIALS_MAX_CHUNKS = 1
    material = index_file(personas.channel, personas.teacher, "long.pdf", pdf_bytes([LA_PAGE, IRB_PAGE]))
    assert material.status == Material.Status.FAILED and material.error_code == "too_many_chunks"
    assert MaterialChunk.objects.count() == 0


def test_a_file_waiting_too_long_for_a_parse_slot_goes_back_to_the_queue_not_to_failed(
    personas, settings, monkeypatch, django_capture_on_commit_callbacks
):
    """Every parse slot taken (uedu_dr.parse_slots) says nothing about the file: the indexing is
    queued again, and the material is never marked failed for it."""
    settings.UEDU_PARSE_CHILDREN_PER_PROCESS = 1
    monkeypatch.setattr(extraction, "MATERIAL_SLOT_WAIT_SECONDS", 0.5)
    with django_capture_on_commit_callbacks() as queued:  # uploaded; its indexing is queued
        material, _ = materials.material_upload(
            channel=personas.channel,
            user=personas.teacher,
            uploaded_file=upload("w.pdf", pdf_bytes([LA_PAGE])),
        )
    assert len(queued) == 1
    sent = []
    monkeypatch.setattr(materials.jobs, "send", lambda name, *args, **kw: sent.append((name, args, kw)))
    holder = threading.Thread(
        target=run_bounded, args=(take, (3,)), kwargs={"memory_mb": 512, "timeout_seconds": 30}, daemon=True
    )
    holder.start()
    wait_for(lambda: len(multiprocessing.active_children()) == 1, message="a parse holding the slot")

    materials.index_material(material.pk)

    material.refresh_from_db()
    assert material.status == Material.Status.PENDING and not material.error
    assert sent == [(jobs.INDEX_MATERIAL, (material.pk,), {"countdown": materials.BUSY_RETRY_SECONDS})]
    holder.join(30)
    materials.index_material(material.pk)  # the job, come back: the slot is free
    material.refresh_from_db()
    assert material.status == Material.Status.READY, material.error
