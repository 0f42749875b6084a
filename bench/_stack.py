"""What every benchmark needs: a scratch database on the embedded (or configured) PostgreSQL, a
private Valkey, Django set up in this process, and helpers to start workers and the scripted
LLM as separate processes. Everything started here is stopped again by `close()`."""

from __future__ import annotations

import atexit
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent


def uptime() -> str:
    """`uptime` in UTC: every bench prints it with its figures (this machine is shared)."""
    return subprocess.run(
        ["uptime"], capture_output=True, text=True, env=dict(os.environ, TZ="UTC")
    ).stdout.strip()


def reference_cpu_ms() -> float:
    """CPU ms of a fixed piece of Python work (JSON, dicts, strings), the best of three: how fast
    this (virtual) machine is at the moment. At its usual speed 10.5-11.8 ms (2026-12-02)."""
    doc = {
        "claims": [
            {"text": f"claim {i} " * 8, "citations": [i, i + 1], "verdict": "supported"} for i in range(200)
        ]
    }
    best = float("inf")
    for _ in range(3):
        started = time.thread_time()
        for _ in range(40):
            text = json.dumps(doc, ensure_ascii=False)
            back = json.loads(text)
            sum(len(c["text"].split()) for c in back["claims"])
        best = min(best, time.thread_time() - started)
    return round(best * 1000, 1)


class BenchStack:
    def __init__(self, name: str):
        from uedu_dr import devstack

        self.tmp = Path(tempfile.mkdtemp(prefix=f"uedu-bench-{name}-"))
        self.processes: list[subprocess.Popen] = []
        base = os.environ.get("DATABASE_URL")
        if base:
            raise SystemExit(
                "benchmarks create their own scratch database on the embedded PostgreSQL; unset DATABASE_URL"
            )
        db = devstack.ensure_postgres()
        self.db_name = f"bench_{name}_{os.getpid()}"
        self.admin_url = devstack.postgres_url(dict(db, NAME="postgres"))
        self._psql(f'CREATE DATABASE "{self.db_name}"')
        self.database_url = devstack.postgres_url(dict(db, NAME=self.db_name))
        valkey = devstack.start_valkey(self.tmp / "valkey")
        self.processes.append(valkey)
        self.valkey_process = valkey
        self.redis_url = f"redis://127.0.0.1:{valkey.port}/0"
        self.secret_key = secrets.token_urlsafe(48)  # a throwaway key for the production-settings processes
        os.environ.update(
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis_url,
            DJANGO_SETTINGS_MODULE="uedu_dr.settings.dev",
            LOG_LEVEL="WARNING",
        )
        atexit.register(self.close)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True, env=self.env()
        )
        import django

        django.setup()

    def _psql(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def env(self, **extra) -> dict:
        env = dict(os.environ)
        env.update(
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis_url,
            PYTHONUNBUFFERED="1",
            LOG_LEVEL="WARNING",
        )
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def spawn(
        self, cmd: list[str], *, ready: str | None = None, timeout: float = 90, **env
    ) -> subprocess.Popen:
        log = open(self.tmp / f"proc-{len(self.processes)}.log", "w+")
        proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env(**env), stdout=log, stderr=subprocess.STDOUT)
        proc.log_path = log.name  # type: ignore[attr-defined]
        self.processes.append(proc)
        if ready:
            deadline = time.monotonic() + timeout
            while ready not in Path(log.name).read_text(errors="replace"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{cmd[0]} did not start:\n{Path(log.name).read_text()[-2000:]}")
                time.sleep(0.1)
        return proc

    def scripted_llm(self, **flags) -> str:
        args = [sys.executable, "-m", "tests.support.scripted_llm", "--port", "0"]
        for key, value in flags.items():
            args += [f"--{key.replace('_', '-')}", str(value)]
        proc = self.spawn(args, ready="http://")
        import psutil

        self.llm_process = psutil.Process(proc.pid)  # the latest one started
        return Path(proc.log_path).read_text().strip().splitlines()[0]

    def worker(
        self, *, concurrency: int = 64, name: str = "bench", queues: str = "celery,light", **env
    ) -> subprocess.Popen:
        """A worker as it is deployed: the production settings (DEBUG off, so no per-query SQL
        log), with the scratch database and Valkey passed in the environment. `queues`: both by
        default; "celery" for a research worker beside a `light_worker`, as `make run` starts them.
        No mail leaves a bench: the console backend is allowed on purpose."""
        env = dict(
            DJANGO_SETTINGS_MODULE="uedu_dr.settings.production",
            SECRET_KEY=self.secret_key,
            UEDU_ALLOW_CONSOLE_EMAIL="1",
            **env,
        )
        return self.spawn(
            [
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
                "--without-gossip",
                "--without-mingle",
                "-Q",
                queues,
                "-n",
                f"{name}-{os.getpid()}@%h",
            ],
            ready=" ready.",
            **env,
        )

    def light_worker(self, **env) -> subprocess.Popen:
        """The worker of the "light" queue (each question's Bloom classification), as `make run`
        starts it beside the research workers (uedu_dr.launcher)."""
        return self.worker(concurrency=8, name="bench-light", queues="light", **env)

    def print_log_tails(self, lines: int = 15) -> None:
        """The last lines of every process's log, on stderr: what a failed run's processes said."""
        for proc in self.processes:
            path = getattr(proc, "log_path", None)
            if path:
                tail = Path(path).read_text(errors="replace").splitlines()[-lines:]
                print(f"--- {' '.join(map(str, proc.args))[:120]}", *tail, sep="\n", file=sys.stderr)

    def keep_logs(self) -> Path:
        """Copy every process's log to var/bench/<name>-<time>/ (a failed run's evidence; the
        scratch directory goes with close())."""
        target = (
            ROOT / "var" / "bench" / f"{self.tmp.name.rsplit('-', 1)[0]}-{time.strftime('%Y%m%dT%H%M%S')}"
        )
        target.mkdir(parents=True, exist_ok=True)
        for log in self.tmp.glob("proc-*.log"):
            shutil.copy(log, target / log.name)
        print(f"logs kept in {target}", file=sys.stderr)
        return target

    def close(self) -> None:
        for proc in reversed(self.processes):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        self.processes.clear()
        from django.db import connections

        connections.close_all()
        try:
            self._psql(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
        except Exception as exc:  # leave a note rather than hide it
            print(f"could not drop {self.db_name}: {exc}", file=sys.stderr)
        shutil.rmtree(self.tmp, ignore_errors=True)
        atexit.unregister(self.close)
