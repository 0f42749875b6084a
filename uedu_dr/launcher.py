"""`make run`: prepare the database and run daphne, Celery workers (one per core) and Celery beat
in the foreground.

Ctrl-C stops these processes and, when this launcher started them, the embedded
PostgreSQL and Valkey as well."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def _stack_env() -> tuple[dict, list[str]]:
    """The environment for every child, with both URLs resolved once, here."""
    from uedu_dr import devstack

    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "uedu_dr.settings.dev")
    env.setdefault("PYTHONUNBUFFERED", "1")
    started = []
    pg_was_up, valkey_was_up = devstack.postgres_running(), devstack.valkey_running()
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = devstack.postgres_url(devstack.ensure_postgres())
        if not pg_was_up:
            started.append("postgres")
    if not env.get("REDIS_URL"):
        env["REDIS_URL"] = devstack.ensure_valkey()
        if not valkey_was_up:
            started.append("valkey")
    return env, started


def _manage(env: dict, *args: str) -> None:
    subprocess.run([PYTHON, "manage.py", *args], cwd=BASE_DIR, env=env, check=True)


def model_status_lines(env: dict) -> list[str]:
    """What the banner says about the language model: whether one answers (GET /models through
    the openai client, a short timeout), which one, and otherwise the one line to set; when one
    answers, its measured speed, window and abilities, and the minutes a research would take. Asked
    through `manage.py check_llm` so that it reads the settings exactly as the servers will."""
    try:
        result = subprocess.run(
            [PYTHON, "manage.py", "check_llm", "--timeout", "3", "--measure"],
            cwd=BASE_DIR,
            env=env,
            capture_output=True,
            text=True,
            # Measuring a slow CPU server (three short calls) takes a minute or two.
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        return [
            "Language model: the check did not finish within 600 s (run `manage.py check_llm --measure` to see why)."
        ]
    lines = result.stdout.strip().splitlines()
    if result.returncode not in (0, 1) or not lines:
        return [
            f"Language model: the check failed ({(result.stderr.strip().splitlines() or ['no output'])[-1][:200]})."
        ]
    return lines


def _positive_int(env: dict, name: str, default: int) -> int:
    raw = env.get(name) or str(default)
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise SystemExit(f"{name} must be a whole number of at least 1 (got {raw!r})")
    return value


def worker_commands(env: dict) -> dict[str, list[str]]:
    """One threads-pool Celery worker per core (UEDU_WORKER_PROCESSES, default: the CPU count).

    The engine's Python holds the GIL, so one worker process uses one core however many
    researches its threads run; a second process on a second core is what doubles the CPU a
    batch of researches gets (bench/concurrency.py measures both shapes side by side).

    They consume the "celery" queue only; one more, `worker-light`, consumes "light" (each
    question's Bloom classification: settings CELERY_TASK_QUEUES), so a start puts one message
    before the research workers and a burst splits evenly over them."""
    processes = _positive_int(env, "UEDU_WORKER_PROCESSES", os.cpu_count() or 1)
    concurrency = str(_positive_int(env, "UEDU_WORKER_CONCURRENCY", 64))
    celery = str(Path(PYTHON).parent / "celery")

    def worker(name: str, queue: str, threads: str) -> list[str]:
        pool = ["--pool", "threads", "--concurrency", threads]
        return [celery, "-A", "uedu_dr", "worker", *pool, "-Q", queue, "-l", "info", "-n", f"{name}@%h"]

    return {
        **{f"worker-{i}": worker(f"worker-{i}", "celery", concurrency) for i in range(1, processes + 1)},
        "worker-light": worker("worker-light", "light", "8"),  # one short model call per job
    }


def process_commands(env: dict, host: str, port: str) -> dict[str, list[str]]:
    bin_dir = Path(PYTHON).parent
    return {
        # No --proxy-headers, ever: it would make the left-most X-Forwarded-For (what a client
        # writes) the peer address. The app resolves the client itself, trusting only the proxies
        # UEDU_TRUSTED_PROXIES names (uedu_dr/client_address.py).
        "daphne": [str(bin_dir / "daphne"), "-b", host, "-p", port, "uedu_dr.asgi:application"],
        **worker_commands(env),
        "beat": [str(bin_dir / "celery"), "-A", "uedu_dr", "beat", "-l", "info"],
    }


def main() -> int:
    env, started = _stack_env()
    children: dict[str, subprocess.Popen] = {}
    try:
        port = env.get("PORT", "8000")
        host = env.get("HOST", "127.0.0.1")
        print("· migrating", flush=True)
        _manage(env, "migrate", "--noinput", "-v", "0")
        print("· compiling translations", flush=True)
        _manage(env, "compilemessages", "-v", "0", "--ignore", ".venv")
        print("· loading demo data", flush=True)
        _manage(env, "load_demo_data")
        print("· asking the language model", flush=True)
        model_lines = model_status_lines(env)

        for name, cmd in process_commands(env, host, port).items():
            children[name] = subprocess.Popen(cmd, cwd=BASE_DIR, env=env)
        return _supervise(children, host, port, model_lines)
    finally:
        _terminate(children)
        from uedu_dr import devstack

        if "valkey" in started:
            devstack.stop_valkey()
        if "postgres" in started:
            devstack.stop_postgres()
        print(f"stopped ({', '.join([*children, *started])})", flush=True)


def _supervise(children: dict[str, subprocess.Popen], host: str, port: str, model_lines: list[str]) -> int:
    from channels_app.demo_accounts import DEMO_USERS, demo_password

    print(
        f"\n  Uedu Deep Research is running at http://{host}:{port}/\n"
        f"  Admin console:  http://{host}:{port}/admin/\n"
        f"  Demo log-ins:   {', '.join(DEMO_USERS)}  —  password: {demo_password()}\n"
        + "".join(f"  {line}\n" for line in model_lines)
        + "  Press Ctrl-C to stop.\n",
        flush=True,
    )
    stopping = False

    def _stop(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    while not stopping:
        for name, child in children.items():
            if child.poll() is not None:
                print(f"! {name} exited with code {child.returncode}; stopping everything", flush=True)
                return 1
        time.sleep(0.5)
    return 0


def _terminate(children: dict[str, subprocess.Popen]) -> None:
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    # A worker in warm shutdown would wait for running researches (minutes); the reaper
    # fails those later, so after a grace period everything is killed.
    deadline = time.monotonic() + 10
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


if __name__ == "__main__":
    os.chdir(BASE_DIR)
    sys.path.insert(0, str(BASE_DIR))
    sys.exit(main())
