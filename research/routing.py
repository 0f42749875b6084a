from django.urls import path  # noqa: F401

# WebSocket routes for research progress; filled by the streaming API.
websocket_urlpatterns: list = []
