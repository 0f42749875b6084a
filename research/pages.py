"""The research pages: the shareable result page, the Markdown download, the user's history,
and the fragments the chat page swaps in (a research's turn, its outcome). Every task lookup
goes through the visibility rule; whoever may not see a task gets 404."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from channels_app.conversation import research_turn
from research.models import ResearchTask
from research.presentation import answer_markdown
from research.selectors import get_visible_task, user_tasks
from research.services import analytics
from uedu_dr.errors import ServiceError


def _task_or_404(request, task_uuid) -> ResearchTask:
    try:
        return get_visible_task(request.user, task_uuid)
    except ServiceError:
        raise Http404 from None


@login_required
@require_GET
def result(request, task_uuid):
    task = _task_or_404(request, task_uuid)
    analytics.record_result_view(task, request.user)
    steps = list(task.steps.order_by("index"))
    return render(request, "research/result.html", {"task": task, "steps": steps, "plan": task.plan_json or {}})


@login_required
@require_GET
def download(request, task_uuid):
    task = _task_or_404(request, task_uuid)
    if task.status != ResearchTask.Status.COMPLETED:
        raise Http404
    text = answer_markdown(task, request.build_absolute_uri(task_url(task)))
    response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="deep-research-{task.task_uuid.hex[:8]}.md"'
    return response


def task_url(task: ResearchTask) -> str:
    return reverse("research_result", args=[task.task_uuid])


@login_required
@require_GET
def turn_fragment(request, task_uuid):
    """A research's question bubble and its card (or answer): appended after a start."""
    task = _task_or_404(request, task_uuid)
    return render(request, "channels_app/_turn.html", {"turn": research_turn(task)})


@login_required
@require_GET
def outcome_fragment(request, task_uuid):
    """What replaces the progress card: the answer bubble, or a calm message if it did not finish."""
    task = _task_or_404(request, task_uuid)
    return render(request, "research/_outcome.html", {"task": task})


class HistoryFilter(forms.Form):
    PAGE_SIZES = (10, 20, 50)

    status = forms.ChoiceField(
        label=_("Status"), required=False, choices=[("", _("All"))] + list(ResearchTask.Status.choices)
    )
    per_page = forms.TypedChoiceField(
        label=_("Per page"), required=False, coerce=int, empty_value=20,
        choices=[(n, str(n)) for n in PAGE_SIZES],
    )


@login_required
@require_GET
def my_history(request):
    form = HistoryFilter(request.GET or None)
    status, per_page = "", 20
    if form.is_bound and form.is_valid():
        status = form.cleaned_data["status"]
        per_page = form.cleaned_data["per_page"] or 20
    tasks = user_tasks(request.user, status=status or None, limit=None)
    page = Paginator(tasks, per_page).get_page(request.GET.get("page"))
    query = {"status": status, "per_page": per_page}
    return render(request, "research/my.html", {"form": form, "page": page, "query": query})
