"""Deleting a course material asks first, in the browser, under the strict CSP: the question is
the form's data-confirm text (an inline onsubmit handler would be refused and delete at once)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from playwright.sync_api import expect

from channels_app.materials import material_upload
from channels_app.models import Material
from tests.e2e.test_readme_screenshots import demo  # noqa: F401 (the demo course fixture)
from tests.support.documents import pdf_bytes
from tests.support.factories import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_deleting_a_material_asks_first_and_keeps_it_when_the_teacher_says_no(open_as, demo):  # noqa: F811
    channel, _student = demo
    teacher = channel.owner
    teacher.set_password(PASSWORD)
    teacher.save()
    material, _ = material_upload(
        channel=channel,
        user=teacher,
        uploaded_file=SimpleUploadedFile("to-delete.pdf", pdf_bytes(["A handout that will be deleted."])),
        enqueue=False,
    )
    page = open_as(teacher, locale="en-US")
    page.goto(reverse("material_list", args=[channel.slug]))
    row = page.locator(f"#material-{material.pk}")
    asked: list[str] = []

    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    row.get_by_role("button", name="Delete").click()
    page.wait_for_timeout(300)
    assert asked == ["Delete this file and its indexed passages?"]
    assert Material.objects.filter(pk=material.pk).exists()  # "Cancel" kept it
    expect(row).to_be_visible()

    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Delete").click()
    expect(page.locator(f"#material-{material.pk}")).to_have_count(0)
    assert not Material.objects.filter(pk=material.pk).exists()
