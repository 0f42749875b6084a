from django.urls import path

from . import dashboard_pages, pages

urlpatterns = [
    path("my", pages.my_history, name="research_my"),
    path("notifications", pages.notification_settings, name="research_notifications"),
    path("review", pages.review_queue, name="research_review_queue"),
    path("feedback", pages.feedback_list, name="research_feedback"),
    path(
        "channel/<slug:slug>/dashboard", dashboard_pages.channel_dashboard, name="research_channel_dashboard"
    ),
    path(
        "channel/<slug:slug>/dashboard.csv",
        dashboard_pages.channel_dashboard_csv,
        name="research_channel_dashboard_csv",
    ),
    path("task/<uuid:task_uuid>", pages.result, name="research_result"),
    path("task/<uuid:task_uuid>/answer.md", pages.download, name="research_download"),
    path("task/<uuid:task_uuid>/outcome", pages.outcome_fragment, name="research_outcome"),
    path("task/<uuid:task_uuid>/feedback_box", pages.feedback_box_fragment, name="research_feedback_box"),
    path(
        "task/<uuid:task_uuid>/citation_report",
        pages.citation_report_fragment,
        name="research_citation_report",
    ),
    path("task/<uuid:task_uuid>/acknowledge", pages.acknowledge_fragment, name="research_acknowledge"),
    path("task/<uuid:task_uuid>/review", pages.review_note, name="research_review_note"),
    path("task/<uuid:task_uuid>/conflicts/decide", pages.decide_conflict, name="research_decide_conflict"),
    path("task/<uuid:task_uuid>/misuse", pages.misuse_flag, name="research_misuse_flag"),
    path("task/<uuid:task_uuid>/retry_with_web", pages.retry_with_web, name="research_retry_with_web"),
]
