from django.contrib.admin.apps import AdminConfig


class UeduAdminConfig(AdminConfig):
    """The admin with the project's site (role-aware index, platform cost dashboard).

    Replacing the default site keeps `admin.site` and `@admin.register` working unchanged."""

    default_site = "uedu_dr.admin_site.UeduAdminSite"

    def ready(self) -> None:
        super().ready()
        from uedu_dr import deploy_checks  # noqa: F401  (registers the project's --deploy checks)
