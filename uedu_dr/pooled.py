"""Sync calls made for WebSocket consumers, run on the event loop's pool of threads.

Django gives every HTTP request (an SSE stream included) a thread-sensitive context of its own.
Channels gives consumers none, so `database_sync_to_async` and the async ORM run the sync calls of
every socket of a daphne process on one shared thread, one after another, and open and close a
database connection for each. Under a burst of handshakes that thread is the queue every new
socket waits in. `pooled(func)` runs `func` on the loop's default pool of threads instead: each
pool thread keeps its own connection (a process holds at most the pool's size in connections for
its sockets), and a connection found broken is closed so that the next call opens a new one.

The WebSocket handshake's session and user are read that way too (uedu_dr.socket_auth)."""

from __future__ import annotations

import functools

from asgiref.sync import sync_to_async
from django.db import InterfaceError, OperationalError, connection


def pooled(func):
    @functools.wraps(func)
    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (OperationalError, InterfaceError):
            connection.close()  # this pool thread's connection broke: the next call opens a new one
            raise

    return sync_to_async(call, thread_sensitive=False)
