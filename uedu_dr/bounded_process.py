"""Run an untrusted parser in a child process with a memory ceiling and a deadline, and kill it
when it passes either.

Celery workers run many researches and indexings in threads of one process: a crafted PDF or page
that makes a parser allocate without end or loop for ever must fail that one file, never hold or
kill the worker. Uploaded course materials (channels_app/extraction.py) and fetched web pages and
PDFs (agent/connectors/webparse.py) are both parsed here.

The child is a fresh interpreter ("spawn": a threaded worker must never fork), so `target` must be
a module-level function and its arguments and result picklable. It costs about a second of start
(the interpreter and the parser's imports), which is small beside a download or an indexing."""

from __future__ import annotations

import multiprocessing
import resource
from collections.abc import Callable


class EncryptedDocument(Exception):
    """Raised by a parser in the child for a password-protected file (the child has no Django
    settings for translations: the caller words the message)."""


def run_bounded(target: Callable, args: tuple, *, memory_mb: int, timeout_seconds: float) -> tuple:
    """target(*args) in a bounded child. Returns one of
    ("ok", result) | ("encrypted",) | ("error", detail) | ("memory",) | ("timeout",)."""
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
