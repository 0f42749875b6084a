"""Local development: DEBUG on, an insecure key is acceptable, and unset DATABASE_URL / REDIS_URL
start (or reuse) the embedded PostgreSQL+pgvector and Valkey under var/. manage.py and the
launcher (`make run`) choose this module; the deployable entry points (ASGI, WSGI, Celery) do not."""

from uedu_dr import devstack

from .base import *  # noqa: F401,F403
from .base import DATABASE_URL, REDIS_URL, data_store_settings, env

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str("SECRET_KEY", default="dev-only-insecure-key-do-not-deploy")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

# DATABASES, REDIS_URL, CACHE_URL, CACHES, CHANNEL_LAYERS, CELERY_BROKER_URL
globals().update(
    data_store_settings(
        database=env.db_url_config(DATABASE_URL) if DATABASE_URL else devstack.ensure_postgres(),
        redis_url=REDIS_URL or devstack.ensure_valkey(),
    )
)
