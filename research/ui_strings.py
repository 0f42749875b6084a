"""Texts the browser scripts show, translated on the server (the scripts carry no UI text).

`%(name)s` placeholders are filled in by the script. What the progress card shows of each event
type (its name, and the phase it moves the card to) is declared on the event
(agent/engine/events.py) and only translated here."""

from __future__ import annotations

from django.utils.translation import gettext as _

from agent.engine.events import EVENTS


def js_strings() -> dict:
    return {
        "phase": {
            **_event_phases(),
            "queued": _("Waiting to start…"),
            "planning": _("Planning the research…"),
            "researching": _("Gathering evidence (round %(round)s)…"),
            "calling": _("Calling tools…"),
            "reflecting": _("Checking whether the evidence is enough…"),
            # After gathering, the AI points at the sources' passages for each sub-question; the
            # phases after it are the finishing events' own (agent/engine/events.py).
            "selecting": _("Choosing the sources' passages for each sub-question…"),
            "completed": _("Done"),
            "failed": _("Stopped"),
            "cancelled": _("Cancelled"),
            "awaiting_review": _("Waiting for your review of the plan…"),
            "awaiting_review_other": _("Waiting for the student to review the plan…"),
            "continuing": _("Continuing the research…"),
        },
        # Every event type's name: the card's phase line carries the last event's as its tooltip.
        "event": {name: _(cls.label) for name, cls in EVENTS.items()},
        # The phase an event moves the card to, when the card's reducer does not handle it in code.
        "event_phase": {name: cls.phase for name, cls in EVENTS.items() if cls.phase},
        "complexity": {
            "simple": _("simple"),
            "moderate": _("moderate"),
            "complex": _("complex"),
        },
        "review": {
            "intro_required": _(
                "The research waits for you: edit, remove or add sub-questions (at most %(max)s), then continue."
            ),
            "intro_optional": _(
                "You may edit, remove or add sub-questions (at most %(max)s); otherwise the research continues as proposed."
            ),
            "intro_other": _("The student who started this research may edit its plan now."),
            "countdown": _("Continues as proposed in %(time)s"),
            "countdown_over": _("Time is up: continuing as proposed…"),
            "sub_question": _("Sub-question %(n)s"),
            "remove": _("Remove"),
            "limit": _("A plan has at most %(max)s sub-questions."),
            "empty": _("Keep at least one sub-question."),
            "edited": _("Researching the edited plan."),
            "as_proposed": _("Researching the plan as proposed."),
            "timed_out": _("Nobody reviewed the plan in time; researching it as proposed."),
        },
        "step_status": {
            "running": _("running"),
            "ok": _("done"),
            "error": _("error"),
            "cancelled": _("cancelled"),
            "failed": _("failed"),
        },
        "limit_reason": {
            "max_steps": _("the step limit"),
            "max_tokens": _("the token limit"),
            "max_seconds": _("the time limit"),
            "tool_budget": _("the tool-call budget"),
        },
        # The browser notification when a research ends while the student is in another tab.
        "notify": {
            "completed": _("Your Deep Research is ready"),
            "failed": _("Your Deep Research stopped"),
            "cancelled": _("Your Deep Research was cancelled"),
        },
        "limit_hit": _("Reached %(reason)s: the answer is written from what was found so far."),
        "reconnecting": _("Connection lost; reconnecting…"),
        "cancelling": _("Cancelling…"),
        "cancel_failed": _("Could not cancel: %(message)s"),
        "network_error": _("Could not reach the server. Your text is still in the box; please try again."),
        "thinking": _("The assistant is answering…"),
        "starting": _("Starting Deep Research…"),
        "judging": _("Checking whether this question suits Deep Research…"),
        "checking_context": _("Checking whether the question needs a detail or two…"),
        "placeholder_chat": _("Ask a question about the course…"),
        "placeholder_research": _("Ask Deep Research a complex question…"),
        "dr_on": _("Deep Research on: your next message starts a research"),
        "copied": _("Link copied."),
        "copy_failed": _("Copy failed; copy the address from the address bar."),
        "load_failed": _("Could not load the result; reload the page to see it."),
    }


def _event_phases() -> dict[str, str]:
    """The phases whose words an event declares (the msgids are marked in the engine)."""
    return {cls.phase: _(cls.phase_text) for cls in EVENTS.values() if cls.phase and cls.phase_text}
