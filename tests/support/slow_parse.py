"""A stand-in parser for the bounded child (uedu_dr.bounded_process): it takes the time it is told.
Importable without Django, as the spawned child imports it."""

from __future__ import annotations

import time


def take(seconds: float) -> str:
    time.sleep(seconds)
    return "read"
