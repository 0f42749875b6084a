"""A fake SearxNG instance: `/search?q=…&format=json` answers from a fixed list of results.

Like a real instance without the json format enabled, it answers 403 to any other format."""

from __future__ import annotations

from tests.support.fake_http import FakeHTTPServer, Reply, Request


def result(title: str, url: str, content: str, engine: str = "duckduckgo") -> dict:
    return {"title": title, "url": url, "content": content, "engine": engine, "score": 1.0}


class FakeSearxng(FakeHTTPServer):
    def __init__(self, results: list[dict] | None = None) -> None:
        super().__init__()
        self.results = list(results or [])
        self.route("/search", self._search)

    def _search(self, request: Request) -> Reply:
        if request.query.get("format") != "json":
            return Reply(status=403, body="Forbidden")
        terms = request.query.get("q", "").lower().split()
        hits = [r for r in self.results if any(t in (r["title"] + " " + r["content"]).lower() for t in terms)]
        return Reply.json(
            {"query": request.query.get("q", ""), "number_of_results": len(hits), "results": hits}
        )
