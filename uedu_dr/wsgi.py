import os

from django.core.wsgi import get_wsgi_application

# Deployments get the production settings unless they choose otherwise (the launcher and the
# tests set DJANGO_SETTINGS_MODULE explicitly).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uedu_dr.settings.production")
application = get_wsgi_application()
