"""The pages students and teachers use in a channel: the chat page (ClassroomGPT and Deep
Research side by side) and the channel's settings. Outsiders get 404 everywhere."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from channels_app.access import can
from channels_app.channel_settings import DeepResearchSettingsForm
from channels_app.models import Channel, ChatLog
from channels_app.roles import ANALYTICS_READ, CHANNEL_CONFIGURE, CHANNEL_USE
from research.presentation import CONTEXT_LABELS
from research.selectors import get_visible_task, quota_view
from research.services import context, follow_up, judge
from uedu_dr.errors import ServiceError
from uedu_dr.ratelimits import enforce_rate

from .conversation import MAX_PINNED, BadCursor, Cursor, Turn, conversation, research_turn
from .services import AssistantUnavailable, send_chat_message
from .templatetags.chat_ui import BLOOM_POLLS


def _member_channel(request, slug: str) -> Channel:
    channel = get_object_or_404(Channel, slug=slug)
    if not can(request.user, CHANNEL_USE, channel):
        raise Http404  # a channel you are not in does not exist for you
    return channel


def _is_fetch(request) -> bool:
    return request.headers.get("X-Requested-With") == "fetch"


@login_required
def chat(request, slug):
    channel = _member_channel(request, slug)
    return _chat_page(request, channel)


def _chat_page(request, channel, *, error: str = "", draft: str = "", status: int = 200):
    page = conversation(request.user, channel)
    context = {
        # "Ask a follow-up" on a result page: the research the composer attaches to what is sent.
        "follow_up": follow_up.attachable(request.user, channel, request.GET.get("follow_up")),
        "channel": channel,
        "page": page,
        "can_manage": can(request.user, CHANNEL_CONFIGURE, channel),  # the settings link
        "can_read_results": can(request.user, ANALYTICS_READ, channel),  # the dashboard link
        "error": error,
        "draft": draft,
        "quota": quota_view(request.user) if channel.deep_research_enabled else None,
    }
    return render(request, "chat/chat.html", context, status=status)


@login_required
@require_GET
def older_turns(request, slug):
    """The page of turns before `before` (chat/_older_turns.html), which htmx puts in place of the
    "Load older" control: the turns, oldest first, under the control for the page before them.
    `skip` carries the running researches the page pinned, so that no turn shows twice."""
    channel = _member_channel(request, slug)  # the page's own rule: 404 for non-members
    try:
        before = Cursor.decode(request.GET.get("before", ""))
        skip = frozenset(uuid.UUID(value) for value in request.GET.get("skip", "").split(",") if value)
    except (BadCursor, ValueError):
        return render(request, "chat/_older_turns.html", {"error": True}, status=400)
    if len(skip) > MAX_PINNED:
        return render(request, "chat/_older_turns.html", {"error": True}, status=400)
    page = conversation(request.user, channel, before=before, skip=skip)
    context = {"channel": channel, "page": page, "skip": ",".join(sorted(str(value) for value in skip))}
    return render(request, "chat/_older_turns.html", context)


@login_required
@require_POST
def send(request, slug):
    """A ClassroomGPT message. Scripts get the new turn as an HTML fragment (the same template
    the page renders history with); without scripts the form posts here and comes back."""
    channel = _member_channel(request, slug)
    text = request.POST.get("message", "")
    try:
        # Each message costs one or two LLM calls: a per-user rate limit like the API's.
        enforce_rate(request, "classroomgpt.chat", settings.UEDU_CHAT_RATE, fail_closed=True)
        attached = follow_up.attachable(request.user, channel, request.POST.get("follow_up"))
        exchange = send_chat_message(user=request.user, channel=channel, message=text, follow_up_of=attached)
    except AssistantUnavailable as exc:
        if _is_fetch(request):
            return render(
                request, "chat/_turn.html", {"turn": Turn("chat", question=exc.request_log)}, status=503
            )
        messages.error(request, exc.message)
        return redirect(reverse("channel_chat", args=[channel.slug]) + "#composer")
    except ServiceError as exc:
        if _is_fetch(request):
            response = JsonResponse(exc.as_json(), status=exc.status)
        else:
            response = _chat_page(request, channel, error=exc.message, draft=text, status=exc.status)
        if exc.retry_after:  # the daily chat budget and the cost cap say when to come back
            response["Retry-After"] = str(exc.retry_after)
        return response
    turn = Turn("chat", question=exchange.request, answer=exchange.response)
    if _is_fetch(request):
        return render(request, "chat/_turn.html", {"turn": turn})
    return redirect(reverse("channel_chat", args=[channel.slug]) + "#composer")


def _advice(request, ask) -> HttpResponse:
    """Run one of the composer's advisers (metered like the API's, per-user rate limited); its
    refusal is the API's JSON error, which chat.js takes as "no advice"."""
    try:
        enforce_rate(request, "deep_research.judge", settings.UEDU_DR_RATE_JUDGE, fail_closed=True)
        return ask(request.POST.get("message", ""))
    except ServiceError as exc:
        return JsonResponse(exc.as_json(), status=exc.status)


@login_required
@require_POST
def suggestion(request, slug):
    """The auto-judge on the composer's message: the suggestion card's reasons when it suggests a
    research (chat/_suggestion_reasons.html), else 204 and chat.js sends the message as a chat."""
    channel = _member_channel(request, slug)

    def ask(question):
        verdict = judge.judge_question(question, channel, user=request.user)
        if not verdict.get("suggest"):
            return HttpResponse(status=204)
        return render(request, "chat/_suggestion_reasons.html", {"reasons": verdict["reasons"]})

    return _advice(request, ask)


@login_required
@require_POST
def clarify(request, slug):
    """Context alignment before a research: the fields the question leaves open, with suggested
    answers (chat/_clarify_fields.html), or 204 when nothing needs asking."""
    channel = _member_channel(request, slug)

    def ask(question):
        advice = context.check_context(question, channel, user=request.user)
        if not advice["needs_clarification"]:
            return HttpResponse(status=204)
        fields = [
            {"key": q["key"], "label": CONTEXT_LABELS.get(q["key"], q["key"]), "default": q["default"]}
            for q in advice["questions"]
        ]
        return render(request, "chat/_clarify_fields.html", {"fields": fields})

    return _advice(request, ask)


@login_required
@require_GET
def quota_fragment(request):
    """The composer's quota line (chat/_quota.html), asked for again after each start."""
    return render(request, "chat/_quota.html", {"quota": quota_view(request.user)})


@login_required
@require_GET
def bloom_level(request, pk):
    """The Bloom badge of one of your own questions (chat/_bloom.html): the badge once the
    classifier has filled the level in, else the same pending slot, which asks again."""
    row = get_object_or_404(ChatLog, pk=pk, user=request.user, kind=ChatLog.Kind.REQUEST)
    try:
        polls = max(0, int(request.GET.get("polls", "0")))
    except ValueError:
        polls = BLOOM_POLLS  # a mangled count stops the asking rather than restarting it
    return render(request, "chat/_bloom.html", {"row": row, "polls": polls})


@login_required
def channel_settings(request, slug):
    channel = get_object_or_404(Channel, slug=slug)
    if not can(request.user, CHANNEL_CONFIGURE, channel):
        raise Http404  # students and strangers never learn the page exists
    # Bound on every POST: an empty or non-form body is an invalid submission (400), not a fresh form.
    form = DeepResearchSettingsForm(request.POST if request.method == "POST" else None, instance=channel)
    if request.method == "POST":
        if form.is_valid():
            form.save()
            messages.success(request, _("Settings saved."))
            return redirect("channel_settings", slug=channel.slug)
    status = 400 if form.errors else 200
    context = {
        "channel": channel,
        "form": form,
        "can_read_results": can(request.user, ANALYTICS_READ, channel),
    }
    return render(request, "channels_app/settings.html", context, status=status)


@login_required
@require_GET
def turn_fragment(request, task_uuid):
    """A research's question bubble and its card (or answer): appended after a start."""
    try:
        task = get_visible_task(request.user, task_uuid)
    except ServiceError:
        raise Http404 from None
    return render(request, "chat/_turn.html", {"turn": research_turn(task)})
