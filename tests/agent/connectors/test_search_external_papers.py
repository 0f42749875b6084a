"""search_external_papers against a fake OpenAlex over HTTP."""

from __future__ import annotations

from tests.agent.connectors.conftest import call
from tests.support.fake_http import Reply
from tests.support.fake_openalex import work

ABSTRACT = "Learning analytics dashboards help teachers see how students learn and where learning stalls"


def _seed(openalex):
    openalex.works = [
        work(
            "W1",
            "Learning analytics dashboards in Taiwanese classrooms",
            year=2021,
            countries=["tw"],
            doi="10.1000/TW.2021",
            authors=["Lee Chen", "Wang Hua", "Lin Mei", "Chang Wei"],
            abstract=ABSTRACT,
            cited_by=42,
            venue="Computers & Education",
        ),
        work("W2", "Learning analytics for Japanese universities", year=2019, countries=["jp"]),
        work("W3", "Learning analytics at scale in the United States", year=2021, countries=["us"]),
        work("W4", "Learning analytics and Korean high schools", year=2023, countries=["kr"]),
    ]


def test_it_filters_by_east_asian_institutions_and_year_range(openalex):
    _seed(openalex)

    result = call("search_external_papers", query="learning analytics", year_from=2020, year_to=2022)

    assert result.ok, result.error
    assert [s.title for s in result.sources] == ["Learning analytics dashboards in Taiwanese classrooms"]
    sent = openalex.requests_to("/works")[0].query
    assert sent["search"] == "learning analytics"
    assert (
        sent["filter"]
        == "institutions.country_code:tw|sg|jp|kr|cn,from_publication_date:2020-01-01,to_publication_date:2022-12-31"
    )


def test_the_caller_may_narrow_the_countries_but_not_widen_them(openalex):
    """The five countries are the course rule: the model may pick among them, not add others
    (a teacher may, by a channel setting: tests/research/test_policy.py)."""
    _seed(openalex)
    widened = call("search_external_papers", query="learning analytics", countries=["US"])
    assert not widened.ok and "outside this course's countries" in widened.error
    assert openalex.requests_to("/works") == []
    narrowed = call("search_external_papers", query="learning analytics", countries=["TW"])
    assert narrowed.ok
    assert "institutions.country_code:tw" in openalex.requests_to("/works")[0].query["filter"]


def test_results_carry_what_a_citation_needs_and_are_marked_external(openalex):
    _seed(openalex)

    source = call("search_external_papers", query="dashboards").sources[0]

    assert source.source_tool == "search_external_papers"
    assert source.tier == "scholarly" and source.origin == "external"
    assert source.url == "https://doi.org/10.1000/tw.2021"
    assert source.locator == "DOI 10.1000/tw.2021"
    assert source.meta["external"] is True
    assert source.meta["authors"] == ["Lee Chen", "Wang Hua", "Lin Mei", "Chang Wei"]
    assert source.meta["year"] == 2021 and source.meta["cited_by_count"] == 42
    assert source.snippet.startswith(
        "External publication indexed by OpenAlex (not a Uedu record). Lee Chen, Wang Hua, Lin Mei et al. (2021)."
    )
    assert len(source.snippet) <= 300
    # Nothing calls an outside author an advisor or the paper Uedu's.
    assert "advisor" not in (source.title + source.snippet + source.text).lower()


def test_the_abstract_is_rebuilt_from_the_inverted_index(openalex):
    _seed(openalex)
    source = call("search_external_papers", query="dashboards").sources[0]
    assert f"Abstract: {ABSTRACT}" in source.text


def test_it_retries_after_429_and_5xx_and_then_answers(openalex):
    _seed(openalex)
    openalex.fail_next("/works", 429, **{"Retry-After": "0"})
    openalex.fail_next("/works", 503)

    result = call("search_external_papers", query="dashboards")

    assert result.ok, result.error
    assert len(result.sources) == 1
    assert len(openalex.requests_to("/works")) == 3


def test_it_gives_up_after_a_bounded_number_of_retries_with_a_clear_error(openalex, settings):
    settings.UEDU_TOOL_HTTP_MAX_RETRIES = 2
    openalex.fail_next("/works", 500, times=10)

    result = call("search_external_papers", query="dashboards")

    assert result.sources == []
    assert result.error == "OpenAlex answered HTTP 500; gave up after 3 attempts"
    assert len(openalex.requests_to("/works")) == 3


def test_a_client_error_is_not_retried(openalex):
    openalex.fail_next("/works", 400, times=5)
    result = call("search_external_papers", query="dashboards")
    assert "refused the request (HTTP 400)" in result.error
    assert len(openalex.requests_to("/works")) == 1


def test_a_slow_server_times_out_into_an_error(openalex, settings):
    settings.UEDU_TOOL_HTTP_TIMEOUT_SECONDS = 0.2
    settings.UEDU_TOOL_HTTP_MAX_RETRIES = 1
    openalex.route("/works", lambda request: Reply(body="{}", delay=0.5))

    result = call("search_external_papers", query="dashboards")

    assert result.error == "OpenAlex did not answer within 0.2 s; gave up after 2 attempts"


def test_a_body_that_is_not_json_is_an_error_not_a_crash(openalex):
    openalex.route(
        "/works", Reply(body="<html>maintenance</html>", headers={"Content-Type": "application/json"})
    )
    result = call("search_external_papers", query="dashboards")
    assert result.error == "OpenAlex sent a response that is not valid JSON"


def test_the_same_request_is_answered_from_the_cache(openalex):
    _seed(openalex)

    first = call("search_external_papers", query="dashboards")
    second = call("search_external_papers", query="dashboards")
    other = call("search_external_papers", query="dashboards", year_from=2020)

    assert [s.title for s in first.sources] == [s.title for s in second.sources]
    assert other.ok
    assert len(openalex.requests_to("/works")) == 2  # the repeat did not reach OpenAlex


def test_credentials_are_sent_but_the_api_key_is_not_part_of_the_cache_key(openalex, settings):
    _seed(openalex)
    settings.OPENALEX_API_KEY = "key-one"
    settings.OPENALEX_MAILTO = "ops@uedu.example"
    call("search_external_papers", query="dashboards")
    settings.OPENALEX_API_KEY = "key-two"
    call("search_external_papers", query="dashboards")

    requests = openalex.requests_to("/works")
    assert len(requests) == 1
    assert requests[0].query["api_key"] == "key-one" and requests[0].query["mailto"] == "ops@uedu.example"


def test_bad_arguments_are_refused_before_any_request(openalex):
    assert "after year_to" in call("search_external_papers", query="x", year_from=2024, year_to=2020).error
    assert "between 1800 and 2100" in call("search_external_papers", query="x", year_from=20).error
    assert "two-letter codes" in call("search_external_papers", query="x", countries=["taiwan"]).error
    assert call("search_external_papers", query="  ").error == "give search words"
    assert openalex.requests == []
