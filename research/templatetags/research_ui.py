"""Template helpers of the research pages and the chat page's research turns."""

from __future__ import annotations

import json

from django import template
from django.utils.html import format_html, json_script
from django.utils.translation import gettext

from research import presentation, search_languages
from research.rendering import render_markdown
from research.report_wording import MODEL_LABEL
from research.services import review
from research.ui_strings import js_strings

register = template.Library()


@register.simple_tag(takes_context=True)
def answer_view(context, task):
    """The answer's view: the one the page computed for this task (the result page builds it
    once, with its charts), else built here (the chat's turns)."""
    given = context.get("answer")
    if isinstance(given, presentation.AnswerView) and given.task.pk == task.pk:
        return given
    return presentation.answer_view(task, context["request"].user)


@register.simple_tag
def model_label(kind=""):
    """The visible label of a block the model wrote (inside its data-by="model" element)."""
    words = str(MODEL_LABEL) + (f" · {kind}" if kind else "")
    return format_html('<span class="by-model-label">{}</span>', words)


@register.simple_tag(takes_context=True)
def feedback_box(context, task):
    """The answer's feedback box in the reader's state (what they already said), its forms closed."""
    return presentation.feedback_box(task, context["request"].user)


@register.simple_tag
def progress_limits():
    return presentation.progress_limits()


@register.simple_tag
def ui_strings():
    """The translated texts the page's scripts show, as a JSON data block (not executable)."""
    return json_script(js_strings(), "ui-strings")


def seconds_text(seconds: float) -> str:
    """A length of time as a reader wants it: tenths under ten seconds (a research over a fast
    model takes less than one, which a whole number showed as "0 s"), whole seconds under a
    minute, then minutes and seconds."""
    if seconds < 10:
        return gettext("%(s)s s") % {"s": f"{seconds:.1f}"}
    if seconds < 60:
        return gettext("%(s)s s") % {"s": round(seconds)}
    minutes, rest = divmod(round(seconds), 60)
    return gettext("%(m)s min %(s)s s") % {"m": minutes, "s": f"{rest:02d}"}


@register.simple_tag
def duration_text(task) -> str:
    """How long the student waited from the question to the outcome, and, when the queue or a
    plan review made that noticeably longer, how long the research itself worked ("" while it
    has not finished)."""
    if task.finished_at is None:
        return ""
    waited = max(0.0, (task.finished_at - task.created_at).total_seconds())
    worked = task.duration_seconds
    # Rows written by hand (imports, fixtures) may have finished "before" they were asked.
    if worked is None or waited <= worked or waited - worked < max(2.0, 0.1 * waited):
        return seconds_text(worked if worked is not None else waited)
    return gettext("%(waited)s (researching: %(worked)s)") % {
        "waited": seconds_text(waited),
        "worked": seconds_text(worked),
    }


@register.simple_tag
def step_queries(step):
    return search_languages.step_queries(step)


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


@register.filter
def markdown(text):
    """A model's Markdown as sanitised HTML (ClassroomGPT replies; answers go through answer_view)."""
    return render_markdown(text)


@register.filter
def citation_anchor(task) -> str:
    """Prefix of a task's citation ids in its answer (append "-N")."""
    return presentation.citation_anchor(task)


@register.simple_tag(takes_context=True)
def is_reviewer(context) -> bool:
    """Whether the navigation offers the review queue and the feedback page (cached per request)."""
    request = context.get("request")
    if request is None:
        return False
    if not hasattr(request, "_uedu_is_reviewer"):
        request._uedu_is_reviewer = review.reviews_any_channel(request.user)
    return request._uedu_is_reviewer
