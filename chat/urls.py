from django.urls import path

from . import views

urlpatterns = [
    path("channels/<slug:slug>/", views.chat, name="channel_chat"),
    path("channels/<slug:slug>/turns", views.older_turns, name="channel_older_turns"),
    path("channels/<slug:slug>/send", views.send, name="channel_send"),
    path("channels/<slug:slug>/suggestion", views.suggestion, name="channel_suggestion"),
    path("channels/<slug:slug>/clarify", views.clarify, name="channel_clarify"),
    path("channels/<slug:slug>/settings/", views.channel_settings, name="channel_settings"),
    path("chat/quota", views.quota_fragment, name="chat_quota"),
    path("chat/log/<int:pk>/bloom", views.bloom_level, name="chatlog_bloom"),
    # The chat page appends a started research's turn; the URL stays under deep_research/.
    path("deep_research/task/<uuid:task_uuid>/turn", views.turn_fragment, name="research_turn"),
]
