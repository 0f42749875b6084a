"""import_openalex_author against a fake OpenAlex: idempotent by OpenAlex work id and DOI, and a
failure leaves the stored papers as they were."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from catalogue.models import Advisor, AdvisorPaper
from tests.support.fake_openalex import FakeOpenAlex, work

AUTHOR = "A5000000001"


@pytest.fixture
def openalex(settings):
    cache.clear()
    settings.UEDU_TOOL_HTTP_BACKOFF_SECONDS = 0.01
    settings.UEDU_TOOL_HTTP_MAX_RETRIES = 1
    works = [
        work(
            "W11",
            "Dashboards for teachers",
            year=2020,
            countries=["tw"],
            doi="10.1/dash",
            author_ids=[AUTHOR],
            authors=["Lin Yu-Ting"],
            abstract="teachers read dashboards",
            cited_by=5,
        ),
        work(
            "W12",
            "Predicting dropout",
            year=2022,
            countries=["tw"],
            author_ids=[AUTHOR],
            authors=["Lin Yu-Ting"],
        ),
        work(
            "W13",
            "Bloom levels at scale",
            year=2024,
            countries=["tw", "jp"],
            doi="10.1/bloom",
            author_ids=[AUTHOR],
            authors=["Lin Yu-Ting"],
        ),
        work(
            "W99", "Someone else's paper", year=2024, countries=["tw"], author_ids=["A7"], authors=["Other"]
        ),
    ]
    # Two works a page: the import has to follow OpenAlex's cursor.
    with FakeOpenAlex(works, max_per_page=2) as server:
        settings.OPENALEX_BASE_URL = server.url
        yield server


@pytest.fixture
def advisor(db):
    return Advisor.objects.create(slug="lin-yu-ting", name="林宇庭", name_en="Lin Yu-Ting")


def _papers(advisor):
    return {p.openalex_id: (p.title, p.doi, p.year, p.cited_by_count) for p in advisor.papers.all()}


def test_it_imports_every_page_of_the_authors_works(openalex, advisor, capsys):
    call_command("import_openalex_author", "lin-yu-ting", f"https://openalex.org/{AUTHOR}")

    assert _papers(advisor) == {
        "W11": ("Dashboards for teachers", "10.1/dash", 2020, 5),
        "W12": ("Predicting dropout", "", 2022, 0),
        "W13": ("Bloom levels at scale", "10.1/bloom", 2024, 0),
    }
    paper = advisor.papers.get(openalex_id="W11")
    assert paper.abstract == "teachers read dashboards" and paper.url == "https://doi.org/10.1/dash"
    assert paper.is_demo is False
    advisor.refresh_from_db()
    assert advisor.openalex_id == AUTHOR
    assert "3 works, 3 created, 0 updated, 0 unchanged" in capsys.readouterr().out
    assert [r.query["cursor"] for r in openalex.requests_to("/works")] == ["*", "2"]
    assert openalex.requests_to("/works")[0].query["filter"] == f"author.id:{AUTHOR}"


def test_running_it_again_changes_nothing(openalex, advisor, capsys):
    call_command("import_openalex_author", str(advisor.pk), AUTHOR)
    before = _papers(advisor)
    call_command("import_openalex_author", str(advisor.pk), AUTHOR)

    assert _papers(advisor) == before
    assert AdvisorPaper.objects.count() == 3
    assert "3 works, 0 created, 0 updated, 3 unchanged" in capsys.readouterr().out


def test_a_changed_work_is_updated_in_place(openalex, advisor, capsys):
    call_command("import_openalex_author", "lin-yu-ting", AUTHOR)
    openalex.works[0]["cited_by_count"] = 50
    call_command("import_openalex_author", "lin-yu-ting", AUTHOR)
    assert advisor.papers.get(openalex_id="W11").cited_by_count == 50
    assert AdvisorPaper.objects.count() == 3
    assert "0 created, 1 updated, 2 unchanged" in capsys.readouterr().out


def test_a_paper_entered_by_hand_is_matched_by_doi_not_duplicated(openalex, advisor):
    typed = AdvisorPaper.objects.create(
        advisor=advisor, title="Dashboards (typed by hand)", doi="https://doi.org/10.1/DASH"
    )

    call_command("import_openalex_author", "lin-yu-ting", AUTHOR)

    typed.refresh_from_db()
    assert typed.openalex_id == "W11" and typed.title == "Dashboards for teachers"
    assert AdvisorPaper.objects.count() == 3


def test_a_failing_openalex_leaves_stored_papers_untouched(openalex, advisor):
    call_command("import_openalex_author", "lin-yu-ting", AUTHOR)
    before = _papers(advisor)
    openalex.works[0]["display_name"] = "Changed title"
    # The first page answers, the second fails: nothing of the first page may be written.
    openalex.route("/works", _fail_second_page(openalex))

    with pytest.raises(CommandError, match="OpenAlex answered HTTP 503; gave up after 2 attempts"):
        call_command("import_openalex_author", "lin-yu-ting", AUTHOR)

    assert _papers(advisor) == before


def _fail_second_page(server):
    from tests.support.fake_http import Reply

    works = server._works

    def serve(request):
        if request.query.get("cursor") not in (None, "*"):
            return Reply.json({"error": "down"}, status=503)
        return works(request)

    return serve


def test_demo_advisors_papers_are_demo_too(openalex, db):
    demo = Advisor.objects.create(slug="demo-lin", name="示範", is_demo=True)
    call_command("import_openalex_author", "demo-lin", AUTHOR)
    assert set(demo.papers.values_list("is_demo", flat=True)) == {True}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nobody", AUTHOR], "no advisor with id or slug 'nobody'"),
        (["lin-yu-ting", "W123"], "is not an OpenAlex author id"),
    ],
)
def test_bad_arguments_are_clear_errors(openalex, advisor, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("import_openalex_author", *args)
    assert openalex.requests == []


def test_an_advisor_linked_to_another_author_is_not_overwritten(openalex, advisor):
    advisor.openalex_id = "A1"
    advisor.save()
    with pytest.raises(CommandError, match="is linked to OpenAlex author A1, not A5000000001"):
        call_command("import_openalex_author", "lin-yu-ting", AUTHOR)
    assert advisor.papers.count() == 0
