"""What a research costs the student's quota and the platform's cap, from start to end.

Refund rule (documented in the README):
- completed: the unit stays used;
- cancelled before the plan was ready (`plan_complete` not yet emitted): full refund (1.0);
- cancelled later: half refund (0.5) — planning and some evidence gathering were paid for;
- failed: full refund (1.0) — every failure is the platform's (model, worker, broker), never the student's.
The cost reservation is replaced by the task's real cost in every case."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings

from agent.llm_factory import llm_config
from quotas import services as quotas
from research.models import ResearchTask, TranscriptEntry


def worst_case_cost() -> Decimal:
    """The most one research can cost: its whole token budget, gathering's limit and the
    finishing phases' grace, all priced at the dearer (output) rate of the dearest configured
    model. The engine admits every request within it (engine_limits' max_cost_usd and
    grace_tokens; agent/engine/budget.py), so a settled cost never exceeds this reservation."""
    if settings.UEDU_DR_WORST_CASE_USD is not None:
        return settings.UEDU_DR_WORST_CASE_USD
    price = max(max(pair) for pair in settings.UEDU_LLM_PRICES.values())
    tokens = settings.UEDU_DR_MAX_TOKENS + settings.UEDU_DR_GRACE_TOKENS
    return (Decimal(str(price)) * tokens / Decimal(1_000_000)).quantize(Decimal("0.000001"))


def reserve(task: ResearchTask) -> None:
    """Charge the quota and reserve the worst-case cost; raises ServiceError (429/503) instead."""
    reference = str(task.task_uuid)
    quotas.charge(task.user, reference)
    quotas.reserve_cost(task.user, reference, worst_case_cost())


def refund_amount(task: ResearchTask) -> Decimal:
    if task.status == ResearchTask.Status.FAILED:
        return Decimal("1.00")
    if task.status == ResearchTask.Status.CANCELLED:
        planned = task.events.filter(type="plan_complete").exists()
        return Decimal("0.50") if planned else Decimal("1.00")
    return Decimal(0)


def settle(task: ResearchTask) -> None:
    reference = str(task.task_uuid)
    amount = refund_amount(task)
    if amount:
        quotas.refund(task.user_id, reference, amount, reason=f"{task.status}: {task.stop_reason}"[:200])
    quotas.settle_cost(reference, task.cost_usd or Decimal(0))


def transcript_cost(task: ResearchTask) -> Decimal:
    """What the calls in the task's transcript cost, priced like the runner's meter prices them:
    the bill of a task whose worker died before it could report its own."""
    config = llm_config()
    total = 0.0
    for model, response in TranscriptEntry.objects.filter(task=task, kind="llm").values_list(
        "model", "response"
    ):
        usage = (response or {}).get("usage") or {}
        price_in, price_out = config.price(model)
        total += (
            (usage.get("prompt_tokens") or 0) * price_in + (usage.get("completion_tokens") or 0) * price_out
        ) / 1_000_000
    return Decimal(str(round(total, 6)))
