"""Real processes for end-to-end tests: Celery workers and daphne, joined to the test database
and this run's Valkey, talking to the scripted LLM over HTTP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection

from uedu_dr import devstack

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def child_env(**overrides: str) -> dict:
    env = dict(os.environ)
    # Browser tests allow ORM calls beside Playwright's event loop in the test process only;
    # servers must keep Django's async-safety checks.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(
        DJANGO_SETTINGS_MODULE="uedu_dr.settings.test",
        DATABASE_URL=devstack.postgres_url(connection.settings_dict),
        PYTHONUNBUFFERED="1",
        OPENAI_API_KEY="test-key",
    )
    env.update({k: str(v) for k, v in overrides.items()})
    return env


@dataclass
class Process:
    name: str
    popen: subprocess.Popen
    log_path: Path
    extra: dict = field(default_factory=dict)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()

    def kill(self) -> None:
        """SIGKILL, as when the machine runs out of memory: no cleanup runs."""
        self.stop(signal.SIGKILL, timeout=5)


def _spawn(name: str, cmd: list[str], env: dict) -> Process:
    log_path = Path(tempfile.mkstemp(prefix=f"uedu-{name}-", suffix=".log")[1])
    handle = open(log_path, "w")
    popen = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
    )
    return Process(name=name, popen=popen, log_path=log_path)


def start_worker(
    *, concurrency: int = 16, ready_timeout: float = 60, queues: str = "", **env_overrides
) -> Process:
    name = f"test-{uuid.uuid4().hex[:8]}@%h"
    cmd = [
        str(BIN / "celery"),
        "-A",
        "uedu_dr",
        "worker",
        "--pool",
        "threads",
        "--concurrency",
        str(concurrency),
        "-l",
        "info",
        "-n",
        name,
        "--without-gossip",
        "--without-mingle",
    ]
    if queues:  # a worker of its own, which the session's worker never competes with
        cmd += ["-Q", queues]
    process = _spawn("worker", cmd, child_env(**env_overrides))
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        if " ready." in process.log():
            return process
        if not process.alive():
            break
        time.sleep(0.1)
    process.stop()
    raise RuntimeError(f"Celery worker did not start:\n{process.log()[-3000:]}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_daphne(*, ready_timeout: float = 60, **env_overrides) -> Process:
    port = free_port()
    cmd = [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "uedu_dr.asgi:application"]
    process = _spawn("daphne", cmd, child_env(ALLOWED_HOSTS="127.0.0.1,localhost", **env_overrides))
    process.extra["url"] = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            if not process.alive():
                break
            time.sleep(0.1)
    process.stop()
    raise RuntimeError(f"daphne did not start:\n{process.log()[-3000:]}")


def wait_for(predicate, timeout: float = 30, interval: float = 0.1, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")
