"""A tiny OpenAI-compatible /v1/embeddings server on loopback, for the `openai` embedding backend.

Vectors are deterministic bag-of-words hashes (each word adds 1 to a dimension chosen by its
hash, then the vector is normalised), so texts sharing words are close, as with a real model.
It records every request, and can be told to fail or to answer the wrong dimension.

Given `concepts` ({surface form: concept}, in any language), it stands in for a multilingual model
(bge-m3, multilingual-e5): a Chinese term found in the text and an English word of the table both
count as their concept, so "預警儀表板" and "early-warning dashboard" land on the same dimension.
Only the table's terms cross languages: the double shows the wiring, not a model's quality."""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def bag_of_words_vector(text: str, dimension: int, concepts: dict[str, str] | None = None) -> list[float]:
    vector = [0.0] * dimension
    words = re.findall(r"\w+", text.lower())
    if concepts:
        lowered = text.lower()
        # Multi-word and Chinese surface forms are found in the text; single words by themselves.
        found = [
            c
            for surface, c in concepts.items()
            if (" " in surface or "-" in surface or not surface.isascii()) and surface in lowered
        ]
        words = found + [concepts.get(w, w) for w in words if w.isascii()]
    for word in words:
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dimension] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class FakeEmbeddingServer:
    def __init__(self, dimension: int = 32, concepts: dict[str, str] | None = None) -> None:
        self.dimension = dimension
        self.concepts = concepts
        self.requests: list[dict] = []
        self.fail_with: int | None = None  # HTTP status to answer instead of vectors
        self.answer_dimension: int | None = None  # answer vectors of another size
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                if self.path != "/v1/embeddings":
                    return self._send(404, {"error": {"message": "not found"}})
                if server.fail_with:
                    return self._send(
                        server.fail_with,
                        {"error": {"message": "the fake is told to fail", "type": "server_error"}},
                    )
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                size = server.answer_dimension or server.dimension
                data = [
                    {
                        "object": "embedding",
                        "index": i,
                        "embedding": bag_of_words_vector(text, size, server.concepts),
                    }
                    for i, text in enumerate(inputs)
                ]
                data.reverse()  # real servers may answer out of order; clients must sort by index
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body["model"],
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    },
                )

            def _send(self, status, payload):
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeEmbeddingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
