"""The admin, role by role: each sees and changes only what its scope allows, on changelists,
change pages opened by URL, and actions (channels_app.admin_scoping)."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from channels_app.models import Channel, ChatLog, Membership
from governance.models import Study, StudyResearcher
from quotas.models import CostReservation
from research.models import ResearchStep, ResearchTask
from tests.support.factories import PASSWORD, make_user


def _url(model, action="changelist", *args):
    from django.urls import reverse

    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{action}", args=args)


@pytest.fixture
def world(personas):
    """The personas as staff (as the demo accounts are), a task in each channel, a study each."""
    p = personas
    for user in (p.teacher, p.other_teacher, p.ta, p.super_ta, p.other_super_ta):
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    other_channel = Channel.objects.get(slug="course-b")
    mine = ResearchTask.objects.create(
        user=p.student,
        channel=p.channel,
        user_question="SECRET-QUESTION-A 比較學習分析",
        trigger_mode="forced",
        status="completed",
    )
    ResearchStep.objects.create(
        task=mine, index=1, phase="action", tool_name="search_channel_materials", args={"query": "x"}
    )
    theirs = ResearchTask.objects.create(
        user=p.other_super_ta, channel=other_channel, user_question="SECRET-QUESTION-B", trigger_mode="forced"
    )
    ResearchStep.objects.create(
        task=theirs, index=1, phase="action", tool_name="search_external_papers", args={}
    )
    researcher = make_user("res_a", staff=True)
    study = Study.objects.create(
        protocol_number="NTU-REC 202507EM058",
        title="A",
        approved_from=date(2025, 8, 1),
        approved_to=date(2099, 1, 1),
        status="active",
    )
    study.channels.add(p.channel)
    StudyResearcher.objects.create(study=study, user=researcher, agreement_signed_on=date(2025, 9, 1))
    other_study = Study.objects.create(
        protocol_number="NTU-REC 999", title="B", approved_from=date(2025, 8, 1), approved_to=date(2099, 1, 1)
    )
    p.__dict__.update(
        other_channel=other_channel,
        task=mine,
        other_task=theirs,
        researcher=researcher,
        study=study,
        other_study=other_study,
    )
    return p


def as_(client, user):
    client.force_login(user)
    return client


# --------------------------------------------------------------------------- who gets in


def test_a_student_cannot_log_into_the_admin(client, world):
    response = client.post(
        "/admin/login/?next=/admin/", {"username": world.student.username, "password": PASSWORD}
    )
    assert response.status_code == 200 and "_auth_user_id" not in client.session  # the login form again
    as_(client, world.student)
    assert client.get("/admin/").status_code == 302
    assert client.get(_url(ResearchTask)).status_code == 302
    assert client.get(_url(ResearchTask, "change", world.task.pk)).status_code == 302


def test_the_index_shows_each_role_only_its_models(client, world):
    expectations = {
        world.teacher: (
            {"channel", "membership", "researchtask", "researchstep", "channelconsent"},
            {"chatlog", "usageentry", "study"},
        ),
        world.ta: ({"researchtask"}, {"channel", "researchstep", "chatlog", "study"}),
        world.super_ta: (
            {"researchtask", "researchstep", "researchevent"},
            {"channel", "membership", "study"},
        ),
        world.researcher: ({"study"}, {"channel", "researchtask", "chatlog", "exportaudit", "usageentry"}),
    }
    for user, (visible, hidden) in expectations.items():
        html = as_(client, user).get("/admin/").content.decode()
        for name in visible:
            assert f"/{name}/" in html, (user, name)
        for name in hidden:
            assert f"/{name}/" not in html, (user, name)
        assert "/admin/cost-dashboard/" not in html


# --------------------------------------------------------------------------- teacher


def test_a_teacher_lists_and_edits_only_their_own_channels(client, world):
    as_(client, world.teacher)
    listing = client.get(_url(Channel)).content.decode()
    assert "course-a" in listing and "course-b" not in listing

    assert client.get(_url(Channel, "change", world.other_channel.pk)).status_code == 404
    assert (
        client.post(_url(Channel, "change", world.other_channel.pk), {"web_tools_enabled": "on"}).status_code
        == 404
    )
    assert client.get(_url(Channel, "change", 999999)).status_code == 404  # absent looks the same
    assert client.get(_url(Channel, "add")).status_code == 403
    assert client.get(_url(Channel, "delete", world.channel.pk)).status_code == 403


def _channel_form(channel, members, **changes):
    data = {
        "description": channel.description,
        "syllabus": channel.syllabus,
        "auto_suggest_threshold": channel.auto_suggest_threshold,
        "system_prompt": channel.system_prompt,
        "plan_review": channel.plan_review,
        "web_allowed_domains": channel.web_allowed_domains,
        "web_denied_domains": channel.web_denied_domains,
        "memberships-TOTAL_FORMS": len(members),
        "memberships-INITIAL_FORMS": sum(1 for m in members if m.get("id")),
        "memberships-MIN_NUM_FORMS": 0,
        "memberships-MAX_NUM_FORMS": 1000,
    }
    if channel.deep_research_enabled:
        data["deep_research_enabled"] = "on"
    for i, member in enumerate(members):
        for key, value in member.items():
            data[f"memberships-{i}-{key}"] = value
        data[f"memberships-{i}-channel"] = channel.pk
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def _members(channel):
    return [
        {"id": m.pk, "user": m.user.username, "role": m.role}
        for m in channel.memberships.select_related("user").order_by("pk")
    ]


def test_a_teacher_changes_the_settings_and_members_but_not_the_owner(client, world):
    as_(client, world.teacher)
    newcomer = make_user("s_carol")
    members = _members(world.channel) + [{"user": "s_carol", "role": "student"}]
    data = _channel_form(
        world.channel,
        members,
        web_tools_enabled="on",
        auto_suggest_threshold="0.55",
        system_prompt="不可直接繳交作業",
        owner=world.other_teacher.pk,
        slug="stolen",
    )
    response = client.post(_url(Channel, "change", world.channel.pk), data)
    assert response.status_code == 302, response.content.decode()[-3000:]

    channel = Channel.objects.get(pk=world.channel.pk)
    assert (
        channel.web_tools_enabled
        and channel.auto_suggest_threshold == 0.55
        and channel.system_prompt == "不可直接繳交作業"
    )
    assert channel.owner == world.teacher and channel.slug == "course-a"  # read-only for teachers
    assert Membership.objects.filter(channel=channel, user=newcomer, role="student").exists()


def test_a_teacher_cannot_make_or_remove_a_teacher(client, world):
    as_(client, world.teacher)
    make_user("s_dave")
    promote = _members(world.channel) + [{"user": "s_dave", "role": "teacher"}]
    response = client.post(_url(Channel, "change", world.channel.pk), _channel_form(world.channel, promote))
    # The admin speaks Traditional Chinese by default (the platform's LANGUAGE_CODE).
    assert response.status_code == 200 and "只有平台管理員可以將成員設為頻道教師" in response.content.decode()
    assert not Membership.objects.filter(user__username="s_dave").exists()

    members = _members(world.channel)
    own = next(i for i, m in enumerate(members) if m["role"] == "teacher")
    response = client.post(
        _url(Channel, "change", world.channel.pk),
        _channel_form(world.channel, members, **{f"memberships-{own}-DELETE": "on"}),
    )
    assert response.status_code == 200
    assert Membership.objects.filter(user=world.teacher, channel=world.channel, role="teacher").exists()


def test_a_teacher_manages_memberships_only_in_their_channels(client, world):
    as_(client, world.teacher)
    listing = client.get(_url(Membership)).content.decode()
    assert "s_alice" in listing and "sta_b" not in listing
    theirs = Membership.objects.get(user=world.other_super_ta)
    assert client.get(_url(Membership, "change", theirs.pk)).status_code == 404

    make_user("s_erin")
    # A new membership can only go into a channel the teacher owns.
    response = client.post(
        _url(Membership, "add"), {"channel": world.other_channel.pk, "user": "s_erin", "role": "student"}
    )
    assert response.status_code == 200 and not Membership.objects.filter(user__username="s_erin").exists()
    response = client.post(
        _url(Membership, "add"), {"channel": world.channel.pk, "user": "s_erin", "role": "student"}
    )
    assert (
        response.status_code == 302
        and Membership.objects.filter(user__username="s_erin", channel=world.channel).exists()
    )


def test_a_teacher_reads_but_cannot_change_their_channels_tasks(client, world):
    as_(client, world.teacher)
    listing = client.get(_url(ResearchTask)).content.decode()
    assert str(world.task.task_uuid) in listing and str(world.other_task.task_uuid) not in listing

    page = client.get(_url(ResearchTask, "change", world.task.pk))
    assert page.status_code == 200 and "SECRET-QUESTION-A" in page.content.decode()
    assert client.post(_url(ResearchTask, "change", world.task.pk), {"status": "failed"}).status_code == 403
    assert client.get(_url(ResearchTask, "change", world.other_task.pk)).status_code == 404
    assert client.get(_url(ResearchTask, "delete", world.task.pk)).status_code == 403
    other_step = world.other_task.steps.get()
    assert client.get(_url(ResearchStep, "change", other_step.pk)).status_code == 404


def test_a_teachers_actions_only_reach_rows_in_scope(client, world):
    as_(client, world.teacher)
    # delete_selected is not offered to teachers on channels; posting it anyway deletes nothing.
    client.post(
        _url(Channel),
        {
            "action": "delete_selected",
            "_selected_action": [world.other_channel.pk, world.channel.pk],
            "post": "yes",
        },
    )
    assert Channel.objects.filter(pk__in=[world.channel.pk, world.other_channel.pk]).count() == 2
    # On memberships it is offered, but only ever receives the teacher's own channel's rows.
    theirs = Membership.objects.get(user=world.other_super_ta)
    student = Membership.objects.get(user=world.other_student)
    response = client.post(
        _url(Membership),
        {"action": "delete_selected", "_selected_action": [theirs.pk, student.pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert Membership.objects.filter(pk=theirs.pk).exists()
    assert not Membership.objects.filter(pk=student.pk).exists()


def test_the_other_teacher_sees_nothing_of_the_first(client, world):
    as_(client, world.other_teacher)
    assert client.get(_url(Channel, "change", world.channel.pk)).status_code == 404
    assert client.get(_url(ResearchTask, "change", world.task.pk)).status_code == 404
    assert "course-a" not in client.get(_url(Channel)).content.decode()


# --------------------------------------------------------------------------- TA and Super TA


def test_a_ta_reads_the_channels_tasks_without_their_content(client, world):
    as_(client, world.ta)
    listing = client.get(_url(ResearchTask))
    assert listing.status_code == 200 and str(world.task.task_uuid) in listing.content.decode()
    assert str(world.other_task.task_uuid) not in listing.content.decode()
    page = client.get(_url(ResearchTask, "change", world.task.pk)).content.decode()
    assert "SECRET-QUESTION-A" not in page and "search_channel_materials" not in page
    # Searching by the question's words must not reveal which task asked it.
    assert (
        str(world.task.task_uuid)
        not in client.get(_url(ResearchTask), {"q": "SECRET-QUESTION-A"}).content.decode()
    )
    assert client.get(_url(ResearchTask, "change", world.other_task.pk)).status_code == 404
    assert client.get(_url(ResearchStep)).status_code == 403
    assert client.get(_url(Channel)).status_code == 403
    assert client.get(_url(ChatLog)).status_code == 403


def test_a_super_ta_reviews_their_channels_tasks_read_only(client, world):
    as_(client, world.super_ta)
    page = client.get(_url(ResearchTask, "change", world.task.pk))
    assert page.status_code == 200 and "SECRET-QUESTION-A" in page.content.decode()
    assert "search_channel_materials" in page.content.decode()  # the steps
    assert (
        str(world.task.task_uuid)
        in client.get(_url(ResearchTask), {"q": "SECRET-QUESTION-A"}).content.decode()
    )
    assert client.post(_url(ResearchTask, "change", world.task.pk), {}).status_code == 403
    assert client.get(_url(ResearchTask, "change", world.other_task.pk)).status_code == 404
    assert (
        client.get(_url(Channel, "change", world.channel.pk)).status_code == 404
    )  # not a channel it may open


def test_another_channels_super_ta_cannot_open_this_channels_task(client, world):
    as_(client, world.other_super_ta)
    assert client.get(_url(ResearchTask, "change", world.task.pk)).status_code == 404
    listing = client.get(_url(ResearchTask)).content.decode()
    assert str(world.other_task.task_uuid) in listing and str(world.task.task_uuid) not in listing


# --------------------------------------------------------------------------- researcher


def test_a_researcher_sees_only_their_studies_and_the_export_screen(client, world):
    as_(client, world.researcher)
    listing = client.get(_url(Study)).content.decode()
    assert "NTU-REC 202507EM058" in listing and "NTU-REC 999" not in listing
    assert client.get(_url(Study, "change", world.study.pk)).status_code == 200
    assert client.post(_url(Study, "change", world.study.pk), {"title": "changed"}).status_code == 403
    assert client.get(_url(Study, "change", world.other_study.pk)).status_code == 404
    assert client.get(f"/admin/governance/study/{world.study.pk}/export/").status_code == 200
    assert client.get(f"/admin/governance/study/{world.other_study.pk}/export/").status_code == 404
    for model in (Channel, ResearchTask, ChatLog):
        assert client.get(_url(model)).status_code == 403
    # The export action leads to the study's own export screen.
    response = client.post(_url(Study), {"action": "export_data", "_selected_action": [world.study.pk]})
    assert response.status_code == 302 and response["Location"].endswith(
        f"/governance/study/{world.study.pk}/export/"
    )
    response = client.post(_url(Study), {"action": "export_data", "_selected_action": [world.other_study.pk]})
    assert "export" not in response.get("Location", "")


def test_the_pseudonym_key_is_never_shown(client, world, admin_user):
    from governance.models import StudyPseudonymKey

    key_hex = StudyPseudonymKey.key_of(world.study).hex()
    as_(client, admin_user)
    page = client.get(_url(Study, "change", world.study.pk)).content.decode()
    assert "pseudonym" not in page.lower() and key_hex not in page


# --------------------------------------------------------------------------- platform admin


@pytest.fixture
def admin_user(db):
    return make_user("root2", superuser=True)


def test_a_platform_admin_sees_everything(client, world, admin_user):
    as_(client, admin_user)
    for model in (Channel, Membership, ResearchTask, ResearchStep, ChatLog, Study):
        assert client.get(_url(model)).status_code == 200, model
    assert client.get(_url(Channel, "change", world.other_channel.pk)).status_code == 200
    assert (
        "SECRET-QUESTION-B" in client.get(_url(ResearchTask, "change", world.other_task.pk)).content.decode()
    )
    assert "/admin/cost-dashboard/" in client.get("/admin/").content.decode()


def test_the_cost_dashboard_shows_todays_figures_to_platform_admins_only(client, world, admin_user, settings):
    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("100")
    settings.UEDU_DEEP_RESEARCH_ALERT_USD = Decimal("20")
    today = timezone.localdate()
    CostReservation.objects.create(
        reference="r1",
        user=world.student,
        day=today,
        reserved_usd=Decimal("5"),
        spent_usd=Decimal("1.25"),
        settled=True,
    )
    CostReservation.objects.create(reference="r2", user=world.student, day=today, reserved_usd=Decimal("2.5"))
    CostReservation.objects.create(
        reference="r3",
        user=world.other_student,
        day=today,
        reserved_usd=Decimal("4"),
        spent_usd=Decimal("0.5"),
        settled=True,
    )
    CostReservation.objects.create(
        reference="r4",
        user=world.other_student,
        day=today - timedelta(days=1),
        reserved_usd=Decimal("9"),
        spent_usd=Decimal("9"),
        settled=True,
    )

    for user in (world.teacher, world.super_ta, world.researcher):
        assert as_(client, user).get("/admin/cost-dashboard/").status_code == 403
    page = as_(client, admin_user).get("/admin/cost-dashboard/").content.decode()
    assert "平台成本儀表板" in page and "今日成本最高的使用者" in page
    assert (
        "Top users by cost today"
        in as_(client, admin_user).get("/admin/cost-dashboard/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    )

    assert '<td id="spent">1.7500</td>' in page
    assert '<td id="reserved">2.5000</td>' in page
    assert '<td id="cap">100.00</td>' in page and '<td id="alert">20.00</td>' in page
    assert '<tr data-status="completed"><td>' in page
    top = page[page.index('id="top-users"') :]
    assert top.index("s_alice") < top.index("s_bob")  # 3.75 committed before 0.50


def test_quota_pages_are_for_platform_admins_only_even_with_model_permissions(client, world):
    from django.contrib.auth.models import Permission

    world.teacher.user_permissions.add(*Permission.objects.filter(content_type__app_label="quotas"))
    as_(client, world.teacher)
    assert client.get("/admin/quotas/usageentry/").status_code == 403


# --------------------------------------------------------------------------- the demo accounts


def test_every_demo_account_gets_a_working_admin_for_its_role(client, db, settings):
    from django.core.management import call_command

    settings.DEBUG = True
    call_command("load_demo_data")
    User = get_user_model()
    expectations = {
        "admin": ["/admin/cost-dashboard/", "/admin/governance/exportaudit/"],
        "teacher": ["/admin/channels_app/channel/", "/admin/research/researchtask/"],
        "ta": ["/admin/research/researchtask/"],
        "superta": ["/admin/research/researchtask/", "/admin/research/researchstep/"],
        "researcher": ["/admin/governance/study/"],
    }
    for username, links in expectations.items():
        client.force_login(User.objects.get(username=username))
        index = client.get("/admin/")
        assert index.status_code == 200, username
        for link in links:
            assert link in index.content.decode(), (username, link)
            assert client.get(link).status_code == 200, (username, link)
    client.force_login(User.objects.get(username="researcher"))
    study = Study.objects.get(protocol_number="NTU-REC 202507EM058")
    assert client.get(f"/admin/governance/study/{study.pk}/export/").status_code == 200
    client.force_login(User.objects.get(username="student1"))
    assert client.get("/admin/").status_code == 302


# --------------------------------------------------------------------------- L3, L5


def test_the_admins_channel_form_checks_domains_and_the_prompt_like_the_settings_page(client, world):
    as_(client, world.teacher)
    before = Channel.objects.values("web_denied_domains", "system_prompt").get(pk=world.channel.pk)
    for bad in (
        {"web_denied_domains": "https://evil.example/path"},
        {"web_allowed_domains": "*.edu.tw"},
        {"system_prompt": "x" * 4001},
    ):
        data = _channel_form(world.channel, _members(world.channel), **bad)
        response = client.post(_url(Channel, "change", world.channel.pk), data)
        assert response.status_code == 200 and "errornote" in response.content.decode(), bad
    assert Channel.objects.values("web_denied_domains", "system_prompt").get(pk=world.channel.pk) == before
    data = _channel_form(world.channel, _members(world.channel), web_denied_domains="Example.COM\n.例子.tw")
    assert client.post(_url(Channel, "change", world.channel.pk), data).status_code == 302
    assert Channel.objects.get(pk=world.channel.pk).web_denied_domains == "example.com\n例子.tw"


def test_view_on_site_answers_only_for_objects_the_user_may_view(client, world, admin_user):
    from django.contrib.contenttypes.models import ContentType

    from catalogue.models import PlatformDocument

    secret = PlatformDocument.objects.create(
        slug="course-b-secret-notes",
        title="B notes",
        body="…",
        visibility="channel",
        channel=world.other_channel,
    )
    shortcut = f"/admin/r/{ContentType.objects.get_for_model(PlatformDocument).pk}/{secret.pk}/"
    as_(client, world.teacher)
    refused = client.get(shortcut)
    assert refused.status_code == 404 and "course-b-secret-notes" not in refused.get("Location", "")
    as_(client, admin_user)
    allowed = client.get(shortcut)
    assert allowed.status_code == 302 and allowed["Location"].endswith("/course-b-secret-notes/")


def _related_filter_choices(response, field_name) -> set[str]:
    """The labels a related filter offers (none when Django leaves out a filter of one choice)."""
    specs = [s for s in response.context["cl"].filter_specs if getattr(s, "field_path", "") == field_name]
    return {label for spec in specs for _value, label in spec.lookup_choices}


def test_filter_sidebars_list_only_what_the_users_rows_point_at(client, world):
    """L4: a related filter's choices come from the user's scoped rows, not the whole table."""
    from governance.models import ExportRequest

    for study in (world.study, world.other_study):
        ExportRequest.objects.create(
            study=study,
            requested_by=world.researcher if study == world.study else world.admin,
            purpose="p",
            tables=["tasks"],
            date_from=date(2025, 9, 1),
            date_to=date(2025, 9, 30),
            consent_form_name="c.pdf",
            consent_form_sha256="0" * 64,
            consent_form=b"%PDF-1.4",
        )
    as_(client, world.researcher)
    response = client.get(_url(ExportRequest))
    assert response.status_code == 200
    assert str(world.other_study) not in _related_filter_choices(response, "study")
    assert str(world.other_study) not in response.content.decode()
    from channels_app.models import Material

    for channel, owner in ((world.channel, world.teacher), (world.other_channel, world.other_teacher)):
        Material.objects.create(
            channel=channel, uploaded_by=owner, original_name="r.pdf", size_bytes=1, sha256="0" * 64
        )
    as_(client, world.teacher)
    response = client.get(_url(Material))
    assert response.status_code == 200  # a teacher's materials admin, scoped to their channels
    assert str(world.other_channel) not in _related_filter_choices(response, "channel")
    assert world.other_channel.name not in response.content.decode()
