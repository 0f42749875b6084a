"""No admin URL reveals hidden data: every changelist accepts only the lookups its list_filter
and date_hierarchy declare, and answers anything else with 400."""

from __future__ import annotations

from datetime import date

import pytest
from django.contrib import admin
from django.urls import reverse

from channels_app.models import SuperTaNda
from governance.models import Study, StudyPseudonymKey, StudyResearcher
from research.models import ResearchTask
from tests.support.factories import add_member, make_user

SECRET_QUESTION = "期中考 SECRET-Q 該怎麼準備"
SECRET_ANSWER = "ANSWER-XYZ 先讀第三章"


@pytest.fixture
def world(personas):
    p = personas
    for user in (p.teacher, p.ta, p.super_ta):
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    p.super_ta_no_nda = add_member(p.channel, make_user("sta_nonda", staff=True), "super_ta")
    ResearchTask.objects.create(
        user=p.student,
        channel=p.channel,
        user_question=SECRET_QUESTION,
        final_answer=SECRET_ANSWER,
        trigger_mode="forced",
        status="completed",
    )
    p.researcher = make_user("res_url", staff=True)
    p.study = Study.objects.create(
        protocol_number="NTU-REC 202507EM058",
        title="A",
        approved_from=date(2025, 8, 1),
        approved_to=date(2099, 1, 1),
        status="active",
    )
    StudyResearcher.objects.create(study=p.study, user=p.researcher, agreement_signed_on=date(2025, 9, 1))
    return p


def _roles(p):
    return {
        "teacher": p.teacher,
        "ta": p.ta,
        "super_ta": p.super_ta,
        "super_ta_without_nda": p.super_ta_no_nda,
        "researcher": p.researcher,
        "platform_admin": p.admin,
    }


@pytest.mark.parametrize(
    "query", ["user_question__icontains=期中考", "final_answer__regex=^ANSWER", "final_answer__startswith=A"]
)
def test_filtering_tasks_on_the_question_or_answer_is_refused_for_every_role(client, world, query):
    url = reverse("admin:research_researchtask_changelist") + "?" + query
    for role, user in _roles(world).items():
        client.force_login(user)
        response = client.get(url)
        # Roles that may open the list get Django's refusal; the others never reach the list.
        expected = 403 if role == "researcher" else 400
        assert response.status_code == expected, (role, response.status_code)
        body = response.content.decode()
        assert "SECRET-Q" not in body and "ANSWER-XYZ" not in body


def test_the_same_lists_still_filter_by_what_they_declare(client, world):
    client.force_login(world.teacher)
    base = reverse("admin:research_researchtask_changelist")
    for query in (
        "status__exact=completed",
        "needs_review__exact=0",
        f"channel__id__exact={world.channel.pk}",
        "created_at__year=2026",
        "q=s_alice",
        "o=2",
        "p=0",
    ):
        assert client.get(f"{base}?{query}").status_code == 200, query


@pytest.mark.parametrize(
    "query",
    [
        "pseudonym_key__startswith=a",
        "pseudonym_secret__key__startswith=a",
        "researchers__user__password__startswith=pbkdf2",
    ],
)
def test_the_pseudonym_key_cannot_be_probed_through_the_study_list(client, world, query):
    key_hex = StudyPseudonymKey.key_of(world.study).hex()
    for user in (world.researcher, world.admin):
        client.force_login(user)
        response = client.get(reverse("admin:governance_study_changelist") + "?" + query)
        assert response.status_code == 400, (user, query)
        assert key_hex not in response.content.decode()
    assert not admin.site.is_registered(StudyPseudonymKey)


def _undeclared_field(model_admin, request) -> str | None:
    declared = model_admin.declared_lookups(request)
    for field in model_admin.model._meta.concrete_fields:
        if field.name not in declared and f"{field.name}__exact" not in declared and not field.is_relation:
            return field.name
    return None


def test_every_registered_admin_refuses_a_lookup_its_filters_do_not_declare(client, world, rf):
    from channels_app.admin_scoping import DeclaredLookupsOnly

    client.force_login(world.admin)
    request = rf.get("/")
    request.user = world.admin
    checked = 0
    for model, model_admin in admin.site._registry.items():
        assert isinstance(model_admin, DeclaredLookupsOnly), model
        name = _undeclared_field(model_admin, request)
        if name is None:
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        response = client.get(f"{url}?{name}__startswith=a")
        assert response.status_code == 400, (model, name, response.status_code)
        checked += 1
    # Every project admin and the third-party ones (users, groups, tokens, beat schedules).
    assert checked >= len(admin.site._registry) - 2


def test_an_nda_admin_entry_is_per_channel(client, world):
    client.force_login(world.admin)
    url = reverse("admin:channels_app_supertanda_changelist")
    assert client.get(f"{url}?channel__id__exact={world.channel.pk}").status_code == 200
    assert client.get(f"{url}?user__password__startswith=p").status_code == 400
    assert SuperTaNda.objects.filter(user=world.super_ta, channel=world.channel).exists()
