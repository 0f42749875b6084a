"""Run an untrusted parser in a child process with a memory ceiling and a deadline, and kill it
when it passes either.

Celery workers run many researches and indexings in threads of one process: a crafted PDF or page
that makes a parser allocate without end or loop for ever must fail that one file, never hold or
kill the worker. Uploaded course materials (materials/extraction.py) and fetched web pages and
PDFs (agent/connectors/webparse.py) are both parsed here.

The child is a fresh interpreter ("spawn": a threaded worker must never fork), so `target` must be
a module-level function and its arguments and result picklable. It costs about a second of start
(the interpreter and the parser's imports), which is small beside a download or an indexing.

How many children run at once is bounded per process and across the platform
(uedu_dr.parse_slots): a parse waits for a slot up to the time its caller gives, and inside
`refuse_when_busy()` (a web process answering a person: the chat's fetch_url) it does not wait at
all. Either way, no slot means ("busy",) and no child."""

from __future__ import annotations

import contextlib
import contextvars
import multiprocessing
import resource
from collections.abc import Callable

from uedu_dr.parse_slots import parse_slot

_may_wait = contextvars.ContextVar("bounded_parse_may_wait", default=True)


class EncryptedDocument(Exception):
    """Raised by a parser in the child for a password-protected file (the child has no Django
    settings for translations: the caller words the message)."""


@contextlib.contextmanager
def refuse_when_busy():
    """Parses started inside do not wait for a slot: a request a person waits on is answered at
    once ("busy") rather than held while other parses run."""
    token = _may_wait.set(False)
    try:
        yield
    finally:
        _may_wait.reset(token)


def run_bounded(
    target: Callable,
    args: tuple,
    *,
    memory_mb: int,
    timeout_seconds: float | Callable[[], float],
    wait_seconds: float = 0.0,
) -> tuple:
    """target(*args) in a bounded child, once a parse slot is free (waiting up to `wait_seconds`).
    `timeout_seconds` is the child's deadline, or a function giving it when the child starts (a
    caller with a deadline of its own counts the wait). Returns one of
    ("ok", result) | ("encrypted",) | ("error", detail) | ("memory",) | ("timeout",) | ("busy",)."""
    wait = wait_seconds if _may_wait.get() else 0.0
    # The longest the child can run: a caller's deadline only comes nearer while it waits.
    longest = timeout_seconds() if callable(timeout_seconds) else timeout_seconds
    with parse_slot(wait_seconds=wait, hold_seconds=wait + longest) as free:
        if not free:
            return ("busy",)
        timeout = timeout_seconds() if callable(timeout_seconds) else timeout_seconds
        return _run_child(target, args, memory_mb=memory_mb, timeout_seconds=timeout)


def _run_child(target: Callable, args: tuple, *, memory_mb: int, timeout_seconds: float) -> tuple:
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    limit = memory_mb * 1024 * 1024
    child = context.Process(
        target=_in_child, args=(target, args, sender, limit), name=f"bounded-{target.__name__}"
    )
    child.start()
    sender.close()
    try:
        if not receiver.poll(max(0.0, timeout_seconds)):
            return ("timeout",)
        try:
            return receiver.recv()
        except EOFError:  # the child died without a word
            child.join(5)
            if child.exitcode is not None and child.exitcode < 0:
                return ("memory",)  # killed by a signal: the kernel's OOM killer, past the ceiling
            return ("error", f"the parsing process stopped (exit code {child.exitcode})")
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        child.join(5)


def _in_child(target: Callable, args: tuple, sender, memory_limit: int) -> None:
    # The ceiling counts the interpreter and the parsers' libraries too (~150 MB); the settings
    # leave room for them.
    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    try:
        outcome = ("ok", target(*args))
    except EncryptedDocument:
        outcome = ("encrypted",)
    except MemoryError:
        outcome = ("memory",)
    except Exception as exc:  # parsers raise anything (KeyError, lxml errors, struct.error…) on damaged files
        outcome = ("error", short_error(exc))
    sender.send(outcome)
    sender.close()


def short_error(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "…"
