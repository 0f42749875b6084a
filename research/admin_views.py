"""Admin pages that are not a model's changelist (mounted by uedu_dr.admin_site)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _

from channels_app.admin_scoping import is_platform_admin

from .selectors import platform_dashboard


def cost_dashboard(request):
    """Platform admins only: today's cost, reservations, cap and alert threshold, tasks by
    status, and the users who spent the most today."""
    if not is_platform_admin(request.user):
        raise PermissionDenied
    from django.contrib import admin

    context = {
        **admin.site.each_context(request),
        "title": _("Platform cost dashboard"),
        **platform_dashboard(),
    }
    return TemplateResponse(request, "admin/research/cost_dashboard.html", context)
