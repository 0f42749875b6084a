"""Admin pages that are not a model's changelist (mounted by uedu_dr.admin_site)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _

from channels_app.access import can
from channels_app.roles import COSTS_MANAGE

from .selectors import platform_dashboard


def cost_dashboard(request):
    """costs.manage only (the platform admin): today's cost, reservations, cap and alert threshold, tasks by
    status, and the users who spent the most today."""
    if not can(request.user, COSTS_MANAGE):
        raise PermissionDenied
    from django.contrib import admin

    context = {
        **admin.site.each_context(request),
        "title": _("Platform cost dashboard"),
        **platform_dashboard(),
    }
    return TemplateResponse(request, "admin/research/cost_dashboard.html", context)
