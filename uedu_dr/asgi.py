"""ASGI entry point: HTTP through Django, WebSockets through Channels (the client's address by
the HTTP rule, uedu_dr.client_address; session auth read on the loop's thread pool, see
uedu_dr.socket_auth; origin check)."""

import os

from django.core.asgi import get_asgi_application

# Deployments get the production settings unless they choose otherwise (the launcher and the
# tests set DJANGO_SETTINGS_MODULE explicitly).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uedu_dr.settings.production")
django_asgi_app = get_asgi_application()  # must run before importing consumers (apps ready)

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from research.routing import websocket_urlpatterns  # noqa: E402
from uedu_dr.client_address import ClientAddressSocketMiddleware  # noqa: E402
from uedu_dr.request_limits import BodySizeLimit, limit_daphne_bodies  # noqa: E402
from uedu_dr.socket_auth import PooledAuthMiddlewareStack  # noqa: E402

limit_daphne_bodies()

application = ProtocolTypeRouter(
    {
        "http": BodySizeLimit(django_asgi_app),  # chunked bodies counted as they arrive
        "websocket": ClientAddressSocketMiddleware(
            AllowedHostsOriginValidator(PooledAuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)
