"""The judge model: does a set of passages entail a statement? (ALCE-style NLI by an LLM.)

The judge has its own model, base URL and key (UEDU_EVAL_JUDGE_MODEL / _BASE_URL / _API_KEY or
the command's --judge-* options), apart from the researcher's: a model grading its own answers
is lenient with itself, so the results name the judge and warn when it is the researcher."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal

from django.conf import settings

from agent.engine.llm import LLMClient, LLMConfig, UsageMeter
from agent.engine.prompts import UNTRUSTED_RULES, as_json
from quotas import services as quotas
from quotas.models import CostReservation
from uedu_dr.errors import ServiceError

JUDGE_PROMPT = (
    """You judge whether the passages entail the statement: answer true only if a careful reader
would accept the statement as stated from the passages alone (not from your own knowledge); a
statement that only partly follows, or goes beyond the passages, is false.

"""
    + UNTRUSTED_RULES
)

SCHEMA = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "entailed": {"type": "boolean"}},
                "required": ["id", "entailed"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["results"],
    "additionalProperties": False,
}

# The light rubric's coverage question (scoring: `coverage`): the same call shape (a batch of
# statements, each with passages, one verdict per id), another question. The statement is a point
# of the item's rubric, the passages are the answer's sentences; whether what the answer says about
# the point is right is the other metrics' business, not this one's.
COVERAGE_PROMPT = (
    """You judge whether an answer addresses a point: each statement is a point that an answer to a
research question should cover, and its passages are the sentences of one answer. Answer true only
if the answer gives the information the point asks for (a figure, a reason, a comparison, or that
the materials do not report it, as the point says); mentioning the topic without giving it, or not
mentioning it, is false. Do not judge whether the information is correct.

"""
    + UNTRUSTED_RULES
)

COVERAGE_SCHEMA = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "addressed": {"type": "boolean"}},
                "required": ["id", "addressed"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["results"],
    "additionalProperties": False,
}

# question -> (instructions, answer schema, the verdict's field in a result)
QUESTIONS = {
    "entailment": (JUDGE_PROMPT, SCHEMA, "entailed"),
    "coverage": (COVERAGE_PROMPT, COVERAGE_SCHEMA, "addressed"),
}

BATCH = 8
ANSWER_TOKENS = 1500  # the answer bound of one batch, sent as max tokens
PASSAGE_CHARS = 3000  # each passage is cut to this before it is shown to the judge

# What makes two judges' verdicts comparable besides the model: the instructions, the answer's
# shape and what the judge is shown. A results folder records it; --resume and --replay-from
# refuse to mix verdicts given under different ones.
PROMPT_HASH = hashlib.sha256(
    json.dumps(
        [JUDGE_PROMPT, SCHEMA, BATCH, PASSAGE_CHARS, COVERAGE_PROMPT, COVERAGE_SCHEMA], sort_keys=True
    ).encode()
).hexdigest()[:16]


@dataclass
class JudgeSettings:
    model: str
    base_url: str
    api_key: str

    @classmethod
    def resolve(
        cls, *, model: str | None = None, base_url: str | None = None, api_key: str | None = None
    ) -> JudgeSettings:
        """Command-line values first, then the UEDU_EVAL_JUDGE_* settings, then the researcher's server."""
        return cls(
            model=model or settings.UEDU_EVAL_JUDGE_MODEL or settings.UEDU_LLM_DEFAULT_MODEL,
            base_url=base_url or settings.UEDU_EVAL_JUDGE_BASE_URL or settings.OPENAI_BASE_URL,
            api_key=api_key or settings.UEDU_EVAL_JUDGE_API_KEY or settings.OPENAI_API_KEY,
        )

    def client(self, meter: UsageMeter) -> LLMClient:
        config = LLMConfig(
            models={"default": self.model},
            base_url=self.base_url,
            api_key=self.api_key,
            timeout=settings.UEDU_LLM_TIMEOUT_SECONDS,
            max_retries=settings.UEDU_LLM_MAX_RETRIES,
            prices=settings.UEDU_LLM_PRICES,
            seed=7,
        )
        return LLMClient(config, meter=meter)


class JudgeBudgetExceeded(Exception):
    pass


class Judge:
    """Every call is paid for against the platform's daily cap like any other model call
    (CostReservation kind "eval_judge"): its worst case is reserved before the request and
    settled at the metered cost; a reached cap stops the evaluation (JudgeBudgetExceeded).
    `user`: who the calls are booked to (the admin replaying, or nobody for a command run)."""

    def __init__(
        self,
        client: LLMClient,
        model: str = "",
        meter: UsageMeter | None = None,
        max_tokens: int | None = None,
        user=None,
    ):
        self.client = client
        self.model = model
        self.meter = meter or client.meter
        self.max_tokens = max_tokens
        self.user = user
        self.calls = 0
        self.missing = 0  # statements the judge was asked about and left out of its reply
        self.transcript: list[dict] | None = None  # when recording: every question and its verdict

    def record(self) -> None:
        """Keep every statement, the passages shown with it and the verdict, until taken."""
        self.transcript = []

    def take_transcript(self) -> list[dict]:
        taken, self.transcript = self.transcript or [], []
        return taken

    @classmethod
    def from_settings(cls, judge: JudgeSettings, *, user=None) -> Judge:
        meter = UsageMeter()
        return cls(
            judge.client(meter),
            model=judge.model,
            meter=meter,
            max_tokens=settings.UEDU_EVAL_JUDGE_MAX_TOKENS,
            user=user,
        )

    def worst_case_usd(self, messages: list[dict]) -> Decimal:
        """One batch at most: its prompt counted as one token a character (no tokenizer makes
        more of ordinary text), its answer at the bound sent, priced at the judge model's prices."""
        price_in, price_out = self.client.config.price(self.client.config.model_for("judge"))
        prompt_tokens = sum(len(m["content"]) for m in messages)
        usd = (prompt_tokens * price_in + ANSWER_TOKENS * price_out) / 1_000_000
        return Decimal(str(usd)).quantize(Decimal("0.000001"), rounding=ROUND_UP)

    def _metered(self, messages: list[dict], question: str = "entailment") -> dict:
        try:
            reference = quotas.reserve_call(
                self.user, CostReservation.Kind.EVAL_JUDGE, self.worst_case_usd(messages)
            )
        except ServiceError as exc:
            # The only refusal here is the cap's (platform_cap_reached); the operator reads it in English.
            raise JudgeBudgetExceeded(
                f"the judge was refused ({exc.code}): the platform's daily cost cap "
                "(UEDU_DEEP_RESEARCH_DAILY_CAP_USD) has no room for another judge call"
            ) from None
        before = self.meter.total.cost_usd
        try:
            schema = QUESTIONS[question][1]
            return self.client.structured("judge", messages, schema, question, max_tokens=ANSWER_TOKENS)
        finally:
            quotas.settle_cost(reference, Decimal(str(round(self.meter.total.cost_usd - before, 6))))

    def entails(self, pairs: list[tuple[str, list[str]]]) -> list[bool | None]:
        """For each (statement, passages): do the passages entail it? Empty passages never do
        (False, no call). A pair the judge's reply leaves out is None, "no verdict": the scoring
        counts and reports it apart and never reads it as false."""
        return self.verdicts(pairs)

    def addresses(self, pairs: list[tuple[str, list[str]]]) -> list[bool | None]:
        """For each (rubric point, the answer's sentences): does the answer address the point?
        Same batches, metering and "no verdict" as entails()."""
        return self.verdicts(pairs, question="coverage")

    def verdicts(
        self,
        pairs: list[tuple[str, list[str]]],
        question: str = "entailment",
        purposes: list[str] | None = None,
    ) -> list[bool | None]:
        """entails() (or another of QUESTIONS), and what every run's results folder keeps of it:
        when recording, each statement with the passages shown and the verdict (judge_check.py
        reads it too); a coverage question is marked `"question": "coverage"`, and each pair's
        `purpose` (the metric that asked it: citation_recall, claim_precision, obedience …) is
        kept when given, so labelled pairs can be drawn per prompt (evaluation/labelling.py)."""
        prompt, _, field_name = QUESTIONS[question]
        verdicts: list[bool | None] = [False] * len(pairs)
        shown = [[x[:PASSAGE_CHARS] for x in p if x and x.strip()] for _, p in pairs]
        wanted = [(i, s, shown[i]) for i, (s, _) in enumerate(pairs) if shown[i]]
        for start in range(0, len(wanted), BATCH):
            if (
                self.max_tokens is not None
                and self.meter is not None
                and self.meter.total_tokens >= self.max_tokens
            ):
                # The judge spends tokens like the researcher: an evaluation stops at its budget.
                raise JudgeBudgetExceeded(
                    f"the judge used its budget of {self.max_tokens} tokens (UEDU_EVAL_JUDGE_MAX_TOKENS)"
                )
            batch = wanted[start : start + BATCH]
            payload = [{"id": i, "statement": s, "passages": p} for i, s, p in batch]
            data = self._metered(
                [
                    {"role": "system", "content": prompt},
                    {"role": "user", "content": "<observations>\n" + as_json(payload) + "\n</observations>"},
                ],
                question,
            )
            self.calls += 1
            asked = {i for i, _, _ in batch}
            answered = {}
            for result in data.get("results") or []:
                if isinstance(result, dict) and result.get("id") in asked:
                    answered[result["id"]] = bool(result.get(field_name))
            for i in asked:
                verdicts[i] = answered.get(i)
            self.missing += len(asked - set(answered))
        if self.transcript is not None:
            self.transcript += [
                {
                    "statement": statement,
                    "passages": shown[i],
                    "verdict": verdicts[i],
                    "asked": bool(shown[i]),
                    **({"question": question} if question != "entailment" else {}),
                    **({"purpose": purposes[i]} if purposes else {}),
                }
                for i, (statement, _) in enumerate(pairs)
            ]
        return verdicts
