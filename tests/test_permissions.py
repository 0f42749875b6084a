"""The role × permission matrix: for every permission of the role table (channels_app.roles), every
URL it guards (pages, the API, the admin with its actions, the WebSocket) and the services it guards
without a URL, asked by one persona of each role. What each persona should get is read from the
table itself, so the code and the table cannot drift: a view that checks a role by name, or
forgets the check, answers someone the table does not name (or refuses someone it does).

A second run flips the table (the TA holds every channel permission, the Super TA with an NDA
only a TA's) and checks that the channel-scoped guards follow: the URLs answer what the table
says, not what it used to say."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from types import SimpleNamespace

import pytest
from channels.testing import WebsocketCommunicator
from django.core.files.base import ContentFile

from catalogue.models import PlatformDocument
from channels_app import roles
from channels_app.models import ChatLog, Material, Membership, SuperTaNda
from governance.models import ChannelConsent, ExportRequest, Study, StudyResearcher
from research.models import AnswerFeedback, FailureCase, ResearchEvent, ResearchStep, ResearchTask
from research.services import lifecycle, replay
from tests.support.factories import add_member, make_user
from tests.web.test_conflict_decisions import KEY, conflicted
from uedu_dr.errors import ServiceError

# The roles each persona holds in channel A (course-a) and study S, as the world below makes them.
# A guard about one object (a row, a channel's page) asks these; a guard about "some channel"
# (an admin list, the review queue) also counts ELSEWHERE: the other owner's course-b.
PERSONAS: dict[str, frozenset[str]] = {
    "admin": frozenset({roles.PLATFORM_ADMIN, roles.STAFF}),
    "owner": frozenset({roles.OWNER, roles.TEACHER, roles.STAFF}),  # make_channel adds the membership
    "teacher": frozenset({roles.TEACHER, roles.STAFF}),
    "super_ta+nda": frozenset({roles.SUPER_TA, roles.SUPER_TA_WITH_NDA, roles.STAFF}),
    "super_ta": frozenset({roles.SUPER_TA, roles.STAFF}),
    "ta": frozenset({roles.TA, roles.STAFF}),
    "student": frozenset({roles.STUDENT}),
    "researcher": frozenset({roles.RESEARCHER, roles.STAFF}),
    "staff": frozenset({roles.STAFF}),
    "other_owner": frozenset({roles.STAFF}),  # owns course-b and nothing here
    "outsider": frozenset(),
}


ELSEWHERE: dict[str, frozenset[str]] = {"other_owner": frozenset({roles.OWNER, roles.TEACHER})}


def holds(persona: str, permission: str, *, anywhere: bool = False) -> bool:
    held = PERSONAS[persona] | (ELSEWHERE.get(persona, frozenset()) if anywhere else frozenset())
    return any(permission in roles.ROLES[role].permissions for role in held)


@pytest.fixture
def world(personas, llm, settings):
    p = personas
    settings.UEDU_DR_RATE_START = "1000/m"
    settings.UEDU_DR_RATE_JUDGE = "1000/m"
    # The guards start many researches per persona; the cap on researches under way is not what
    # this matrix asks (tests/quotas/test_start_limits.py does).
    settings.UEDU_DR_MAX_ACTIVE = dict.fromkeys(settings.UEDU_DR_MAX_ACTIVE)
    users = {
        "admin": p.admin,
        "owner": p.teacher,
        "teacher": add_member(p.channel, make_user("co_teacher"), Membership.Role.TEACHER),
        "super_ta+nda": p.super_ta,
        "super_ta": add_member(p.channel, make_user("sta_no_nda"), Membership.Role.SUPER_TA),
        "ta": p.ta,
        "student": p.student,
        "researcher": make_user("res_a"),
        "staff": make_user("staff_only"),
        "other_owner": p.other_teacher,
        "outsider": p.outsider,
    }
    for name, user in users.items():
        if roles.STAFF in PERSONAS[name]:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
    # The research every content guard is about: another student's, with an unresolved conflict.
    task = conflicted(SimpleNamespace(student=p.other_student, channel=p.channel))
    ResearchStep.objects.create(
        task=task, index=task.steps.count() + 1, phase="action", tool_name="search_channel_materials", args={}
    )
    ResearchEvent.objects.create(task=task, seq=100, type="completed", data={})
    feedback = AnswerFeedback.objects.create(
        task=task, user=p.other_student, useful=False, note="FEEDBACK-MARK"
    )
    material = _material(p, "week1.pdf")
    study = Study.objects.create(
        protocol_number="NTU-REC 1", title="A", approved_from=date(2025, 8, 1), approved_to=date(2099, 1, 1)
    )
    study.channels.add(p.channel)
    StudyResearcher.objects.create(
        study=study, user=users["researcher"], agreement_signed_on=date(2025, 9, 1)
    )
    export_request = ExportRequest.objects.create(
        study=study,
        requested_by=users["researcher"],
        purpose="p",
        tables=["tasks"],
        date_from=date(2025, 9, 1),
        date_to=date(2025, 9, 30),
        consent_form_name="form.pdf",
        consent_form_sha256="0" * 64,
        consent_form=b"%PDF",
    )
    documents = {
        visibility: PlatformDocument.objects.create(
            slug=f"doc-{visibility}",
            title=visibility,
            body="…",
            visibility=visibility,
            channel=p.channel if visibility == "channel" else None,
        )
        for visibility in ("channel", "staff")
    }
    return SimpleNamespace(
        p=p,
        users=users,
        channel=p.channel,
        task=task,
        material=material,
        feedback=feedback,
        study=study,
        export_request=export_request,
        documents=documents,
        consent=ChannelConsent.objects.filter(channel=p.channel).first(),
        ta_membership=Membership.objects.get(user=p.ta, channel=p.channel),
    )


def _material(p, name: str, *, stored: bool = True) -> Material:
    material = Material.objects.create(
        channel=p.channel,
        uploaded_by=p.teacher,
        original_name=name,
        kind="pdf",
        size_bytes=4,
        sha256=f"{name}".ljust(64, "0")[:64],
        status=Material.Status.READY if stored else Material.Status.FAILED,
    )
    if stored:
        material.file.save(name, ContentFile(b"%PDF"), save=True)
    return material


# --------------------------------------------------------------------------- the guards


def _awaiting_review_queue(client, w, user):
    """The API's review queue, with the world's research awaiting review again: a guard asked
    before may have decided its conflict or written a note, which is a review and takes it out."""
    ResearchTask.objects.filter(pk=w.task.pk).update(reviewed_at=None, conflicts_decided_at=None)
    return client.get("/api/deep_research/review_queue")


@dataclass(frozen=True)
class Guard:
    """One place a permission guards: `ask(client, world, user)` makes the request (or calls the
    service) and returns its response; `allowed` / `denied` are the statuses each outcome may have,
    or `shows` names text that only an allowed answer holds (lists that filter rather than refuse)."""

    name: str
    ask: Callable
    allowed: frozenset = frozenset({200})
    denied: frozenset = frozenset({404})
    shows: Callable | None = None
    anywhere: bool = False  # about some channel, not channel A: its list, its add form

    def outcome(self, response, w) -> str:
        if self.shows is not None:
            if response.status_code not in self.allowed | self.denied:
                return f"status {response.status_code}"
            return "allowed" if self.shows(w) in response.content.decode() else "denied"
        if response.status_code in self.allowed:
            return "allowed"
        if response.status_code in self.denied:
            return "denied"
        return f"status {response.status_code}"


ADMIN_DENIED = frozenset({302, 403, 404})  # 302: not staff, sent to the log-in page


def get(url: Callable[[SimpleNamespace], str], **kw) -> Callable:
    return lambda client, w, user: client.get(url(w), **kw)


def post(url: Callable, data: Callable | dict | None = None, **kw) -> Callable:
    def ask(client, w, user):
        body = data(w) if callable(data) else (data or {})
        return client.post(url(w), body, **kw)

    return ask


def api(url: Callable, body: Callable | dict) -> Callable:
    def ask(client, w, user):
        payload = body(w) if callable(body) else body
        return client.post(
            url(w), json.dumps(payload), content_type="application/json", HTTP_ACCEPT="application/json"
        )

    return ask


def admin_list(app_model: str) -> Guard:
    return Guard(
        f"admin {app_model} list", get(lambda w: f"/admin/{app_model}/"), denied=ADMIN_DENIED, anywhere=True
    )


def service(call: Callable) -> Callable:
    """A guard without a URL: the service's answer as a status (its ServiceError's, else 200)."""

    def ask(client, w, user):
        try:
            call(w, user)
        except ServiceError as exc:
            return SimpleNamespace(status_code=exc.status, content=exc.code.encode())
        return SimpleNamespace(status_code=200, content=b"")

    return ask


T = "/deep_research/task/{}"
API_T = "/api/deep_research/task/{}"


def _task(path: str) -> Callable:
    return lambda w: path.format(w.task.task_uuid)


def _fresh_material(stored: bool) -> Callable:
    def url(w):
        return w.channel, _material(
            w.p, f"m{ResearchTask.objects.count()}-{Material.objects.count()}.pdf", stored=stored
        )

    return url


def _material_action(verb: str, *, stored: bool) -> Callable:
    def ask(client, w, user):
        channel, material = _fresh_material(stored)(w)
        return client.post(f"/channels/{channel.slug}/materials/{material.pk}/{verb}")

    return ask


def _admin_reindex(client, w, user):
    """The admin's re-index action on channel A's material: whether it ran (the material waits for
    indexing again), whatever page the refusal took (403, the log-in page, the changelist)."""
    Material.objects.filter(pk=w.material.pk).update(status=Material.Status.READY)
    client.post("/admin/channels_app/material/", {"action": "reindex", "_selected_action": [w.material.pk]})
    ran = Material.objects.get(pk=w.material.pk).status == Material.Status.PENDING
    return SimpleNamespace(status_code=200 if ran else 403, content=b"")


def _admin_promote(client, w, user):
    """The admin's "promote to the failure dataset" action on the research's feedback: whether a
    failure case was made, whatever page the refusal took."""
    before = FailureCase.objects.count()
    client.post("/admin/research/answerfeedback/", {"action": "promote", "_selected_action": [w.feedback.pk]})
    return SimpleNamespace(status_code=200 if FailureCase.objects.count() > before else 403, content=b"")


def _withdraw(client, w, user):
    # Whoever wrote in the channel may withdraw too (a former student); the guard asks about the
    # role alone, so rows an earlier guard wrote for this user (a research started) go first.
    ChatLog.objects.filter(channel=w.channel, user=user).delete()
    return client.post("/deep_research/my/consent", {"choice": "withdraw", "channel": w.channel.slug})


def _cancel(client, w, user):
    task, _ = lifecycle.task_start(
        user=w.p.other_student, channel=w.channel, question="比較學習分析與布魯姆分類法", queue=False
    )
    return client.post(
        "/api/deep_research/cancel",
        json.dumps({"task_uuid": str(task.task_uuid)}),
        content_type="application/json",
    )


def _replay(w, user):
    # A finished task without recorded steps: a holder is told it cannot be replayed (400), anyone
    # else that they may not replay at all (403), before anything runs.
    original = ResearchTask.objects.create(
        user=w.p.other_student,
        channel=w.channel,
        user_question="q",
        trigger_mode="forced",
        status="completed",
    )
    replay.replay_task(original, run_by=user)


def _over_the_share(w, user):
    from django.conf import settings

    from quotas.services import reserve_call

    share = Decimal(settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD) * Decimal(
        str(settings.UEDU_USER_DAILY_CAP_SHARE)
    )
    reserve_call(user, "chat", share + Decimal("0.01"))


def _ws_accepts(w, user) -> bool:
    """The research's WebSocket: accepted or refused at the handshake."""
    from research.consumers import TaskEventsConsumer

    async def handshake():
        socket = WebsocketCommunicator(TaskEventsConsumer.as_asgi(), f"/ws/deep_research/{w.task.task_uuid}/")
        socket.scope["user"] = user
        socket.scope["url_route"] = {"kwargs": {"task_uuid": str(w.task.task_uuid)}}
        accepted, _ = await socket.connect(timeout=10)
        if accepted:
            await socket.disconnect()
        return accepted

    return asyncio.run(handshake())


GUARDS: dict[str, list[Guard]] = {
    roles.CHANNEL_USE: [
        Guard("chat page", get(lambda w: f"/channels/{w.channel.slug}/")),
        Guard("material page", get(lambda w: f"/channels/{w.channel.slug}/materials/{w.material.pk}/")),
        Guard("material file", get(lambda w: f"/channels/{w.channel.slug}/materials/{w.material.pk}/file")),
        Guard(
            "catalogue channel document",
            get(lambda w: f"/catalogue/documents/{w.documents['channel'].slug}/"),
        ),
        Guard(
            "API start",
            api(
                lambda w: "/api/deep_research/start",
                lambda w: {"channel_id": w.channel.pk, "question": "比較學習分析與布魯姆分類法的角色"},
            ),
            allowed=frozenset({201}),
        ),
        Guard(
            "API judge",
            api(
                lambda w: "/api/deep_research/judge",
                lambda w: {"channel_id": w.channel.pk, "question": "比較學習分析"},
            ),
        ),
    ],
    roles.CHANNEL_CONFIGURE: [
        Guard("settings page", get(lambda w: f"/channels/{w.channel.slug}/settings/")),
        Guard(
            "admin channel form",
            get(lambda w: f"/admin/channels_app/channel/{w.channel.pk}/change/"),
            denied=ADMIN_DENIED,
        ),
    ],
    roles.MATERIALS_MANAGE: [
        Guard(
            "materials page",
            get(lambda w: f"/channels/{w.channel.slug}/materials/"),
            denied=frozenset({403, 404}),
        ),
        Guard(
            "delete",
            _material_action("delete", stored=True),
            allowed=frozenset({302}),
            denied=frozenset({403, 404}),
        ),
        Guard(
            "re-index",
            _material_action("reindex", stored=False),
            allowed=frozenset({302}),
            denied=frozenset({403, 404}),
        ),
        Guard(
            "admin material",
            get(lambda w: f"/admin/channels_app/material/{w.material.pk}/change/"),
            denied=ADMIN_DENIED,
        ),
        Guard(
            "admin upload form",
            get(lambda w: "/admin/channels_app/material/add/"),
            denied=ADMIN_DENIED,
            anywhere=True,
        ),
        Guard("admin re-index action", _admin_reindex, denied=frozenset({403})),
    ],
    roles.MEMBERS_MANAGE: [
        admin_list("channels_app/membership"),
        Guard(
            "admin membership",
            get(lambda w: f"/admin/channels_app/membership/{w.ta_membership.pk}/change/"),
            denied=ADMIN_DENIED,
        ),
    ],
    roles.CONSENT_READ_PERIODS: [
        admin_list("governance/channelconsent"),
        Guard(
            "admin consent period",
            get(lambda w: f"/admin/governance/channelconsent/{w.consent.pk}/change/"),
            denied=ADMIN_DENIED,
        ),
    ],
    roles.CONSENT_CHOOSE: [
        Guard("withdraw", _withdraw, allowed=frozenset({302})),
    ],
    roles.RESEARCH_READ_RECORDS: [
        admin_list("research/researchtask"),
        Guard(
            "admin task",
            get(lambda w: f"/admin/research/researchtask/{w.task.pk}/change/"),
            denied=ADMIN_DENIED,
        ),
    ],
    roles.RESEARCH_READ_RESULTS: [
        Guard("result page", get(_task(T))),
        Guard("Markdown download", get(_task(T + "/answer.md"))),
        Guard("API task", get(_task(API_T))),
        Guard("API events", get(_task(API_T + "/events"))),
        Guard("API report", get(_task(API_T + "/report"))),
        Guard("API stream", get(_task(API_T + "/stream"))),
        admin_list("research/researchstep"),
        admin_list("research/researchevent"),
        Guard(
            "admin task shows the question",
            get(lambda w: f"/admin/research/researchtask/{w.task.pk}/change/"),
            denied=ADMIN_DENIED | {200},
            allowed=frozenset({200}),
            shows=lambda w: w.task.user_question,
        ),
        Guard(
            "admin search by question",
            lambda client, w, user: client.get("/admin/research/researchtask/", {"q": w.task.user_question}),
            denied=ADMIN_DENIED | {200},
            shows=lambda w: f"/admin/research/researchtask/{w.task.pk}/change/",
        ),
    ],
    roles.RESEARCH_REVIEW: [
        Guard("review queue page", get(lambda w: "/deep_research/review"), anywhere=True),
        Guard("feedback page", get(lambda w: "/deep_research/feedback"), anywhere=True),
        Guard(
            "API review queue",
            _awaiting_review_queue,
            denied=frozenset({200}),
            shows=lambda w: str(w.task.task_uuid),
        ),
        Guard(
            "API feedback",
            get(lambda w: "/api/deep_research/feedback"),
            denied=frozenset({200}),
            shows=lambda w: "FEEDBACK-MARK",
        ),
        Guard(
            "reviewer note",
            post(_task(T + "/review"), {"note": "checked"}),
            allowed=frozenset({302}),
            denied=frozenset({403, 404}),
        ),
        Guard(
            "API reviewer note",
            api(_task(API_T + "/review"), {"note": "checked"}),
            denied=frozenset({403, 404}),
        ),
        Guard(
            "flag misuse",
            post(_task(T + "/misuse"), {"note": "copied"}),
            allowed=frozenset({302}),
            denied=frozenset({403, 404}),
        ),
        admin_list("research/answerfeedback"),
    ],
    roles.CONFLICTS_DECIDE: [
        Guard(
            "decide on the page",
            post(
                _task(T + "/conflicts/decide"),
                {"conflict_key": KEY, "choice": "unsettleable", "reason": "both"},
            ),
            allowed=frozenset({302}),
            denied=frozenset({403, 404}),
        ),
        Guard(
            "API decide",
            api(
                _task(API_T + "/conflicts/decide"),
                {"conflict_key": KEY, "decision": "unsettleable", "reason": "both"},
            ),
            allowed=frozenset({201}),
            denied=frozenset({403, 404}),
        ),
    ],
    roles.ANALYTICS_READ: [
        Guard("dashboard", get(lambda w: f"/deep_research/channel/{w.channel.slug}/dashboard")),
        Guard("dashboard CSV", get(lambda w: f"/deep_research/channel/{w.channel.slug}/dashboard.csv")),
        Guard(
            "dashboard CSV of gaps",
            get(lambda w: f"/deep_research/channel/{w.channel.slug}/dashboard.csv?table=topics"),
        ),
    ],
    # Whoever opens the dashboard without it reads the questions under a pseudonym per student.
    roles.STUDENTS_NAMED: [
        Guard(
            "students named on the dashboard",
            get(lambda w: f"/deep_research/channel/{w.channel.slug}/dashboard"),
            denied=frozenset({200, 404}),
            shows=lambda w: f"<td>{w.task.user.username}</td>",
        ),
    ],
    roles.STUDIES_READ: [
        admin_list("governance/study"),
        Guard(
            "admin study", get(lambda w: f"/admin/governance/study/{w.study.pk}/change/"), denied=ADMIN_DENIED
        ),
        Guard(
            "export screen",
            get(lambda w: f"/admin/governance/study/{w.study.pk}/export/"),
            denied=ADMIN_DENIED,
        ),
    ],
    roles.EXPORT_REQUEST: [
        # An empty request form: a holder is told what is missing (400), anyone else gets nothing.
        Guard(
            "file a request",
            post(lambda w: f"/admin/governance/study/{w.study.pk}/export/", {"action": "request"}),
            allowed=frozenset({400}),
            denied=ADMIN_DENIED,
        ),
        admin_list("governance/exportrequest"),
    ],
    roles.CATALOGUE_READ_STAFF_DOCUMENTS: [
        Guard("staff document", get(lambda w: f"/catalogue/documents/{w.documents['staff'].slug}/"))
    ],
    roles.CHANNELS_ADMINISTER: [
        Guard("admin new channel", get(lambda w: "/admin/channels_app/channel/add/"), denied=ADMIN_DENIED)
    ],
    roles.RESEARCH_CANCEL_ANY: [
        Guard("API cancel someone's research", _cancel, denied=frozenset({403, 404}))
    ],
    roles.RESEARCH_REPLAY: [
        Guard("replay", service(_replay), allowed=frozenset({400}), denied=frozenset({403}))
    ],
    roles.RESEARCH_AUDIT: [
        admin_list("research/researchmetrics"),
        admin_list("research/researchclaim"),
        admin_list("research/transcriptentry"),
        Guard(
            "metrics by day", get(lambda w: "/admin/research/researchmetrics/by-day/"), denied=ADMIN_DENIED
        ),
        Guard(
            "metrics dashboard",
            get(lambda w: "/admin/research/researchmetrics/dashboard/"),
            denied=ADMIN_DENIED,
        ),
    ],
    roles.RECORDS_MANAGE: [
        Guard(
            "delete a task",
            get(lambda w: f"/admin/research/researchtask/{w.task.pk}/delete/"),
            denied=ADMIN_DENIED,
        )
    ],
    roles.FAILURES_MANAGE: [
        admin_list("research/failurecase"),
        Guard("admin promote action", _admin_promote, denied=frozenset({403})),
    ],
    roles.SOURCES_MANAGE: [admin_list("research/sourcestat"), admin_list("research/sourcereport")],
    roles.COSTS_MANAGE: [
        Guard("cost dashboard", get(lambda w: "/admin/cost-dashboard/"), denied=ADMIN_DENIED),
        admin_list("quotas/usageentry"),
        admin_list("quotas/costreservation"),
        admin_list("quotas/costalert"),
    ],
    roles.COSTS_UNSHARED: [
        Guard("a call past the user's share", service(_over_the_share), denied=frozenset({429}))
    ],
    roles.CHATLOG_READ: [admin_list("channels_app/chatlog")],
    roles.RETRIEVAL_INSPECT: [
        admin_list("channels_app/materialchunk"),
        admin_list("channels_app/channeltermshare"),
    ],
    roles.NOTIFICATIONS_READ: [admin_list("research/notificationpreference")],
    roles.GOVERNANCE_MANAGE: [
        admin_list("governance/studyresearcher"),
        admin_list("channels_app/supertanda"),
        admin_list("governance/consentwithdrawal"),
        admin_list("governance/exportaudit"),
        Guard("admin new study", get(lambda w: "/admin/governance/study/add/"), denied=ADMIN_DENIED),
    ],
    roles.EXPORTS_DECIDE: [
        Guard(
            "decision page",
            get(lambda w: f"/admin/governance/exportrequest/{w.export_request.pk}/decide/"),
            denied=ADMIN_DENIED,
        )
    ],
}


def walk(client, w, permission: str, personas=PERSONAS) -> list[str]:
    """Every guard of `permission` asked by every persona; the answers the table does not expect."""
    wrong = []
    for guard in GUARDS[permission]:
        for persona in personas:
            user = w.users[persona]
            client.force_login(user)
            got = guard.outcome(guard.ask(client, w, user), w)
            expected = "allowed" if holds(persona, permission, anywhere=guard.anywhere) else "denied"
            if got != expected:
                wrong.append(f"{permission} / {guard.name} / {persona}: {got}, the table says {expected}")
    return wrong


def test_every_permission_guards_something_the_matrix_asks():
    assert set(GUARDS) == set(roles.PERMISSIONS)
    assert all(
        guard.allowed.isdisjoint(guard.denied) or guard.shows for gs in GUARDS.values() for guard in gs
    )


@pytest.mark.parametrize("permission", sorted(roles.PERMISSIONS))
def test_each_persona_gets_what_the_role_table_gives_it(client, world, permission):
    assert walk(client, world, permission) == []


def test_the_websocket_admits_whoever_may_read_the_research(transactional_db, client, world):
    """The socket's handshake, per persona: accepted for the author's readers
    (research.read_results in the task's channel), refused before accept for everyone else."""
    wrong = []
    for persona, user in world.users.items():
        accepted = _ws_accepts(world, user)
        if accepted != holds(persona, roles.RESEARCH_READ_RESULTS):
            wrong.append(f"WebSocket / {persona}: {'accepted' if accepted else 'refused'}")
    assert wrong == []


def test_the_urls_follow_the_table_when_it_changes(client, world, monkeypatch):
    """Give the TA every channel permission and take the content permissions from the Super TA
    with an NDA: every channel-scoped guard answers them as the changed table says."""
    channel_permissions = {name for name, p in roles.PERMISSIONS.items() if p.scope == roles.CHANNEL}
    flipped = dict(roles.ROLES)
    flipped[roles.TA] = roles.Role(roles.TA, "membership", roles.QUOTA_TA, frozenset(channel_permissions))
    flipped[roles.SUPER_TA_WITH_NDA] = roles.Role(
        roles.SUPER_TA_WITH_NDA, "membership+nda", roles.QUOTA_TA, roles.ROLES[roles.SUPER_TA].permissions
    )
    monkeypatch.setattr(roles, "ROLES", flipped)
    monkeypatch.setattr(
        roles,
        "_ROLES_WITH",
        {p: frozenset(n for n, r in flipped.items() if p in r.permissions) for p in roles.PERMISSIONS},
    )
    asked = {name: PERSONAS[name] for name in ("ta", "super_ta+nda")}
    assert holds("ta", roles.MEMBERS_MANAGE) and not holds("super_ta+nda", roles.RESEARCH_READ_RESULTS)
    wrong = [
        line for permission in sorted(channel_permissions) for line in walk(client, world, permission, asked)
    ]
    assert wrong == []


def test_a_super_ta_reads_content_only_with_the_nda_on_file_in_that_channel(client, world):
    """The NDA is per channel: one on file for another channel opens nothing here."""
    other = world.p.other_super_ta  # a Super TA with an NDA in course-b
    add_member(world.channel, other, Membership.Role.SUPER_TA)
    assert SuperTaNda.objects.filter(user=other).exclude(channel=world.channel).exists()
    client.force_login(other)
    assert client.get(T.format(world.task.task_uuid)).status_code == 404
