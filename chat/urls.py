from django.urls import path

from . import pages

urlpatterns = [
    path("channels/<slug:slug>/", pages.chat, name="channel_chat"),
    path("channels/<slug:slug>/turns", pages.older_turns, name="channel_older_turns"),
    path("channels/<slug:slug>/send", pages.send, name="channel_send"),
    path("channels/<slug:slug>/suggestion", pages.suggestion, name="channel_suggestion"),
    path("channels/<slug:slug>/clarify", pages.clarify, name="channel_clarify"),
    path("channels/<slug:slug>/settings/", pages.channel_settings, name="channel_settings"),
    path("chat/quota", pages.quota_fragment, name="chat_quota"),
    path("chat/log/<int:pk>/bloom", pages.bloom_level, name="chatlog_bloom"),
    # The chat page appends a started research's turn; the URL stays under deep_research/.
    path("deep_research/task/<uuid:task_uuid>/turn", pages.turn_fragment, name="research_turn"),
]
