"""The research pages: the shareable result page, the Markdown download, the user's history,
and the fragments the chat page swaps in (a research's turn, its outcome). Every task lookup
goes through the visibility rule; whoever may not see a task gets 404."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agent.engine import vocabulary as V
from channels_app.access import can
from channels_app.roles import CONFLICTS_DECIDE, RESEARCH_REVIEW
from research import selectors
from research.forms import ReviewNoteForm, ReviewQueueFilter
from research.models import AnswerFeedback, ConflictDecision, ResearchTask
from research.presentation import (
    answer_view,
    feedback_box,
    ledger_view,
    plan_view,
    task_charts,
    task_markdown,
    task_report,
)
from research.selectors import get_visible_task, question_row, user_tasks
from research.services import analytics, conflict_decisions, feedback, notifications, retry, review
from research.vocabulary_labels import text as label
from uedu_dr.error_pages import refusal
from uedu_dr.errors import ServiceError
from uedu_dr.ratelimits import enforce_rate


def _task_or_404(request, task_uuid) -> ResearchTask:
    try:
        return get_visible_task(request.user, task_uuid)
    except ServiceError:
        raise Http404 from None


def _reviewers_only(request) -> None:
    if not review.reviews_any_channel(request.user):
        raise Http404  # like channel settings: pages you have no part in do not exist for you


@login_required
@require_GET
def result(request, task_uuid):
    task = _task_or_404(request, task_uuid)
    analytics.record_result_view(task, request.user, via_share=request.GET.get("s"))
    return _result_page(request, task)


def _result_page(
    request,
    task: ResearchTask,
    *,
    review_form: ReviewNoteForm | None = None,
    status: int = 200,
):
    reviewer = review.can_review(request.user, task)
    decider = can(request.user, CONFLICTS_DECIDE, task.channel_id)
    if reviewer and review_form is None:
        review_form = ReviewNoteForm(initial={"note": task.review_note})
    report = task_report(task) if task.status == ResearchTask.Status.COMPLETED else None
    answer = answer_view(task, request.user, report) if report is not None else None
    decided = [c for c in answer.report.conflicts if c.decision] if answer and answer.report else []
    decision_conflicts = (
        [
            c
            for c in (answer.report.conflicts if answer and answer.report else [])
            if c.state_code != "resolved"
        ]
        if decider
        else []
    )
    context = {
        "task": task,
        # the page (not the chat bubble) adds the charts of verified figures and the print references
        "result_page": True,
        "site_origin": f"{request.scheme}://{request.get_host()}",
        "answer": answer,
        "charts": task_charts(task, report) if report is not None else [],
        # a reviewer's decision closes the "nobody has reviewed it" notice
        "decided_conflicts": decided,
        "limit_label": label(V.LIMITS, task.limit_hit) if task.limit_hit else "",
        "steps": list(task.steps.order_by("index")),
        "plan": plan_view(task, report),
        "ledger": ledger_view(task),
        "can_review": reviewer,
        "question_row": question_row(task.pk),
        "review_form": review_form if reviewer else None,
        "decision_conflicts": decision_conflicts,
        # A decision the service refused, back from decide_conflict with what was entered.
        "decision_form": _refused_decision(request, task) if reviewer else None,
        "decision_reason_max": conflict_decisions.MAX_REASON,
        "feedback_rows": list(task.feedback.select_related("user").order_by("-created_at"))
        if reviewer
        else [],
        # The owner copies the share link; the teacher may flag the result as misused.
        "share_url": share_url(request, task)
        if task.user_id == request.user.pk and not task.is_replay
        else "",
        "can_flag_misuse": task.user_id != request.user.pk
        and can(request.user, RESEARCH_REVIEW, task.channel_id),
    }
    return render(request, "research/result.html", context, status=status)


@login_required
@require_POST
def review_note(request, task_uuid):
    """The channel's teacher or a Super TA writes (or rewrites) the reviewer note of a research."""
    task = _task_or_404(request, task_uuid)
    if not review.can_review(request.user, task):
        raise PermissionDenied  # may see the research, may not review it
    form = ReviewNoteForm(request.POST)
    if form.is_valid():
        try:
            review.add_review_note(task=task, user=request.user, note=form.cleaned_data["note"])
        except ServiceError as exc:
            form.add_error("note", exc.message)
        else:
            messages.success(request, gettext("Reviewer note saved."))
            return redirect(reverse("research_result", args=[task.task_uuid]) + "#review")
    return _result_page(request, task, review_form=form, status=400)


# Where a refused decision waits for the result page it returns to, and which field each of the
# service's refusals is about ("" for the form as a whole: an unknown conflict).
_DECISION_FORM = "research.refused_decision"
_DECISION_FIELDS = {
    "empty_reason": "reason",
    "reason_too_long": "reason",
    "bad_side": "choice",
    "bad_decision": "choice",
}


def _refused_decision(request, task: ResearchTask) -> dict | None:
    state = request.session.pop(_DECISION_FORM, None)
    return state if state and state.get("task") == str(task.task_uuid) else None


@login_required
@require_POST
def decide_conflict(request, task_uuid):
    """The channel's teacher or a Super TA decides one unresolved conflict: a side (`choice` is its
    index) or `unsettleable`, with a reason."""
    task = _task_or_404(request, task_uuid)
    if not can(request.user, CONFLICTS_DECIDE, task.channel_id):
        raise PermissionDenied  # may see the research, may not decide its conflicts
    choice = request.POST.get("choice", "")
    if choice == ConflictDecision.Decision.UNSETTLEABLE:
        decision, side = ConflictDecision.Decision.UNSETTLEABLE, None
    else:
        decision, side = ConflictDecision.Decision.SIDE, int(choice) if choice.isdigit() else None
    try:
        conflict_decisions.decide(
            task=task,
            user=request.user,
            key=request.POST.get("conflict_key", ""),
            decision=decision,
            side=side,
            reason=request.POST.get("reason", ""),
        )
    except ServiceError as exc:
        # Back to the result page (Post/Redirect/Get: its own address, which a reload does not
        # post again), with the refusal beside the field it is about and what was entered.
        key = request.POST.get("conflict_key", "")
        field = _DECISION_FIELDS.get(exc.code, "")
        request.session[_DECISION_FORM] = {
            "task": str(task.task_uuid),
            "key": key,
            "field": field,
            "message": str(exc.message),
            "reason": request.POST.get("reason", "")[: conflict_decisions.MAX_REASON * 2],
        }
        anchor = f"#decide-{key[:16]}" if field else "#decide-title"
        return redirect(reverse("research_result", args=[task.task_uuid]) + anchor)
    messages.success(request, gettext("Decision saved."))
    return redirect(reverse("research_result", args=[task.task_uuid]) + "#conflicts")


@login_required
@require_GET
def review_queue(request):
    """Researches with unresolved conflicts in the channels the user reviews, newest first."""
    _reviewers_only(request)
    form = ReviewQueueFilter(request.GET or None)
    include_reviewed = form.is_valid() and form.cleaned_data["reviewed"]
    tasks = review.review_queue(request.user, include_reviewed=include_reviewed)
    page = Paginator(tasks, 25).get_page(request.GET.get("page"))
    return render(
        request,
        "research/review_queue.html",
        {
            "form": form,
            "page": page,
            "include_reviewed": include_reviewed,
            "dashboard_channels": selectors.dashboard_channels(request.user),
        },
    )


@login_required
@require_GET
def feedback_list(request):
    """Readers' feedback on answers in the channels the user teaches or reviews as Super TA."""
    _reviewers_only(request)
    rows = (
        feedback.feedback_for_reviewer(request.user)
        .select_related("task__user")
        .order_by("-created_at", "-pk")
    )
    page = Paginator(rows, 50).get_page(request.GET.get("page"))
    return render(request, "research/feedback.html", {"page": page})


@login_required
@require_GET
def download(request, task_uuid):
    task = _task_or_404(request, task_uuid)
    if task.status != ResearchTask.Status.COMPLETED:
        raise Http404
    text = task_markdown(
        task,
        page_url=request.build_absolute_uri(task_url(task)),
        base_url=f"{request.scheme}://{request.get_host()}",
    )
    response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="deep-research-{task.task_uuid.hex[:8]}.md"'
    return response


def share_url(request, task: ResearchTask) -> str:
    return request.build_absolute_uri(task_url(task) + "?" + urlencode({"s": analytics.share_token(task)}))


@login_required
@require_POST
def misuse_flag(request, task_uuid):
    """The channel's teacher flags (or clears) a result as misused (a learning-analytics signal)."""
    task = _task_or_404(request, task_uuid)
    try:
        analytics.flag_misuse(
            task, request.user, note=request.POST.get("note", ""), flagged=request.POST.get("flagged") != "0"
        )
    except ServiceError as exc:
        if exc.status == 403:
            raise PermissionDenied from None
        messages.error(request, exc.message)
    else:
        messages.success(request, gettext("Misuse flag saved."))
    return redirect(reverse("research_result", args=[task.task_uuid]) + "#misuse")


@login_required
@require_POST
def retry_with_web(request, task_uuid):
    """A nothing-verified research that ran without the web starts again with the web on
    (services.retry checks who may and when); the student follows the new one in the chat."""
    task = _task_or_404(request, task_uuid)
    try:
        enforce_rate(request, "deep_research.start", settings.UEDU_DR_RATE_START, fail_closed=True)
        new = retry.retry_with_web(user=request.user, task=task)
    except ServiceError as exc:
        return refusal(request, exc.status, exc.code, str(exc.message))
    messages.success(request, gettext("A new research with the web on has started."))
    return redirect(reverse("channel_chat", args=[new.channel.slug]))


def task_url(task: ResearchTask) -> str:
    return reverse("research_result", args=[task.task_uuid])


@login_required
@require_GET
def outcome_fragment(request, task_uuid):
    """What replaces the progress card: the answer bubble, or a calm message if it did not finish."""
    task = _task_or_404(request, task_uuid)
    return render(request, "research/_outcome.html", {"task": task})


# The answer's feedback and "I understand" as htmx fragments: the same services (and rate limit)
# as the API's feedback and acknowledge endpoints, which stay for API clients.


def _feedback(request, task: ResearchTask, **fields) -> None:
    enforce_rate(request, "deep_research.feedback", settings.UEDU_DR_RATE_FEEDBACK)
    feedback.give_feedback(task=task, user=request.user, **fields)


@login_required
@require_http_methods(["GET", "POST"])
def feedback_box_fragment(request, task_uuid):
    """The answer's feedback box (research/_feedback_box.html). GET opens one of its forms
    (?form=not_useful|report) or closes it; POST records "useful", or the open form's rating or
    report, and shows the box in its new state, or the form again with the reason it was refused."""
    task = _task_or_404(request, task_uuid)
    if request.method == "GET":
        return render(
            request,
            "research/_feedback_box.html",
            {"box": feedback_box(task, request.user, form=request.GET.get("form", ""))},
        )
    form, reason, note = (
        request.POST.get("form", ""),
        request.POST.get("reason", ""),
        request.POST.get("note", ""),
    )
    useful = True if request.POST.get("useful") == "true" else False if form == "not_useful" else None
    try:
        _feedback(request, task, useful=useful, reason=reason, note=note)
    except ServiceError as exc:
        box = feedback_box(task, request.user, form=form, reason=reason, note=note, message=exc.message)
        return render(request, "research/_feedback_box.html", {"box": box}, status=exc.status)
    box = feedback_box(task, request.user, message=gettext("Thank you for your feedback."))
    return render(request, "research/_feedback_box.html", {"box": box})


@login_required
@require_POST
def citation_report_fragment(request, task_uuid):
    """ "This source does not say this" for one citation: the reported mark, or the button again
    with the reason it was refused (research/_citation_report.html)."""
    task = _task_or_404(request, task_uuid)
    raw = request.POST.get("citation_number", "")
    number = int(raw) if raw.isdigit() else None  # none: the service asks for the citation
    context = {"task": task, "number": number}
    try:
        _feedback(request, task, reason=AnswerFeedback.Reason.SOURCE_DOES_NOT_SAY, citation_number=number)
    except ServiceError as exc:
        return render(
            request, "research/_citation_report.html", {**context, "error": exc.message}, status=exc.status
        )
    return render(request, "research/_citation_report.html", {**context, "reported": True})


@login_required
@require_POST
def acknowledge_fragment(request, task_uuid):
    """The owner's "I understand" under the answer's disclaimer: the acknowledged mark, or the
    button again with the reason it was refused as its title (research/_acknowledge.html)."""
    task = _task_or_404(request, task_uuid)
    try:
        task = analytics.acknowledge_disclaimer(task, request.user)
    except ServiceError as exc:
        return render(
            request, "research/_acknowledge.html", {"task": task, "error": exc.message}, status=exc.status
        )
    return render(request, "research/_acknowledge.html", {"task": task})


class HistoryFilter(forms.Form):
    PAGE_SIZES = (10, 20, 50)

    status = forms.ChoiceField(
        label=_("Status"), required=False, choices=[("", _("All"))] + list(ResearchTask.Status.choices)
    )
    per_page = forms.TypedChoiceField(
        label=_("Per page"),
        required=False,
        coerce=int,
        empty_value=20,
        choices=[(n, str(n)) for n in PAGE_SIZES],
    )
    q = forms.CharField(label=_("Question contains"), required=False, max_length=200, strip=True)


@login_required
@require_GET
def my_history(request):
    form = HistoryFilter(request.GET or None)
    status, per_page, search = "", 20, ""
    if form.is_bound and form.is_valid():
        status = form.cleaned_data["status"]
        per_page = form.cleaned_data["per_page"] or 20
        search = form.cleaned_data["q"]
    tasks = user_tasks(request.user, status=status or None, search=search, limit=None)
    page = Paginator(tasks, per_page).get_page(request.GET.get("page"))
    query = urlencode({"status": status, "per_page": per_page, "q": search})
    return render(request, "research/my.html", {"form": form, "page": page, "query": query, "search": search})


class NotificationForm(forms.Form):
    email_when_done = forms.BooleanField(label=_("E-mail me when a research finishes"), required=False)


@login_required
def notification_settings(request):
    """The user's own choice of the e-mail at the end of a research (off by default)."""
    if request.method == "POST":
        form = NotificationForm(request.POST)
        if form.is_valid():
            notifications.set_email_when_done(request.user, form.cleaned_data["email_when_done"])
            messages.success(request, gettext("Notification settings saved."))
            return redirect("research_notifications")
    else:
        form = NotificationForm(initial={"email_when_done": notifications.email_when_done(request.user)})
    return render(request, "research/notifications.html", {"form": form})
