"""The channel materials pages and the admin: every permission checked on the server, per object."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import translation

from channels_app.models import Material, MaterialChunk
from tests.support.documents import docx_bytes, pdf_bytes, upload
from tests.support.factories import make_channel

pytestmark = pytest.mark.django_db

PAGES = ["Learning analytics measures data about learners.", "研究倫理審查委員會（IRB）審查研究計畫。"]


@pytest.fixture(autouse=True)
def english(client):
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"  # pages follow the browser's language
    with translation.override("en"):
        yield


def list_url(channel):
    return reverse("material_list", kwargs={"slug": channel.slug})


def post_upload(client, channel, name="week1.pdf", data=None):
    return client.post(list_url(channel), {"file": upload(name, data or pdf_bytes(PAGES))})


def test_the_teacher_uploads_a_file_and_it_is_indexed(
    client, personas, celery_eager, django_capture_on_commit_callbacks
):
    client.force_login(personas.teacher)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_upload(client, personas.channel)

    assert response.status_code == 302 and response.url == list_url(personas.channel)
    material = Material.objects.get()
    assert (material.channel, material.uploaded_by, material.status) == (
        personas.channel,
        personas.teacher,
        "ready",
    )
    page = client.get(list_url(personas.channel))
    assert "“week1.pdf” was uploaded and is being indexed." in page.content.decode()
    assert "week1.pdf" in page.content.decode() and "Ready" in page.content.decode()


def test_the_page_speaks_traditional_chinese_by_default(client, personas):
    client.defaults.pop("HTTP_ACCEPT_LANGUAGE")
    client.force_login(personas.teacher)
    response = client.post(list_url(personas.channel), {"file": upload("notes.txt", b"hello")}, follow=True)
    body = response.content.decode()
    assert "課程教材" in body and "只能索引 PDF、DOCX 與 PPTX 檔案；「notes.txt」不屬於這些格式。" in body


def test_a_bad_file_shows_its_error_on_the_page(client, personas):
    client.force_login(personas.teacher)
    response = client.post(list_url(personas.channel), {"file": upload("notes.txt", b"hello")}, follow=True)
    body = response.content.decode()
    assert "cannot be indexed" in body and "Only PDF, DOCX and PPTX files can be indexed" in body
    assert Material.objects.get().status == "failed"


def test_uploading_the_same_file_twice_says_so_and_stores_one_row(
    client, personas, celery_eager, django_capture_on_commit_callbacks
):
    client.force_login(personas.teacher)
    data = pdf_bytes(PAGES)
    with django_capture_on_commit_callbacks(execute=True):
        post_upload(client, personas.channel, data=data)
    response = client.post(list_url(personas.channel), {"file": upload("copy.pdf", data)}, follow=True)
    assert "is already in this channel; nothing was changed" in response.content.decode()
    assert Material.objects.count() == 1


@pytest.mark.parametrize(
    "who, status",
    [("student", 403), ("ta", 403), ("super_ta", 403), ("other_teacher", 404), ("outsider", 404)],
)
def test_only_the_channels_teacher_may_manage_materials(client, personas, who, status):
    client.force_login(getattr(personas, who))
    assert client.get(list_url(personas.channel)).status_code == status
    assert post_upload(client, personas.channel).status_code == status
    assert Material.objects.count() == 0


def test_anonymous_users_are_sent_to_log_in(client, personas):
    response = post_upload(client, personas.channel)
    assert response.status_code == 302 and response.url.startswith(reverse("login"))
    assert Material.objects.count() == 0


def test_a_teacher_member_who_is_not_the_owner_may_manage(client, personas):
    from channels_app.models import Membership
    from tests.support.factories import add_member, make_user

    co_teacher = add_member(personas.channel, make_user("co_teacher"), Membership.Role.TEACHER)
    client.force_login(co_teacher)
    assert client.get(list_url(personas.channel)).status_code == 200


@pytest.fixture
def indexed(personas, index_file):
    return index_file(personas.channel, personas.teacher, "week1.pdf", pdf_bytes(PAGES))


def test_members_read_a_material_by_page_and_download_it(client, personas, indexed):
    client.force_login(personas.student)
    url = reverse("material_detail", kwargs={"slug": personas.channel.slug, "pk": indexed.pk})
    body = client.get(url).content.decode()
    assert 'id="p2"' in body and "研究倫理審查委員會（IRB）審查研究計畫。" in body

    download = client.get(reverse("material_file", kwargs={"slug": personas.channel.slug, "pk": indexed.pk}))
    assert download.status_code == 200 and b"".join(download.streaming_content).startswith(b"%PDF-")
    assert "week1.pdf" in download["Content-Disposition"]


def test_outsiders_cannot_read_or_download_a_material(client, personas, indexed):
    client.force_login(personas.other_teacher)
    kwargs = {"slug": personas.channel.slug, "pk": indexed.pk}
    assert client.get(reverse("material_detail", kwargs=kwargs)).status_code == 404
    assert client.get(reverse("material_file", kwargs=kwargs)).status_code == 404


def test_a_material_is_not_reachable_through_another_channels_address(client, personas, indexed):
    # The other teacher owns "course-b" but the material belongs to "course-a".
    client.force_login(personas.other_teacher)
    other = make_channel(personas.other_teacher, slug="course-c")
    for name in ("material_detail", "material_file"):
        assert client.get(reverse(name, kwargs={"slug": other.slug, "pk": indexed.pk})).status_code == 404
    for name in ("material_delete", "material_reindex"):
        assert client.post(reverse(name, kwargs={"slug": other.slug, "pk": indexed.pk})).status_code == 404
    assert MaterialChunk.objects.filter(material=indexed).exists()


def test_students_cannot_delete_or_reindex(client, personas, indexed):
    client.force_login(personas.student)
    kwargs = {"slug": personas.channel.slug, "pk": indexed.pk}
    assert client.post(reverse("material_delete", kwargs=kwargs)).status_code == 403
    assert client.post(reverse("material_reindex", kwargs=kwargs)).status_code == 403
    indexed.refresh_from_db()
    assert (
        indexed.status == "ready"
        and MaterialChunk.objects.filter(material=indexed).count() == indexed.chunk_count
    )


def test_the_teacher_deletes_a_material_and_its_chunks(client, personas, indexed):
    client.force_login(personas.teacher)
    response = client.post(
        reverse("material_delete", kwargs={"slug": personas.channel.slug, "pk": indexed.pk})
    )
    assert response.status_code == 302
    assert not Material.objects.exists() and not MaterialChunk.objects.exists()
    assert (
        client.get(
            reverse("material_delete", kwargs={"slug": personas.channel.slug, "pk": indexed.pk})
        ).status_code
        == 405
    )


def test_the_teacher_reindexes_a_material(client, personas, indexed, django_capture_on_commit_callbacks):
    client.force_login(personas.teacher)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("material_reindex", kwargs={"slug": personas.channel.slug, "pk": indexed.pk}))
    indexed.refresh_from_db()
    assert (
        indexed.status == "ready"
        and MaterialChunk.objects.filter(material=indexed).count() == indexed.chunk_count
    )


def test_the_home_page_links_materials_only_for_channels_the_user_teaches(client, personas):
    client.force_login(personas.teacher)
    assert list_url(personas.channel) in client.get("/").content.decode()
    client.force_login(personas.student)
    assert list_url(personas.channel) not in client.get("/").content.decode()


# --------------------------------------------------------------------------- admin


def test_the_admin_uploads_through_the_service_and_reuses_a_known_file(
    client, personas, celery_eager, django_capture_on_commit_callbacks
):
    client.force_login(personas.admin)
    data = docx_bytes([("Bloom", ["記憶、理解、應用。"])])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:channels_app_material_add"),
            {"channel": personas.channel.pk, "upload": upload("b.docx", data)},
        )
    material = Material.objects.get()
    assert (
        response.status_code == 302 and material.status == "ready" and material.uploaded_by == personas.admin
    )

    again = client.post(
        reverse("admin:channels_app_material_add"),
        {"channel": personas.channel.pk, "upload": upload("again.docx", data)},
        follow=True,
    )
    assert Material.objects.count() == 1
    assert "already in the channel" in again.content.decode()


def test_the_admin_reindex_action_requeues_materials(
    client, personas, indexed, fake_embeddings, django_capture_on_commit_callbacks
):
    client.force_login(personas.admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:channels_app_material_changelist"),
            {"action": "reindex", "_selected_action": [indexed.pk]},
            follow=True,
        )
    assert "1 material queued for indexing." in response.content.decode()
    indexed.refresh_from_db()
    # Re-indexed with the backend configured now (the fake openai one): the job really ran again.
    assert indexed.status == "ready" and indexed.embedding_model == "fake-embedding-32"
    assert set(MaterialChunk.objects.filter(material=indexed).values_list("embedding_dim", flat=True)) == {32}
