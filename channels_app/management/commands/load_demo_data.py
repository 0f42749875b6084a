"""Load the demo users and channels (idempotent: run it as often as you like).

Other apps add their own demo data (materials, catalogue) by giving their AppConfig a
`load_demo_data(stdout)` method; this command calls each one after the users and channels."""

from __future__ import annotations

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from channels_app.demo_accounts import DEMO_USERS, demo_password
from channels_app.models import Channel, Membership


class Command(BaseCommand):
    help = "Create or refresh the demo users, channels and memberships (refuses to run with DEBUG off unless --force)."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="run even though DEBUG is off")

    def handle(self, *args, force: bool = False, **options):
        if not settings.DEBUG and not force:
            raise CommandError(
                "Refusing to load demo users with known passwords while DEBUG is off; pass --force."
            )
        with transaction.atomic():
            users = self._users()
            self._channels(users)
            for config in apps.get_app_configs():
                if hasattr(config, "load_demo_data"):
                    config.load_demo_data(self.stdout)
        self.stdout.write(
            self.style.SUCCESS(f"Demo data ready: {', '.join(DEMO_USERS)} (password from DEMO_PASSWORD).")
        )

    def _users(self) -> dict:
        User = get_user_model()
        password = demo_password()
        users = {}
        for username, (is_superuser, is_staff, display_name) in DEMO_USERS.items():
            first, _, last = display_name.partition(" ")
            user, _ = User.objects.update_or_create(
                username=username,
                defaults={
                    "is_superuser": is_superuser,
                    "is_staff": is_staff,
                    "first_name": first[:150],
                    "last_name": last[:150],
                    "email": f"{username}@demo.uedu.example",
                },
            )
            user.set_password(password)
            user.save(update_fields=["password"])
            users[username] = user
        return users

    def _channels(self, users: dict) -> None:
        course, _ = Channel.objects.update_or_create(
            slug="demo-course",
            defaults={
                "name": "教育資料科學導論 Introduction to Educational Data Science",
                "course_code": "EDS101",
                "owner": users["teacher"],
                "description": "Demo channel: how learning data is collected, analysed and used responsibly.",
                "syllabus": "Week 1 學習分析導論; Week 2 Bloom 認知層次; Week 3 資料倫理與 IRB; Week 4 檢索增強生成 RAG",
                "deep_research_enabled": True,
                "auto_suggest_threshold": 0.7,
            },
        )
        off, _ = Channel.objects.update_or_create(
            slug="demo-course-off",
            defaults={
                "name": "微積分（一） Calculus I",
                "course_code": "MATH101",
                "owner": users["teacher"],
                "description": "Demo channel with Deep Research switched off.",
                "deep_research_enabled": False,
            },
        )
        roles = {
            "teacher": Membership.Role.TEACHER,
            "ta": Membership.Role.TA,
            "superta": Membership.Role.SUPER_TA,
            "student1": Membership.Role.STUDENT,
            "student2": Membership.Role.STUDENT,
        }
        for username, role in roles.items():
            Membership.objects.update_or_create(user=users[username], channel=course, defaults={"role": role})
        for username in ("teacher", "student1", "student2"):
            Membership.objects.update_or_create(
                user=users[username], channel=off, defaults={"role": roles[username]}
            )
