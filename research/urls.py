from django.urls import path

from . import dashboard_views, views

urlpatterns = [
    path("my", views.my_history, name="research_my"),
    path("notifications", views.notification_settings, name="research_notifications"),
    path("review", views.review_queue, name="research_review_queue"),
    path("feedback", views.feedback_list, name="research_feedback"),
    path(
        "channel/<slug:slug>/dashboard", dashboard_views.channel_dashboard, name="research_channel_dashboard"
    ),
    path(
        "channel/<slug:slug>/dashboard.csv",
        dashboard_views.channel_dashboard_csv,
        name="research_channel_dashboard_csv",
    ),
    path("task/<uuid:task_uuid>", views.result, name="research_result"),
    path("task/<uuid:task_uuid>/answer.md", views.download, name="research_download"),
    path("task/<uuid:task_uuid>/outcome", views.outcome_fragment, name="research_outcome"),
    path("task/<uuid:task_uuid>/feedback_box", views.feedback_box_fragment, name="research_feedback_box"),
    path(
        "task/<uuid:task_uuid>/citation_report",
        views.citation_report_fragment,
        name="research_citation_report",
    ),
    path("task/<uuid:task_uuid>/acknowledge", views.acknowledge_fragment, name="research_acknowledge"),
    path("task/<uuid:task_uuid>/review", views.review_note, name="research_review_note"),
    path("task/<uuid:task_uuid>/conflicts/decide", views.decide_conflict, name="research_decide_conflict"),
    path("task/<uuid:task_uuid>/misuse", views.misuse_flag, name="research_misuse_flag"),
    path("task/<uuid:task_uuid>/retry_with_web", views.retry_with_web, name="research_retry_with_web"),
]
