"""The pages of evidence quality and of learning from use: the claim ledger and metrics on the
result page, the review queue and the reviewer note, readers' feedback as reviewers see it, and
the progress card's plan-review controls. Every permission is checked per object."""

from __future__ import annotations

import pytest

from channels_app.models import Membership
from research.models import AnswerFeedback, ResearchClaim, ResearchTask
from research.services import feedback, quality
from tests.support import report_examples as X
from tests.support.factories import add_member, make_user
from tests.support.research_fixtures import stored_research

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}
CONFLICTED = {
    "status": "complete",
    "counts": {"supported": 1, "unsupported": 1},
    "conflicts": [
        {
            "topic": "Workload",
            "positions": [{"summary": "Heavy", "citations": [1]}, {"summary": "Light", "citations": [2]}],
        }
    ],
    "conflicts_found": 2,
    "conflicts_shown": 1,
}


def result_url(task) -> str:
    return f"/deep_research/task/{task.task_uuid}"


def conflicted_research(personas, **kwargs) -> ResearchTask:
    task = stored_research(personas.student, personas.channel, verification=dict(CONFLICTED), **kwargs)
    ResearchTask.objects.filter(pk=task.pk).update(needs_review=True)
    task.refresh_from_db()
    return task


# --------------------------------------------------------------------------- the claim ledger


def ledger_research(personas) -> ResearchTask:
    verification = dict(
        CONFLICTED,
        counter_searches=2,
        low_credibility_sources=1,
        counter_evidence=[{"summary": "A 2024 replication found no effect", "citations": [2]}],
        hypotheses=[
            {"text": "Dashboards improve grades", "status": "refuted"},
            {"text": "Students read feedback", "status": "supported"},
        ],
    )
    task = stored_research(personas.student, personas.channel, verification=verification)
    claims = [
        ("Learning analytics studies learner data.", [1], "supported", "kept", ["internal"], 0.9),
        ("Retrieval grounds answers in sources.", [2], "unsupported", "marked", ["scholarly"], 0.0),
        ("Every student reads dashboards daily.", [], "no_citation", "dropped", [], 0.0),
    ]
    for index, (text, cites, verdict, action, tiers, confidence) in enumerate(claims, start=1):
        ResearchClaim.objects.create(
            task=task,
            index=index,
            text=text,
            citations=cites,
            verdict=verdict,
            action=action,
            tiers=tiers,
            confidence=confidence,
            reason=f"reason {index}",
        )
    quality.save_metrics(task)
    return task


def test_the_result_page_lists_every_claim_with_its_verdict_sources_and_what_was_done(client, personas):
    task = ledger_research(personas)
    client.force_login(personas.student)
    page = client.get(result_url(task), **EN).content.decode()
    ledger = page[page.index('id="ledger"') :]
    anchor = f"cite-{task.task_uuid.hex[:12]}"
    assert "Claim ledger" in ledger and "2 claims are not backed by their sources." in ledger
    assert (
        ledger.index("Learning analytics studies learner data.")
        < ledger.index("Retrieval grounds answers")
        < ledger.index("Every student")
    )
    assert f'href="#{anchor}-1">[1]</a>' in ledger and f'href="#{anchor}-2">[2]</a>' in ledger
    assert "Supported" in ledger and "Unsupported" in ledger and "No citation" in ledger
    assert (
        "kept as written" in ledger
        and "marked in the answer" in ledger
        and "removed from the answer" in ledger
    )
    assert (
        "Sources: Uedu internal" in ledger and "Sources: scholarly" in ledger and "Confidence 90%" in ledger
    )
    # unsupported and dropped claims are set apart; a dropped one is struck through
    assert 'class="claim verdict-unsupported action-marked doubtful"' in ledger
    assert 'class="claim verdict-no_citation action-dropped doubtful"' in ledger
    assert 'class="claim verdict-supported action-kept"' in ledger
    assert "<del>Every student reads dashboards daily.</del>" in ledger


def test_the_result_page_shows_the_quality_metrics(client, personas):
    task = ledger_research(personas)
    client.force_login(personas.teacher)
    page = client.get(result_url(task), **EN).content.decode()
    metrics = page[page.index('class="metrics"') : page.index('class="claims"')]
    # 2 claims shown (one dropped), 2 of them cite; 2 of 3 claims unsupported or uncited; 1 of 2 citations low-credibility
    assert "Citation coverage" in metrics and "100%" in metrics
    assert (
        "2 of 2 factual sentences and table cells cite a source (0 cells)" in metrics
    )  # cells count as claims too
    assert (
        "Removed from the body" in metrics
        and "Conflicts: engine / writer" in metrics
        and "Source pollution" in metrics
    )
    assert "Unsupported claims" in metrics and "67%" in metrics
    assert "Conflicts found / shown" in metrics and "2 / 1" in metrics
    assert "Low-credibility sources" in metrics and "50%" in metrics and "1 of 2 cited sources" in metrics


def test_the_counter_evidence_and_hypotheses_are_shown_from_the_report(client, personas):
    task = X.stored_report(personas.student, personas.channel, X.english_report())
    client.force_login(personas.student)
    page = client.get(result_url(task), **EN).content.decode()
    counter = page[page.index('class="report-counter"') :].split("</section>")[0]
    assert "線上課程的學生在期末考的成績低於實體課程的學生。" in counter  # the fact found against, a span
    assert "Independent sources in support: Uedu internal" not in counter
    assert "structured data 1, scholarly 1 · against: Uedu internal 1" in counter
    hypotheses = page[page.index('class="report-hypotheses"') :].split("</section>")[0]
    assert 'class="badge hypothesis-supported">facts for it, none against</span>' in hypotheses
    assert 'class="badge hypothesis-contested">facts for and against it</span>' in hypotheses
    assert X.EN_HYPOTHESES[1] in hypotheses  # in its AI block (tests/research/test_report_pages.py)


def test_a_counter_search_that_found_nothing_says_so(client, personas):
    task = X.stored_report(personas.student, personas.channel, X.chinese_report())  # 1 search, none found
    client.force_login(personas.student)
    page = client.get(result_url(task), **EN).content.decode()
    assert "1 targeted search found no evidence against the main conclusions." in page
    assert "The counter-search (1 searches) found no evidence against the main conclusions." in page


def test_a_research_without_ledger_or_counter_search_shows_neither_section(client, personas):
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    page = client.get(result_url(task), **EN).content.decode()
    assert 'id="ledger"' not in page and 'id="counter-evidence"' not in page


def test_the_plan_shows_the_agreed_context_and_the_proposed_plan_when_edited(client, personas):
    task = stored_research(personas.student, personas.channel)
    ResearchTask.objects.filter(pk=task.pk).update(
        context_json={"time_range": "2021-2026"},
        plan_edits_json={
            "sub_questions": ["What is learning analytics?"],
            # the model's proposal: the second states a year the question lacks
            "original": ["學習分析的定義", "布魯姆分類法在 2019 年的修訂"],
            "by": "s_alice",
        },
    )
    client.force_login(personas.teacher)
    page = client.get(result_url(task), **EN).content.decode()
    plan = page[page.index('class="card plan"') :]
    assert "Time range" in plan and "2021-2026" in plan and "Complexity: moderate" in plan
    assert "The plan was edited before the research" in plan and "學習分析的定義" in plan
    assert "2019" not in plan  # the proposed plan is checked like the report's (as the AI's words)


# --------------------------------------------------------------------------- the review queue


@pytest.mark.parametrize("who", ["teacher", "super_ta", "admin"])
def test_reviewers_see_their_channels_conflicted_researches_in_the_queue(client, personas, who):
    task = conflicted_research(personas, question="工作量的兩種說法")
    stored_research(personas.student, personas.channel, question="沒有衝突的研究")
    client.force_login(getattr(personas, who))
    response = client.get("/deep_research/review", **EN)
    page = response.content.decode()
    assert response.status_code == 200
    assert "工作量的兩種說法" in page and "沒有衝突的研究" not in page
    assert f'href="/deep_research/task/{task.task_uuid}#review"' in page
    assert "1 unresolved conflict" in page and "Awaiting review" in page


@pytest.mark.parametrize("who", ["other_teacher", "other_super_ta"])
def test_reviewers_of_other_channels_do_not_see_this_channels_researches(client, personas, who):
    conflicted_research(personas, question="工作量的兩種說法")
    client.force_login(getattr(personas, who))
    response = client.get("/deep_research/review")
    assert response.status_code == 200 and "工作量的兩種說法" not in response.content.decode()


@pytest.mark.parametrize("who", ["student", "other_student", "ta", "outsider"])
def test_people_who_review_nothing_get_404_for_the_queue_and_the_feedback_page(client, personas, who):
    conflicted_research(personas)
    client.force_login(getattr(personas, who))
    assert client.get("/deep_research/review").status_code == 404
    assert client.get("/deep_research/feedback").status_code == 404


def test_a_teacher_member_who_owns_no_channel_reviews_nothing(client, personas):
    # Review belongs to the channel's owner and its Super TAs (research.services.review), not to every teacher member.
    co_teacher = add_member(personas.channel, make_user("co_teacher"), Membership.Role.TEACHER)
    client.force_login(co_teacher)
    assert client.get("/deep_research/review").status_code == 404


def test_the_navigation_links_the_queue_and_feedback_only_for_reviewers(client, personas):
    for who, shown in [
        ("teacher", True),
        ("super_ta", True),
        ("admin", True),
        ("other_super_ta", True),
        ("student", False),
        ("ta", False),
    ]:
        client.force_login(getattr(personas, who))
        page = client.get("/").content.decode()
        assert ('href="/deep_research/review"' in page) is shown, who
        assert ('href="/deep_research/feedback"' in page) is shown, who


def test_reviewed_researches_leave_the_queue_and_come_back_with_the_filter(client, personas):
    task = conflicted_research(personas, question="工作量的兩種說法")
    client.force_login(personas.super_ta)
    client.post(f"{result_url(task)}/review", {"note": "請以課綱為準。"})
    assert "工作量的兩種說法" not in client.get("/deep_research/review").content.decode()
    page = client.get("/deep_research/review?reviewed=on", **EN).content.decode()
    assert "工作量的兩種說法" in page and "Reviewed by sta_a" in page


# --------------------------------------------------------------------------- the reviewer note


@pytest.mark.parametrize("who", ["teacher", "super_ta", "admin"])
def test_reviewers_get_the_note_form_on_the_result_page(client, personas, who):
    task = conflicted_research(personas)
    client.force_login(getattr(personas, who))
    page = client.get(result_url(task), **EN).content.decode()
    assert f'action="/deep_research/task/{task.task_uuid}/review"' in page
    assert "nobody has reviewed it yet" in page


def test_the_student_sees_no_note_form_and_cannot_post_one(client, personas):
    task = conflicted_research(personas)
    client.force_login(personas.student)
    page = client.get(result_url(task)).content.decode()
    assert '/review"' not in page and 'name="note"' not in page.split('class="feedback')[0]
    assert client.post(f"{result_url(task)}/review", {"note": "I approve my own answer"}).status_code == 403
    task.refresh_from_db()
    assert task.review_note == "" and task.reviewed_at is None


@pytest.mark.parametrize("who", ["other_student", "ta", "outsider", "other_teacher", "other_super_ta"])
def test_people_who_cannot_see_the_research_get_404_for_the_note(client, personas, who):
    task = conflicted_research(personas)
    client.force_login(getattr(personas, who))
    assert client.post(f"{result_url(task)}/review", {"note": "x"}).status_code == 404
    assert ResearchTask.objects.get(pk=task.pk).review_note == ""


def test_the_note_is_refused_on_get(client, personas):
    task = conflicted_research(personas)
    client.force_login(personas.teacher)
    assert client.get(f"{result_url(task)}/review").status_code == 405


def test_a_super_tas_note_is_shown_beside_the_conflicts_to_the_student_with_name_and_time(client, personas):
    task = X.stored_report(personas.student, personas.channel, X.english_report())
    ResearchTask.objects.filter(pk=task.pk).update(needs_review=True)
    client.force_login(personas.super_ta)
    response = client.post(
        f"{result_url(task)}/review", {"note": "兩份資料的工作量定義不同，\n請以課綱為準。"}
    )
    assert response.status_code == 302 and response["Location"] == f"{result_url(task)}#review"
    task.refresh_from_db()
    assert (task.review_note, task.reviewed_by) == (
        "兩份資料的工作量定義不同，\n請以課綱為準。",
        personas.super_ta,
    )
    when = task.reviewed_at.astimezone(__import__("zoneinfo").ZoneInfo("Asia/Taipei")).strftime(
        "%Y-%m-%d %H:%M"
    )

    client.force_login(personas.student)
    for path in (result_url(task), f"/channels/{personas.channel.slug}/"):
        page = client.get(path, **EN).content.decode()
        note = page[page.index('class="review-note"') :]
        assert (
            page.index('id="conflicts"') < page.index('class="review-note"') < page.index('class="citations"')
        )
        assert "Reviewer's note" in note and "兩份資料的工作量定義不同，<br>請以課綱為準。" in note
        assert f"sta_a, {when}" in note


@pytest.mark.parametrize(
    "note, message",
    [("   ", "Please write a note."), ("x" * 4001, "The note is too long (at most 4000 characters).")],
)
def test_a_bad_note_is_explained_the_text_stays_and_the_stored_note_is_kept(client, personas, note, message):
    task = conflicted_research(personas)
    client.force_login(personas.teacher)
    client.post(f"{result_url(task)}/review", {"note": "the first note"})
    response = client.post(f"{result_url(task)}/review", {"note": note}, **EN)
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page and "The note was not saved." in page
    assert f"{note}</textarea>" in page
    task.refresh_from_db()
    assert task.review_note == "the first note"


def test_the_form_is_prefilled_with_the_current_note_for_editing(client, personas):
    task = conflicted_research(personas)
    client.force_login(personas.teacher)
    client.post(f"{result_url(task)}/review", {"note": "first version"})
    page = client.get(result_url(task), **EN).content.decode()
    assert (
        ">\nfirst version</textarea>" in page
        and "Update the note" in page
        and "Last reviewed by t_owner" in page
    )


# --------------------------------------------------------------------------- readers' feedback


def test_every_answer_bubble_offers_feedback_and_a_report_per_citation(client, personas):
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    for path in (result_url(task), f"/channels/{personas.channel.slug}/"):
        page = client.get(path, **EN).content.decode()
        assert f'hx-post="/deep_research/task/{task.task_uuid}/feedback_box"' in page
        assert page.count(f'hx-post="/deep_research/task/{task.task_uuid}/citation_report"') == 2
        assert 'name="citation_number" value="1"' in page and 'name="citation_number" value="2"' in page
    # The report form, opened from the box, offers every reason but the one that belongs to a citation.
    form = client.get(f"/deep_research/task/{task.task_uuid}/feedback_box?form=report", **EN).content.decode()
    for reason in ("wrong_fact", "bad_citation", "missed_counter_evidence", "too_long", "other"):
        assert f'<option value="{reason}">' in form
    assert '<option value="source_does_not_say">' not in form


def test_reviewers_see_the_feedback_on_the_result_page_and_others_do_not(client, personas):
    task = stored_research(personas.student, personas.channel)
    feedback.give_feedback(
        task=task, user=personas.student, useful=False, reason="wrong_fact", note="年份不對"
    )
    feedback.give_feedback(task=task, user=personas.student, reason="source_does_not_say", citation_number=2)
    for who, shown in [("teacher", True), ("super_ta", True), ("admin", True), ("student", False)]:
        client.force_login(getattr(personas, who))
        page = client.get(result_url(task), **EN).content.decode()
        assert ('id="feedback"' in page) is shown, who
        assert ("年份不對" in page) is shown, who
    client.force_login(personas.teacher)
    page = client.get(result_url(task), **EN).content.decode()
    section = page[page.index('id="feedback"') :]
    assert "Not useful" in section and "Wrong fact" in section and "This source does not say this" in section
    assert f'href="#cite-{task.task_uuid.hex[:12]}-2">citation [2]</a>' in section


def test_the_feedback_page_lists_feedback_in_the_reviewers_channels_only(client, personas):
    mine = stored_research(personas.student, personas.channel, question="課程 A 的研究")
    AnswerFeedback.objects.create(
        task=mine, user=personas.student, useful=False, reason="too_long", note="太長了"
    )
    from tests.support.factories import make_channel

    elsewhere = stored_research(
        personas.other_teacher, make_channel(personas.other_teacher, slug="course-c"), question="別的頻道"
    )
    AnswerFeedback.objects.create(task=elsewhere, user=personas.other_teacher, useful=True)

    client.force_login(personas.super_ta)
    page = client.get("/deep_research/feedback", **EN).content.decode()
    assert "課程 A 的研究" in page and "太長了" in page and "Too long" in page and "s_alice" in page
    assert f'href="/deep_research/task/{mine.task_uuid}"' in page and "別的頻道" not in page

    client.force_login(personas.other_teacher)
    page = client.get("/deep_research/feedback", **EN).content.decode()
    assert "別的頻道" in page and "課程 A 的研究" not in page


def test_the_new_pages_hold_no_inline_script_handler_or_style(client, personas):
    task = ledger_research(personas)
    ResearchTask.objects.filter(pk=task.pk).update(needs_review=True, review_note="note")
    AnswerFeedback.objects.create(task=task, user=personas.student, useful=False, reason="too_long")
    client.force_login(personas.teacher)
    for path in ["/deep_research/review?reviewed=on", "/deep_research/feedback", result_url(task)]:
        response = client.get(path)
        assert response.status_code == 200
        page = response.content.decode()
        for script in page.split("<script")[1:]:
            head = script.split(">", 1)[0]
            assert "src=" in head or 'type="application/json"' in head, head
        assert " onclick=" not in page and " onchange=" not in page and " style=" not in page


# --------------------------------------------------------------------------- the progress card


def test_only_the_owner_gets_the_plan_review_controls_in_the_progress_card(client, personas):
    task = ResearchTask.objects.create(
        user=personas.student,
        channel=personas.channel,
        user_question="q",
        trigger_mode="forced",
        status=ResearchTask.Status.RUNNING,
        plan_review_mode="required",
    )
    client.force_login(personas.student)
    card = client.get(f"{result_url(task)}/outcome").content.decode()
    assert 'data-owner="true"' in card and 'data-role="review-form"' in card
    assert f'data-plan-url="/api/deep_research/task/{task.task_uuid}/plan"' in card
    assert 'data-max-sub-questions="6"' in card
    client.force_login(personas.teacher)
    card = client.get(f"{result_url(task)}/outcome").content.decode()
    assert 'data-owner="false"' in card and 'data-role="review-form"' not in card


def test_a_heading_that_repeats_the_plan_is_no_claim_in_the_ledger_or_its_metrics(client, personas):
    """The writer's heading "What is learning analytics?" is the plan's sub-question: code passes
    it as structure (verdict supported, reason "plan"); it is not a statement to check, so it
    neither shows in the ledger nor lowers the citation coverage."""
    from agent.engine.verification import PLAN_HEADING

    task = ledger_research(personas)
    ResearchClaim.objects.create(
        task=task,
        index=99,
        text="What is learning analytics?",
        citations=[],
        verdict="supported",
        action="kept",
        kind=ResearchClaim.Kind.HEADING,
        reason=PLAN_HEADING,
    )
    quality.save_metrics(task)
    client.force_login(personas.teacher)
    page = client.get(result_url(task), **EN).content.decode()
    ledger = page[page.index('id="ledger"') :]
    ledger = ledger[: ledger.index("</section>")]
    assert "What is learning analytics?" not in ledger and "Learning analytics studies" in ledger
    metrics = page[page.index('class="metrics"') : page.index('class="claims"')]
    assert "2 of 2 factual sentences and table cells cite a source (0 cells)" in metrics
    assert "Unsupported claims" in metrics and "67%" in metrics
    # A heading that states something is checked like a sentence and stays in the ledger.
    ResearchClaim.objects.filter(task=task, index=99).update(reason="", verdict="no_citation")
    quality.save_metrics(task)
    page = client.get(result_url(task), **EN).content.decode()
    ledger = page[page.index('id="ledger"') :]
    assert "What is learning analytics?" in ledger[: ledger.index("</section>")]


def test_the_ledger_words_what_code_found_in_the_readers_language_and_keeps_the_verifiers_words(
    client, personas
):
    """A check's detail written by code (agent/engine/verification.py) is a phrase the page
    translates, alone, joined with "; " or with the words it names; a reason the verifier model
    wrote is its data, shown as written."""
    task = ledger_research(personas)
    details = {
        1: "the verifier gave no verdict",
        2: "quote 2 is not in source 7; its quotes do not state this figure",
        3: "words no cited claim states: dashboards, daily",
    }
    for index, detail in details.items():
        ResearchClaim.objects.filter(task=task, index=index).update(reason=detail)
    ResearchClaim.objects.create(
        task=task, index=4, text="A model's reason.", citations=[1], verdict="partial", reason="見第二段"
    )
    client.force_login(personas.student)
    zh = client.get(result_url(task), HTTP_ACCEPT_LANGUAGE="zh-Hant").content.decode()
    ledger = zh[zh.index('id="ledger"') :]
    assert "查核模型未給出判定" in ledger and "the verifier gave no verdict" not in ledger
    assert "第 2 段引用原文不在其來源中; 引用的原文沒有這個數字" in ledger
    assert "所引用的主張沒有說過的詞語：dashboards, daily" in ledger
    assert "見第二段" in ledger
    en = client.get(result_url(task), **EN).content.decode()
    assert "quote 2 is not in its source; its quotes do not state this figure" in en
    assert "words no cited claim states: dashboards, daily" in en
