import os

from celery import Celery

# Deployments get the production settings unless they choose otherwise (the launcher and the
# tests set DJANGO_SETTINGS_MODULE explicitly).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uedu_dr.settings.production")

app = Celery("uedu_dr")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
