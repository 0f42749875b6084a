from django.urls import path

from .consumers import TaskEventsConsumer

websocket_urlpatterns = [
    path("ws/deep_research/<uuid:task_uuid>/", TaskEventsConsumer.as_asgi()),
]
