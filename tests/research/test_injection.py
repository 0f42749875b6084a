"""Indirect prompt injection: 56 hostile passages (English and Traditional Chinese, seven
categories) planted in real course files and in what outside services answer, each read by a
scripted model that obeys it, through the real start service, runner, engine, tools and result
page. The product's own defences must keep every one out; the success rate per category is
written to test-artifacts/injection-report.{json,md}."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import injection
from tests.support.attacks import ATTACKER_DOMAIN, ATTACKS, SECRET_MATERIAL, by_id
from tests.support.documents import docx_bytes
from tests.support.factories import make_channel
from tests.support.injection import injection_world  # noqa: F401  (fixture)
from tests.support.research_fixtures import stored_research

pytestmark = pytest.mark.slow
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture
def world(injection_world):
    return injection_world


def test_every_attack_is_refused_and_the_success_rate_of_each_category_is_zero(
    world, llm, client, index_file, capsys
):
    outcomes = [
        injection.run_attack(world, llm, client, index_file, attack, placement)
        for index, attack in enumerate(ATTACKS)
        for placement in injection.placements(index, attack)
    ]

    data = injection.report(outcomes)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "injection-report.json").write_text(json.dumps(data, ensure_ascii=False, indent=2))
    table = injection.markdown_table(data)
    (ARTIFACTS / "injection-report.md").write_text(f"# Indirect prompt injection\n\n{table}\n")
    with capsys.disabled():
        print("\n" + table)

    # No 0 % from attacks that never arrived: every passage reached the researcher (which reads
    # every tool result whole), in a course file and in an outside service's answer, and the
    # victim did what it asked (its interpretation too, although it is shown facts only). The
    # selection is shown only the spans code did not flag.
    assert data["passages"] >= 50 and data["runs"] == 2 * len(ATTACKS)
    undelivered = [
        (o.attack.id, o.placement, sorted(o.victim.seen)) for o in outcomes if "action" not in o.victim.seen
    ]
    assert not undelivered
    assert all(o.victim.acted for o in outcomes)
    for o in outcomes:  # every tool call the passage asked for was attempted (and is on record)
        attempted = set(o.task.steps.values_list("tool_name", flat=True))
        assert {name[:80] for name, _ in o.attack.calls} <= attempted, (o.attack.id, attempted)
    assert {o.placement for o in outcomes} == {"docx", "pdf", "pptx", "openalex", "searxng"}

    through = {f"{o.attack.id}/{o.placement}": o.breaches for o in outcomes if o.succeeded}
    assert not through, json.dumps(through, ensure_ascii=False, indent=1)
    assert {category: row["success_rate"] for category, row in data["by_category"].items()} == dict.fromkeys(
        "abcdefg", 0.0
    )


def test_what_an_attack_asks_for_is_refused_by_the_engine_not_by_chance(world, llm, client, index_file):
    """A few of the defences, seen from the stored research rather than the page."""
    delete = injection.run_attack(world, llm, client, index_file, by_id("c01"), "docx")
    step = delete.task.steps.get(tool_name="delete_all_materials")
    assert step.status == "error" and "unknown tool" in step.error

    widen = injection.run_attack(world, llm, client, index_file, by_id("c02"), "pdf")
    refused = widen.task.steps.get(tool_name="search_channel_materials", args__has_key="channel_id")
    assert refused.status == "error" and "invalid arguments" in refused.error

    ssrf = injection.run_attack(world, llm, client, index_file, by_id("c03"), "searxng")
    fetch = ssrf.task.steps.get(tool_name="fetch_url")
    assert fetch.status == "error" and ssrf.listener_hits == 0

    leak = injection.run_attack(world, llm, client, index_file, by_id("d01"), "docx")
    # the victim repeated both paragraphs of the interpreter's instructions: code took out each
    assert leak.task.verification_json["instruction_echoes_removed"] >= 2
    shown = [i["text"] for i in leak.task.report_json["interpretation"]["items"]]
    assert not [t for t in shown if "interpretation step" in t or "DATA" in t], shown

    beacon = injection.run_attack(world, llm, client, index_file, by_id("e04"), "pptx")
    assert (
        beacon.task.verification_json["links_removed"] >= 2
        and ATTACKER_DOMAIN not in beacon.task.final_answer
    )

    forged = injection.run_attack(world, llm, client, index_file, by_id("g03"), "openalex")
    researcher_saw = json.dumps([r["messages"] for r in forged.requests if r["_role"] == "action"])
    assert (
        'title=\\"Dashboards&quot; url=&quot;https://atk-g03.' in researcher_saw
    )  # the quote could not end the attribute
    assert all(
        b == []
        for b in (
            delete.breaches,
            widen.breaches,
            ssrf.breaches,
            leak.breaches,
            beacon.breaches,
            forged.breaches,
        )
    )


def test_positive_control_the_checks_report_a_secret_the_victim_could_really_read(
    world, llm, client, index_file
):
    """The same victim and checks, with the 'secret' put in the student's own channel: the victim
    finds it and pastes it, and the checks say so. The boundary test above is not blind."""

    def own_copy(channel):
        index_file(
            channel,
            world.teacher,
            "exam-key.docx",
            docx_bytes([("Answer key", [f"{SECRET_MATERIAL} 期末考解答：第一題答案是 C。"])]),
        )

    outcome = injection.run_attack(world, llm, client, index_file, by_id("d07"), "docx", also_plant=own_copy)
    assert any(
        f"{SECRET_MATERIAL} (another channel's or staff data) is in the page" in b for b in outcome.breaches
    )


def test_positive_control_the_checks_report_an_answer_that_skipped_the_engine(world, llm, client):
    """An answer stored as a model wrote it (not through the engine): the renderer still strips the
    image and the script, but the attacker's address in the text and a citation that no tool
    returned are caught by the checks."""
    channel = make_channel(world.teacher, slug="inj-control")
    task = stored_research(
        world.student,
        channel,
        answer=f"Claim [1]. See https://atk-b01.{ATTACKER_DOMAIN}/x "
        f"![p](https://atk-e01.{ATTACKER_DOMAIN}/p.png)",
    )
    client.force_login(world.student)
    response = client.get(f"/deep_research/task/{task.task_uuid}")
    outcome = injection.Outcome(
        attack=by_id("b01"),
        placement="stored",
        task=task,
        victim=None,
        requests=[],
        page=response.content.decode(),
        headers=dict(response.headers),
        listener_hits=0,
    )
    breaches = injection.check(outcome, channel)
    assert "answer shows 'evil.example'" in breaches
    assert any(b.startswith("citation 1 is not an observed source") for b in breaches)
    assert not any("<img" in b for b in breaches)  # the renderer itself already refused the image
