"""Connections come from a pool per process, and a research thread or an SSE stream hands its
connection back between statements (uedu_dr.db_pool), so none is held through a wait."""

from __future__ import annotations

import threading

from django.db import connection, transaction

from agent.engine.events import ActionThinking, StatusChange
from research.services import lifecycle
from research.services.runner import TaskSink
from uedu_dr.db_pool import hand_back

QUESTION = "請比較學習分析與布魯姆分類法在課程設計中的角色"


def _settings_with(monkeypatch, **env):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    from uedu_dr.settings import base

    return base.data_store_settings(  # reads the environment when called
        database={"ENGINE": "django.db.backends.postgresql", "NAME": "x"},
        redis_url="redis://127.0.0.1:6379/0",
    )


def test_the_pool_is_on_by_default_and_bounded(monkeypatch):
    database = _settings_with(monkeypatch, UEDU_DB_POOL_MAX="40")["DATABASES"]["default"]
    assert database["CONN_MAX_AGE"] == 0  # Django refuses persistent connections with a pool
    assert database["OPTIONS"]["pool"]["max_size"] == 40


def test_the_pool_can_be_switched_off(monkeypatch):
    database = _settings_with(monkeypatch, UEDU_DB_POOL="false", CONN_MAX_AGE="0")["DATABASES"]["default"]
    assert "pool" not in database.get("OPTIONS", {})


def test_the_test_database_is_pooled():
    assert connection.settings_dict["OPTIONS"].get("pool")


def test_a_research_thread_holds_no_connection_after_it_stored_an_event(transactional_db, personas):
    task, _ = lifecycle.task_start(
        queue=False, user=personas.student, channel=personas.channel, question=QUESTION
    )
    seen = {}

    def research_thread():
        sink = TaskSink(task)
        sink.emit(StatusChange(from_="queued", to="running"))
        seen["after_emit"] = connection.connection
        sink.step_started(
            index=1, round=1, phase="evidence", tool_name="search_channel_materials", args={"query": "x"}
        )
        seen["after_step"] = connection.connection
        with transaction.atomic():
            sink.emit(ActionThinking(round=1, purpose="evidence"))
            seen["inside_transaction"] = connection.connection
        connection.close()

    thread = threading.Thread(target=research_thread)
    thread.start()
    thread.join(30)
    assert seen["after_emit"] is None and seen["after_step"] is None
    assert seen["inside_transaction"] is not None  # never in the middle of a transaction
    assert list(task.events.values_list("type", flat=True))[-2:] == ["status_change", "action_thinking"]


def test_without_a_pool_the_connection_is_kept(transactional_db, settings, monkeypatch):
    monkeypatch.setitem(connection.settings_dict, "OPTIONS", {})
    connection.ensure_connection()
    before = connection.connection
    hand_back()
    assert connection.connection is before is not None
