"""The demo log-ins, kept free of Django imports so the launcher can print them before setup."""

from __future__ import annotations

import os

DEFAULT_DEMO_PASSWORD = "uedu-demo-2026"

# username → (is_superuser, is_staff, display name)
DEMO_USERS = {
    "admin": (True, True, "Platform Admin"),
    "teacher": (False, True, "張老師 Teacher Chang"),
    "ta": (False, True, "林助教 TA Lin"),
    "superta": (False, True, "王超級助教 Super TA Wang"),
    "student1": (False, False, "陳同學 Student Chen"),
    "student2": (False, False, "李同學 Student Lee"),
    "researcher": (False, True, "黃研究員 Researcher Huang"),
}


def demo_password() -> str:
    return os.environ.get("DEMO_PASSWORD") or DEFAULT_DEMO_PASSWORD
