"""Demo governance data: the platform's IRB study over the demo course, with the demo researcher
(agreement signed) and the demo Super TA's NDA, so every demo role has a working admin."""

from __future__ import annotations

from datetime import date, timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from channels_app.models import Channel, SuperTaNda

from .models import Study, StudyResearcher

DEMO_PROTOCOL = "NTU-REC 202507EM058"


def load_demo_study(stdout) -> None:
    users = {u.username: u for u in get_user_model().objects.filter(username__in=["researcher", "superta"])}
    course = Channel.objects.filter(slug="demo-course").first()
    if course is None or "researcher" not in users:
        return
    study, _ = Study.objects.update_or_create(
        protocol_number=DEMO_PROTOCOL,
        defaults={
            "title": "Uedu Deep Research 學習歷程分析 (Educational Omics)",
            "approved_from": date(2025, 8, 1),
            # A demo that keeps working whenever it is run: approved until a year from today.
            "approved_to": max(date(2027, 7, 31), timezone.localdate() + timedelta(days=365)),
            "status": Study.Status.ACTIVE,
        },
    )
    study.channels.add(course)
    StudyResearcher.objects.update_or_create(
        study=study, user=users["researcher"], defaults={"agreement_signed_on": date(2025, 9, 1)}
    )
    if "superta" in users:
        SuperTaNda.objects.update_or_create(
            user=users["superta"], channel=course, defaults={"signed_on": date(2025, 9, 1)}
        )
    stdout.write(
        f"Demo study {DEMO_PROTOCOL}: researcher 'researcher' (agreement signed), channel demo-course."
    )
