"""The report's JSON Schema in the OpenAPI document.

agent.engine.report_types.REPORT_SCHEMA is JSON Schema 2020-12, generated from the report's
dataclasses (the engine validates every report against it); the OpenAPI document is 3.0, which
says "nullable" instead of a type list and "enum" instead of "const". This turns one into the
other, so the API publishes the very same shape."""

from __future__ import annotations

from agent.engine.report_types import REPORT_SCHEMA, SCHEMA_VERSION

_DROPPED = {"$schema", "$id"}


def to_openapi(schema):
    if isinstance(schema, list):
        return [to_openapi(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key == "const":
            out["enum"] = [value]
        elif key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            out["type"] = kinds[0]
            if "null" in value:
                out["nullable"] = True
        elif key == "anyOf" and {"type": "null"} in value:
            rest = [v for v in value if v != {"type": "null"}]
            converted = to_openapi(rest[0]) if len(rest) == 1 else {"anyOf": to_openapi(rest)}
            out.update(converted)
            out["nullable"] = True
        elif key in ("properties",):
            out[key] = {name: to_openapi(sub) for name, sub in value.items()}
        else:
            out[key] = to_openapi(value)
    return out


REPORT_OPENAPI = {
    **to_openapi(REPORT_SCHEMA),
    "description": f"Deep Research report, schema version {SCHEMA_VERSION} (JSON Schema generated from "
    "agent/engine/report_types.py). Reports stored in an older version are served converted to this one.",
}


# The task's stored citations (GET …/task/<uuid> "citations"): the sources its answer cites, by
# their display `number`. Researches stored with a 1.x report carry the quote a citation stood
# for and its location; the report (GET …/report) holds every span with its location.
_STR = {"type": "string"}
CITATIONS_OPENAPI = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["number", "title", "url", "source_tool", "tier", "origin"],
        "properties": {
            "number": {"type": "integer", "description": "the number shown as [N]"},
            "source_id": {"type": "integer"},
            "title": _STR,
            "url": _STR,
            "source_tool": _STR,
            "snippet": _STR,
            "tier": {"type": "string", "enum": ["internal", "structured", "scholarly", "web"]},
            "origin": {"type": "string", "enum": ["internal", "external"]},
            "locator": _STR,
            "quote": _STR,
            "location": {
                "type": "object",
                "properties": {"page": _STR, "start": {"type": "integer"}, "end": {"type": "integer"}},
            },
        },
    },
}
