"""Handing a thread's database connection back to the pool between statements.

With the pool on (UEDU_DB_POOL, uedu_dr.settings.base), Django takes a connection from the
process's pool at a thread's first query and returns it only when the thread closes it. A
research thread spends its seconds waiting for the model, and an SSE stream its minutes waiting
for events: held through those waits, each would keep a pooled connection idle, and a burst of
them could empty the pool for everyone else in the process. `hand_back()` returns the
connection at once (a quick put back into the pool; the next statement takes one out again). It
does nothing inside a transaction, or without a pool (a connection would then really be closed
and reopened for the next statement)."""

from __future__ import annotations

import functools
from contextlib import contextmanager

from django.db import InterfaceError, OperationalError, connection


def hand_back() -> None:
    if connection.connection is None or connection.in_atomic_block:
        return
    if connection.settings_dict.get("OPTIONS", {}).get("pool"):
        connection.close()


@contextmanager
def handed_back():
    """The block's statements, then the connection handed back; a connection found broken is
    closed, so that the next statement opens a new one (without a pool, a thread would otherwise
    keep the broken one)."""
    try:
        yield
    except (OperationalError, InterfaceError):
        connection.close()
        raise
    finally:
        hand_back()


def handing_back(func):
    """`func` under `handed_back()`."""

    @functools.wraps(func)
    def call(*args, **kwargs):
        with handed_back():
            return func(*args, **kwargs)

    return call
