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


# The selection step answers with span ids only: each call's candidates are an enum, so a server
# that follows the schema cannot name a span it was not shown.
MAX_FACTS_PER_CALL = 8
MAX_CONTRADICTIONS_PER_CALL = 3
STANCES = ["for", "against", "none"]


def selection(candidate_ids: list[str], hypotheses: int) -> dict:
    """`hypotheses`: how many hypotheses the prompt shows (numbered from 1); with none, the only
    stance is "none"."""
    numbers = list(range(1, hypotheses + 1))
    # The ids are written once ($defs) and referred to twice: a long enum is most of the schema.
    ids = {"$ref": "#/$defs/span_id"}
    schema = _object(
        {
            "facts": {
                "type": "array",
                "maxItems": MAX_FACTS_PER_CALL,
                "items": _object(
                    {
                        "span_ids": {"type": "array", "minItems": 1, "maxItems": 3, "items": ids},
                        "hypothesis": {"type": "integer", "enum": [0, *numbers]},
                        "stance": {"type": "string", "enum": STANCES if numbers else ["none"]},
                    }
                ),
            },
            "contradictions": {
                "type": "array",
                "maxItems": MAX_CONTRADICTIONS_PER_CALL,
                "items": _object({"span_ids": {"type": "array", "minItems": 2, "maxItems": 2, "items": ids}}),
            },
        }
    )
    schema["$defs"] = {"span_id": {"type": "string", "enum": list(candidate_ids)}}
    return schema


MAX_INTERPRETATION_ITEMS = 8
MAX_SUGGESTIONS = 3


def interpretation(fact_ids: list[int], translate: list[str], *, suggestions_required: bool) -> dict:
    """The interpretation's reply: items citing the facts (an enum of their ids), suggestions, and
    translations of the listed spans (an enum of their ids). A part with nothing to cite or
    translate is left out of the schema."""
    properties: dict = {}
    if fact_ids:
        properties["items"] = {
            "type": "array",
            "maxItems": MAX_INTERPRETATION_ITEMS,
            "items": _object(
                {
                    "kind": {"type": "string", "enum": ["reasoning", "assumption"]},
                    "text": _STR,
                    "facts": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 4,
                        "items": {"type": "integer", "enum": list(fact_ids)},
                    },
                }
            ),
        }
    properties["suggestions"] = {
        "type": "array",
        "minItems": 1 if suggestions_required else 0,
        "maxItems": MAX_SUGGESTIONS,
        "items": _STR,
    }
    if translate:
        properties["translations"] = {
            "type": "array",
            "maxItems": len(translate),
            "items": _object({"span": {"type": "string", "enum": list(translate)}, "text": _STR}),
        }
    return _object(properties)
