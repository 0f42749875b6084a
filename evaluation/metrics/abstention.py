"""Did a run answer, or abstain (say the materials do not contain the answer)?

Decided by code: a completed run abstained when its report says it verified no claim (limitation
`no_verified_claims`) or its body cites nothing at all. An answer that cites a passage is an
answer, whatever its words: the judge is not asked, so a hedge ("the materials do not say, but
[1] …") counts as answering and is scored on its citations like any answer.

Outcomes, per run: `answered` (answerable item, answer given), `abstained_correctly`
(unanswerable item, abstained), `abstained_wrongly` (answerable item, abstained),
`answered_unanswerable` (unanswerable item, answer given), `failed` (the run did not complete)."""

from __future__ import annotations

from ..dataset import Item
from ..observed import Observation

NO_CLAIMS = "no_verified_claims"
OUTCOMES = ("answered", "abstained_correctly", "abstained_wrongly", "answered_unanswerable", "failed")
RIGHT = ("answered", "abstained_correctly")


def abstained(observation: Observation) -> bool:
    if not observation.completed:
        return False
    return NO_CLAIMS in observation.limitations or not any(u.citations for u in observation.units)


def outcome(observation: Observation, item: Item) -> str:
    if not observation.completed:
        return "failed"
    if abstained(observation):
        return "abstained_correctly" if not item.answerable else "abstained_wrongly"
    return "answered" if item.answerable else "answered_unanswerable"
