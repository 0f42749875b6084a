"""The chat page's send endpoint: fragments for scripts, a plain form post without them."""

from __future__ import annotations

from channels_app.models import ChatLog


def test_the_send_view_returns_the_new_turn_as_a_fragment(client, personas, llm):
    client.force_login(personas.student)
    response = client.post(
        f"/channels/{personas.channel.slug}/send", {"message": "hi there"}, HTTP_X_REQUESTED_WITH="fetch"
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert (
        html.strip().startswith('<li class="turn turn-chat"')
        and "hi there" in html
        and "Scripted answer to:" in html
    )


def test_an_empty_message_gets_a_readable_error_and_stores_nothing(client, personas, llm):
    client.force_login(personas.student)
    response = client.post(
        f"/channels/{personas.channel.slug}/send",
        {"message": " "},
        HTTP_X_REQUESTED_WITH="fetch",
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 400
    assert response.json() == {"error": {"code": "empty_question", "message": "Please type a question."}}
    assert ChatLog.objects.count() == 0


def test_without_scripts_the_form_posts_and_comes_back_to_the_page(client, personas, llm):
    client.force_login(personas.student)
    response = client.post(f"/channels/{personas.channel.slug}/send", {"message": "no javascript here"})
    assert response.status_code == 302 and response["Location"].startswith(
        f"/channels/{personas.channel.slug}/"
    )
    assert "no javascript here" in client.get(response["Location"]).content.decode()
    too_long = "y" * 2001
    response = client.post(
        f"/channels/{personas.channel.slug}/send", {"message": too_long}, HTTP_ACCEPT_LANGUAGE="en"
    )
    assert response.status_code == 400 and "too long" in response.content.decode()
    assert too_long in response.content.decode()  # the text stays in the box


def test_a_failed_answer_shows_the_saved_question_with_a_note(client, personas, llm):
    llm.fail("chat", "http500", times=5)
    client.force_login(personas.student)
    response = client.post(
        f"/channels/{personas.channel.slug}/send",
        {"message": "still there?"},
        HTTP_X_REQUESTED_WITH="fetch",
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 503
    html = response.content.decode()
    assert "still there?" in html and "could not answer this message" in html
    page = client.get(f"/channels/{personas.channel.slug}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "still there?" in page and "could not answer this message" in page


def test_non_members_cannot_post(client, personas, llm):
    client.force_login(personas.outsider)
    response = client.post(
        f"/channels/{personas.channel.slug}/send", {"message": "let me in"}, HTTP_X_REQUESTED_WITH="fetch"
    )
    assert response.status_code == 404 and ChatLog.objects.count() == 0
