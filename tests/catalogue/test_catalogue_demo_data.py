"""The demo catalogue loads through `load_demo_data`, is idempotent, and is all marked demo."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management import call_command

from catalogue.models import (
    Advisor,
    AdvisorPaper,
    Course,
    CurriculumTopic,
    PlatformDocument,
    ResearchCluster,
    TeamPaper,
    University,
)

MODELS = [
    University,
    Course,
    CurriculumTopic,
    ResearchCluster,
    Advisor,
    AdvisorPaper,
    TeamPaper,
    PlatformDocument,
]


def _counts():
    return {m.__name__: m.objects.count() for m in MODELS}


def test_demo_catalogue_is_loaded_idempotently_and_all_demo(db, settings, capsys):
    settings.DEBUG = True
    call_command("load_demo_data")
    first = _counts()
    call_command("load_demo_data")

    assert _counts() == first
    assert first["ResearchCluster"] == 3 and first["Advisor"] == 6 and first["University"] == 4
    assert first["AdvisorPaper"] >= 6 and first["TeamPaper"] >= 3
    for model in MODELS:
        assert not model.objects.filter(is_demo=False).exists(), model
    eds101 = Course.objects.get(code="EDS101")
    assert eds101.name_en == "Introduction to Educational Data Science" and eds101.university.slug == "ntnu"
    assert set(CurriculumTopic.objects.values_list("subject", flat=True)) == {
        "math",
        "science",
        "information_technology",
    }
    assert all(a.clusters.exists() and a.papers.count() >= 2 for a in Advisor.objects.all())
    rules = PlatformDocument.objects.get(slug="eds101-final-project")
    assert rules.visibility == "channel" and rules.channel.slug == "demo-course"
    assert "Demo catalogue ready: 4 universities" in capsys.readouterr().out


def test_catalogue_pages_show_demo_rows_as_demo_and_need_a_login(client, db, settings):
    settings.DEBUG = True
    call_command("load_demo_data")
    assert client.get("/catalogue/courses/ntnu/EDS101/").status_code == 302  # to the login page

    client.force_login(get_user_model().objects.get(username="student1"))
    for url in (
        "/catalogue/courses/ntnu/EDS101/",
        "/catalogue/universities/ntnu/",
        "/catalogue/curriculum/D-10-2/",
        "/catalogue/clusters/learning-analytics/",
        "/catalogue/advisors/lin-yu-ting/",
        "/catalogue/team-papers/uedu-deep-research-2026/",
        Course.objects.get(code="EDS101").get_absolute_url(),
        CurriculumTopic.objects.get(curriculum_code="資A-IV-1").get_absolute_url(),
    ):
        page = client.get(url)
        assert page.status_code == 200, url
        assert "示範用的虛構資料" in page.content.decode(), url  # the page speaks zh-Hant by default
    advisor_page = client.get("/catalogue/advisors/lin-yu-ting/").content.decode()
    paper = AdvisorPaper.objects.filter(advisor__slug="lin-yu-ting").first()
    assert f'id="paper-{paper.pk}"' in advisor_page  # the anchor a paper citation points at


def test_the_admin_marks_demo_rows(client, db, settings):
    settings.DEBUG = True
    call_command("load_demo_data")
    admin_client = client
    admin_client.force_login(get_user_model().objects.get(username="admin"))
    page = admin_client.get("/admin/catalogue/course/?is_demo__exact=1").content.decode()
    assert "EDS101" in page and ">DEMO</strong>" in page
    assert "EDS101" not in admin_client.get("/admin/catalogue/course/?is_demo__exact=0").content.decode()
