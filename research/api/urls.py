from django.urls import path

from . import views

urlpatterns = [
    path("start", views.start, name="dr-start"),
    path("cancel", views.cancel, name="dr-cancel"),
    path("quota", views.quota, name="dr-quota"),
    path("my_tasks", views.my_tasks, name="dr-my-tasks"),
    path("judge", views.judge_view, name="dr-judge"),
    path("task/<uuid:task_uuid>", views.task_detail, name="dr-task"),
    path("task/<uuid:task_uuid>/events", views.task_events, name="dr-task-events"),
    path("task/<uuid:task_uuid>/report", views.task_report, name="dr-task-report"),
    path("task/<uuid:task_uuid>/stream", views.stream, name="dr-task-stream"),
    path("task/<uuid:task_uuid>/acknowledge", views.acknowledge, name="dr-task-acknowledge"),
    path("task/<uuid:task_uuid>/review", views.review_note, name="dr-task-review"),
    path("task/<uuid:task_uuid>/conflicts/decide", views.decide_conflict, name="dr-task-decide-conflict"),
    path("review_queue", views.review_queue, name="dr-review-queue"),
    path("context_check", views.context_check, name="dr-context-check"),
    path("task/<uuid:task_uuid>/plan", views.plan, name="dr-task-plan"),
    path("task/<uuid:task_uuid>/feedback", views.give_feedback, name="dr-task-feedback"),
    path("feedback", views.feedback_list, name="dr-feedback"),
]
