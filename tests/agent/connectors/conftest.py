"""Fakes of the outside services on loopback, and the product's settings pointed at them."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from agent.tools import REGISTRY, ToolContext
from tests.support.fake_edgar import FakeEdgar
from tests.support.fake_http import FakeHTTPServer
from tests.support.fake_openalex import FakeOpenAlex
from tests.support.fake_searxng import FakeSearxng

WEB_CTX = ToolContext(user_id=1, channel_id=1, web_tools_enabled=True)


def call(tool: str, ctx: ToolContext = WEB_CTX, **args):
    """Through the bound registry, as the engine calls tools (schema checked, source_tool set)."""
    return REGISTRY.bind(ctx).call(tool, args)


@pytest.fixture(autouse=True)
def fresh_cache_and_quick_retries(settings):
    cache.clear()  # each test sees its own requests, not another test's cached answers
    settings.UEDU_TOOL_HTTP_BACKOFF_SECONDS = 0.01
    settings.UEDU_TOOL_HTTP_TIMEOUT_SECONDS = 5.0
    settings.UEDU_TOOL_HTTP_MAX_RETRIES = 3
    yield
    cache.clear()


@pytest.fixture
def openalex(settings):
    with FakeOpenAlex() as server:
        settings.OPENALEX_BASE_URL = server.url
        settings.OPENALEX_API_KEY = ""
        settings.OPENALEX_MAILTO = ""
        yield server


@pytest.fixture
def searxng(settings):
    with FakeSearxng() as server:
        settings.SEARXNG_URL = server.url
        yield server


@pytest.fixture
def edgar(settings):
    with FakeEdgar() as server:
        settings.EDGAR_BASE_URL = server.url
        settings.EDGAR_TICKERS_URL = server.url + FakeEdgar.TICKERS_PATH
        settings.EDGAR_ARCHIVES_URL = "https://www.sec.gov/Archives/edgar/data"
        settings.EDGAR_USER_AGENT = "Uedu tests ops@uedu.example"
        yield server


@pytest.fixture
def site():
    """A tiny web server for fetch_url. It runs on 127.0.0.1, which fetch_url refuses unless a
    test allow-lists it (see `loopback_allowed`)."""
    with FakeHTTPServer() as server:
        yield server


@pytest.fixture
def loopback_allowed(settings):
    settings.UEDU_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32"]
