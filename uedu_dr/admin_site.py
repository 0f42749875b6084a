"""The project's admin site: Django's, plus the platform cost dashboard and role-aware links on
the index page. Who sees which model is decided by each ModelAdmin (channels_app.admin_scoping)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import path, reverse
from django.utils.translation import gettext_lazy as _

from channels_app.access import can
from channels_app.roles import COSTS_MANAGE, EXPORTS_DECIDE


class UeduAdminSite(admin.AdminSite):
    site_header = _("Uedu Deep Research administration")
    site_title = _("Uedu Deep Research")
    index_title = _("Administration")
    index_template = "admin/uedu_index.html"

    def register(self, model_or_iterable, admin_class=None, **options):
        """Every admin on this site refuses undeclared URL lookups (DeclaredLookupsOnly): the
        project's admins derive from GuardedModelAdmin; third-party ones (users, groups, tokens,
        beat schedules) get the guard mixed in here, so no registration can forget it."""
        from channels_app.admin_scoping import DeclaredLookupsOnly

        admin_class = admin_class or admin.ModelAdmin
        if not issubclass(admin_class, DeclaredLookupsOnly):
            admin_class = type(
                admin_class.__name__,
                (DeclaredLookupsOnly, admin_class),
                {"__module__": admin_class.__module__},
            )
        return super().register(model_or_iterable, admin_class, **options)

    def get_urls(self):
        # Imported here: the site is built before the apps' models are ready.
        from research.admin_views import cost_dashboard

        return [
            path("cost-dashboard/", self.admin_view(cost_dashboard), name="cost_dashboard"),
            # Before Django's own: same address and name, with the object's permission checked.
            path(
                "r/<int:content_type_id>/<path:object_id>/",
                self.admin_view(self.scoped_view_on_site),
                name="view_on_site",
            ),
            *super().get_urls(),
        ]

    def scoped_view_on_site(self, request, content_type_id, object_id):
        """Django's "view on site" shortcut redirects any staff user to any object's page, which
        names it (a channel document's slug, for one). Here it answers only for objects the user
        may view in this admin, through the model admin's own scoped queryset and permission;
        anything else is 404, like a row outside the user's scope."""
        from django.contrib.contenttypes.models import ContentType
        from django.contrib.contenttypes.views import shortcut
        from django.http import Http404

        try:
            model = ContentType.objects.get_for_id(content_type_id).model_class()
        except ContentType.DoesNotExist:
            raise Http404 from None
        model_admin = self._registry.get(model)
        obj = model_admin.get_object(request, object_id) if model_admin is not None else None
        if obj is None or not model_admin.has_view_permission(request, obj):
            raise Http404
        return shortcut(request, content_type_id, object_id)

    def index(self, request, extra_context=None):
        links = []
        if can(request.user, COSTS_MANAGE):
            links.append(
                {
                    "url": reverse("admin:cost_dashboard", current_app=self.name),
                    "label": _("Platform cost dashboard"),
                }
            )
        if can(request.user, EXPORTS_DECIDE):
            from governance.export_requests import pending_requests

            # The IRB delegate's queue: export requests waiting for a decision.
            pending = pending_requests().count()
            queue = (
                reverse("admin:governance_exportrequest_changelist", current_app=self.name)
                + "?status__exact=pending"
            )
            links.append(
                {"url": queue, "label": _("Export requests waiting for approval: %(n)d") % {"n": pending}}
            )
        return super().index(request, {"uedu_links": links, **(extra_context or {})})
