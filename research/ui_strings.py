"""Texts the browser scripts show, translated on the server (the scripts carry no UI text).

`%(name)s` placeholders are filled in by the script."""

from __future__ import annotations

from django.utils.translation import gettext as _


def js_strings() -> dict:
    return {
        "phase": {
            "queued": _("Waiting to start…"),
            "planning": _("Planning the research…"),
            "researching": _("Gathering evidence (round %(round)s)…"),
            "calling": _("Calling tools…"),
            "reflecting": _("Checking whether the evidence is enough…"),
            # After gathering: the AI points at the sources' passages for each sub-question, code
            # reads their figures and compares the sources, the AI interprets the facts, code
            # assembles the report (agent/engine/events.py: claims_extracted, claims_verified,
            # verification_done).
            "selecting": _("Choosing the sources' passages for each sub-question…"),
            "comparing": _("Reading the figures and comparing the sources…"),
            "interpreting": _("Weighing the evidence; the AI interprets the facts…"),
            "finishing": _("Assembling the report…"),
            "completed": _("Done"),
            "failed": _("Stopped"),
            "cancelled": _("Cancelled"),
            "awaiting_review": _("Waiting for your review of the plan…"),
            "awaiting_review_other": _("Waiting for the student to review the plan…"),
            "continuing": _("Continuing the research…"),
        },
        # A name for every event type (agent.engine.events.EVENTS; checked by
        # tests/research/test_event_registry.py): the progress card's phase line carries the last
        # event's name as its tooltip.
        "event": {
            "connected": _("Connected"),
            "heartbeat": _("Still working"),
            "task_created": _("Research created"),
            "status_change": _("Status changed"),
            "plan_complete": _("Plan ready"),
            "action_thinking": _("Choosing the next tools"),
            "action_dispatch": _("Tools called"),
            "action_complete": _("Tool call finished"),
            "reflection_done": _("Evidence reviewed"),
            "claims_extracted": _("Passages selected from the sources"),
            "claims_verified": _("Figures compared, conflicts found"),
            "verification_done": _("Report assembled"),
            "limit_hit": _("Limit reached"),
            "completed": _("Completed"),
            "failed": _("Failed"),
            "cancelled": _("Cancelled"),
        },
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
