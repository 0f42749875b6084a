"""Sync calls made for WebSocket consumers, run on the event loop's pool of threads.

Django gives every HTTP request (an SSE stream included) a thread-sensitive context of its own.
Channels gives consumers none, so `database_sync_to_async` and the async ORM run the sync calls of
every socket of a daphne process on one shared thread, one after another. Under a burst of
handshakes that thread is the queue every new socket waits in. `pooled(func)` runs `func` on the
loop's default pool of threads instead, and hands its connection back afterwards
(uedu_dr.db_pool.handing_back: with the database pool on, no thread keeps one between calls;
without it, each pool thread keeps its own, so a process holds at most that pool's size).

The WebSocket handshake's session and user are read that way too (uedu_dr.socket_auth)."""

from __future__ import annotations

from asgiref.sync import sync_to_async

from uedu_dr.db_pool import handing_back


def pooled(func):
    return sync_to_async(handing_back(func), thread_sensitive=False)
