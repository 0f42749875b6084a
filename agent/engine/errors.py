"""How a phase of the loop ends early: cancelled, failed, or at a limit."""

from __future__ import annotations


class Cancelled(Exception):
    """The task's cancel flag was set: stop at this check, keep what was done."""


class PhaseFailed(Exception):
    """A phase produced nothing usable after its bounded retry."""

    def __init__(self, phase: str, cause: Exception | str):
        self.phase, self.cause = phase, cause
        super().__init__(f"{phase} failed: {cause}")


class LimitReached(Exception):
    """A step, token, time or tool-call limit: gathering stops, an answer is still written."""

    def __init__(self, reason: str, value, limit):
        self.reason, self.value, self.limit = reason, value, limit
        super().__init__(reason)
