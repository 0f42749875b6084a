from django.contrib import admin

from channels_app.admin_scoping import GuardedModelAdmin, PlatformPermissionOnly, ReadOnlyRecords
from channels_app.roles import COSTS_MANAGE

from .models import CostAlert, CostReservation, UsageEntry

# Quotas and platform cost are platform business: only costs.manage sees these pages, whatever
# model permissions another staff user may have been given.


@admin.register(UsageEntry)
class UsageEntryAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    platform_permission = COSTS_MANAGE

    list_display = ["user", "kind", "amount", "reference", "reason", "created_at"]
    list_filter = ["kind"]
    search_fields = ["user__username", "reference", "reason"]
    date_hierarchy = "created_at"

    # The ledger is append-only: corrections are new rows, never edits.
    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(CostReservation)
class CostReservationAdmin(ReadOnlyRecords, PlatformPermissionOnly, GuardedModelAdmin):
    platform_permission = COSTS_MANAGE

    list_display = ["reference", "user", "day", "reserved_usd", "spent_usd", "settled", "created_at"]
    list_filter = ["settled", "day"]
    search_fields = ["reference", "user__username"]
    date_hierarchy = "created_at"


@admin.register(CostAlert)
class CostAlertAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    platform_permission = COSTS_MANAGE

    list_display = ["day", "cost_usd", "threshold_usd", "recipients", "sent_at"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False
