"""GET /healthz: is every part the product needs reachable? 200 when all are, 503 otherwise.

The language model is reported beside the checks ("model": reachable, the models the roles use
listed) but never changes the status: a model server that is down is not a reason to take the
web nodes out of a load balancer (pages, history and exports work without it).

An anonymous probe gets a summary at most UEDU_HEALTHZ_CACHE_SECONDS old (per process): each check
opens a connection (Redis, the broker, the model server), so an unauthenticated flood must not
turn into a flood of connections behind it. Staff and loopback get fresh details."""

from __future__ import annotations

import threading
import time

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu import Connection

from agent.model_endpoint import model_endpoint_status
from uedu_dr.client_address import is_local

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


def may_see_details(request) -> bool:
    """Error details (host names, ports, driver messages) help an attacker map the site: they go
    to staff and to probes on the machine itself (loopback, and not a loopback proxy passing on
    a request from elsewhere: uedu_dr.client_address.is_local), not to anyone on the internet."""
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated and user.is_staff) or is_local(request)


_summary_lock = threading.Lock()
_summary: dict = {}  # {"key": what the checks target, "at": monotonic time, "body", "status"}


def _targets() -> tuple:
    """What the checks reach: a summary made for other targets (another test's settings, a changed
    environment) is never served."""
    return (settings.REDIS_URL, settings.CELERY_BROKER_URL, settings.OPENAI_BASE_URL)


@never_cache
@require_GET
def healthz(request):
    if may_see_details(request):
        body, status = _run_checks(detailed=True)
        return JsonResponse(body, status=status)
    ttl = settings.UEDU_HEALTHZ_CACHE_SECONDS
    with _summary_lock:  # one probe runs the checks; the others in the meantime wait for its answer
        cached = _summary.get("key") == _targets() and time.monotonic() - _summary.get("at", 0) < ttl
        if not cached:
            body, status = _run_checks(detailed=False)
            _summary.update(key=_targets(), at=time.monotonic(), body=body, status=status)
        body, status = _summary["body"], _summary["status"]
    return JsonResponse(body, status=status)


def _run_checks(*, detailed: bool) -> tuple[dict, int]:
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
    return (
        {"status": "ok" if healthy else "unavailable", "checks": report, "model": model},
        200 if healthy else 503,
    )
