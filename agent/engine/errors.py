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


class OutOfBudget(PhaseFailed):
    """A call of a finishing phase (claims, verification, writing) did not fit what is left of the
    research's time or token budget, grace included: the loop finishes without it, with what it
    has, and the report says so. `reason` is the limit: max_seconds or max_tokens."""

    def __init__(self, phase: str, cause: Exception | str, reason: str):
        self.reason = reason
        super().__init__(phase, cause)
