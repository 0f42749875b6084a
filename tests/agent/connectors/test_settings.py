"""The knowledge-source settings fail at start-up on bad values, naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("OPENALEX_BASE_URL", "api.openalex.org", "OPENALEX_BASE_URL must be an http(s) URL"),
        (
            "OPENALEX_COUNTRY_CODES",
            "tw,taiwan",
            "OPENALEX_COUNTRY_CODES must be comma-separated ISO 3166-1 alpha-2 codes",
        ),
        (
            "UEDU_FETCH_ALLOWED_NETWORKS",
            "10.0.0.0/8,intranet",
            "UEDU_FETCH_ALLOWED_NETWORKS: 'intranet' is not an IP network",
        ),
        (
            "EDGAR_USER_AGENT",
            "Uedu research bot",
            "EDGAR_USER_AGENT must name the organisation and a contact e-mail",
        ),
        ("UEDU_TOOL_HTTP_MAX_RETRIES", "50", "UEDU_TOOL_HTTP_MAX_RETRIES must be between 0 and 6"),
        ("WEB_SEARCH_PROVIDER", "google", "WEB_SEARCH_PROVIDER must be 'searxng'"),
    ],
)
def test_a_bad_value_stops_start_up_with_its_name(name, value, message):
    # Dummy store URLs: settings are only parsed here, nothing is started or reached.
    env = {
        **os.environ,
        name: value,
        "DATABASE_URL": "postgresql://x@127.0.0.1:1/x",
        "REDIS_URL": "redis://127.0.0.1:1/0",
    }
    env["DJANGO_SETTINGS_MODULE"] = "uedu_dr.settings.dev"
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert message in result.stderr
