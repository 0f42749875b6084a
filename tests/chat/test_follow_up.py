""" "Ask a follow-up" on a result page: the channel page opens with the research attached to its
composer; a chat message or a research started from there carries it to the model however far
back it lies, and only a completed research of the channel that the asker may read is attached."""

from __future__ import annotations

import json

import pytest

from channels_app.models import Channel, ChatLog
from chat.services import send_chat_message
from research.models import ResearchTask
from research.services import follow_up
from tests.support.research_fixtures import stored_research

OLD_ANSWER = "## Answer\n\nFormative assessment guides teaching while it happens [1].\n"


def _bury(personas, turns: int = 25) -> None:
    """Chat turns after the research, more than the conversation sent to the model holds."""
    for n in range(turns):
        send_chat_message(user=personas.student, channel=personas.channel, message=f"閒聊 {n}")


@pytest.fixture
def old_research(personas):
    return stored_research(
        personas.student, personas.channel, question="什麼是形成性評量？", answer=OLD_ANSWER
    )


def test_the_result_page_offers_a_follow_up_to_whoever_may_chat_in_the_channel(
    client, personas, old_research
):
    url = f"/deep_research/task/{old_research.task_uuid}"
    link = f'href="/channels/{personas.channel.slug}/?follow_up={old_research.task_uuid}#message"'
    for who in ("student", "teacher", "super_ta"):
        client.force_login(getattr(personas, who))
        assert link in client.get(url).content.decode(), who
    failed = stored_research(personas.student, personas.channel, status="failed")
    client.force_login(personas.student)
    assert "?follow_up=" not in client.get(f"/deep_research/task/{failed.task_uuid}").content.decode()


def test_the_channel_page_attaches_only_a_completed_research_of_the_channel_its_reader_may_read(
    client, personas, old_research
):
    page = f"/channels/{personas.channel.slug}/?follow_up="
    client.force_login(personas.student)
    html = client.get(page + str(old_research.task_uuid), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Following up on:" in html and f'name="follow_up" value="{old_research.task_uuid}"' in html
    # Another student's research (not theirs to read), a failed one, another channel's, nonsense.
    others = [
        stored_research(personas.other_student, personas.channel),
        stored_research(personas.student, personas.channel, status="failed"),
        stored_research(personas.other_teacher, Channel.objects.get(slug="course-b")),
    ]
    for task in others:
        assert 'name="follow_up"' not in client.get(page + str(task.task_uuid)).content.decode()
    assert 'name="follow_up"' not in client.get(page + "not-a-uuid").content.decode()
    # The channel's teacher may read the student's research: it is attached to the teacher's composer.
    client.force_login(personas.teacher)
    assert (
        f'value="{old_research.task_uuid}"' in client.get(page + str(old_research.task_uuid)).content.decode()
    )


def test_a_chat_message_carries_the_research_however_far_back(client, personas, llm, old_research):
    _bury(personas)
    client.force_login(personas.student)
    send = f"/channels/{personas.channel.slug}/send"
    client.post(send, {"message": "它和總結性評量有什麼不同？"})
    assert "形成性評量" not in json.dumps(llm.calls("chat")[-1]["messages"], ensure_ascii=False)
    client.post(send, {"message": "它和總結性評量有什麼不同？", "follow_up": str(old_research.task_uuid)})
    messages = llm.calls("chat")[-1]["messages"]
    assert messages[1] == {"role": "user", "content": "什麼是形成性評量？"}
    assert (
        "Formative assessment guides teaching" in messages[2]["content"] and "[1]" in messages[2]["content"]
    )
    assert messages[-1]["content"] == "它和總結性評量有什麼不同？"
    # Someone else's research is not attached, and nothing says whether it exists.
    theirs = stored_research(personas.other_student, personas.channel, answer="## Answer\n\nSecret [1].\n")
    client.post(send, {"message": "再說一次", "follow_up": str(theirs.task_uuid)})
    assert "Secret" not in json.dumps(llm.calls("chat")[-1]["messages"], ensure_ascii=False)


def test_a_research_started_as_a_follow_up_stores_it_and_its_prompts_read_it(
    client, personas, llm, old_research
):
    _bury(personas)
    client.force_login(personas.student)
    body = {
        "question": "形成性評量和總結性評量在課程設計上有何不同？",
        "channel_id": personas.channel.pk,
        "follow_up": str(old_research.task_uuid),
    }
    response = client.post(
        "/api/deep_research/start", body, content_type="application/json", HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 201, response.content
    task = ResearchTask.objects.get(task_uuid=response.json()["task_uuid"])
    assert task.follow_up_of == old_research
    context = follow_up.research_follow_up(task)
    assert (
        context.startswith("Student: 什麼是形成性評量？")
        and "Formative assessment guides teaching" in context
    )


def test_a_follow_up_the_asker_may_not_read_is_refused_and_nothing_starts(client, personas, llm):
    theirs = stored_research(personas.other_student, personas.channel)
    client.force_login(personas.student)
    before = ResearchTask.objects.count()
    response = client.post(
        "/api/deep_research/start",
        {"question": "追問", "channel_id": personas.channel.pk, "follow_up": str(theirs.task_uuid)},
        content_type="application/json",
        HTTP_ACCEPT="application/json",
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "follow_up must be a completed research of this channel that you may read."
    )
    assert ResearchTask.objects.count() == before and not ChatLog.objects.filter(content="追問").exists()
