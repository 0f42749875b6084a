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


GOOD_SECRET = "k" * 20 + "-Zq8!x2#Lp0@vT6&mR4^wY1*nB7(cE3)" + "s" * 10
SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
CONSOLE_BACKEND = "django.core.mail.backends.console.EmailBackend"


def _clean_env(**values):
    """This process's environment without the settings module, the secret and the two URLs."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "SECRET_KEY",
            "DATABASE_URL",
            "REDIS_URL",
            "DJANGO_SETTINGS_MODULE",
            "EMAIL_BACKEND",
            "UEDU_TRUSTED_PROXIES",
            "UEDU_ALLOW_CONSOLE_EMAIL",
        )
    }
    env.update(values)
    return env


def _run_production(
    *args, secret: str | None, database_url: str | None = "", redis_url: str | None = "", **extra
):
    # What a deployment decides (the mail server, the proxies in front) unless the test says otherwise.
    decided = {"EMAIL_BACKEND": SMTP_BACKEND, "UEDU_TRUSTED_PROXIES": "0"}
    env = _clean_env(
        DJANGO_SETTINGS_MODULE="uedu_dr.settings.production",
        ALLOWED_HOSTS="uedu.example.edu",
        **{**decided, **extra},
    )
    for name in [name for name, value in env.items() if value is None]:
        del env[name]  # None: the variable unset
    if database_url == "":
        database_url = devstack.postgres_url(connection.settings_dict)
    if redis_url == "":
        redis_url = os.environ["REDIS_URL"]
    for name, value in (("SECRET_KEY", secret), ("DATABASE_URL", database_url), ("REDIS_URL", redis_url)):
        if value is not None:
            env[name] = value
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_production_settings():
    result = _run_production("check", "--deploy", "--fail-level", "WARNING", secret=GOOD_SECRET)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_asks_about_the_proxies_in_front_until_the_setting_is_decided():
    result = _run_production(
        "check", "--deploy", "--fail-level", "WARNING", secret=GOOD_SECRET, UEDU_TRUSTED_PROXIES=None
    )
    assert result.returncode != 0
    assert "uedu_dr.W001" in result.stderr and "UEDU_TRUSTED_PROXIES" in result.stderr
    for decided in ("0", "1", "10.0.0.0/8"):
        result = _run_production(
            "check", "--deploy", "--fail-level", "WARNING", secret=GOOD_SECRET, UEDU_TRUSTED_PROXIES=decided
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_the_console_mail_backend_unless_told_it_is_on_purpose():
    result = _run_production("check", secret=GOOD_SECRET, EMAIL_BACKEND=None)  # the default: console
    assert result.returncode != 0
    assert "EMAIL_BACKEND" in result.stderr and "UEDU_ALLOW_CONSOLE_EMAIL" in result.stderr
    result = _run_production("check", secret=GOOD_SECRET, EMAIL_BACKEND=CONSOLE_BACKEND)
    assert result.returncode != 0 and "EMAIL_BACKEND" in result.stderr
    result = _run_production(
        "check", secret=GOOD_SECRET, EMAIL_BACKEND=CONSOLE_BACKEND, UEDU_ALLOW_CONSOLE_EMAIL="1"
    )
    assert result.returncode == 0, result.stderr


def test_production_settings_refuse_to_start_without_secret_key():
    result = _run_production("check", secret=None)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_settings_refuse_to_start_without_database_url_and_start_nothing(tmp_path):
    var = tmp_path / "var"
    result = _run_production("check", secret=GOOD_SECRET, database_url=None, UEDU_VAR_DIR=str(var))
    assert result.returncode != 0
    assert "DATABASE_URL must be set" in result.stderr
    assert "REDIS_URL must be set" not in result.stderr  # only what is missing is named
    assert not var.exists()  # no embedded server was started to fill the gap


def test_production_settings_refuse_to_start_without_redis_url():
    result = _run_production("check", secret=GOOD_SECRET, redis_url=None)
    assert result.returncode != 0
    assert "REDIS_URL must be set" in result.stderr and "DATABASE_URL" not in result.stderr


def test_an_unknown_local_embedding_runtime_is_refused_at_start():
    result = _run_production("check", secret=GOOD_SECRET, UEDU_EMBEDDING_LOCAL_RUNTIME="tensorflow")
    assert result.returncode != 0
    assert "UEDU_EMBEDDING_LOCAL_RUNTIME must be 'onnx' or 'torch', got 'tensorflow'" in result.stderr


def test_deployable_entry_points_default_to_production_settings():
    # No DJANGO_SETTINGS_MODULE, no secret: the ASGI, WSGI and Celery modules must not fall back to
    # the dev settings (DEBUG on, a public key, /media/ without log-in).
    for module in ("uedu_dr.wsgi", "uedu_dr.asgi", "uedu_dr.celery"):
        code = f"import {module}; from django.conf import settings; settings.DEBUG"
        result = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode != 0, module
        assert (
            "Production settings cannot start" in result.stderr and "SECRET_KEY must be set" in result.stderr
        ), module


def test_a_numeric_setting_that_does_not_parse_names_its_variable():
    result = _run_production("check", secret=GOOD_SECRET, UEDU_LLM_TIMEOUT_SECONDS="twelve")
    assert result.returncode != 0
    assert "UEDU_LLM_TIMEOUT_SECONDS has a value that does not parse" in result.stderr
    result = _run_production("check", secret=GOOD_SECRET, UEDU_DEEP_RESEARCH_DAILY_CAP_USD="lots")
    assert "UEDU_DEEP_RESEARCH_DAILY_CAP_USD must be a decimal number" in result.stderr
