"""Permission scopes for the Django admin: ModelAdmin mixins that enforce channels_app.access.can on
querysets, object permissions, actions and foreign-key choices.

Django's model permissions ("can change channel") are global: they cannot say "only the channels
you teach". So for the project's models the admin ignores them and asks the permissions of the
role table (channels_app.roles) instead, per object.

A channel-scoped ModelAdmin names the ORM path from its model to the channel and the permission
each kind of access needs. Everything else follows: the changelist only lists rows in scope, a
change or delete URL for a row out of scope answers 404 (exactly like a row that does not exist,
so ids cannot be probed), actions only ever receive rows in scope, and channel drop-downs only
offer channels the user may change. Example, for a model with a `channel` foreign key::

    from channels_app.admin_scoping import ChannelScopedAdmin
    from channels_app.roles import MATERIALS_MANAGE

    @admin.register(Material)
    class MaterialAdmin(ChannelScopedAdmin):
        channel_path = "channel"                # or e.g. "document__channel"
        view_permission = MATERIALS_MANAGE      # may list and open rows
        change_permission = MATERIALS_MANAGE    # may edit (implies view)
        add_permission = MATERIALS_MANAGE       # an access left unset needs RECORDS_MANAGE
        delete_permission = MATERIALS_MANAGE    # (the platform admin's)

Inlines use ChannelScopedInline with `parent_channel_path` (the path from the parent object to
its channel, "" when the parent is the channel itself). Models of the platform as a whole mix in
PlatformPermissionOnly with the one `platform_permission` every access needs.

Staff status is still required to log into the admin at all: students (not staff) never get in.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin import widgets
from django.contrib.admin.utils import get_fields_from_path
from django.core.exceptions import FieldDoesNotExist
from django.http import Http404

from .access import can, channel_ids, channels_where, permitted_q
from .models import Channel
from .roles import RECORDS_MANAGE

__all__ = [
    "ChannelScopedAdmin",
    "ChannelScopedInline",
    "DeclaredLookupsOnly",
    "GuardedModelAdmin",
    "PlatformPermissionOnly",
    "ReadOnlyRecords",
    "request_channel_ids",
]


# --------------------------------------------------------------------------- URL filters


class DeclaredLookupsOnly:
    """Mix in first: a changelist accepts only the query-string lookups its list_filter and
    date_hierarchy declare, and answers anything else with 400 (Django's own refusal,
    DisallowedModelAdminLookup).

    Why: Django's ModelAdmin.lookup_allowed accepts a lookup on *any* local field, so
    `?user_question__icontains=…` tells a TA which students asked what (the field the page hides)
    and `?final_answer__regex=…` reads answers a character at a time. A declared filter shows its
    values in the sidebar anyway, so comparing against them reveals nothing new. Paging, sorting
    and search (`p`, `o`, `q`, `_popup`, …) are not lookups: Django removes them before asking."""

    def declared_lookups(self, request) -> set[str]:
        allowed: set[str] = set()
        for item in self.get_list_filter(request) if request is not None else self.list_filter:
            if isinstance(item, type) and issubclass(item, admin.SimpleListFilter):
                allowed.add(item.parameter_name)
                continue
            path = item[0] if isinstance(item, (list, tuple)) else item
            # What Django's field filters put in the query string for this path.
            allowed |= {
                path,
                f"{path}__exact",
                f"{path}__isnull",
                f"{path}__gte",
                f"{path}__lt",
                f"{path}__isempty",
            }
            try:
                field = get_fields_from_path(self.model, path)[-1]
            except (FieldDoesNotExist, admin.utils.NotRelationField):
                continue
            if (
                getattr(field, "remote_field", None) is not None
                and getattr(field, "target_field", None) is not None
            ):
                allowed.add(f"{path}__{field.target_field.name}__exact")
        if self.date_hierarchy:
            allowed |= {f"{self.date_hierarchy}__{part}" for part in ("year", "month", "day", "gte", "lt")}
        return allowed

    def lookup_allowed(self, lookup, value, request=None):
        # The raw-id popup of a foreign key with limit_choices_to filters by those choices.
        for fk_lookup in self.model._meta.related_fkey_lookups:
            if callable(fk_lookup):
                fk_lookup = fk_lookup()
            if (lookup, value) in widgets.url_params_from_lookup_dict(fk_lookup).items():
                return True
        return lookup in self.declared_lookups(request)


class GuardedModelAdmin(DeclaredLookupsOnly, admin.ModelAdmin):
    """The base of every ModelAdmin of the project (the admin site mixes DeclaredLookupsOnly into
    third-party admins it is given, uedu_dr.admin_site)."""

    def get_list_filter(self, request):
        """A filter on a related field lists only what the user's own rows point at
        (RelatedOnlyFieldListFilter over the admin's scoped queryset): Django's default lists
        every row of the related table, so a teacher's materials sidebar named every channel
        and a researcher's export requests every study's title."""
        return [self._scoped_filter(spec) for spec in super().get_list_filter(request)]

    def _scoped_filter(self, spec):
        if not isinstance(spec, str):
            return spec
        try:
            field = get_fields_from_path(self.model, spec)[-1]
        except (FieldDoesNotExist, admin.utils.NotRelationField):
            return spec
        if getattr(field, "remote_field", None) is not None and (field.many_to_one or field.many_to_many):
            return (spec, admin.RelatedOnlyFieldListFilter)
        return spec


def request_channel_ids(request, permission: str) -> frozenset[int]:
    """channel_ids, computed once per request and permission: one admin page asks many times."""
    cache = request.__dict__.setdefault("_uedu_channel_scope", {})
    if permission not in cache:
        cache[permission] = channel_ids(request.user, permission)
    return cache[permission]


def channel_id_of(obj, path: str) -> int | None:
    """Follow `path` ("", "channel", "task__channel") from obj to its channel's id."""
    if not path:
        return obj.pk
    *hops, last = path.split("__")
    for hop in hops:
        obj = getattr(obj, hop, None)
        if obj is None:
            return None
    return getattr(obj, f"{last}_id", None)


class _Scope:
    """The permission logic shared by ModelAdmins and inlines."""

    view_permission: str = RECORDS_MANAGE
    change_permission: str = RECORDS_MANAGE
    add_permission: str = RECORDS_MANAGE
    delete_permission: str = RECORDS_MANAGE

    def _readable(self) -> tuple[str, ...]:
        return (self.view_permission, self.change_permission)

    def _allowed(self, request, permissions, channel_id=None, *, any_channel=False) -> bool:
        """Whether the user holds one of `permissions` in the channel `channel_id`, or (with
        `any_channel`) in some channel."""
        if isinstance(permissions, str):
            permissions = (permissions,)
        if any_channel:
            return any(can(request.user, permission) for permission in permissions)
        return channel_id is not None and any(
            channel_id in request_channel_ids(request, permission) for permission in permissions
        )


class ChannelScopedAdmin(_Scope, GuardedModelAdmin):
    channel_path: str = "channel"  # ORM path from the model to Channel; "" for Channel itself

    # ----------------------------------------------------------------- rows

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        view, change = (permitted_q(request.user, p, self.channel_path) for p in self._readable())
        return queryset.filter(view | change)

    def get_object(self, request, object_id, from_field=None):
        # Django answers an unknown id with a redirect to the index; out of scope and unknown
        # must look the same, and a 404 says so plainly.
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404("No such object.")
        return obj

    # ----------------------------------------------------------------- permissions

    def has_module_permission(self, request):
        return request.user.is_staff and self._allowed(request, self._readable(), any_channel=True)

    def has_view_permission(self, request, obj=None):
        return self._scoped(request, obj, self._readable())

    def has_change_permission(self, request, obj=None):
        return self._scoped(request, obj, self.change_permission)

    def has_add_permission(self, request):
        return self._scoped(request, None, self.add_permission)

    def has_delete_permission(self, request, obj=None):
        return self._scoped(request, obj, self.delete_permission)

    def _scoped(self, request, obj, permissions) -> bool:
        if not request.user.is_staff:
            return False
        if obj is None:
            return self._allowed(request, permissions, any_channel=True)
        return self._allowed(request, permissions, channel_id_of(obj, self.channel_path))

    # ----------------------------------------------------------------- forms

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # A row may only be created in (or moved to) a channel the user may change.
        if db_field.related_model is Channel:
            may = channels_where(request.user, self.change_permission) | channels_where(
                request.user, self.add_permission
            )
            kwargs["queryset"] = may.distinct()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ChannelScopedInline(_Scope):
    """Mix into an InlineModelAdmin: permissions follow the parent object's channel."""

    parent_channel_path: str = ""  # from the parent object to Channel; "" when the parent is a Channel

    def _parent_ok(self, request, obj, permissions) -> bool:
        if not request.user.is_staff:
            return False
        if obj is None:  # the parent's add page
            return self._allowed(request, permissions, any_channel=True)
        return self._allowed(request, permissions, channel_id_of(obj, self.parent_channel_path))

    def has_view_permission(self, request, obj=None):
        return self._parent_ok(request, obj, self._readable())

    def has_change_permission(self, request, obj=None):
        return self._parent_ok(request, obj, self.change_permission)

    def has_add_permission(self, request, obj=None):
        return self._parent_ok(request, obj, self.add_permission)

    def has_delete_permission(self, request, obj=None):
        return self._parent_ok(request, obj, self.delete_permission)


class PlatformPermissionOnly:
    """Mix into a ModelAdmin of the platform as a whole: every access needs `platform_permission`
    (model perms granted to other staff by mistake open nothing)."""

    platform_permission: str  # a PLATFORM permission of channels_app.roles

    def _holds(self, request) -> bool:
        return can(request.user, self.platform_permission)

    def has_module_permission(self, request):
        return self._holds(request)

    def has_view_permission(self, request, obj=None):
        return self._holds(request)

    def has_change_permission(self, request, obj=None):
        return self._holds(request)

    def has_add_permission(self, request, *args):
        return self._holds(request)

    def has_delete_permission(self, request, obj=None):
        return self._holds(request)


class ReadOnlyRecords:
    """Mix in first: records the admin shows but never adds, changes or deletes (ledgers, audit
    trails, metrics). Who may see them comes from the scope mixed in after it."""

    def has_add_permission(self, request, *args):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
