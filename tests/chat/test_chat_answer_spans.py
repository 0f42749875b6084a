"""A sentence of a chat answer that carries a citation marker is shown as its source's words, its
[N] linked, only when it is a span of that source (agent/engine/chat_spans.sentence_is_span);
otherwise its marker links nowhere and the sentence is the assistant's own words, inside a
labelled data-by="model" block (chat/answer_spans.py). On the real path: a follow-up question
after a research, answered by the scripted model through the real client."""

from __future__ import annotations

from channels_app.models import ChatLog
from chat.services import send_chat_message
from tests.support import report_examples as X
from tests.support.model_blocks import check_page, page_outside_model

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}
SPAN = "In 2019, 120,000 students enrolled in at least one online course."
LIE = "Every university abolished final exams in 2021."
INVENTED = "Online courses are always cheaper."


def chat_page(client, personas) -> str:
    client.force_login(personas.student)
    response = client.get(f"/channels/{personas.channel.slug}/", **EN)
    assert response.status_code == 200
    return response.content.decode()


def answer_of(page: str) -> str:
    return page.split('<article class="bubble assistant chat-answer">')[1].split("</article>")[0]


def test_a_sentence_that_is_its_sources_span_is_linked_and_the_rest_is_the_assistants(client, personas):
    question = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", content="How many enrolled?"
    )
    row = ChatLog.objects.create(
        channel=personas.channel,
        user=personas.student,
        kind="response",
        in_reply_to=question,
        content=f"Here is what I found.\n\n- {SPAN} [1]\n- {LIE} [1]\n- {INVENTED} [2]",
        citations_json=[
            {"number": 1, "title": "Enrolment", "url": X.MOE_URL, "source_tool": "web_search", "text": X.MOE},
            {"number": 2, "title": "Costs", "url": "https://costs.example", "source_tool": "web_search"},
        ],
    )
    page = chat_page(client, personas)
    answer = answer_of(page)
    anchor = f"cite-{row.pk:013x}"
    assert f'<p class="chat-span"><q>{SPAN}</q> <a class="cite" href="#{anchor}-1">[1]</a></p>' in answer
    # the lie and the sentence whose source holds no text: the assistant's, their markers plain
    assert f'href="#{anchor}-2"' not in answer.split('<section class="citations">')[0]
    assert answer.count(f'href="#{anchor}-1"') == 1
    check_page(answer, [LIE, INVENTED, "Here is what I found."])
    assert SPAN in page_outside_model(answer)


def test_a_follow_up_on_a_research_links_only_the_sentences_its_sources_hold(client, personas, llm):
    X.stored_report(personas.student, personas.channel, X.english_report())
    llm.on("chat", lambda body: {"content": f"From the ministry's table. {SPAN} [1] And so {LIE} [1]"})
    exchange = send_chat_message(user=personas.student, channel=personas.channel, message="And in 2019?")
    (cited,) = exchange.response.citations_json
    assert cited["number"] == 1 and cited["text"] == X.MOE  # the passage the research read
    answer = answer_of(chat_page(client, personas))
    assert f"<q>{SPAN}</q>" in answer
    check_page(answer, [LIE, "From the ministry's table."])
