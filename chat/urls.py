from django.urls import path

from . import pages

urlpatterns = [
    path("channels/<slug:slug>/", pages.chat, name="channel_chat"),
    path("channels/<slug:slug>/send", pages.send, name="channel_send"),
    path("channels/<slug:slug>/settings/", pages.channel_settings, name="channel_settings"),
    path("chat/log/<int:pk>/bloom", pages.bloom_level, name="chatlog_bloom"),
    # The chat page appends a started research's turn; the URL stays under deep_research/.
    path("deep_research/task/<uuid:task_uuid>/turn", pages.turn_fragment, name="research_turn"),
]
