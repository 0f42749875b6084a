"""A small HTTP server on loopback whose routes are Python functions, for the fakes of outside
services (OpenAlex, SearxNG, SEC EDGAR, web pages). The product's real HTTP code talks to it.

Every request is recorded (`server.requests`), and `server.fail_next(path, status, times)` makes
the next calls to a path fail, to exercise retries."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]  # the last value of each parameter
    headers: dict[str, str]  # lower-cased names


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | dict | list = b""
    headers: dict[str, str] = field(default_factory=dict)
    # Sent one after another without a Content-Length (the body ends when the connection closes).
    chunks: Iterable[bytes] | None = None
    delay: float = 0.0

    @classmethod
    def json(cls, data, status: int = 200, **headers) -> Reply:
        return cls(status=status, body=data, headers={"Content-Type": "application/json", **headers})

    @classmethod
    def html(cls, text: str, status: int = 200, **headers) -> Reply:
        return cls(status=status, body=text, headers={"Content-Type": "text/html; charset=utf-8", **headers})

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Reply:
        return cls(status=status, headers={"Location": location})


Handler = Callable[[Request], Reply]


class FakeHTTPServer:
    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.requests: list[Request] = []
        self._failures: dict[str, list[tuple[int, dict]]] = defaultdict(list)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # ------------------------------------------------------------------ set-up
    def route(self, path: str, handler: Handler | Reply) -> None:
        self.routes[path] = handler if callable(handler) else (lambda request, reply=handler: reply)

    def fail_next(self, path: str, status: int, times: int = 1, **headers) -> None:
        with self._lock:
            self._failures[path] += [(status, headers)] * times

    def clear_failures(self) -> None:
        """Drop failures still queued: a shared (session) server must not pass one test's
        outage on to the next test."""
        with self._lock:
            self._failures.clear()

    def requests_to(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> FakeHTTPServer:
        fake = self

        class _Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake._serve(self)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))  # the body is not routed on
                fake._serve(self)

            def log_message(self, *args) -> None:  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeHTTPServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ serving
    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        request = Request(
            method=handler.command,
            path=parts.path,
            query={k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()},
            headers={k.lower(): v for k, v in handler.headers.items()},
        )
        with self._lock:
            self.requests.append(request)
            failure = self._failures[parts.path].pop(0) if self._failures[parts.path] else None
        if failure is not None:
            reply = Reply.json({"error": "injected failure"}, status=failure[0], **failure[1])
        elif parts.path in self.routes:
            reply = self.routes[parts.path](request)
        else:
            reply = Reply.json({"error": "not found"}, status=404)
        if reply.delay:
            time.sleep(reply.delay)
        self._write(handler, reply)

    @staticmethod
    def _write(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        body = reply.body
        if isinstance(body, (dict, list)):
            body = json.dumps(body, ensure_ascii=False).encode()
        elif isinstance(body, str):
            body = body.encode()
        try:
            handler.send_response(reply.status)
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            if reply.chunks is None:
                handler.send_header("Content-Length", str(len(body)))
                handler.end_headers()
                handler.wfile.write(body)
            else:
                handler.send_header("Connection", "close")
                handler.end_headers()
                for chunk in reply.chunks:
                    handler.wfile.write(chunk)
                    handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (a size limit): that is the point of some tests
