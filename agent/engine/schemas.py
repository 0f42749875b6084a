"""JSON Schemas of every structured LLM reply (sent as strict json_schema, validated on return)."""

from __future__ import annotations


def _object(properties: dict, required: list[str] | None = None) -> dict:
    # Strict mode wants every property required and nothing else allowed.
    return {
        "type": "object",
        "properties": properties,
        "required": required if required is not None else list(properties),
        "additionalProperties": False,
    }


_STR = {"type": "string"}
_IDS = {"type": "array", "items": {"type": "integer"}}

PLAN = _object(
    {
        "complexity": {"type": "string", "enum": ["simple", "moderate", "complex"]},
        "sub_questions": {
            "type": "array",
            "minItems": 2,
            "maxItems": 6,
            "items": _object({"question": _STR, "suggested_tools": {"type": "array", "items": _STR}}),
        },
        "hypotheses": {"type": "array", "maxItems": 5, "items": _STR},
        "rationale": _STR,
        "asks_for_judgement": {"type": "boolean"},
    }
)

CLAIMS = _object(
    {
        "claims": {
            "type": "array",
            "items": _object(
                {
                    "text": _STR,
                    "kind": {"type": "string", "enum": ["fact", "figure", "judgement"]},
                    "entity": _STR,
                    "metric": _STR,
                    "period": _STR,
                    "value": {"type": ["number", "null"]},
                    "unit": _STR,
                    "source_ids": _IDS,
                    # Verbatim spans of the cited passages (the engine locates each one).
                    "quotes": {
                        "type": "array",
                        "minItems": 1,
                        "items": _object({"source_id": {"type": "integer"}, "text": _STR}),
                    },
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                }
            ),
        }
    }
)

REFLECTION = _object(
    {
        "sufficient": {"type": "boolean"},
        "missing": {"type": "array", "items": _STR},
        "covered_sub_questions": {"type": "array", "items": {"type": "integer"}},
        # The planner's hypotheses (1-based), judged against the evidence so far.
        "hypotheses": {
            "type": "array",
            "items": _object(
                {
                    "index": {"type": "integer"},
                    "status": {"type": "string", "enum": ["supported", "refuted", "open"]},
                }
            ),
        },
        "reasoning": _STR,
    }
)

SYNTHESIS = _object(
    {
        "answer": _STR,
        "citations": {"type": "array", "items": _object({"id": {"type": "integer"}})},
        "conflicts": {
            "type": "array",
            "items": _object(
                {
                    "topic": _STR,
                    "positions": {
                        "type": "array",
                        "minItems": 2,
                        "items": _object({"summary": _STR, "source_ids": _IDS}),
                    },
                }
            ),
        },
        # What the counter-search found against the main conclusions (empty when it found nothing).
        "counter_evidence": {"type": "array", "items": _object({"summary": _STR, "source_ids": _IDS})},
        "summary": _STR,
        "judgement": {
            "anyOf": [
                {"type": "null"},
                _object(
                    {
                        "text": _STR,
                        "claim_ids": {"type": "array", "items": {"type": "integer"}},
                        "assumptions": {"type": "array", "items": _STR},
                    }
                ),
            ]
        },
    }
)

VERIFICATION = _object(
    {
        "verdicts": {
            "type": "array",
            "items": _object(
                {
                    "claim_id": {"type": "integer"},
                    "verdict": {"type": "string", "enum": ["supported", "partial", "unsupported"]},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "reason": _STR,
                }
            ),
        },
        "contradictions": {
            "type": "array",
            "items": _object({"claim_ids": {"type": "array", "items": {"type": "integer"}}, "reason": _STR}),
        },
    }
)

JUDGE = _object(
    {
        "worth_it": {"type": "boolean"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reasons": {"type": "array", "items": _STR},
    }
)

CONTEXT = _object(
    {
        "needs_clarification": {"type": "boolean"},
        "questions": {
            "type": "array",
            "maxItems": 4,
            "items": _object(
                {
                    "key": {
                        "type": "string",
                        "enum": [
                            "time_range",
                            "subject",
                            "entities",
                            "metrics",
                            "source_language",
                            "source_preference",
                        ],
                    },
                    "question": _STR,
                    "default": _STR,
                }
            ),
        },
    }
)

BLOOM_LEVELS = ["remember", "understand", "apply", "analyze", "evaluate", "create"]

BLOOM = _object(
    {
        "level": {"type": "string", "enum": BLOOM_LEVELS},
        # No bounds: a right level with a confidence of 1.2 is still a right level (clamped on use).
        "confidence": {"type": "number"},
        "rationale": _STR,
    }
)
