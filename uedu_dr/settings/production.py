"""Production: DEBUG off, every secret and server from the environment, HTTPS-only cookies, HSTS.

Nothing is guessed here: a missing DATABASE_URL, REDIS_URL or SECRET_KEY, or the console e-mail
backend (unless UEDU_ALLOW_CONSOLE_EMAIL=1), stops the start with the variable's name (no embedded
server is ever started). `manage.py check --deploy` is clean with
these settings. The ASGI, WSGI and Celery entry points default to this module."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F401,F403
from .base import DATABASE_URL, EMAIL_BACKEND, REDIS_URL, SECRET_KEY, data_store_settings, env

CONSOLE_EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"

_problems = []
if not DATABASE_URL:
    _problems.append("DATABASE_URL must be set (postgres://user:password@host:5432/name, with pgvector)")
if not REDIS_URL:
    _problems.append("REDIS_URL must be set (redis://host:6379/0)")
if not SECRET_KEY or len(SECRET_KEY) < 50 or SECRET_KEY.startswith("django-insecure"):
    _problems.append("SECRET_KEY must be set to a random string of at least 50 characters")
# The console backend writes every e-mail to stdout, which is the log: password-reset links (each
# one takes over an account) and cost alerts. A deployment without mail says so on purpose.
if EMAIL_BACKEND == CONSOLE_EMAIL_BACKEND and not env.bool("UEDU_ALLOW_CONSOLE_EMAIL", default=False):
    _problems.append(
        "EMAIL_BACKEND must name a real mail backend (e.g. django.core.mail.backends.smtp.EmailBackend "
        "with EMAIL_HOST): the console backend would write password-reset links into the logs; set "
        "UEDU_ALLOW_CONSOLE_EMAIL=1 to run without mail on purpose"
    )
if _problems:
    raise ImproperlyConfigured("Production settings cannot start: " + "; ".join(_problems) + ".")

DEBUG = False
# DATABASES, REDIS_URL, CACHE_URL, CACHES, CHANNEL_LAYERS, CELERY_BROKER_URL
globals().update(data_store_settings(database=env.db_url_config(DATABASE_URL), redis_url=REDIS_URL))

SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env.bool("BEHIND_TLS_PROXY", default=False) else None
)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
