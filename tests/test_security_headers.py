"""Security headers on every response: every URL pattern of the project (the admin's included) is
requested, whatever it answers (200, 302, 403, 404, 405), and carries the Content-Security-Policy
with frame-ancestors, X-Content-Type-Options, Referrer-Policy and X-Frame-Options. With the
production settings over TLS (directly or behind a proxy that says so) HSTS is sent as well."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from catalogue.models import (
    Advisor,
    Course,
    CurriculumTopic,
    PlatformDocument,
    ResearchCluster,
    TeamPaper,
    University,
)
from channels_app.models import ChatLog
from tests.support.documents import pdf_bytes
from tests.support.research_fixtures import stored_research
from uedu_dr import devstack

ROOT = Path(__file__).resolve().parent.parent


def url_patterns(resolver=None, prefix: str = ""):
    """(route, pattern) for every URL pattern of the project, includes followed."""
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            yield from url_patterns(pattern, prefix + str(pattern.pattern))
        else:
            assert isinstance(pattern, URLPattern)
            yield prefix + str(pattern.pattern), pattern


_PARAM = re.compile(r"<(?:(\w+):)?(\w+)>|\(\?P<(\w+)>([^)]*)\)")


def concrete(route: str, value) -> str:
    """A path for a route, its parameters filled by `value(name, route, regex)`."""
    path = _PARAM.sub(lambda m: str(value(m.group(2) or m.group(3), route, m.group(4) or "")), route)
    return "/" + path.replace("^", "").replace("$", "").replace("\\", "")


@pytest.fixture
def site(personas, index_file, fake_embeddings):
    """One of everything the pages show, so that most URLs answer a real page, not a 404."""
    apps.get_app_config("catalogue").load_demo_data(open(os.devnull, "w"))
    task = stored_research(personas.student, personas.channel)
    material = index_file(
        personas.channel, personas.teacher, "handout.pdf", pdf_bytes(["Learning analytics."])
    )
    course = Course.objects.select_related("university").first()
    by_prefix = {
        "channels/": personas.channel.slug,
        "deep_research/channel/": personas.channel.slug,
        "catalogue/universities/": University.objects.first().slug,
        "catalogue/clusters/": ResearchCluster.objects.first().slug,
        "catalogue/advisors/": Advisor.objects.first().slug,
        "catalogue/team-papers/": TeamPaper.objects.first().slug,
        "catalogue/documents/": PlatformDocument.objects.filter(visibility="public").first().slug,
    }

    def value(name: str, route: str, regex: str):
        if name == "slug":
            return next(slug for prefix, slug in by_prefix.items() if route.startswith(prefix))
        if name == "university":
            return course.university.slug
        if name == "code":
            return (
                course.code
                if route.startswith("catalogue/courses/")
                else CurriculumTopic.objects.first().curriculum_code
            )
        if name == "task_uuid":
            return task.task_uuid
        if name == "pk":
            return material.pk if "materials" in route else ChatLog.objects.filter(kind="request").first().pk
        if name in ("object_id", "study_id"):  # admin/<app>/<model>/<id>/…: an existing row of that model
            app_label, model = route.split("/")[1:3]
            row = apps.get_model(app_label, model).objects.first() if app_label != "r" else None
            return row.pk if row is not None else 1
        if name == "content_type_id":
            return ContentType.objects.get_for_model(type(personas.channel)).pk
        if name == "app_label":
            return regex.split("|")[0]
        if name == "id":
            return personas.student.pk
        return {"uidb64": "MQ", "token": "set-password", "url": "nowhere/", "path": "nothing.txt"}.get(
            name, 1
        )

    return value


HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def assert_secure_headers(response, path: str) -> None:
    policy = response.get("Content-Security-Policy", "")
    assert (
        "frame-ancestors 'none'" in policy
        and "default-src 'self'" in policy
        and "script-src 'self'" in policy
    ), (path, policy)
    for name, expected in HEADERS.items():
        assert response.get(name) == expected, (path, response.status_code, name, response.get(name))


# The SSE view is async; Django's sync test client reads it all the same, and says so.
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")
def test_every_url_pattern_answers_with_the_security_headers(personas, site, settings):
    settings.DEBUG = False  # the site's own error pages, as in production
    admin, anonymous = Client(raise_request_exception=False), Client(raise_request_exception=False)
    admin.force_login(personas.admin)
    student = Client(raise_request_exception=False)
    student.force_login(personas.student)
    seen, statuses = set(), {}
    for route, _pattern in url_patterns():
        path = concrete(route, site)
        clients = [admin] if route.startswith("admin/") else [admin, student, anonymous]
        for client in clients:
            response = client.get(path)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert_secure_headers(response, path)
            if response.streaming:  # a file download, or the SSE stream of a finished task: read to its end
                list(response)
        seen.add(route)
    assert len(seen) >= 250  # the admin's ~210 patterns and the site's ~60
    assert {200, 302, 404, 405} <= set(statuses) and not any(status >= 500 for status in statuses), statuses
    assert statuses[200] >= 150, statuses  # most of the walk saw real pages, not just refusals


def test_static_files_are_served_with_nosniff_and_the_policy(client, db):
    response = client.get("/static/js/base.js")
    assert response.status_code == 200
    assert (
        response["X-Content-Type-Options"] == "nosniff"
        and "frame-ancestors 'none'" in response["Content-Security-Policy"]
    )


PRODUCTION_PROBE = """
import json, django
django.setup()
from django.test import Client
client = Client(raise_request_exception=False)
out = {}
for name, kwargs in {
    "tls": {"secure": True},
    "behind_proxy": {"HTTP_X_FORWARDED_PROTO": "https"},
    "plain_http": {},
    "tls_api": {"secure": True, "path": "/api/deep_research/quota"},
}.items():
    path = kwargs.pop("path", "/accounts/login/")
    response = client.get(path, HTTP_HOST="uedu.example.edu", **kwargs)
    out[name] = {"status": response.status_code, "location": response.get("Location", ""),
                 "headers": {k: response.get(k) for k in ("Strict-Transport-Security", "Content-Security-Policy",
                             "X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options")}}
print(json.dumps(out))
"""


def test_production_over_tls_sends_hsts_and_redirects_plain_http(db):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    env.update(
        DJANGO_SETTINGS_MODULE="uedu_dr.settings.production",
        SECRET_KEY="k" * 20 + "-Zq8!x2#Lp0@vT6&mR4^wY1*nB7(cE3)" + "s" * 10,
        ALLOWED_HOSTS="uedu.example.edu",
        BEHIND_TLS_PROXY="1",
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
        DATABASE_URL=devstack.postgres_url(connection.settings_dict),
    )
    result = subprocess.run(
        [sys.executable, "-c", PRODUCTION_PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])

    for name in ("tls", "behind_proxy", "tls_api"):
        headers = out[name]["headers"]
        assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload", (
            name,
            headers,
        )
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert (
            headers["X-Content-Type-Options"],
            headers["Referrer-Policy"],
            headers["X-Frame-Options"],
        ) == ("nosniff", "same-origin", "DENY")
    assert out["tls"]["status"] == 200 and out["tls_api"]["status"] in (401, 403)
    # Plain HTTP is sent to HTTPS, and HSTS is never sent over plain HTTP (browsers would ignore it).
    assert (
        out["plain_http"]["status"] == 301
        and out["plain_http"]["location"] == "https://uedu.example.edu/accounts/login/"
    )
    assert out["plain_http"]["headers"]["Strict-Transport-Security"] is None
