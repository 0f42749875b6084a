"""The student's own consent choice (posted from their history page)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from channels_app.access import can
from channels_app.models import Channel
from channels_app.roles import CONSENT_CHOOSE

from . import consent


@login_required
@require_POST
def consent_choice(request):
    choice = request.POST.get("choice")
    if choice not in ("withdraw", "rejoin"):
        return HttpResponseBadRequest(gettext("Choose to withdraw or to re-join."))
    slug = request.POST.get("channel") or ""
    channel = None
    if slug:
        # A student of the channel (consent.choose), or a former one: whoever has written there
        # may still withdraw their data.
        channel = Channel.objects.filter(slug=slug).first()
        student_there = channel is not None and (
            can(request.user, CONSENT_CHOOSE, channel) or channel.chat_logs.filter(user=request.user).exists()
        )
        if not student_there:
            raise Http404
    if choice == "withdraw":
        consent.withdraw_consent(
            student=request.user, channel=channel, recorded_by=request.user, note="withdrawn by the student"
        )
        messages.success(
            request, gettext("You have withdrawn. Nothing you wrote while withdrawn will be exported.")
        )
    else:
        consent.rejoin(student=request.user, channel=channel)
        messages.success(request, gettext("You take part in the study again from now on."))
    return redirect(reverse("research_my") + "#consent")
