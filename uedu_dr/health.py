"""GET /healthz: is every part the product needs reachable? 200 when all are, 503 otherwise.

The language model is reported beside the checks ("model": reachable, the models the roles use
listed) but never changes the status: a model server that is down is not a reason to take the
web nodes out of a load balancer (pages, history and exports work without it)."""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu import Connection

from agent.model_endpoint import model_endpoint_status

MODEL_CHECK_TIMEOUT_SECONDS = 2.0


def _check_database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"ok": True}


def _check_pgvector() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    if row is None:
        return {"ok": False, "error": "the vector extension is not installed (run migrate)"}
    return {"ok": True, "version": row[0]}


def _check_redis() -> dict:
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
    try:
        client.ping()
    finally:
        client.close()
    return {"ok": True}


def _check_broker() -> dict:
    with Connection(settings.CELERY_BROKER_URL, connect_timeout=1) as conn:
        conn.ensure_connection(max_retries=1, timeout=1)
    return {"ok": True}


CHECKS = {
    "database": _check_database,
    "pgvector": _check_pgvector,
    "redis": _check_redis,
    "celery_broker": _check_broker,
}


LOOPBACK = ("127.0.0.1", "::1")


def may_see_details(request) -> bool:
    """Error details (host names, ports, driver messages) help an attacker map the site: they go
    to staff and to probes on the machine itself (loopback), not to anyone on the internet."""
    user = getattr(request, "user", None)
    return (
        bool(user is not None and user.is_authenticated and user.is_staff)
        or request.META.get("REMOTE_ADDR") in LOOPBACK
    )


@never_cache
@require_GET
def healthz(request):
    detailed = may_see_details(request)
    report = {}
    for name, check in CHECKS.items():
        try:
            report[name] = check()
        except Exception as exc:  # a health check reports failures, it never raises them
            report[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    healthy = all(part["ok"] for part in report.values())
    try:
        model = model_endpoint_status(timeout=MODEL_CHECK_TIMEOUT_SECONDS)
    except Exception as exc:  # reported, never raised (nor counted against the other checks)
        model = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    if not detailed:
        report = {name: {"ok": part["ok"]} for name, part in report.items()}
        model = {"ok": model.get("ok", False)}
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": report, "model": model},
        status=200 if healthy else 503,
    )
