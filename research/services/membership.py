"""Who may use a channel's assistant: whoever holds channel.use there (its members; platform admins
anywhere). One check for every service that calls a model on a channel's behalf (start, judge,
context check), in a module of its own so that the light services need not import the lifecycle
(which imports them)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from channels_app.access import can
from channels_app.models import Channel
from channels_app.roles import CHANNEL_USE
from uedu_dr.errors import ServiceError


def check_member(user, channel: Channel) -> None:
    if not can(user, CHANNEL_USE, channel):
        raise ServiceError("not_a_member", _("You are not a member of this channel."), status=403)
