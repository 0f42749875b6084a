"""Who may use a channel's assistant: its members (platform admins anywhere). One rule for every
service that calls a model on a channel's behalf (start, judge, context check), in a module of its
own so that the light services need not import the lifecycle (which imports them)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from channels_app.models import Channel
from channels_app.roles import is_platform_admin
from channels_app.selectors import membership_role
from uedu_dr.errors import ServiceError


def check_member(user, channel: Channel) -> None:
    if not is_platform_admin(user) and membership_role(user, channel) is None:
        raise ServiceError("not_a_member", _("You are not a member of this channel."), status=403)
