"""Role scopes for the Django admin: which channels a staff user may see or change, and ModelAdmin
mixins that enforce them on querysets, object permissions and foreign-key choices.

Django's model permissions ("can change channel") are global: they cannot say "only the channels
you teach". So for the project's models the admin ignores them and decides from data instead:

- a platform admin (active superuser) may do everything;
- the channel's owner is its teacher (OWNER);
- a Membership gives the roles TA, SUPER_TA, STUDENT (a "teacher" membership without ownership
  grants no admin rights: the owner is the channel's accountable teacher).

A ModelAdmin opts in by naming the ORM path from its model to the channel and the roles allowed
each kind of access. Everything else follows: the changelist only lists rows in scope, a change
or delete URL for a row out of scope answers 404 (exactly like a row that does not exist, so ids
cannot be probed), actions only ever receive rows in scope, and channel drop-downs only offer
channels the user may change. Example, for a model with a `channel` foreign key::

    from channels_app.admin_scoping import OWNER, SUPER_TA, ChannelScopedAdmin

    @admin.register(Material)
    class MaterialAdmin(ChannelScopedAdmin):
        channel_path = "channel"            # or e.g. "document__channel"
        view_roles = {OWNER, SUPER_TA}      # may list and open rows
        change_roles = {OWNER}              # may edit (implies view)
        add_roles = {OWNER}
        delete_roles = {OWNER}

Inlines use ChannelScopedInline with `parent_channel_path` (the path from the parent object to
its channel, "" when the parent is the channel itself).

Staff status is still required to log into the admin at all: students (not staff) never get in.
"""

from __future__ import annotations

from functools import reduce
from operator import or_

from django.contrib import admin
from django.db.models import Q
from django.http import Http404

from .models import Channel, Membership

OWNER = "owner"
TA = Membership.Role.TA.value
SUPER_TA = Membership.Role.SUPER_TA.value
STUDENT = Membership.Role.STUDENT.value

# Roles that may read the content of students' research (questions, answers, steps): the source
# document limits a result to its owner, the channel's teacher, Super TAs and platform admins.
CONTENT_ROLES = frozenset({OWNER, SUPER_TA})


def is_platform_admin(user) -> bool:
    return bool(user.is_active and user.is_superuser)


def channel_ids(user, roles) -> frozenset[int]:
    """Ids of the channels in which the user holds one of `roles` (every channel for admins)."""
    roles = frozenset(roles)
    if not user.is_authenticated or not user.is_active or not roles:
        return frozenset()
    conditions = []
    if OWNER in roles:
        conditions.append(Q(owner=user))
    member_roles = roles - {OWNER}
    if member_roles:
        conditions.append(Q(pk__in=Membership.objects.filter(user=user, role__in=member_roles).values("channel")))
    return frozenset(Channel.objects.filter(reduce(or_, conditions)).values_list("pk", flat=True))


def request_channel_ids(request, roles) -> frozenset[int]:
    """channel_ids, computed once per request and role set: one admin page asks many times."""
    cache = request.__dict__.setdefault("_uedu_channel_scope", {})
    key = frozenset(roles)
    if key not in cache:
        cache[key] = channel_ids(request.user, key)
    return cache[key]


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

    view_roles: frozenset | set = frozenset()
    change_roles: frozenset | set = frozenset()
    add_roles: frozenset | set = frozenset()
    delete_roles: frozenset | set = frozenset()

    def _readable_roles(self):
        return frozenset(self.view_roles) | frozenset(self.change_roles)

    def _allowed(self, request, roles, channel_id=None, *, any_channel=False) -> bool:
        ids = request_channel_ids(request, roles)
        if any_channel:
            return bool(ids)
        return channel_id is not None and channel_id in ids


class ChannelScopedAdmin(_Scope, admin.ModelAdmin):
    channel_path: str = "channel"  # ORM path from the model to Channel; "" for Channel itself

    # ----------------------------------------------------------------- rows

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if is_platform_admin(request.user):
            return queryset
        lookup = f"{self.channel_path}__in" if self.channel_path else "pk__in"
        return queryset.filter(**{lookup: request_channel_ids(request, self._readable_roles())})

    def get_object(self, request, object_id, from_field=None):
        # Django answers an unknown id with a redirect to the index; out of scope and unknown
        # must look the same, and a 404 says so plainly.
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404("No such object.")
        return obj

    # ----------------------------------------------------------------- permissions

    def has_module_permission(self, request):
        if is_platform_admin(request.user):
            return True
        return request.user.is_staff and self._allowed(request, self._readable_roles(), any_channel=True)

    def has_view_permission(self, request, obj=None):
        if is_platform_admin(request.user):
            return True
        return self._scoped(request, obj, self._readable_roles())

    def has_change_permission(self, request, obj=None):
        if is_platform_admin(request.user):
            return True
        return self._scoped(request, obj, self.change_roles)

    def has_add_permission(self, request):
        if is_platform_admin(request.user):
            return True
        return self._scoped(request, None, self.add_roles)

    def has_delete_permission(self, request, obj=None):
        if is_platform_admin(request.user):
            return True
        return self._scoped(request, obj, self.delete_roles)

    def _scoped(self, request, obj, roles) -> bool:
        if not request.user.is_staff:
            return False
        if obj is None:
            return self._allowed(request, roles, any_channel=True)
        return self._allowed(request, roles, channel_id_of(obj, self.channel_path))

    # ----------------------------------------------------------------- forms

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # A row may only be created in (or moved to) a channel the user may change.
        if db_field.related_model is Channel and not is_platform_admin(request.user):
            roles = frozenset(self.change_roles) | frozenset(self.add_roles)
            kwargs["queryset"] = Channel.objects.filter(pk__in=request_channel_ids(request, roles))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ChannelScopedInline(_Scope):
    """Mix into an InlineModelAdmin: permissions follow the parent object's channel."""

    parent_channel_path: str = ""  # from the parent object to Channel; "" when the parent is a Channel

    def _parent_ok(self, request, obj, roles) -> bool:
        if is_platform_admin(request.user):
            return True
        if not request.user.is_staff:
            return False
        if obj is None:  # the parent's add page
            return self._allowed(request, roles, any_channel=True)
        return self._allowed(request, roles, channel_id_of(obj, self.parent_channel_path))

    def has_view_permission(self, request, obj=None):
        return self._parent_ok(request, obj, self._readable_roles())

    def has_change_permission(self, request, obj=None):
        return self._parent_ok(request, obj, self.change_roles)

    def has_add_permission(self, request, obj=None):
        return self._parent_ok(request, obj, self.add_roles)

    def has_delete_permission(self, request, obj=None):
        return self._parent_ok(request, obj, self.delete_roles)


class PlatformAdminOnly:
    """Mix into a ModelAdmin that only platform admins may use (model perms granted to other
    staff by mistake open nothing)."""

    def has_module_permission(self, request):
        return is_platform_admin(request.user)

    def has_view_permission(self, request, obj=None):
        return is_platform_admin(request.user)

    def has_change_permission(self, request, obj=None):
        return is_platform_admin(request.user)

    def has_add_permission(self, request, *args):
        return is_platform_admin(request.user)

    def has_delete_permission(self, request, obj=None):
        return is_platform_admin(request.user)


class ReadOnlyRecords:
    """Mix in first: records the admin shows but never adds, changes or deletes (ledgers, audit
    trails, metrics). Who may see them comes from the scope mixed in after it."""

    def has_add_permission(self, request, *args):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
