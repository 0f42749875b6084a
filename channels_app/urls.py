from django.urls import path

from . import pages, views

urlpatterns = [
    path("", views.home, name="home"),
    path("channels/<slug:slug>/", pages.chat, name="channel_chat"),
    path("channels/<slug:slug>/send", pages.send, name="channel_send"),
    path("channels/<slug:slug>/settings/", pages.channel_settings, name="channel_settings"),
    path("chat/log/<int:pk>/bloom", pages.bloom_level, name="chatlog_bloom"),
]
