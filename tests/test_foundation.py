"""The platform foundation: real PostgreSQL with pgvector, health, production settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.db import connection

from uedu_dr import devstack

ROOT = Path(__file__).resolve().parent.parent


def test_migrations_enable_pgvector_on_real_postgresql(db):
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
        cursor.execute("CREATE TEMP TABLE probe (v vector(3))")
        cursor.execute("INSERT INTO probe VALUES ('[1,0,0]'), ('[0,1,0]')")
        cursor.execute("SELECT v <=> '[1,0,0]' FROM probe ORDER BY v <=> '[1,0,0]'")
        distances = [row[0] for row in cursor.fetchall()]
    assert version.startswith("0.")
    assert distances == [0.0, 1.0]


def test_source_table_names_exist(db):
    tables = set(connection.introspection.table_names())
    assert {"deep_research_tasks", "deep_research_steps", "classroomgpt_my_log"} <= tables


def test_healthz_reports_every_part_ok(client, db):
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "pgvector", "redis", "celery_broker"}
    assert body["checks"]["pgvector"]["version"]


def test_healthz_is_503_when_redis_is_stopped(client, db, settings, tmp_path):
    server = devstack.start_valkey(tmp_path / "valkey")
    url = f"redis://127.0.0.1:{server.port}/0"
    settings.REDIS_URL = url
    settings.CELERY_BROKER_URL = url
    assert client.get("/healthz").status_code == 200
    server.kill()
    server.wait()

    response = client.get("/healthz")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["redis"]["ok"] is False and checks["celery_broker"]["ok"] is False
    assert checks["database"]["ok"] is True


def _run_production(*args, secret: str | None):
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env["DJANGO_SETTINGS_MODULE"] = "uedu_dr.settings.production"
    env["ALLOWED_HOSTS"] = "uedu.example.edu"
    if secret is not None:
        env["SECRET_KEY"] = secret
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_with_production_settings():
    result = _run_production("check", "--deploy", "--fail-level", "WARNING", secret="k" * 20 + "-Zq8!x2#Lp0@vT6&mR4^wY1*nB7(cE3)" + "s" * 10)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_settings_refuse_to_start_without_secret_key():
    result = _run_production("check", secret=None)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
