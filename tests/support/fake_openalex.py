"""A fake OpenAlex `/works` endpoint that applies the filters the product sends (search,
institutions.country_code, from/to_publication_date, author.id) and pages with cursors, so tests
check both what was asked and what came back."""

from __future__ import annotations

from tests.support.fake_http import FakeHTTPServer, Reply, Request


def inverted_index(text: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for position, word in enumerate(text.split()):
        index.setdefault(word, []).append(position)
    return index


def work(
    work_id: str,
    title: str,
    *,
    year: int,
    countries: list[str],
    authors: list[str] | None = None,
    author_ids: list[str] | None = None,
    doi: str | None = None,
    abstract: str = "",
    cited_by: int = 0,
    venue: str = "Journal of Tests",
) -> dict:
    """A work in OpenAlex's JSON shape (only the fields the product selects)."""
    authors = authors or ["A. Author"]
    author_ids = author_ids or [f"A9{i}" for i in range(len(authors))]
    return {
        "id": f"https://openalex.org/{work_id}",
        "doi": f"https://doi.org/{doi}" if doi else None,
        "display_name": title,
        "publication_year": year,
        "cited_by_count": cited_by,
        "type": "article",
        "primary_location": {
            "landing_page_url": f"https://publisher.example/{work_id}",
            "source": {"display_name": venue},
        },
        "authorships": [
            {
                "author": {"id": f"https://openalex.org/{aid}", "display_name": name},
                "institutions": [
                    {"display_name": f"University of {c.upper()}", "country_code": c.upper()}
                    for c in countries
                ],
            }
            for name, aid in zip(authors, author_ids)
        ],
        "abstract_inverted_index": inverted_index(abstract) if abstract else None,
    }


def _text(item: dict) -> str:
    index = item.get("abstract_inverted_index") or {}
    return (item["display_name"] + " " + " ".join(index)).lower()


class FakeOpenAlex(FakeHTTPServer):
    def __init__(self, works: list[dict] | None = None, max_per_page: int = 200) -> None:
        super().__init__()
        self.works = list(works or [])
        self.max_per_page = max_per_page  # OpenAlex caps per-page at 200; tests lower it to force paging
        self.route("/works", self._works)

    def _works(self, request: Request) -> Reply:
        rows = list(self.works)
        search = request.query.get("search", "").lower()
        if search:
            rows = [w for w in rows if any(term in _text(w) for term in search.split())]
        for part in filter(None, request.query.get("filter", "").split(",")):
            name, _, value = part.partition(":")
            if name == "institutions.country_code":
                wanted = {v.upper() for v in value.split("|")}
                rows = [
                    w
                    for w in rows
                    if any(i["country_code"] in wanted for a in w["authorships"] for i in a["institutions"])
                ]
            elif name == "from_publication_date":
                rows = [w for w in rows if w["publication_year"] >= int(value[:4])]
            elif name == "to_publication_date":
                rows = [w for w in rows if w["publication_year"] <= int(value[:4])]
            elif name == "author.id":
                rows = [
                    w for w in rows if any(a["author"]["id"].endswith("/" + value) for a in w["authorships"])
                ]
            else:
                return Reply.json({"error": f"unsupported filter {name}"}, status=400)
        per_page = min(self.max_per_page, int(request.query.get("per-page", 25)))
        cursor = request.query.get("cursor")
        start = 0 if cursor in (None, "*") else int(cursor)
        page = rows[start : start + per_page]
        next_cursor = str(start + per_page) if cursor is not None and start + per_page < len(rows) else None
        return Reply.json({"meta": {"count": len(rows), "next_cursor": next_cursor}, "results": page})
