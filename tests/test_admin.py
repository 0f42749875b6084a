"""Every model is in the admin, and its pages load for a platform admin."""

import pytest
from django.contrib import admin
from django.urls import reverse

from tests.support.factories import make_user

PROJECT_APPS = {"channels_app", "quotas", "research", "catalogue", "governance"}


@pytest.fixture
def admin_client(client, db):
    client.force_login(make_user("boss", superuser=True))
    return client


# Secrets no admin page may show (or filter on): the pseudonym key of a study.
# Reviewers' conflict decisions are append-only audit rows, shown on the result page and in the
# API under the review rules; an admin change form would let them be edited.
NEVER_REGISTERED = {"governance.StudyPseudonymKey", "research.ConflictDecision"}


def test_every_project_model_is_registered():
    from django.apps import apps

    for app in PROJECT_APPS:
        for model in apps.get_app_config(app).get_models():
            assert admin.site.is_registered(model) != (model._meta.label in NEVER_REGISTERED), model


def test_changelists_and_add_pages_load_for_a_superuser(admin_client, personas):
    for model, model_admin in admin.site._registry.items():
        info = (model._meta.app_label, model._meta.model_name)
        changelist = admin_client.get(reverse("admin:{}_{}_changelist".format(*info)))
        assert changelist.status_code == 200, info
        if model_admin.has_add_permission(changelist.wsgi_request):
            assert admin_client.get(reverse("admin:{}_{}_add".format(*info))).status_code == 200, info


def test_admin_login_page_is_served(client, db):
    response = client.get("/admin/login/")
    assert response.status_code == 200


def test_the_research_lists_blank_limit_filter_is_a_named_link_that_filters(admin_client, personas):
    """Django links a blank value of a field filter with no text (no name for a screen reader:
    WCAG 2.4.4, found by axe in tests/e2e/test_accessibility.py); the research list names it."""
    from tests.support.research_fixtures import stored_research

    within = stored_research(personas.student, personas.channel)
    out_of_steps = stored_research(personas.student, personas.channel, limit_hit="max_steps")
    url = reverse("admin:research_researchtask_changelist")
    page = admin_client.get(url).content.decode()
    assert '<a href="?limit_hit=">未觸及上限</a>' in page
    assert '<a href="?limit_hit=max_steps">步數上限</a>' in page  # the limit, worded by the vocabulary
    filtered = admin_client.get(url + "?limit_hit=").content.decode()
    assert str(within.task_uuid) in filtered and str(out_of_steps.task_uuid) not in filtered
