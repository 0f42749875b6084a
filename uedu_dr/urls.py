from django.conf import settings
from django.conf.urls.static import static
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.staticfiles.storage import staticfiles_storage
from django.shortcuts import redirect
from django.urls import include, path
from django.views.i18n import set_language
from drf_spectacular.views import SpectacularAPIView

from uedu_dr import health
from uedu_dr.login_throttle import throttle_password_reset
from uedu_dr.password_reset import LinkSafePasswordResetForm


def favicon(request):
    """What a browser asks for when a response names no icon (a CSV, the API's JSON): the site's."""
    return redirect(staticfiles_storage.url("favicon.svg"), permanent=True)


urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/deep_research/", include("research.api.urls")),
    path("deep_research/my/", include("governance.urls")),
    path("deep_research/", include("research.urls")),
    path("i18n/setlang/", set_language, name="set_language"),
    # Before the auth URLs: the same name and path, throttled (uedu_dr.login_throttle), and never
    # writing a reset link into the logs (uedu_dr.password_reset).
    path(
        "accounts/password_reset/",
        throttle_password_reset(auth_views.PasswordResetView.as_view(form_class=LinkSafePasswordResetForm)),
        name="password_reset",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("catalogue/", include("catalogue.urls")),
    path("", include("chat.urls")),
    path("", include("channels_app.urls")),
]

handler400 = "uedu_dr.error_pages.bad_request"
handler404 = "uedu_dr.error_pages.page_not_found"
handler500 = "uedu_dr.error_pages.server_error"

if settings.DEBUG:
    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
