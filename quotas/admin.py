from django.contrib import admin

from .models import UsageEntry


@admin.register(UsageEntry)
class UsageEntryAdmin(admin.ModelAdmin):
    list_display = ["user", "kind", "amount", "reference", "reason", "created_at"]
    list_filter = ["kind"]
    search_fields = ["user__username", "reference", "reason"]
    date_hierarchy = "created_at"

    # The ledger is append-only: corrections are new rows, never edits.
    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
