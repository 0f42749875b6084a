"""The API fuzzed from its own OpenAPI schema (schemathesis) against the live daphne, as a
token-authenticated teacher: no generated request, valid or not, gets a 5xx; every 4xx has the
API's error shape; what the schema promises for valid requests holds."""

from __future__ import annotations

import hypothesis
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode

from tests.support.research_fixtures import stored_research

pytestmark = pytest.mark.slow
EXAMPLES_PER_OPERATION = 25


def error_shape(body) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    return (
        isinstance(error, dict)
        and isinstance(error.get("code"), str)
        and isinstance(error.get("message"), str)
        and bool(error["message"])
    )


def in_the_channel(channel_id: int):
    def aim(case):
        if isinstance(case.body, dict) and "channel_id" in case.body:
            case.body = {**case.body, "channel_id": channel_id}
        return case

    return aim


def test_the_api_answers_generated_requests_without_a_5xx_and_with_its_error_shape(live, personas, llm):
    base = live.extra["url"]
    task = stored_research(personas.student, personas.channel)
    token = Token.objects.create(user=personas.teacher)
    # JSON, not a Server-Sent Events stream, is what the fuzzer reads back from /start.
    headers = {"Authorization": f"Token {token.key}", "Accept": "application/json"}
    document = requests.get(f"{base}/api/schema/?format=json", headers=headers, timeout=30)
    assert document.status_code == 200
    schema = schemathesis.openapi.from_dict(document.json())
    session = requests.Session()

    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 14
    problems: list[str] = []
    server_refusals: list[str] = []
    validated: list[str] = []
    statuses: dict[int, int] = {}
    calls = 0
    for operation in operations:
        real = {"task_uuid": str(task.task_uuid)} if "{task_uuid}" in operation.path else None
        strategy = st.one_of(
            operation.as_strategy(GenerationMode.POSITIVE),
            operation.as_strategy(GenerationMode.NEGATIVE),
            # Random ids rarely exist: also aim at a real task and the real channel, to get past the lookups.
            *([operation.as_strategy(GenerationMode.POSITIVE, path_parameters=real)] if real else []),
            operation.as_strategy(GenerationMode.POSITIVE).map(in_the_channel(personas.channel.pk)),
        )

        @hypothesis.settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def exercise(case):
            nonlocal calls
            calls += 1
            response = case.call(base_url=base, session=session, headers=headers, timeout=30)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            where = f"{case.method} {case.formatted_path} {case.body if case.body is not None else ''!r:.200}"
            if response.status_code >= 500:
                problems.append(f"{response.status_code} for {where}: {response.text[:300]}")
            elif (
                "content-security-policy" not in response.headers
            ):  # schemathesis' Response: lower-case names, lists
                # Not an answer of the application: daphne's HTTP layer (Twisted) parses multipart
                # bodies itself and drops a malformed one with a bare 400 before Django sees it.
                server_refusals.append(where)
                if response.status_code != 400 or "multipart/form-data" not in response.request.headers.get(
                    "Content-Type", ""
                ):
                    problems.append(f"{response.status_code} from outside the application for {where}")
            elif response.status_code >= 400:
                try:
                    body = response.json()
                except ValueError:
                    body = None
                if not error_shape(body):
                    problems.append(
                        f"{response.status_code} without the error shape for {where}: {response.text[:200]}"
                    )
            elif (
                response.headers.get("content-type", [""])[0].startswith("application/json")
                and case.meta
                and case.meta.generation.mode == GenerationMode.POSITIVE
            ):
                validated.append(where)
                try:
                    case.validate_response(
                        response,
                        checks=[
                            schemathesis.checks.response_schema_conformance,
                            schemathesis.checks.content_type_conformance,
                        ],
                    )
                except AssertionError as exc:
                    problems.append(f"schema not kept for {where}: {str(exc)[:400]}")

        exercise()
    print(
        f"{calls} requests, statuses {sorted(statuses.items())}, {len(validated)} checked against the schema, "
        f"{len(server_refusals)} refused by daphne's HTTP layer"
    )
    assert calls >= len(operations) * 10
    assert len(validated) >= len(operations) * 3  # the valid side was really exercised, not only refusals
    assert len(server_refusals) < calls / 4
    assert not problems, "\n".join(problems[:40])
