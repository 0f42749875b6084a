import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uedu_dr.settings.dev")

app = Celery("uedu_dr")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
