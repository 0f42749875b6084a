"""The catalogue tools read Uedu's own data (tier internal) and label demo rows as demo."""

from __future__ import annotations

from catalogue.models import Advisor, AdvisorPaper, ResearchCluster, University
from tests.catalogue.conftest import call


def test_course_overview_by_code_carries_syllabus_and_a_demo_mark(demo_catalogue):
    result = call("get_course_overview", course="eds101")

    assert result.ok, result.error
    [source] = result.sources
    assert source.source_tool == "get_course_overview"
    assert source.tier == "internal" and source.origin == "internal"
    assert source.title == "[DEMO] EDS101 教育資料科學導論 Introduction to Educational Data Science"
    assert source.snippet.startswith("[DEMO] 國立臺灣師範大學 · 3 credits")
    assert source.url == "/catalogue/courses/ntnu/EDS101/"
    assert source.locator == "uedu://catalogue/course/ntnu/EDS101"
    assert source.meta["is_demo"] is True and source.meta["origin"] == "uedu"
    assert "Week 3: 資料倫理與 IRB Data ethics and IRB" in source.text
    assert result.data["results"][0]["credits"] == 3


def test_course_overview_finds_courses_by_chinese_words_inside_longer_names(demo_catalogue):
    codes = [row["code"] for row in call("get_course_overview", course="資料科學").data["results"]]
    assert codes[0] == "EDS101"
    # Both words match Data Structures and Algorithms; "programming" alone also matches CS135.
    assert [r["code"] for r in call("get_course_overview", course="dynamic programming").data["results"]] == [
        "CSIE1212",
        "CS135",
    ]
    assert [
        r["code"] for r in call("get_course_overview", course="微積分", university="ntu").data["results"]
    ] == ["MATH101"]
    assert call("get_course_overview", course="微積分", university="nthu").data["results"] == []


def test_an_exact_course_code_wins_alone_and_the_lookup_is_one_statement(demo_catalogue):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from catalogue.models import Course
    from catalogue.selectors import find_courses

    # Another course whose description names EDS101 matches the words too; the exact code wins alone.
    other = Course.objects.exclude(code="EDS101").first()
    Course.objects.filter(pk=other.pk).update(description=other.description + " Builds on EDS101.")
    with CaptureQueriesContext(connection) as queries:
        assert [c.code for c in find_courses("eds101")] == ["EDS101"]
    assert len(queries) == 1
    assert [c.code for c in find_courses("EDS101 builds")][0] == other.code  # not the code itself: ranked
    # A code with no searchable term (one Latin letter) is still found by the code alone.
    Course.objects.filter(pk=other.pk).update(code="Q")
    assert [c.code for c in find_courses(" q ")] == ["Q"]
    assert find_courses("z") == []
    # No exact code: the ranked rows, still in one statement.
    with CaptureQueriesContext(connection) as queries:
        assert [c.code for c in find_courses("dynamic programming")] == ["CSIE1212", "CS135"]
    assert len(queries) == 1


def test_an_unknown_course_is_an_empty_result_with_a_note(demo_catalogue):
    result = call("get_course_overview", course="QUANTUM999")
    assert result.ok and result.sources == []
    assert result.data["note"] == "no course in the Uedu catalogue matches 'QUANTUM999'"


def test_hs_curriculum_filters_by_subject_and_grade_band_and_searches(demo_catalogue):
    senior_math = call("get_hs_curriculum", subject="math", grade_band="10-12").data["results"]
    assert {r["code"] for r in senior_math} == {"D-10-1", "D-10-2", "D-11-1", "F-10-1"}
    assert all(r["is_demo"] for r in senior_math)

    found = call("get_hs_curriculum", query="相關係數")
    assert found.data["results"][0]["code"] == "D-10-2"
    assert found.sources[0].title == "[DEMO] D-10-2 二維數據分析 Two-variable data analysis"

    it = call("get_hs_curriculum", subject="information_technology", grade_band="7-9").data["results"]
    assert {r["code"] for r in it} == {"資A-IV-1", "資P-IV-1"}
    assert call("get_hs_curriculum", subject="history").error.startswith("invalid arguments")


def test_team_papers_list_and_search(demo_catalogue):
    every = call("list_uedu_team_papers")
    assert [r["year"] for r in every.data["results"]] == [2026, 2025, 2025]
    found = call("list_uedu_team_papers", query="ReAct research")
    assert (
        found.sources[0].title
        == "[DEMO] Uedu Deep Research: A ReAct-based multi-step research mode for university learners"
    )
    assert found.sources[0].url == "/catalogue/team-papers/uedu-deep-research-2026/"


def test_advisor_papers_name_the_uedu_advisor_and_link_their_profile(demo_catalogue):
    result = call("search_advisor_papers", query="Bloom cognitive level")

    top = result.sources[0]
    assert top.title == "[DEMO] Automatic classification of student questions by Bloom's cognitive level"
    assert top.snippet.startswith("[DEMO] Uedu advisor: 黃美玲 Huang Mei-Ling, 國立成功大學")
    assert top.meta["advisor_profile_url"] == "/catalogue/advisors/huang-mei-ling/"
    assert "Advisor profile: /catalogue/advisors/huang-mei-ling/" in top.text
    assert top.url.startswith("/catalogue/advisors/huang-mei-ling/#paper-")


def test_advisor_papers_can_be_narrowed_to_one_advisor_and_by_year(demo_catalogue):
    titles = [
        r["title"] for r in call("search_advisor_papers", query="", advisor="chen-wei-lun").data["results"]
    ]
    assert len(titles) == 2
    recent = call("search_advisor_papers", query="learning", advisor="Lin Yu-Ting", year_from=2022).data[
        "results"
    ]
    assert [r["title"] for r in recent] == [
        "Predicting course completion from early clickstream data in Taiwanese MOOCs"
    ]


def test_a_real_advisor_links_to_their_official_profile_and_paper_doi(db):
    university = University.objects.create(
        slug="nccu", name="國立政治大學", name_en="National Chengchi University"
    )
    cluster = ResearchCluster.objects.create(slug="edu-policy", name="教育政策", name_en="Education Policy")
    advisor = Advisor.objects.create(
        slug="real-advisor",
        name="真教授",
        name_en="Real Professor",
        university=university,
        profile_url="https://www.nccu.edu.tw/people/real",
    )
    advisor.clusters.add(cluster)
    AdvisorPaper.objects.create(
        advisor=advisor, title="Policy and practice", year=2024, doi="https://doi.org/10.5555/POLICY"
    )

    [person] = call("get_cluster_advisors", cluster="Education Policy").sources
    [paper] = call("search_advisor_papers", query="policy").sources

    assert person.url == "https://www.nccu.edu.tw/people/real" and "[DEMO]" not in person.title
    assert person.meta["is_demo"] is False
    assert paper.url == "https://doi.org/10.5555/policy"
    assert paper.meta["advisor_profile_url"] == "https://www.nccu.edu.tw/people/real"


def test_research_clusters_and_their_advisors(demo_catalogue):
    clusters = call("list_research_clusters")
    assert {r["slug"] for r in clusters.data["results"]} == {
        "learning-analytics",
        "ai-in-education",
        "stem-education",
    }
    assert all(s.title.startswith("[DEMO] ") for s in clusters.sources)

    advisors = call("get_cluster_advisors", cluster="learning-analytics")
    assert {a["slug"] for a in advisors.data["advisors"]} == {"lin-yu-ting", "huang-mei-ling"}
    lin = next(s for s in advisors.sources if s.meta["advisor"] == "lin-yu-ting")
    assert lin.url == "/catalogue/advisors/lin-yu-ting/"
    assert "Recent papers:" in lin.text and lin.snippet.startswith("[DEMO] Uedu advisor")


def test_an_unknown_cluster_is_an_error_that_lists_the_known_ones(demo_catalogue):
    error = call("get_cluster_advisors", cluster="astrophysics").error
    assert error.startswith("no single research cluster matches 'astrophysics'; known clusters:")
    assert "learning-analytics" in error


def test_universities_list_links_their_websites(demo_catalogue):
    result = call("list_uedu_universities")
    assert len(result.sources) == 4
    ntnu = next(s for s in result.sources if s.meta["university"] == "ntnu")
    assert ntnu.url == "https://www.ntnu.edu.tw"
    assert ntnu.title == "[DEMO] 國立臺灣師範大學 (National Taiwan Normal University)"
    assert "Courses in the Uedu catalogue: 2" in ntnu.text
    assert [s.meta["university"] for s in call("list_uedu_universities", query="新竹").sources] == ["nthu"]
