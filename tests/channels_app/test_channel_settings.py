"""Channel settings, section 6: only the channel's teachers see it; bad values are explained and change nothing."""

from __future__ import annotations

import pytest

from channels_app.models import Channel, Membership
from tests.support.factories import add_member, make_user


def url(p):
    return f"/channels/{p.channel.slug}/settings/"


def valid(**overrides):
    data = {
        "deep_research_enabled": "on",
        "auto_suggest_threshold": "0.7",
        "plan_review": "off",
        "system_prompt": "Be kind.",
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


@pytest.mark.parametrize("who", ["teacher", "admin"])
def test_the_owner_and_admins_see_section_6(client, personas, who):
    client.force_login(getattr(personas, who))
    response = client.get(url(personas))
    assert response.status_code == 200
    assert "6. Deep Research（深度研究模式）" in response.content.decode()


def test_a_teacher_member_of_the_channel_may_change_it(client, personas):
    co_teacher = add_member(personas.channel, make_user("co_teacher"), Membership.Role.TEACHER)
    client.force_login(co_teacher)
    assert client.get(url(personas)).status_code == 200


@pytest.mark.parametrize("who", ["student", "ta", "super_ta", "outsider", "other_teacher", "other_super_ta"])
def test_everybody_else_gets_404_and_cannot_post(client, personas, who):
    client.force_login(getattr(personas, who))
    assert client.get(url(personas)).status_code == 404
    assert client.post(url(personas), valid(deep_research_enabled=None)).status_code == 404
    assert Channel.objects.get(pk=personas.channel.pk).deep_research_enabled is True


def test_the_chat_page_links_settings_for_teachers_only(client, personas):
    client.force_login(personas.teacher)
    assert url(personas) in client.get(f"/channels/{personas.channel.slug}/").content.decode()
    client.force_login(personas.student)
    assert url(personas) not in client.get(f"/channels/{personas.channel.slug}/").content.decode()


def test_saving_switches_and_threshold(client, personas):
    client.force_login(personas.teacher)
    response = client.post(
        url(personas),
        valid(deep_research_enabled=None, web_tools_enabled="on", auto_suggest_threshold="0.55"),
    )
    assert response.status_code == 302
    channel = Channel.objects.get(pk=personas.channel.pk)
    assert (
        channel.deep_research_enabled,
        channel.web_tools_enabled,
        channel.auto_suggest_threshold,
        channel.system_prompt,
    ) == (False, True, 0.55, "Be kind.")
    assert "設定已儲存。" in client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    "threshold, message",
    [
        ("1.5", "The threshold cannot be above 1."),
        ("-0.1", "The threshold cannot be below 0."),
        ("abc", "Enter a number between 0 and 1, e.g. 0.7."),
        ("nan", "Enter a number between 0 and 1, e.g. 0.7."),
        ("", "Enter a number between 0 and 1, e.g. 0.7."),
    ],
)
def test_bad_thresholds_are_explained_and_nothing_is_saved(client, personas, threshold, message):
    client.force_login(personas.teacher)
    response = client.post(
        url(personas),
        valid(deep_research_enabled=None, auto_suggest_threshold=threshold, system_prompt="changed"),
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page and "nothing was saved" in page
    channel = Channel.objects.get(pk=personas.channel.pk)
    assert (channel.deep_research_enabled, channel.auto_suggest_threshold, channel.system_prompt) == (
        True,
        0.7,
        "",
    )
    assert "changed</textarea>" in page  # what the teacher typed stays in the form


def test_an_over_long_system_prompt_is_refused(client, personas):
    client.force_login(personas.teacher)
    response = client.post(url(personas), valid(system_prompt="x" * 4001), HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 400 and "at most 4000 characters" in response.content.decode()
    assert Channel.objects.get(pk=personas.channel.pk).system_prompt == ""


def test_saving_plan_review_and_web_domain_rules(client, personas):
    client.force_login(personas.teacher)
    response = client.post(
        url(personas),
        valid(
            plan_review="required",
            web_allowed_domains=" .NTU.edu.tw \r\n\r\nedu.tw\r\nntu.edu.tw",
            web_denied_domains="spam.example",
        ),
    )
    assert response.status_code == 302
    channel = Channel.objects.get(pk=personas.channel.pk)
    assert channel.plan_review == "required"
    assert channel.web_allowed_domains == "ntu.edu.tw\nedu.tw"  # lower-cased, leading dot and repeats gone
    assert channel.allowed_domains == ("ntu.edu.tw", "edu.tw") and channel.denied_domains == ("spam.example",)
    page = client.get(url(personas)).content.decode()
    assert '<option value="required" selected>' in page and "ntu.edu.tw\nedu.tw</textarea>" in page


@pytest.mark.parametrize("field", ["web_allowed_domains", "web_denied_domains"])
@pytest.mark.parametrize(
    "line", ["https://example.edu", "example.edu/papers", "*.example.edu", "localhost", "two words.edu"]
)
def test_a_line_that_is_not_a_domain_is_named_and_nothing_is_saved(client, personas, field, line):
    client.force_login(personas.teacher)
    response = client.post(
        url(personas),
        valid(plan_review="optional", **{field: f"good.edu\n{line}"}),
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert f"Not a domain name: {line}." in page.replace("&#x27;", "'") and "nothing was saved" in page
    assert f"good.edu\n{line}</textarea>" in page  # what the teacher typed stays
    channel = Channel.objects.get(pk=personas.channel.pk)
    assert (channel.plan_review, channel.web_allowed_domains, channel.web_denied_domains) == ("off", "", "")


def test_an_unknown_plan_review_mode_is_refused(client, personas):
    client.force_login(personas.teacher)
    response = client.post(url(personas), valid(plan_review="sometimes"))
    assert response.status_code == 400
    assert Channel.objects.get(pk=personas.channel.pk).plan_review == "off"
