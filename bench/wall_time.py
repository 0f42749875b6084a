"""A research's wall time on a model whose reply time grows with what it reads and writes, for the
pipeline of a given commit and the current checkout side by side, in one run.

The model is the scripted server of each version (its own replies for its own prompts and
schemas) behind a latency proxy of this bench: a reply's first token comes after
`first_token + prompt_tokens / prefill_rate` seconds and its answer streams at `decode_rate`
tokens per second (the tokens the server reported in its usage). Presets:

  hosted     a hosted small model: 0.8 s, 5,000 prompt tokens/s, 80 answer tokens/s
  gemma270m  this machine's Gemma 3 270M on llama-server, as `check_llm --measure` found it
             (docs/models.md): 184.9 prompt / 22.5 answer tokens/s

For each version (`--baseline COMMIT`: checked out with `git worktree add` into a temporary
folder sharing this checkout's environment; the current checkout always), the bench migrates a
scratch database with that version's own migrations, loads its demo data, starts its scripted
server, one Celery worker of its code, and runs each demo question alone, one after another,
through that version's `manage.py deep_research` (the web's service and Celery path). It then
reads what the product stored (tasks, events, transcript, claim ledger) with plain SQL, and what
the proxy saw. Per research:

  wall_s               the task's creation to its end (finished_at)
  model_calls          calls the proxy answered for it (the question's Bloom classification,
                       which runs beside the research, included)
  critical_path        the longest chain of model calls each started after the one before ended:
                       its calls, its model seconds, and their share of the wall time
  phases_s             the time between the stored events, by the phase each one ends (queue,
                       planning, evidence, claims, verification, writing); `other` for types this
                       bench does not know
  model_s_by_role      the seconds of each role's calls (the transcript)
  verified_facts       the claim ledger's verified facts (shown ones), and `fact_sources` the
                       sources they rest on; the versions word a fact differently (a model's
                       checked sentence before, the source's spans now), so the target is no
                       fewer verified facts than the baseline for each question, and the
                       sources both versions' facts rest on are printed (`sources_in_common`)

Target (on the hosted preset): the current checkout's mean wall time ≤ 60 % of the baseline's,
with the same verified facts for every question. Only judged when a baseline is given; the
reference work (bench/_stack.py) is printed before and after.

    .venv/bin/python bench/wall_time.py [--preset hosted|gemma270m] [--baseline 2ffc1f0]
        [--first-token S --prefill-rate TPS --decode-rate TPS] [--questions 3]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from _stack import ROOT, reference_cpu_ms, uptime

PRESETS = {
    "hosted": {"first_token": 0.8, "prefill_rate": 5000.0, "decode_rate": 80.0},
    "gemma270m": {"first_token": 0.0, "prefill_rate": 184.9, "decode_rate": 22.5},
}
QUESTIONS = (
    "請比較學習分析與布魯姆分類法在課程設計中的角色",
    "How should a course use Bloom's taxonomy when it designs assignments around retrieval-augmented generation?",
    "What does the IRB require before learning analytics data from a course may be used in research?",
)
WALL_RATIO_TARGET = 0.6
# The event that ends a stretch of time names the phase it belonged to.
PHASE_OF_EVENT = {
    "status_change": "queue",
    "plan_complete": "planning",
    "action_thinking": "evidence",
    "action_dispatch": "evidence",
    "action_complete": "evidence",
    "reflection_done": "evidence",
    "limit_hit": "evidence",
    "claims_extracted": "claims",
    "claims_verified": "verification",
    "verification_done": "verification",
    "completed": "writing",
    "failed": "writing",
    "cancelled": "writing",
}


# --------------------------------------------------------------------------- the latency proxy


@dataclass
class Call:
    started: float  # wall clock
    ended: float
    prompt_tokens: int
    completion_tokens: int
    status: int
    system: str = ""


@dataclass
class LatencyProxy:
    """An OpenAI-compatible front for a scripted server that answers at once: each completion is
    fetched whole, then sent on after the modelled time (streamed at the decode rate when the
    client asked for a stream)."""

    upstream: str  # http://127.0.0.1:PORT (no /v1)
    first_token: float
    prefill_rate: float
    decode_rate: float
    calls: list[Call] = field(default_factory=list)

    def start(self) -> str:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def _forward(self, method: str, body: bytes | None) -> tuple[int, bytes, str]:
                request = urllib.request.Request(
                    proxy.upstream + self.path,
                    data=body,
                    method=method,
                    headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
                )
                try:
                    with urllib.request.urlopen(request, timeout=600) as response:
                        return response.status, response.read(), response.headers.get("Content-Type", "")
                except urllib.error.HTTPError as exc:
                    return exc.code, exc.read(), exc.headers.get("Content-Type", "")

            def do_GET(self):
                status, data, kind = self._forward("GET", None)
                self._send(status, data, kind)

            def do_POST(self):
                started = time.time()
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                wants_stream = bool(body.get("stream"))
                upstream_body = dict(body, stream=False)
                upstream_body.pop("stream_options", None)
                status, data, kind = self._forward("POST", json.dumps(upstream_body).encode())
                system = " ".join(
                    m.get("content") or ""
                    for m in body.get("messages", [])
                    if isinstance(m, dict) and m.get("role") == "system"
                )[:80]
                if status != 200 or not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(status, data, kind)
                    proxy.calls.append(Call(started, time.time(), 0, 0, status, system))
                    return
                completion = json.loads(data)
                usage = completion.get("usage") or {}
                prompt, answer = (
                    int(usage.get("prompt_tokens") or 0),
                    int(usage.get("completion_tokens") or 0),
                )
                prefill = proxy.first_token + (prompt / proxy.prefill_rate if proxy.prefill_rate else 0.0)
                decode = answer / proxy.decode_rate if proxy.decode_rate else 0.0
                try:
                    if wants_stream:
                        self._stream(body, completion, prefill, decode)
                    else:
                        time.sleep(prefill + decode)
                        self._send(200, data, "application/json")
                except (BrokenPipeError, ConnectionResetError):
                    pass
                proxy.calls.append(Call(started, time.time(), prompt, answer, 200, system))

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict, completion: dict, prefill: float, decode: float) -> None:
                chunks = _chunks(
                    completion, include_usage=bool((body.get("stream_options") or {}).get("include_usage"))
                )
                time.sleep(prefill)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for number, chunk in enumerate(chunks):
                    if number and decode:
                        time.sleep(decode / max(1, len(chunks) - 1))
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _chunks(completion: dict, *, include_usage: bool, size: int = 40) -> list[dict]:
    """A completion as the stream of chunks an OpenAI-compatible server sends."""
    base = {k: completion[k] for k in ("id", "created", "model") if k in completion}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict, finish=None) -> dict:
        return dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])

    out = []
    choices = completion.get("choices") or []
    if choices:
        message = choices[0].get("message") or {}
        out.append(chunk({"role": "assistant", "content": ""}))
        content = message.get("content") or ""
        out += [chunk({"content": content[i : i + size]}) for i in range(0, len(content), size)]
        for index, call in enumerate(message.get("tool_calls") or []):
            head = {"index": index, "id": call["id"], "type": "function"}
            out.append(
                chunk(
                    {"tool_calls": [dict(head, function={"name": call["function"]["name"], "arguments": ""})]}
                )
            )
            arguments = call["function"]["arguments"]
            out += [
                chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[i : i + size]}}]})
                for i in range(0, len(arguments), size)
            ]
        out.append(chunk({}, choices[0].get("finish_reason")))
    if include_usage:
        out.append(dict(base, choices=[], usage=completion.get("usage")))
    return out or [dict(base, choices=[])]


# --------------------------------------------------------------------------- one version


class Version:
    """The pipeline of one checkout: its migrations, demo data, scripted server and worker, on a
    scratch database of the shared embedded PostgreSQL and a private Valkey."""

    def __init__(self, label: str, directory: Path, model: dict, tmp: Path) -> None:
        from uedu_dr import devstack

        self.label, self.directory, self.model = label, directory, model
        self.tmp = tmp / label
        self.tmp.mkdir(parents=True)
        self.processes: list[subprocess.Popen] = []
        db = devstack.ensure_postgres()
        self.db_name = f"bench_wall_{label.replace('-', '_')}_{os.getpid()}"
        self.admin_url = devstack.postgres_url(dict(db, NAME="postgres"))
        self._sql_admin(f'CREATE DATABASE "{self.db_name}"')
        self.database_url = devstack.postgres_url(dict(db, NAME=self.db_name))
        valkey = devstack.start_valkey(self.tmp / "valkey")
        self.processes.append(valkey)
        self.env = dict(
            os.environ,
            DATABASE_URL=self.database_url,
            REDIS_URL=f"redis://127.0.0.1:{valkey.port}/0",
            DJANGO_SETTINGS_MODULE="uedu_dr.settings.dev",
            PYTHONUNBUFFERED="1",
            LOG_LEVEL="WARNING",
            OPENAI_API_KEY="bench",
            UEDU_DEEP_RESEARCH_DAILY_CAP_USD="100000",
            PYTHONPATH=str(directory),
        )
        self.proxy: LatencyProxy | None = None

    def _sql_admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def manage(self, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=self.directory,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def spawn(self, cmd: list[str], ready: str, **env) -> subprocess.Popen:
        log = open(self.tmp / f"proc-{len(self.processes)}.log", "w+")
        proc = subprocess.Popen(
            cmd, cwd=self.directory, env=dict(self.env, **env), stdout=log, stderr=subprocess.STDOUT
        )
        proc.log_path = log.name  # type: ignore[attr-defined]
        self.processes.append(proc)
        deadline = time.monotonic() + 120
        while ready not in Path(log.name).read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"{self.label}: {cmd[2]} did not start:\n{Path(log.name).read_text()[-2000:]}"
                )
            time.sleep(0.2)
        return proc

    def start(self) -> None:
        for args in (("migrate", "-v", "0"), ("load_demo_data", "-v", "0")):
            result = self.manage(*args)
            if result.returncode:
                raise RuntimeError(f"{self.label}: manage.py {args[0]} failed:\n{result.stderr[-3000:]}")
        scripted = self.spawn(
            [sys.executable, "-m", "tests.support.scripted_llm", "--port", "0"], ready="http://"
        )
        upstream = Path(scripted.log_path).read_text().split()[0]  # the URL it printed first
        self.proxy = LatencyProxy(upstream.rsplit("/v1", 1)[0], **self.model)
        self.env["OPENAI_BASE_URL"] = self.proxy.start()
        self.spawn(
            [
                str(Path(sys.executable).parent / "celery"),
                "-A",
                "uedu_dr",
                "worker",
                "--pool",
                "threads",
                "--concurrency",
                "16",
                "-l",
                "info",
                "--without-gossip",
                "--without-mingle",
                "-n",
                f"wall-{self.label}-{os.getpid()}@%h",
            ],
            ready=" ready.",
            DJANGO_SETTINGS_MODULE="uedu_dr.settings.production",
            SECRET_KEY=secrets.token_urlsafe(48),
            ALLOWED_HOSTS="127.0.0.1",
            # the bench sends no mail (production refuses the console backend unless told)
            UEDU_ALLOW_CONSOLE_EMAIL="1",
        )

    def research(self, question: str) -> dict:
        assert self.proxy is not None
        first_call = len(self.proxy.calls)
        result = self.manage(
            "deep_research", question, "--channel", "demo-course", "--user", "teacher", "--json", timeout=3600
        )
        calls = self.proxy.calls[first_call:]
        try:
            uuid = json.loads(result.stdout)["task_uuid"]
        except (ValueError, KeyError):
            raise RuntimeError(
                f"{self.label}: the research did not run:\n{result.stdout[-1500:]}\n{result.stderr[-1500:]}"
            ) from None
        return measure(self.database_url, uuid, calls)

    def close(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        for proc in reversed(self.processes):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
        try:
            self._sql_admin(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
        except Exception as exc:
            print(f"could not drop {self.db_name}: {exc}", file=sys.stderr)


def measure(database_url: str, task_uuid: str, calls: list[Call]) -> dict:
    """What the product stored of one research, and the proxy's view of its model calls."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        task_id, status, created, finished = conn.execute(
            "SELECT id, status, created_at, finished_at FROM deep_research_tasks WHERE task_uuid = %s",
            [task_uuid],
        ).fetchone()
        events = conn.execute(
            "SELECT type, created_at FROM deep_research_events WHERE task_id = %s ORDER BY seq", [task_id]
        ).fetchall()
        roles = conn.execute(
            "SELECT role, sum(seconds), count(*) FROM deep_research_transcript WHERE task_id = %s GROUP BY role",
            [task_id],
        ).fetchall()
        # The versions word a fact differently (1.x: the model's sentence checked against a
        # located quote; 2.x: the source's own spans): they are compared by count, and by the
        # sources the verified ones rest on.
        cited, report = conn.execute(
            "SELECT citations_json, report_json FROM deep_research_tasks WHERE id = %s", [task_id]
        ).fetchone()
        source_of = {
            c.get("number", n): c.get("url") or c.get("title") for n, c in enumerate(cited or [], start=1)
        }
        rows = conn.execute(
            "SELECT citations FROM deep_research_claims WHERE task_id = %s AND verdict = 'supported' "
            "AND action <> 'dropped' AND kind IN ('sentence', 'cell', 'fact')",
            [task_id],
        ).fetchall()
        facts = len(rows)
        sources = sorted({str(source_of.get(n, n)) for (numbers,) in rows for n in numbers or []})
    phases: dict[str, float] = {}
    for (_, before), (kind, at) in zip(events, events[1:]):
        phase = PHASE_OF_EVENT.get(kind, "other")
        phases[phase] = phases.get(phase, 0.0) + (at - before).total_seconds()
    chain = critical_path(calls)
    wall = (finished - created).total_seconds() if finished else None
    return {
        "status": status,
        "wall_s": round(wall, 2) if wall is not None else None,
        "model_calls": len(calls),
        "critical_path": {
            "calls": chain[0],
            "model_s": round(chain[1], 2),
            "share_of_wall": round(chain[1] / wall, 3) if wall else None,
        },
        "phases_s": {k: round(v, 2) for k, v in phases.items()},
        "model_s_by_role": {role: round(seconds or 0.0, 2) for role, seconds, _ in roles},
        "calls_by_role": {role: count for role, _, count in roles},
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "verified_facts": facts,
        "fact_sources": sources,
        # what the report says limited it (codes): why a version chose fewer facts, or none
        "limitations": sorted(
            str(x.get("code")) if isinstance(x, dict) else str(x)
            for x in (report or {}).get("limitations") or []
        ),
    }


def critical_path(calls: list[Call]) -> tuple[int, float]:
    """(calls, seconds) of the longest chain of calls each started after the previous ended: the
    model time nothing inside the research could have overlapped."""
    ordered = sorted(calls, key=lambda c: c.ended)
    best: list[tuple[float, int]] = []  # per call: (seconds, calls) of the best chain ending with it
    for i, call in enumerate(ordered):
        before = [best[j] for j in range(i) if ordered[j].ended <= call.started]
        seconds, count = max(before, default=(0.0, 0))
        best.append((seconds + (call.ended - call.started), count + 1))
    seconds, count = max(best, default=(0.0, 0))
    return count, seconds


# --------------------------------------------------------------------------- the run


def checkout(commit: str, tmp: Path) -> Path:
    """The pipeline of `commit` in a worktree of its own, sharing this checkout's environment."""
    target = tmp / f"baseline-{commit[:12]}"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(target), commit], cwd=ROOT, check=True, capture_output=True
    )
    (target / ".venv").symlink_to(ROOT / ".venv")
    return target


def remove_checkout(path: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, capture_output=True)


def summarise(runs: list[dict]) -> dict:
    walls = [r["wall_s"] for r in runs if r["wall_s"] is not None]
    return {
        "completed": sum(r["status"] == "completed" for r in runs),
        "mean_wall_s": round(sum(walls) / len(walls), 2) if walls else None,
        "mean_critical_path_calls": round(sum(r["critical_path"]["calls"] for r in runs) / len(runs), 2),
        "mean_critical_path_model_s": round(sum(r["critical_path"]["model_s"] for r in runs) / len(runs), 2),
        "mean_model_calls": round(sum(r["model_calls"] for r in runs) / len(runs), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", choices=sorted(PRESETS), default="hosted")
    parser.add_argument("--first-token", type=float)
    parser.add_argument("--prefill-rate", type=float)
    parser.add_argument("--decode-rate", type=float)
    parser.add_argument("--baseline", help="a commit whose pipeline runs side by side with this checkout's")
    parser.add_argument(
        "--only-baseline", action="store_true", help="measure the baseline alone (today's figures)"
    )
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    args = parser.parse_args()
    model = dict(PRESETS[args.preset])
    for name in ("first_token", "prefill_rate", "decode_rate"):
        if getattr(args, name) is not None:
            model[name] = getattr(args, name)

    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="uedu-bench-wall-"))
    baseline_dir = checkout(args.baseline, tmp) if args.baseline else None
    versions = ([("baseline", baseline_dir)] if baseline_dir else []) + (
        [] if args.only_baseline else [("current", ROOT)]
    )
    reference_before = reference_cpu_ms()
    results: dict[str, list[dict]] = {}
    try:
        for label, directory in versions:
            version = Version(label, directory, model, tmp)
            try:
                version.start()
                results[label] = []
                for question in QUESTIONS[: args.questions]:
                    run = version.research(question)
                    run["question"] = question[:60]
                    print(
                        json.dumps({"version": label, **run}),
                        file=sys.stderr,
                        flush=True,
                    )
                    results[label].append(run)
            finally:
                version.close()
    finally:
        if baseline_dir is not None:
            remove_checkout(baseline_dir)
        shutil.rmtree(tmp, ignore_errors=True)
    reference_after = reference_cpu_ms()

    summary = {label: summarise(runs) for label, runs in results.items()}
    failures = []
    for label, runs in results.items():
        if any(r["status"] != "completed" for r in runs):
            failures.append(f"{label}: not every research completed")
    not_fewer = None
    in_common = None
    ratio = None
    if "baseline" in results and "current" in results:
        pairs = list(zip(results["baseline"], results["current"]))
        not_fewer = [b["verified_facts"] >= a["verified_facts"] for a, b in pairs]
        in_common = [
            f"{len(set(a['fact_sources']) & set(b['fact_sources']))} of {len(a['fact_sources'])}"
            for a, b in pairs
        ]
        base, now = summary["baseline"]["mean_wall_s"], summary["current"]["mean_wall_s"]
        ratio = round(now / base, 3) if base and now else None
        if args.preset == "hosted" and (ratio is None or ratio > WALL_RATIO_TARGET):
            failures.append(f"wall time ratio {ratio} > {WALL_RATIO_TARGET}")
        if not all(not_fewer):
            failures.append("fewer verified facts than the baseline for a question")
    result = {
        "bench": "wall_time",
        "preset": args.preset,
        "model": model,
        "baseline": args.baseline,
        "wall_ratio": ratio,
        "not_fewer_verified_facts": not_fewer,
        "sources_in_common": in_common,
        "summary": summary,
        "verified_facts_per_question": {
            label: [r["verified_facts"] for r in runs] for label, runs in results.items()
        },
        "reference_cpu_ms_before": reference_before,
        "reference_cpu_ms": reference_after,
        "uptime": uptime(),
        "ok": not failures,
    }
    for failure in failures:
        print("target missed: " + failure, file=sys.stderr)
    print(json.dumps(result))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
